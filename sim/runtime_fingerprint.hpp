#pragma once
// The fingerprint of "this cluster under this runtime model": the cluster's content plus every
// simulator option that changes makespans (DOPPLER mode, dispatch, links, de-duplication, streams,
// noise). Results are stored under it, so a best found under one runtime model is never compared
// with one found under another.
#include "core/cluster.hpp"
#include "core/fingerprint.hpp"
#include "sim/sim_options.hpp"

namespace gantry {

Fingerprint runtime_fingerprint(const Cluster& cluster, const SimOptions& options);
// A short readable name of the runtime model ("default", "doppler", "priority+unlimited", ...).
std::string runtime_name(const SimOptions& options);

}  // namespace gantry
