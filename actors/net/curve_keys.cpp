#include "actors/net/curve_keys.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <zmq.h>

namespace gantry {

namespace {

bool is_z85_key(const std::string& text) {
  if (text.size() != 40) return false;
  std::uint8_t binary[32];
  return zmq_z85_decode(binary, text.c_str()) != nullptr;
}

// The value of "NAME: VALUE" lines of a key file.
Result<std::string> key_line(const std::string& path, const std::string& name) {
  std::ifstream in(path);
  if (!in) return make_error(path + ": cannot read the key file");
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.rfind(name + ":", 0) != 0) continue;
    std::string value = line.substr(name.size() + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    value.erase(value.find_last_not_of(" \t\r") + 1);
    if (!is_z85_key(value)) return make_error(path + ":" + std::to_string(number) + ": " + name + " is not a 40-character Z85 key");
    return value;
  }
  return make_error(path + ": no \"" + name + ":\" line (make keys with `gantry keys generate`)");
}

}  // namespace

Result<CurveKeyPair> generate_curve_key_pair() {
  if (!zmq_has("curve")) return make_error("this ZeroMQ was built without CURVE support");
  char pub[41], sec[41];
  if (zmq_curve_keypair(pub, sec) != 0) return make_error(std::string("cannot make a CURVE key pair: ") + zmq_strerror(zmq_errno()));
  return CurveKeyPair{pub, sec};
}

Status write_curve_key_files(const std::string& dir, const std::string& name, const CurveKeyPair& keys) {
  // A name, not a path: "../x" would write outside `dir`, "" a hidden ".key".
  if (name.empty() || name[0] == '.' ||
      name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") != std::string::npos)
    return make_error("key name '" + name + "': use letters, digits, '.', '_' and '-', not starting with '.'");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const std::string key = dir + "/" + name + ".key", pub = dir + "/" + name + ".pub";
  // Created private (0600) and only if new: written first and made private after, the secret
  // would be readable by others in between.
  const int fd = ::open(key.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd < 0 && errno == EEXIST) return make_error(key + " exists; remove it first to replace the key");
  if (fd < 0) return make_error(key + ": cannot write: " + std::strerror(errno));
  const std::string text = "# gantry CURVE key pair of " + name + ": keep it secret\npublic-key: " + keys.public_key +
                           "\nsecret-key: " + keys.secret_key + "\n";
  const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  if (::close(fd) != 0 || !written) return make_error(key + ": cannot write");
  std::ofstream out(pub);
  out << "# gantry CURVE public key of " << name << "\npublic-key: " << keys.public_key << "\n";
  if (!out) return make_error(pub + ": cannot write");
  return Ok{};
}

Result<CurveKeyPair> read_curve_key_pair(const std::string& path) {
  auto pub = key_line(path, "public-key");
  if (!pub) return pub.error();
  auto sec = key_line(path, "secret-key");
  if (!sec) return sec.error();
  return CurveKeyPair{pub.value(), sec.value()};
}

Result<std::string> read_curve_public_key(const std::string& path) { return key_line(path, "public-key"); }

Result<std::vector<std::string>> read_authorized_keys(const std::string& path) {
  std::ifstream in(path);
  if (!in) return make_error(path + ": cannot read the authorized keys");
  std::vector<std::string> keys;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    std::istringstream words(line);
    std::string key;
    // '#' starts a comment only at the start of a line: Z85 keys may contain it.
    if (!(words >> key) || key[0] == '#') continue;
    if (key == "public-key:" && !(words >> key)) continue;  // a .pub file's line pasted as is
    if (!is_z85_key(key)) return make_error(path + ":" + std::to_string(number) + ": not a 40-character Z85 public key");
    keys.push_back(key);
  }
  if (keys.empty()) return make_error(path + ": no public keys (one per line)");
  return keys;
}

}  // namespace gantry
