#include "sim/runtime_fingerprint.hpp"

namespace gantry {

Fingerprint runtime_fingerprint(const Cluster& cluster, const SimOptions& options) {
  const Fingerprint machine = fingerprint(cluster);
  Hasher h;
  h.add_string("gantry-runtime-v1");
  h.add_u64(machine.hi);
  h.add_u64(machine.lo);
  h.add_u64(options.doppler);
  if (!options.doppler) {  // the DOPPLER engine ignores the rest
    h.add_u64(static_cast<std::uint64_t>(options.dispatch));
    h.add_u64(static_cast<std::uint64_t>(options.links));
    h.add_u64(options.dedup_transfers);
    h.add_u64(static_cast<std::uint64_t>(options.streams));
    h.add_double(options.noise_sigma);
    if (options.noise_sigma > 0) {  // the expected makespan over these draws
      h.add_u64(options.seed);
      h.add_u64(static_cast<std::uint64_t>(options.noise_samples));
    }
  }
  return h.finish();
}

std::string runtime_name(const SimOptions& o) {
  if (o.doppler) return "doppler";
  std::string name;
  auto add = [&](const std::string& part) { name += (name.empty() ? "" : "+") + part; };
  if (o.dispatch == Dispatch::priority) add("priority");
  if (o.dispatch == Dispatch::fixed_order) add("fixed-order");
  if (o.links == LinkModel::unlimited) add("unlimited");
  if (!o.dedup_transfers) add("no-dedup");
  if (o.streams > 0) add("streams=" + std::to_string(o.streams));
  if (o.noise_sigma > 0) add("noise=" + std::to_string(o.noise_sigma) + "x" + std::to_string(o.noise_samples));
  return name.empty() ? "default" : name;
}

}  // namespace gantry
