#pragma once
// CURVE keys for the cluster (ZeroMQ's CurveZMQ: encryption and authentication by public key).
// Files (docs/protocol.md, "Security"):
//   NAME.key         the key pair, "public-key: Z85" and "secret-key: Z85" lines, mode 0600
//   NAME.pub         "public-key: Z85": what the other side is given
//   authorized_keys  one public key (Z85, 40 characters) per line, optionally followed by a name;
//                    lines starting with '#' are comments ('#' is also a Z85 character).
//                    A coordinator accepts only these.
#include <string>
#include <vector>

#include "core/result.hpp"

namespace gantry {

struct CurveKeyPair {
  std::string public_key, secret_key;  // Z85, 40 characters each
};

// What a gateway needs for CURVE; `enabled` false = plain (NULL mechanism).
struct CurveSettings {
  bool enabled = false;
  CurveKeyPair own;
  std::string server_public_key;          // a worker's or client's: the coordinator's public key
  std::vector<std::string> authorized;    // a coordinator's: the public keys it accepts
};

Result<CurveKeyPair> generate_curve_key_pair();
// Writes DIR/NAME.key (0600) and DIR/NAME.pub; refuses to overwrite an existing key.
Status write_curve_key_files(const std::string& dir, const std::string& name, const CurveKeyPair& keys);
Result<CurveKeyPair> read_curve_key_pair(const std::string& path);
// A .pub file, or a .key file (its public half).
Result<std::string> read_curve_public_key(const std::string& path);
Result<std::vector<std::string>> read_authorized_keys(const std::string& path);

}  // namespace gantry
