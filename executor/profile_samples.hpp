#pragma once
// A measured run as profile samples (core/profile_table.hpp): each op's duration under its device's
// kind and its signature, as its solo time (executor/co_run.hpp: divided by 1 + (slowdown - 1) x
// how many other devices of its host ran beside it, on average over it, with `co_run_slowdown` per device;
// empty: as measured), each transfer's duration under "FROM_KIND->TO_KIND" and its size. Every
// executor run can add them to the store's profiles, so the cost model keeps learning the machine.
#include <string>
#include <vector>

#include "core/cluster.hpp"
#include "core/profile_table.hpp"
#include "executor/measurement.hpp"

namespace gantry {

void add_profile_samples(const Graph& graph, const Cluster& cluster, const RunRecord& run, ProfileTable* samples,
                         const std::vector<double>& co_run_slowdown = {});

// Whether a run of `cluster`'s devices on `backend` ("cpu" or "cuda") with `gpus` GPUs times the
// devices' own kinds. On fewer GPUs than devices the devices are partitions of GPUs (streams or SM
// sets), slower than the cluster's devices would run the ops: such runs give no profile samples.
bool gives_profile_samples(const std::string& backend, int gpus, const Cluster& cluster);

}  // namespace gantry
