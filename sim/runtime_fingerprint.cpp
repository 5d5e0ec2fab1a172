#include "sim/runtime_fingerprint.hpp"

#include "core/cluster.hpp"
#include "core/json_util.hpp"
#include "core/profile_table.hpp"

#include <cstdlib>
#include <nlohmann/json.hpp>

namespace gantry {

Fingerprint runtime_fingerprint(const Cluster& cluster, const SimOptions& options, int model_version) {
  const Fingerprint machine = fingerprint(cluster);
  Hasher h;
  h.add_string("gantry-runtime-v1");
  // Version 1 results were stored before the version was part of the key: its hash stays as it
  // was, so their keys can still be computed (query, db resimulate).
  if (model_version != 1) h.add_u64(static_cast<std::uint64_t>(model_version));
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

Fingerprint runtime_fingerprint(const Cluster& cluster, const SimOptions& options, const ProfileTable* profiles,
                                int model_version) {
  const Fingerprint runtime = runtime_fingerprint(cluster, options, model_version);
  if (!profiles) return runtime;
  const Fingerprint measured = profiles->fingerprint();
  Hasher h;
  h.add_string("gantry-calibrated-runtime-1");
  h.add_u64(runtime.hi);
  h.add_u64(runtime.lo);
  h.add_u64(measured.hi);
  h.add_u64(measured.lo);
  return h.finish();
}

Fingerprint pipeline_runtime_fingerprint(const Cluster* cluster, LinkModel links) {
  Hasher h;
  h.add_string("gantry-pipeline-runtime-v1");
  h.add_u64(static_cast<std::uint64_t>(kPipelineModelVersion));
  h.add_u64(cluster != nullptr);
  if (cluster) {
    const Fingerprint machine = fingerprint(*cluster);
    h.add_u64(machine.hi);
    h.add_u64(machine.lo);
  }
  h.add_u64(static_cast<std::uint64_t>(links));
  return h.finish();
}

std::string runtime_name(const SimOptions& o) {
  if (o.doppler) return "doppler";
  std::string name;
  auto add = [&](const std::string& part) { name += (name.empty() ? "" : "+") + part; };
  if (o.dispatch != Dispatch::fifo) add(to_string(o.dispatch));
  if (o.links != LinkModel::contention) add(to_string(o.links));
  if (!o.dedup_transfers) add("no-dedup");
  if (o.streams > 0) add("streams=" + std::to_string(o.streams));
  if (o.noise_sigma > 0) add("noise=" + std::to_string(o.noise_sigma) + "x" + std::to_string(o.noise_samples));
  return name.empty() ? "default" : name;
}

std::string sim_options_json(const SimOptions& o) {
  nlohmann::json j;
  j["sim"] = o.doppler ? "doppler" : "default";
  j["dispatch"] = to_string(o.dispatch);
  j["links"] = to_string(o.links);
  j["dedup"] = o.dedup_transfers;
  j["streams"] = o.streams;
  j["noise"] = o.noise_sigma;
  j["noise_seed"] = o.seed;
  j["noise_samples"] = o.noise_samples;
  return j.dump();
}

Result<SimOptions> sim_options_from_json(const std::string& text) {
  // The text comes from a client's job (or a worker's problem): it is named, not quoted, in errors
  // (it may be megabytes), and read as the flags read it, unknown keys and out-of-range values
  // refused as --streams, --noise and --noise-samples refuse them.
  const std::string where = "simulator options";
  auto parsed = parse_json(text, where);
  if (!parsed) return parsed.error();
  const nlohmann::json& j = parsed.value();
  if (!j.is_object()) return make_error(where + ": not a JSON object");
  if (Status known = check_known_keys(j, {"sim", "dispatch", "links", "dedup", "streams", "noise", "noise_seed", "noise_samples"}, where);
      !known)
    return known.error();
  SimOptions o;
  try {
    const std::string sim = j.value("sim", "default");
    const std::string dispatch = j.value("dispatch", "fifo");
    const std::string links = j.value("links", "contention");
    if (sim != "default" && sim != "doppler") return make_error(where + ": sim: unknown simulator '" + sim + "'");
    o.doppler = sim == "doppler";
    const auto parsed_dispatch = parse_dispatch(dispatch);
    if (!parsed_dispatch) return make_error(where + ": dispatch: unknown dispatch '" + dispatch + "'");
    o.dispatch = *parsed_dispatch;
    const auto parsed_links = parse_link_model(links);
    if (!parsed_links) return make_error(where + ": links: unknown link model '" + links + "'");
    o.links = *parsed_links;
    o.dedup_transfers = j.value("dedup", true);
    o.streams = j.value("streams", 0);
    o.noise_sigma = j.value("noise", 0.0);
    o.seed = j.value("noise_seed", std::uint64_t{1});
    o.noise_samples = j.value("noise_samples", 1);
  } catch (const nlohmann::json::exception& e) {
    return make_error(where + ": " + json_error_text(e));
  }
  if (o.streams < 0 || o.streams > kMaxStreams) return make_error(where + ": streams: must be 0 to " + std::to_string(kMaxStreams));
  if (!(o.noise_sigma >= 0 && o.noise_sigma <= kMaxNoiseSigma))
    return make_error(where + ": noise: must be 0 to " + std::to_string(static_cast<int>(kMaxNoiseSigma)));
  if (o.noise_samples < 1 || o.noise_samples > kMaxNoiseSamples)
    return make_error(where + ": noise_samples: must be 1 to " + std::to_string(kMaxNoiseSamples));
  return o;
}

Result<SimOptions> sim_options_from_name(const std::string& name) {
  SimOptions o;
  if (name == "doppler") {
    o.doppler = true;
    return o;
  }
  if (name == "default" || name.empty()) return o;
  std::size_t begin = 0;
  while (begin <= name.size()) {
    std::size_t end = name.find('+', begin);
    if (end == std::string::npos) end = name.size();
    const std::string part = name.substr(begin, end - begin);
    if (const auto dispatch = parse_dispatch(part))
      o.dispatch = *dispatch;
    else if (const auto links = parse_link_model(part))
      o.links = *links;
    else if (part == "no-dedup")
      o.dedup_transfers = false;
    else if (part.rfind("streams=", 0) == 0) {
      char* end = nullptr;
      const long streams = std::strtol(part.c_str() + 8, &end, 10);
      if (end == part.c_str() + 8 || *end != '\0' || streams < 1 || streams > kMaxStreams)
        return make_error("runtime '" + name + "': '" + part + "' is not a stream count from 1 to " + std::to_string(kMaxStreams));
      o.streams = static_cast<int>(streams);
    }
    else if (part.rfind("noise=", 0) == 0)
      return make_error("runtime '" + name + "': its noise seed was not stored");
    else
      return make_error("runtime '" + name + "': unknown part '" + part + "'");
    begin = end + 1;
  }
  return o;
}

}  // namespace gantry
