#pragma once
// How the simulated runtime behaves. The defaults model an asynchronous, work-conserving runtime
// (einsummable-like): a free stream takes the ready op that became ready first.
#include <cstdint>
#include <optional>
#include <string>

namespace gantry {

enum class Dispatch : std::uint8_t {
  fifo,         // work-conserving, the op that became ready first (ties: in event order)
  priority,     // work-conserving, the ready op with the highest given priority
  fixed_order,  // each device runs its given list in order (pipeline schedules)
};

enum class LinkModel : std::uint8_t {
  contention,  // each directed link carries one transfer at a time, FIFO, and transfers share the
               // devices' and hosts' ports (Cluster::ports_on_path) in proportion to bandwidth
  unlimited,   // any number of concurrent transfers per link, ports ignored
};

// The noise the simulator takes: a sigma up to 3 (e^3: op times 20x their mean at one sigma) and
// up to 10,000 draws per evaluation. The flags and stored options are held to them alike.
constexpr double kMaxNoiseSigma = 3;
constexpr int kMaxNoiseSamples = 10'000;

struct SimOptions {
  Dispatch dispatch = Dispatch::fifo;
  LinkModel links = LinkModel::contention;
  bool dedup_transfers = true;  // a tensor travels to a device once, whatever its consumers there
  int streams = 0;              // ops per device at once; 0 = each device's own `streams`
  double noise_sigma = 0;       // multiplicative log-normal noise on op times (mean 1)
  std::uint64_t seed = 1;       // seed of the noise
  // Noise draws per makespan() call: it returns their mean, an estimate of the expected makespan
  // with common random numbers (sim/noise.hpp). run() simulates draw 0 (the seed itself).
  int noise_samples = 1;
  bool track_memory = false;    // peak memory per device, received copies included
  bool record = false;          // keep per-op and per-transfer timelines (traces, SVG, metrics)
  // The public DOPPLER simulator, reproduced event for event: one op at a time per device, FIFO
  // in SimPy's order, each cross-device edge pays its producer's transfer cost, unlimited links,
  // no de-duplication. Overrides the options above except `record`.
  bool doppler = false;
};

// The names used on the command line and in stored options ("fifo", "priority", "fixed-order";
// "contention", "unlimited"), and back (nullopt for an unknown name).
const char* to_string(Dispatch dispatch);
const char* to_string(LinkModel links);
std::optional<Dispatch> parse_dispatch(const std::string& name);
std::optional<LinkModel> parse_link_model(const std::string& name);

}  // namespace gantry
