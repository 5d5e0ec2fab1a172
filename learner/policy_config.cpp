#include "learner/policy_config.hpp"

namespace gantry {

const char* to_string(Ablation ablation) {
  switch (ablation) {
    case Ablation::dual: return "dual";
    case Ablation::plc_only: return "plc-only";
    case Ablation::random_sel: return "random-sel";
    case Ablation::gdp: return "gdp";
  }
  return "dual";
}

std::optional<Ablation> parse_ablation(const std::string& name) {
  for (Ablation a : {Ablation::dual, Ablation::plc_only, Ablation::random_sel, Ablation::gdp})
    if (name == to_string(a)) return a;
  return std::nullopt;
}

}  // namespace gantry
