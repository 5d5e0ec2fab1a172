#include "core/json_util.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unordered_set>

namespace gantry {

Result<std::string> read_text_file(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return make_error(path + ": cannot read: " + std::strerror(errno));
  if (S_ISDIR(info.st_mode)) return make_error(path + ": is a directory, not a file");
  std::ifstream file(path, std::ios::binary);
  if (!file) return make_error(path + ": cannot read: " + std::strerror(errno));
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

Status write_text_file(const std::string& path, const std::string& text) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) return make_error(path + ": cannot open for writing: " + std::strerror(errno));
  file << text;
  if (!file.flush()) return make_error(path + ": write failed: " + std::strerror(errno));
  return Ok{};
}

namespace {

using Json = nlohmann::json;

// nlohmann's DOM builder, watching keys: it throws Duplicate at a key its object already has. It
// knows where the parser is (each open object's key, each open array's index), to name the key
// by its path ("$.ops[3].name"). Frames are reused, not reallocated, object after object: a 6 MB
// graph parses in 51-54 ms, as with nlohmann::json::parse (52-55 ms); nlohmann's own parser
// callback, which could do this, made that parse 27x slower.
class KeyWatchingParser : public nlohmann::detail::json_sax_dom_parser<Json> {
 public:
  struct Duplicate {
    std::string path;
  };

  explicit KeyWatchingParser(Json& result) : json_sax_dom_parser(result, /*allow_exceptions=*/true) {}

  bool start_object(std::size_t n) {
    open(false);
    return json_sax_dom_parser::start_object(n);
  }
  bool key(Json::string_t& k) {
    Frame& object = frames_[depth_ - 1];
    object.key = k;
    if (seen_before(object, k)) throw Duplicate{path()};
    return json_sax_dom_parser::key(k);
  }
  bool end_object() {
    close();
    return json_sax_dom_parser::end_object();
  }
  bool start_array(std::size_t n) {
    open(true);
    return json_sax_dom_parser::start_array(n);
  }
  bool end_array() {
    close();
    return json_sax_dom_parser::end_array();
  }
  bool null() { return value_done(json_sax_dom_parser::null()); }
  bool boolean(bool v) { return value_done(json_sax_dom_parser::boolean(v)); }
  bool number_integer(Json::number_integer_t v) { return value_done(json_sax_dom_parser::number_integer(v)); }
  bool number_unsigned(Json::number_unsigned_t v) { return value_done(json_sax_dom_parser::number_unsigned(v)); }
  bool number_float(Json::number_float_t v, const Json::string_t& s) {
    return value_done(json_sax_dom_parser::number_float(v, s));
  }
  bool string(Json::string_t& v) { return value_done(json_sax_dom_parser::string(v)); }
  bool binary(Json::binary_t& v) { return value_done(json_sax_dom_parser::binary(v)); }

 private:
  struct Frame {
    bool array = false;
    std::size_t index = 0;
    std::string key;
    std::vector<std::string> keys;         // an object's keys so far: a gantry object has a few,
    std::unordered_set<std::string> many;  // but a map may have thousands (searched, past a few)
  };

  static constexpr std::size_t kFewKeys = 16;

  static bool seen_before(Frame& object, const std::string& k) {
    if (object.many.empty() && object.keys.size() < kFewKeys) {
      if (std::find(object.keys.begin(), object.keys.end(), k) != object.keys.end()) return true;
      object.keys.push_back(k);
      return false;
    }
    if (object.many.empty()) object.many.insert(object.keys.begin(), object.keys.end());
    return !object.many.insert(k).second;
  }

  void open(bool array) {
    if (depth_ == frames_.size()) frames_.emplace_back();
    Frame& f = frames_[depth_++];
    f.array = array;
    f.index = 0;
    f.keys.clear();
    // A fresh set, not clear(): clear() zeroes every bucket, and after one map of 300k keys each
    // later object at its depth paid for them (9.7 s against 0.8 s for the same file reordered).
    if (!f.many.empty()) std::unordered_set<std::string>().swap(f.many);
  }
  void close() {
    --depth_;
    value_done(true);
  }
  bool value_done(bool ok) {  // an array's element ended: the next has the next index
    if (depth_ > 0 && frames_[depth_ - 1].array) ++frames_[depth_ - 1].index;
    return ok;
  }
  std::string path() const {
    std::string p = "$";
    for (std::size_t i = 0; i < depth_; ++i)
      p += frames_[i].array ? "[" + std::to_string(frames_[i].index) + "]" : "." + frames_[i].key;
    return p;
  }

  std::vector<Frame> frames_;
  std::size_t depth_ = 0;
};

}  // namespace

Result<nlohmann::json> parse_json(const std::string& text, const std::string& source) {
  // nlohmann keeps the last of a key written twice; a file that sets one twice is refused, as the
  // YAML readers refuse theirs (core/yaml_keys.hpp), rather than read with one of its values.
  try {
    Json result;
    KeyWatchingParser parser(result);
    Json::sax_parse(text, &parser);
    return result;
  } catch (const KeyWatchingParser::Duplicate& d) {
    return make_error(source + ": " + d.path + ": the key is set twice in its object; each key once");
  } catch (const nlohmann::json::exception& e) {  // parse errors carry "line L, column C"; 1e400 is out_of_range
    return make_error(source + ": invalid JSON: " + json_error_text(e));
  }
}

std::string json_error_text(const std::exception& e) {
  std::string what = e.what();  // "[json.exception.parse_error.101] parse error at line 1, ...": the tag is the library's
  if (!what.empty() && what[0] == '[' && what.find("] ") != std::string::npos) what = what.substr(what.find("] ") + 2);
  return what;
}

Status check_format_and_version(const nlohmann::json& root, const std::string& format, const std::string& where) {
  if (!root.is_object()) return Ok{};
  if (root.contains("format") && root["format"] != format)
    return make_error(where + ".format: " + json_text(root["format"]) + " is not a " + format + " file (expected \"" +
                      format + "\")");
  if (root.contains("version") && !(root["version"].is_number_integer() && root["version"].get<long long>() == 1))
    return make_error(where + ".version: " + json_text(root["version"]) + " is not supported (this gantry reads version 1)");
  return Ok{};
}

Status check_known_keys(const nlohmann::json& object, const std::vector<std::string>& known, const std::string& source) {
  if (!object.is_object()) return Ok{};
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (std::find(known.begin(), known.end(), it.key()) != known.end()) continue;
    std::string list;
    for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
    return make_error(source + ": unknown key \"" + it.key() + "\" (known: " + list + ")");
  }
  return Ok{};
}

std::string json_text(const nlohmann::json& value, int indent) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace gantry
