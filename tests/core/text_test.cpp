// The shared text helpers: byte counts in binary units and seconds to significant digits, checked
// against values worked out by hand.
#include <catch2/catch.hpp>

#include "core/text.hpp"

using namespace gantry;

TEST_CASE("format_bytes uses binary units with one decimal past bytes", "[core]") {
  CHECK(format_bytes(0) == "0 B");
  CHECK(format_bytes(1023) == "1023 B");
  CHECK(format_bytes(1536) == "1.5 KiB");                       // 1.5 x 1024
  CHECK(format_bytes(80.0 * 1024 * 1024 * 1024) == "80.0 GiB");
  CHECK(format_bytes(1.25 * 1024 * 1024 * 1024 * 1024) == "1.2 TiB");  // 1.25 rounds to even
  CHECK(format_bytes(3.0 * 1024 * 1024 * 1024 * 1024 * 1024) == "3072.0 TiB");  // no unit above TiB
}

TEST_CASE("format_seconds prints significant digits without trailing zeros", "[core]") {
  CHECK(format_seconds(1.6223712) == "1.62237 s");
  CHECK(format_seconds(0.5) == "0.5 s");
  CHECK(format_seconds(12.345, 3) == "12.3 s");
  CHECK(format_seconds(1234.5, 3) == "1.23e+03 s");
}

TEST_CASE("ends_with compares the tail only", "[core]") {
  CHECK(ends_with("graph.json", ".json"));
  CHECK_FALSE(ends_with("json", ".json"));
  CHECK(ends_with("x", ""));
}
