#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "core/cluster.hpp"
#include "core/json_util.hpp"
#include "core/yaml_keys.hpp"

using namespace gantry;

// A key written twice in one object: nlohmann keeps the last, yaml-cpp's lookup the first; gantry's
// readers refuse the file instead, naming the key where it is. Paths and lines below are counted by
// hand from the texts.

TEST_CASE("parse_json refuses a key set twice, naming its path", "[core]") {
  const auto top = parse_json(R"({"a": 1, "b": 2, "a": 3})", "t.json");
  REQUIRE_FALSE(top.ok());
  CHECK(top.error().message == "t.json: $.a: the key is set twice in its object; each key once");

  // The third element of "ops" (after an object and an array), in its "attrs" object.
  const auto nested = parse_json(R"({"ops": [{"x": 1}, [1, [2, 3], {"k": 0}], {"name": "m", "attrs": {"n": 1, "n": 2}}]})",
                                 "g.json");
  REQUIRE_FALSE(nested.ok());
  CHECK(nested.error().message == "g.json: $.ops[2].attrs.n: the key is set twice in its object; each key once");

  // The same key in different objects is no duplicate, and one object may hold many keys.
  std::string many = "{";
  for (int i = 0; i < 100; ++i) many += (i ? ", \"" : "\"") + std::to_string(i) + "\": " + std::to_string(i);
  const auto fine = parse_json(R"({"a": {"k": 1}, "b": {"k": 2}, "c": [{"k": 3}, {"k": 4}], "m": )" + many + "}}", "f.json");
  REQUIRE(fine.ok());
  CHECK(fine.value()["c"][1]["k"] == 4);
  CHECK(fine.value()["m"]["99"] == 99);
  const auto late = parse_json(many + ", \"57\": 0}", "m.json");  // a repeat past the first few keys
  REQUIRE_FALSE(late.ok());
  CHECK(late.error().message == "m.json: $.57: the key is set twice in its object; each key once");
}

TEST_CASE("parse_json's errors and values are nlohmann's own", "[core]") {
  const std::string text = R"({"x": [1, -2, 3.5, "s", null, true, {"y": []}], "z": 18446744073709551615})";
  const auto parsed = parse_json(text, "v.json");
  REQUIRE(parsed.ok());
  CHECK(parsed.value() == nlohmann::json::parse(text));
  const auto broken = parse_json("{\"a\": [1, 2}", "b.json");
  REQUIRE_FALSE(broken.ok());
  CHECK(broken.error().message.rfind("b.json: invalid JSON: parse error at line 1, column 12", 0) == 0);
  CHECK_FALSE(parse_json("", "e.json").ok());
  CHECK_FALSE(parse_json("{} {}", "two.json").ok());
}

TEST_CASE("check_unique_keys names a YAML key set twice and both its lines", "[core]") {
  const YAML::Node fine = YAML::Load("a: 1\nb:\n  - {k: 1}\n  - {k: 2}\nc: {k: 3}\n");
  CHECK(check_unique_keys(fine, "f.yaml").ok());
  const YAML::Node nested = YAML::Load("a: 1\nb:\n  - {k: 1}\n  - x: 2\n    y: 3\n    x: 4\n");
  const Status twice = check_unique_keys(nested, "n.yaml");
  REQUIRE_FALSE(twice.ok());
  CHECK(twice.error().message == "n.yaml:6: key \"x\" is set again (first set on line 4); each key once");
}

TEST_CASE("check_unique_keys stops at a bomb of nested aliases instead of walking its billions of nodes", "[core]") {
  // Each level is a list of ten references to the one before: 10^9 nodes at the ninth.
  std::string text = "junk:\n  a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int level = 1; level <= 9; ++level) {
    const std::string before = "*a" + std::to_string(level - 1);
    text += "  a" + std::to_string(level) + ": &a" + std::to_string(level) + " [";
    for (int i = 0; i < 10; ++i) text += (i ? ", " : "") + before;
    text += "]\n";
  }
  const Status bomb = check_unique_keys(YAML::Load(text), "bomb.yaml");
  REQUIRE_FALSE(bomb.ok());
  CHECK(bomb.error().message == "bomb.yaml: more than 100000 YAML nodes (counting each use of an alias): not a gantry file");
}

TEST_CASE("a cluster file that sets a key twice is refused", "[core]") {
  const std::string text =
      "name: c\n"
      "devices:\n"
      "  - {count: 2, peak_tflops: 1, mem_bandwidth_gbs: 1, memory_gib: 1, memory_gib: 2}\n";
  const auto cluster = Cluster::from_yaml(text, "c.yaml");
  REQUIRE_FALSE(cluster.ok());
  CHECK(cluster.error().message == "c.yaml:3: key \"memory_gib\" is set again (first set on line 3); each key once");
}
