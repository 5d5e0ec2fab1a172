#pragma once
// Measured op and transfer times per device kind (the store's `profiles` family): running
// statistics per (device kind, op signature), and the cost model's lookup. An op whose exact
// signature was measured costs its mean; another op of a measured family is read off a line in log
// time against log work through the family's three nearest measured shapes (by their features: a
// GEMM's rows, inner and output widths; inverse-squared-distance weights), its slope clamped to
// [0, 1]: 1 keeps the neighbours' time per unit of work (compute-bound ops), lower slopes follow
// small ops' fixed costs; beyond the largest neighbour the line goes on with slope 1. Transfers
// are filed under the kind pair "A->B" and fitted with a line, latency + bytes / bandwidth, by
// least squares of the relative error over the measured sizes.
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "core/fingerprint.hpp"
#include "core/op_signature.hpp"
#include "core/result.hpp"

namespace gantry {

// Welford's running mean and variance.
struct RunningStats {
  double count = 0, mean = 0, m2 = 0;
  void add(double sample);
  void merge(const RunningStats& other);  // Chan et al.'s parallel combination
  double variance() const { return count > 1 ? m2 / (count - 1) : 0; }
};

struct ProfileEntry {
  std::string device_kind;  // a device kind, or "A->B" for transfers
  OpSignature op;
  RunningStats seconds;
};

struct LinkFit {
  double latency = 0;    // seconds
  double bandwidth = 0;  // bytes/s (0: no fit)
};

class ProfileTable {
 public:
  void add(const std::string& device_kind, const OpSignature& op, double seconds);
  void merge(const ProfileEntry& entry);
  bool empty() const { return entries_.empty(); }
  std::size_t size() const { return entries_.size(); }
  std::vector<ProfileEntry> entries() const;

  // The time of `op` on a device of `kind`, or nullopt when its family was never measured there.
  std::optional<double> op_time(const std::string& kind, const OpSignature& op) const;
  // latency + bytes / bandwidth between kinds, fitted over the measured transfers. Sizes that span
  // less than a factor of 4 cannot tell latency from bandwidth (a line through nearly one x is any
  // slope): then the bandwidth is `nominal_bandwidth` (the link's, bytes/s) and the latency what
  // the measurements leave over it. nullopt: nothing measured, or no fit and no nominal bandwidth.
  // With `devices` (from, to), that pair's own transfers are fitted first (links of one kind pair
  // differ: NVLink and PCIe pairs of one box), the kind pair's when the pair has no fit.
  std::optional<LinkFit> link(const std::string& from_kind, const std::string& to_kind, double nominal_bandwidth = 0,
                              std::optional<std::pair<int, int>> devices = std::nullopt) const;
  // How much longer an op takes on a device of `kind` while another device of its host runs an op
  // beside it (cores sharing caches, memory bandwidth and clocks; partitions of one GPU). The
  // table's op times are solo times, and the simulator stretches an op that starts beside k busy
  // devices by 1 + (factor - 1) x k. 1 when never measured. Filed as an entry of the family "co-run" whose
  // mean is the factor, so it is stored, carried and fingerprinted with the op times.
  double co_run_slowdown(const std::string& kind) const;
  void add_co_run_slowdown(const std::string& kind, double factor);
  // The content, each mean to 3 significant digits: more samples that do not move a mean do not
  // change it, so stored bests keyed by it stay current (sim/runtime_fingerprint.hpp).
  Fingerprint fingerprint() const;

 private:
  std::optional<LinkFit> fit_link(const std::string& kind, double nominal_bandwidth) const;

  std::map<std::pair<std::string, std::string>, ProfileEntry> entries_;  // (kind, signature)
};

// Whether `entry` is a kind's co-run slowdown (family "co-run") rather than an op's or a
// transfer's time, and how many entries are such times.
bool is_co_run_entry(const ProfileEntry& entry);
std::size_t measured_signatures(const ProfileTable& table);

// Where transfer samples are filed: under the kind pair "A->B", and under the device pair of the
// cluster they were measured on, "A->B@FROM-TO" (device indices).
std::string transfer_kind(const std::string& from_kind, const std::string& to_kind);
std::string transfer_pair_kind(const std::string& from_kind, const std::string& to_kind, int from, int to);

// One entry as a JSON object (kind, family, signature, work, features, count, mean, m2): an entry
// of the profiles format and the store's record of it. Reading checks the types, a count of at
// least 1 and a non-negative mean; the error starts with `where`.
nlohmann::json profile_entry_json(const ProfileEntry& entry);
Result<ProfileEntry> profile_entry_from_json(const nlohmann::json& json, const std::string& where);

// The table as JSON text (a job carries the profiles it was tuned with), and back; the error names
// `source` and the entry.
std::string profiles_to_json(const ProfileTable& table);
Result<ProfileTable> profiles_from_json(const std::string& text, const std::string& source);

}  // namespace gantry
