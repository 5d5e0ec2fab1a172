#include "cli/policy_files.hpp"

#include "cli/cli_common.hpp"
#include "cli/learning_curve.hpp"
#include "core/json_util.hpp"
#include "learner/learning_curve.hpp"

namespace gantry::cli {

void write_policy_files(const PolicyRecord& policy, const std::string& save_path, const std::string& curve_path) {
  const std::string label = policy.name + ":" + std::to_string(policy.version);
  if (!save_path.empty())
    if (auto s = write_text_file(save_path, policy.weights); !s) throw CliError("--save: " + s.error().message);
  if (curve_path.empty()) return;
  if (policy.curve.empty()) throw CliError("--curve " + curve_path + ": policy " + label + " was stored without a learning curve");
  auto curve = learning_curve_from_csv(policy.curve, "the learning curve of policy " + label);
  if (!curve) throw CliError(curve.error().message);
  write_learning_curve(curve_path, curve.value(), "gantry train " + policy.ablation + " on " + policy.graphs + " (" + label + ")");
}

}  // namespace gantry::cli
