#include "cli/output_path.hpp"

#include <unistd.h>

#include <filesystem>
#include <system_error>

#include "cli/cli_common.hpp"

namespace gantry::cli {

void check_output_path(const std::string& flag, const std::string& path) {
  if (path.empty()) return;
  namespace fs = std::filesystem;
  const fs::path folder = fs::path(path).has_parent_path() ? fs::path(path).parent_path() : fs::path(".");
  std::error_code error;
  const fs::file_status status = fs::status(folder, error);
  if (!fs::exists(status)) throw CliError(flag + " " + path + ": the folder " + folder.string() + " does not exist");
  if (!fs::is_directory(status)) throw CliError(flag + " " + path + ": " + folder.string() + " is not a folder");
  if (::access(folder.c_str(), W_OK) != 0) throw CliError(flag + " " + path + ": the folder " + folder.string() + " is not writable");
  if (fs::is_directory(fs::status(path, error))) throw CliError(flag + " " + path + ": is a folder, not a file");
}

}  // namespace gantry::cli
