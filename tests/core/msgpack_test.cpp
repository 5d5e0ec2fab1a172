// MessagePack in place, checked against an independent implementation (nlohmann::json's
// to_msgpack / from_msgpack): what we write it reads as the same values, what it writes we read,
// integers and containers byte for byte; damaged input is refused without reading past its end.
#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "core/msgpack.hpp"

using gantry::MsgpackReader;
using gantry::MsgpackWriter;
using nlohmann::json;

namespace {

std::string theirs(const json& j) {
  const std::vector<std::uint8_t> bytes = json::to_msgpack(j);
  return std::string(bytes.begin(), bytes.end());
}

json parsed(const std::string& bytes) { return json::from_msgpack(bytes); }

const std::vector<std::uint64_t> kUnsigned = {0, 1, 127, 128, 255, 256, 65535, 65536, 0xffffffffull, 0x100000000ull,
                                              std::numeric_limits<std::uint64_t>::max()};
const std::vector<std::int64_t> kNegative = {-1, -32, -33, -128, -129, -32768, -32769,
                                             std::numeric_limits<std::int32_t>::min(),
                                             std::int64_t{std::numeric_limits<std::int32_t>::min()} - 1,
                                             std::numeric_limits<std::int64_t>::min()};

}  // namespace

TEST_CASE("msgpack integers, strings and containers are byte for byte what nlohmann writes", "[core]") {
  for (std::uint64_t v : kUnsigned) {
    MsgpackWriter w;
    w.uint(v);
    INFO(v);
    CHECK(w.bytes() == theirs(json(v)));
  }
  for (std::int64_t v : kNegative) {
    MsgpackWriter w;
    w.sint(v);
    INFO(v);
    CHECK(w.bytes() == theirs(json(v)));
  }
  for (std::size_t n : {0, 1, 31, 32, 255, 256, 65535, 65536}) {
    MsgpackWriter w;
    const std::string text(n, 'x');
    w.str(text);
    INFO(n);
    CHECK(w.bytes() == theirs(json(text)));
  }
  for (std::uint32_t n : {0u, 15u, 16u, 65535u, 65536u}) {
    MsgpackWriter w;
    w.array(n);
    json list = json::array();
    for (std::uint32_t i = 0; i < n; ++i) {
      w.uint(i % 100);
      list.push_back(i % 100);
    }
    INFO(n);
    CHECK(w.bytes() == theirs(list));
  }
  for (std::uint32_t n : {0u, 15u, 16u, 70000u}) {  // map keys in sorted order, as nlohmann keeps them
    MsgpackWriter w;
    json object = json::object();
    std::vector<std::string> keys;
    for (std::uint32_t i = 0; i < n; ++i) keys.push_back("k" + std::to_string(i));
    std::sort(keys.begin(), keys.end());
    w.map(n);
    for (const std::string& k : keys) {
      w.str(k);
      w.boolean(k.size() % 2 == 0);
      object[k] = k.size() % 2 == 0;
    }
    INFO(n);
    CHECK(w.bytes() == theirs(object));
  }
  for (std::size_t n : {0, 1, 255, 256, 65535, 65536}) {
    MsgpackWriter w;
    const std::string bytes(n, '\xfe');
    w.bin(bytes);
    INFO(n);
    CHECK(w.bytes() == theirs(json::binary(std::vector<std::uint8_t>(bytes.begin(), bytes.end()))));
    MsgpackReader r(w.bytes());
    std::string_view back;
    REQUIRE(r.bin(back));
    CHECK(back == bytes);
    CHECK(r.at_end());
  }
  MsgpackWriter w;
  w.nil();
  CHECK(w.bytes() == theirs(json(nullptr)));
}

TEST_CASE("msgpack doubles written are read back exactly by nlohmann, and its floats by us", "[core]") {
  const std::vector<double> values = {0.0, -0.0, 0.5, 0.1, -2.75, 1e300, -1e-300, 3.4028234663852886e38,
                                      std::numeric_limits<double>::infinity(), std::numeric_limits<double>::denorm_min()};
  for (double v : values) {
    MsgpackWriter w;
    w.real(v);
    INFO(v);
    CHECK(parsed(w.bytes()).get<double>() == v);
    // nlohmann writes values a float holds exactly as 32-bit floats: both widths must read back.
    const std::string bytes = theirs(json(v));
    MsgpackReader r(bytes);
    double back = 1;
    REQUIRE(r.real(back));
    CHECK(back == v);
    CHECK(r.at_end());
  }
  const std::string minus_seven = theirs(json(-7));
  MsgpackReader integer(minus_seven);
  double as_real = 0;
  REQUIRE(integer.real(as_real));  // an integer is a number too
  CHECK(as_real == -7);
}

