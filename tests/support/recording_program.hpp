#pragma once
// A stand-in for gantry-exec that records how it is used: a shell script that writes its process id
// to DIR/pid, appends its arguments, then every line it is sent, to DIR/calls, and passes the lines
// on to `then` (a shell command: the real gantry-exec with "$@", or a fake that answers requests).
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/temp_dir.hpp"

namespace gantry::testing {

inline std::string recording_program(const TempDir& dir, const std::string& name, const std::string& then) {
  const std::string path = dir.file(name);
  std::ofstream(path) << "#!/bin/sh\necho $$ > " << dir.file("pid") << "\necho \"$@\" >> " << dir.file("calls") << "\ntee -a "
                      << dir.file("calls") << " | " << then << "\n";
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  return path;
}

// The real gantry-exec behind the recording.
inline std::string recorded_gantry_exec(const TempDir& dir, const std::string& binary) {
  return recording_program(dir, "gantry-exec.sh", binary + " \"$@\"");
}

}  // namespace gantry::testing
