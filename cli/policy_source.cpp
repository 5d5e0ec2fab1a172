#include "cli/policy_source.hpp"

#include <fstream>
#include <sstream>

#include "cli/cli_common.hpp"
#include "core/text.hpp"
#include "learner/learned_placement.hpp"
#include "storage/store.hpp"

namespace gantry::cli {

bool is_policy_file(const std::string& spec) {
  return spec.find('/') != std::string::npos || ends_with(spec, ".policy");
}

LoadedPolicy load_policy(const std::string& spec, const std::string& data_dir) {
  LoadedPolicy out;
  if (spec == "builtin") {
    auto w = default_policy();
    if (!w) throw CliError("policy 'builtin': " + w.error().message);
    out.weights = std::move(w).value();
    out.label = "builtin";
    return out;
  }
  if (is_policy_file(spec)) {
    std::ifstream in(spec, std::ios::binary);
    if (!in) throw CliError("policy file " + spec + " cannot be read");
    std::ostringstream bytes;
    bytes << in.rdbuf();
    auto w = PolicyWeights::from_bytes(bytes.str(), spec);
    if (!w) throw CliError(w.error().message);
    out.weights = std::move(w).value();
    out.label = spec;
    return out;
  }
  auto ref = parse_policy_ref(spec);
  if (!ref) throw CliError(ref.error().message);
  auto store = Store::open_read_only(data_dir);
  if (!store) throw CliError("policy '" + spec + "': " + store.error().message);
  auto record = store.value()->policy(ref.value().name, ref.value().version);
  if (!record) throw CliError("policy '" + spec + "': " + record.error().message);
  if (!record.value())
    throw CliError("policy '" + spec + "' is not in " + data_dir + " (`gantry query policies` lists what is)");
  out.record = std::move(*record.value());
  out.label = out.record.name + ":" + std::to_string(out.record.version);
  auto w = PolicyWeights::from_bytes(out.record.weights, "policy " + out.label);
  if (!w) throw CliError(w.error().message);
  out.weights = std::move(w).value();
  out.record.weights.clear();
  return out;
}

}  // namespace gantry::cli
