// A child process as the executor runs gantry-exec: its exit status, a conversation over its
// stdin and stdout, and a stop that takes its whole process group.
#include <signal.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "core/child_process.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/temp_dir.hpp"

using namespace gantry;

TEST_CASE("a child's exit status and output are its own", "[core]") {
  const testing::TempDir dir;
  ChildProcess child({"sh", "-c", "echo said; exit 3"}, dir.file("log"));
  CHECK(child.wait(10) == 3);
  CHECK(child.log() == "said\n");
  CHECK_THROWS_WITH(ChildProcess({dir.file("none")}, dir.file("log2")), Catch::Contains("cannot start " + dir.file("none")));
}

TEST_CASE("a talking child answers line by line; silence times out; its end closes the line", "[core]") {
  const testing::TempDir dir;
  // Echoes each line it reads with a prefix, the first answer in two writes (a line split in transit).
  ChildProcess child({"sh", "-c", "read a; printf 'got '; sleep 0.1; echo \"$a\"; while read b; do echo \"got $b\"; done"},
                     dir.file("log"), ChildOptions{true, true});
  std::string line;
  CHECK(child.read_line(&line, 0.2) == 0);  // nothing sent yet: nothing said
  REQUIRE(child.send_line("one"));
  REQUIRE(child.read_line(&line, 10) == 1);
  CHECK(line == "got one");
  REQUIRE(child.send_line("two"));
  REQUIRE(child.send_line("three"));
  REQUIRE(child.read_line(&line, 10) == 1);
  CHECK(line == "got two");
  REQUIRE(child.read_line(&line, 10) == 1);
  CHECK(line == "got three");
  child.signal(SIGKILL);
  CHECK(child.read_line(&line, 10) == -1);
  CHECK(child.wait(10) == 128 + SIGKILL);
  CHECK_FALSE(child.send_line("four"));  // no SIGPIPE: false
}

TEST_CASE("stopping a child that leads its process group stops what it started too", "[core]") {
  const testing::TempDir dir;
  const std::string pid_file = dir.file("grandchild");
  ChildProcess child({"sh", "-c", "sleep 60 & echo $! > " + pid_file + "; wait"}, dir.file("log"), ChildOptions{true, false});
  int grandchild = 0;
  for (int i = 0; i < 100 && grandchild == 0; ++i) {
    std::ifstream in(pid_file);
    if (!(in >> grandchild)) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  REQUIRE(grandchild > 0);
  CHECK(child.stop(5) == 128 + SIGTERM);
  // The grandchild got the signal too: gone, or ended and waiting to be reaped by its new parent.
  CHECK(testing::wait_until([&] { return testing::process_gone(grandchild); }, 5));
}
