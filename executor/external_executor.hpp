#pragma once
// Measuring through another process: a gantry-exec program (executor/standalone/) runs the
// placement and this process reads its measurement back (docs/formats.md, "Measurements"). For
// GPUs where this gantry's LibTorch has no CUDA (Debian's is CPU-only): a gantry-exec built against
// a CUDA LibTorch (a PyTorch wheel's) measures for it. The run is gantry-exec's: the same
// executors, the same work-conserving rule and timing as in this process, on a cluster of the
// given devices' stream counts and copy engines. What gantry-exec does not offer is refused,
// naming the option: fixed orders, throttled links, the outputs' values. One `PROGRAM --serve`
// per program serves every request of this process (LibTorch's load and a GPU's start paid
// once): it runs in a process group of its own (a Ctrl-C meant for gantry does not cut a run
// short) and ends when this process does (its stdin closes); past a run's time limit, or after a
// failed request, it is stopped and the next request starts another.
#include <string>

#include "core/cluster.hpp"
#include "core/placement.hpp"
#include "core/result.hpp"
#include "executor/measurement.hpp"

namespace gantry {

// Whether gantry-exec can run placements on `cluster` with `options` (before anything is chosen
// or built); the error names what it cannot do.
Status can_execute_through(const std::string& backend, const Cluster& cluster, const ExecOptions& options);

// As execute_on_cpu / execute_on_cuda, on `backend` ("cpu" or "cuda"), run by `program` (a path,
// or a name on PATH). The error names the program and what it said when it fails. With
// `time_limit` (seconds, > 0) a run that lasts longer is stopped and fails. The measurement is
// checked against the request: the backend, one makespan per timed run, every op on its device.
Result<Measurement> execute_through(const std::string& program, const std::string& backend, const Graph& graph,
                                    const Placement& placement, const Cluster& cluster, const ExecOptions& options,
                                    double time_limit = 0);

// The CUDA devices `program` sees (gantry-exec --devices-visible): 0 for a build without CUDA.
Result<int> cuda_devices_seen_by(const std::string& program);

}  // namespace gantry
