#include "core/temp_folder.hpp"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <system_error>

namespace gantry {

TempFolder::TempFolder(const std::string& prefix) {
  std::error_code no_tmpdir;
  std::filesystem::path base = std::filesystem::temp_directory_path(no_tmpdir);
  if (no_tmpdir) base = "/tmp";
  std::string pattern = (base / (prefix + "-XXXXXX")).string();
  if (!mkdtemp(pattern.data()))
    throw std::runtime_error("cannot make a temporary folder " + pattern + ": " + std::strerror(errno));
  path_ = pattern;
}

TempFolder::~TempFolder() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace gantry
