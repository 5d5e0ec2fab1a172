#pragma once
// The fingerprint of "this cluster under this runtime model": the cluster's content plus every
// simulator option that changes makespans (DOPPLER mode, dispatch, links, de-duplication, streams,
// noise) and the model version (sim/model_version.hpp). Results are stored under it, so a best
// found under one runtime model, or by older simulator code, is never compared with another.
#include <optional>
#include <string>

#include "core/cluster.hpp"
#include "core/result.hpp"
#include "core/fingerprint.hpp"
#include "sim/model_version.hpp"
#include "sim/sim_options.hpp"

namespace gantry {

class ProfileTable;

// `model_version` other than the current one computes the key older code stored results under.
Fingerprint runtime_fingerprint(const Cluster& cluster, const SimOptions& options, int model_version = kModelVersion);
// The runtime of a problem costed with measured `profiles` (core/profile_table.hpp; null: the
// roofline's, runtime_fingerprint): its bests are kept apart from the roofline's, and new
// profiles that move a mean give a new key; `model_version` as above.
Fingerprint runtime_fingerprint(const Cluster& cluster, const SimOptions& options, const ProfileTable* profiles,
                                int model_version = kModelVersion);
// A pipeline scheme's runtime: the cluster's content (null: per-stage costs from a file, which
// carry their own times), the link model and kPipelineModelVersion.
Fingerprint pipeline_runtime_fingerprint(const Cluster* cluster, LinkModel links);
// A short readable name of the runtime model ("default", "doppler", "priority+unlimited", ...).
std::string runtime_name(const SimOptions& options);

// The options that enter the runtime fingerprint, as compact JSON (stored with every best so it
// can be re-simulated), and back. Names and values as the CLI flags spell them.
std::string sim_options_json(const SimOptions& options);
Result<SimOptions> sim_options_from_json(const std::string& text);
// The inverse of runtime_name, for records that stored only the name: a name with noise gives
// an error (the noise seed is not in the name).
Result<SimOptions> sim_options_from_name(const std::string& name);

}  // namespace gantry
