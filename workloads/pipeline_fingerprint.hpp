#pragma once
// The fingerprint of a pipeline problem: everything that decides its stage costs and its size
// (the model's layers with their costs, the cost options, the pipeline degree, the microbatches,
// the memory limit), or the per-stage costs of a file. A tuned scheme is stored under it with the
// runtime's fingerprint (sim/runtime_fingerprint.hpp), so the same problem tuned anywhere meets
// its best again and a second run resumes from it.
#include <vector>

#include "core/fingerprint.hpp"
#include "core/pipeline_scheme.hpp"
#include "workloads/model_catalog.hpp"
#include "workloads/pipeline_stages.hpp"

namespace gantry {

// mem_limit 0: the devices' own memory (which the cluster's fingerprint covers).
Fingerprint pipeline_fingerprint(const std::vector<LayerCost>& layers, const PipelineModelOptions& options, int pp,
                                 int microbatches, double mem_limit);
Fingerprint pipeline_fingerprint(const StageCosts& per_device, int microbatches, double mem_limit);

}  // namespace gantry
