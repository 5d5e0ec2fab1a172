#pragma once
// The shape of a DOPPLER policy and which variant of it runs: the dual policy (SEL picks the next
// op, PLC its device) or one of the paper's baselines on the same encoder code.
#include <optional>
#include <string>

namespace gantry {

enum class Ablation {
  dual,        // SEL + PLC (DOPPLER)
  plc_only,    // ops in topological order, PLC places each (Placeto-like single policy)
  random_sel,  // SEL uniform over the candidates, PLC learned
  gdp,         // one encoder pass gives every op's device distribution at once (GDP-like)
};

const char* to_string(Ablation ablation);  // "dual", "plc-only", "random-sel", "gdp"
std::optional<Ablation> parse_ablation(const std::string& name);

// Static node features (compute, bottom level, top level, input comm, output comm) and dynamic
// per-device features seen by PLC (learner/placement_env.hpp lists them).
constexpr int kNodeFeatures = 5;
constexpr int kDeviceFeatures = 8;
constexpr int kCandidateFeatures = 5;  // SEL's view of a candidate now (learner/placement_env.hpp)
constexpr int kMaxWidth = 1024;  // the widest hidden or head layer a policy may have

struct PolicyConfig {
  int hidden = 64;   // node embedding width
  int head = 64;     // hidden width of the SEL / PLC heads
  int state = 16;    // width of the embedding of per-step features (candidates', devices')
  int steps = 3;     // message-passing rounds of the encoder
  Ablation ablation = Ablation::dual;
  int devices = 0;   // the device count a GDP policy outputs (the others serve any count)
};

}  // namespace gantry
