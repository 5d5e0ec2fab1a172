#pragma once
// A fresh folder under the system's temporary folder ($TMPDIR, else /tmp), removed with
// everything in it when the object goes: files handed to another process, a store that must not
// outlive a run, a test's files.
#include <string>

namespace gantry {

class TempFolder {
 public:
  // PREFIX-XXXXXX; throws std::runtime_error with the reason when it cannot be made.
  explicit TempFolder(const std::string& prefix = "gantry");
  ~TempFolder();
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;

  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace gantry
