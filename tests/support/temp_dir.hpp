#pragma once
// A fresh directory under /tmp for one test, removed with everything in it afterwards.
#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>

namespace gantry::testing {

struct TempDir {
  std::string path;
  explicit TempDir(const std::string& prefix = "gantry-test") {
    std::string pattern = "/tmp/" + prefix + "-XXXXXX";
    const char* made = mkdtemp(pattern.data());
    if (made == nullptr) throw std::runtime_error("cannot create a temporary directory");
    path = made;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string sub(const std::string& name) const { return path + "/" + name; }
};

}  // namespace gantry::testing