TEST_CASE("msgpack reads every value nlohmann writes", "[core]") {
  for (std::uint64_t v : kUnsigned) {
    const std::string bytes = theirs(json(v));
    MsgpackReader r(bytes);
    std::uint64_t back = 0;
    REQUIRE(r.uint(back));
    CHECK(back == v);
    MsgpackReader s(bytes);
    std::int64_t signed_back = 0;
    CHECK(s.sint(signed_back) == (v <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())));
  }
  for (std::int64_t v : kNegative) {
    const std::string bytes = theirs(json(v));
    MsgpackReader r(bytes);
    std::int64_t back = 0;
    REQUIRE(r.sint(back));
    CHECK(back == v);
    MsgpackReader u(bytes);
    std::uint64_t never = 0;
    CHECK_FALSE(u.uint(never));  // a negative is no unsigned
    CHECK(u.offset() == 0);      // and nothing was consumed
  }
  const json doc = {{"name", "w1"}, {"list", {1, -2, 3.5, "x", nullptr, true}}, {"inner", {{"a", {{"b", false}}}}}};
  const std::string bytes = theirs(doc);
  MsgpackReader r(bytes);
  std::uint32_t entries = 0;
  REQUIRE(r.map(entries));
  CHECK(entries == 3);
  std::string_view key;
  REQUIRE(r.str(key));
  CHECK(key == "inner");  // nlohmann keeps keys sorted
  REQUIRE(r.skip());
  REQUIRE(r.str(key));
  CHECK(key == "list");
  std::uint32_t items = 0;
  REQUIRE(r.array(items));
  CHECK(items == 6);
  std::int64_t i = 0;
  double d = 0;
  std::string_view text;
  bool flag = false;
  CHECK((r.sint(i) && i == 1));
  CHECK((r.sint(i) && i == -2));
  CHECK((r.real(d) && d == 3.5));
  CHECK((r.str(text) && text == "x"));
  CHECK(r.nil());
  CHECK((r.boolean(flag) && flag));
  REQUIRE(r.str(key));
  CHECK(key == "name");
  CHECK((r.str(text) && text == "w1"));
  CHECK(r.at_end());
  CHECK(r.peek() == MsgpackReader::Kind::end);
}

TEST_CASE("damaged msgpack is refused without reading past its end", "[core]") {
  json doc = {{"device", {0, 3, 1, 2}}, {"priority", {0.25, -1e9, 7}}, {"blob", json::binary({1, 2, 3})},
              {"text", std::string(300, 'y')}, {"big", 0xffffffffffull}};
  const std::string bytes = theirs(doc);
  SECTION("every truncation fails to skip and consumes nothing") {
    for (std::size_t n = 0; n < bytes.size(); ++n) {
      MsgpackReader r(std::string_view(bytes).substr(0, n));
      INFO(n);
      CHECK_FALSE(r.skip());
      CHECK(r.offset() == 0);
    }
    MsgpackReader whole(bytes);
    CHECK(whole.skip());
    CHECK(whole.at_end());
  }
  SECTION("counts larger than the input are refused") {
    const std::string huge_array = "\xdd\xff\xff\xff\xff\x01";
    const std::string huge_map = "\xdf\x7f\xff\xff\xff\x01\x02";
    const std::string huge_str = std::string("\xdb\x00\x10\x00\x00", 5) + "abc";
    std::uint32_t n = 0;
    std::string_view text;
    CHECK_FALSE(MsgpackReader(huge_array).array(n));
    CHECK_FALSE(MsgpackReader(huge_map).map(n));
    CHECK_FALSE(MsgpackReader(huge_str).str(text));
    CHECK_FALSE(MsgpackReader(huge_array).skip());
  }
  SECTION("deep nesting and the never-used byte") {
    const std::string deep(200, '\x91');  // arrays of one array of ...
    CHECK_FALSE(MsgpackReader(deep + std::string(1, '\0')).skip());
    CHECK(MsgpackReader(std::string(60, '\x91') + std::string(1, '\0')).skip());
    CHECK_FALSE(MsgpackReader("\xc1").skip());
    CHECK(MsgpackReader("\xc1").peek() == MsgpackReader::Kind::invalid);
  }
  SECTION("random damage never crashes") {
    std::mt19937_64 rng(11);
    for (int t = 0; t < 3000; ++t) {
      std::string copy = bytes;
      for (int k = 0; k < 3; ++k) copy[rng() % copy.size()] = static_cast<char>(rng());
      MsgpackReader r(copy);
      const bool ok = r.skip();
      CHECK(r.offset() <= copy.size());
      if (!ok) CHECK(r.offset() == 0);
    }
  }
}
