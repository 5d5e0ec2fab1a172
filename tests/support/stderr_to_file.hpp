#pragma once
// Everything written to stderr (log_line) while one lives goes to a file instead: tests of what
// gantry's actors say.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "tests/support/child_process.hpp"
#include "tests/support/temp_dir.hpp"

namespace gantry::testing {

class StderrToFile {
 public:
  explicit StderrToFile(const std::string& path) : path_(path) {
    std::fflush(stderr);
    saved_ = dup(STDERR_FILENO);
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, STDERR_FILENO);
    close(fd);
  }
  ~StderrToFile() { restore(); }
  StderrToFile(const StderrToFile&) = delete;
  StderrToFile& operator=(const StderrToFile&) = delete;

  // What was written, with stderr given back.
  std::string text() {
    restore();
    return read_text(path_);
  }

 private:
  void restore() {
    if (saved_ < 0) return;
    std::fflush(stderr);
    dup2(saved_, STDERR_FILENO);
    close(saved_);
    saved_ = -1;
  }
  std::string path_;
  int saved_ = -1;
};

// What is written to stderr while `act` runs.
template <class Act>
std::string stderr_while(Act act) {
  TempDir dir;
  StderrToFile capture(dir.file("stderr.txt"));
  act();
  return capture.text();
}

}  // namespace gantry::testing
