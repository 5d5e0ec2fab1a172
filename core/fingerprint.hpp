#pragma once
// Stable 128-bit content hashes. The same graph (structure, costs and operations, not names) or cluster
// (devices and links) gives the same fingerprint on every machine, so results stored under it
// meet again wherever the same problem is tuned.
#include <cstdint>
#include <string>

namespace gantry {

class Graph;
class Cluster;

struct Fingerprint {
  std::uint64_t hi = 0, lo = 0;
  std::string hex() const;
  // The inverse of hex(): exactly 32 hex digits, else false.
  static bool from_hex(const std::string& text, Fingerprint& out);
  bool operator==(const Fingerprint& o) const { return hi == o.hi && lo == o.lo; }
  bool operator!=(const Fingerprint& o) const { return !(*this == o); }
};

class Hasher {
 public:
  void add_u64(std::uint64_t word);
  void add_double(double value);
  void add_string(const std::string& text);
  Fingerprint finish() const;

 private:
  std::uint64_t a_ = 0x9e3779b97f4a7c15ull, b_ = 0xc2b2ae3d27d4eb4full, count_ = 0;
};

Fingerprint fingerprint(const Graph& graph);
Fingerprint fingerprint(const Cluster& cluster);

}  // namespace gantry
