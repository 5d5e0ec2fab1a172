#include "workloads/pipeline_fingerprint.hpp"

namespace gantry {

namespace {

void add_list(Hasher& h, const std::vector<double>& values) {
  h.add_u64(values.size());
  for (double v : values) h.add_double(v);
}

}  // namespace

Fingerprint pipeline_fingerprint(const std::vector<LayerCost>& layers, const PipelineModelOptions& options, int pp,
                                 int microbatches, double mem_limit) {
  Hasher h;
  h.add_string("gantry-pipeline-model-v1");
  h.add_u64(layers.size());
  for (const LayerCost& l : layers) {  // costs, not names
    h.add_u64(static_cast<std::uint64_t>(l.type));
    for (double v : {l.forward_flops, l.input_grad_flops, l.weight_grad_flops, l.activation_bytes, l.held_after_b_bytes,
                     l.w_grad_bytes, l.params, l.output_bytes})
      h.add_double(v);
  }
  for (double e : options.efficiency) h.add_double(e);
  h.add_double(options.bytes_per_param);
  h.add_u64(options.measured.size());
  for (const auto& fbw : options.measured)
    for (double t : fbw) h.add_double(t);
  h.add_string(options.measured_kind);
  h.add_double(options.measured_peak_flops);
  h.add_u64(static_cast<std::uint64_t>(pp));
  h.add_u64(static_cast<std::uint64_t>(microbatches));
  h.add_double(mem_limit);
  return h.finish();
}

Fingerprint pipeline_fingerprint(const StageCosts& c, int microbatches, double mem_limit) {
  Hasher h;
  h.add_string("gantry-pipeline-stages-v1");
  for (const std::vector<double>* list : {&c.f, &c.b, &c.w, &c.comm, &c.mem_f, &c.mem_b, &c.mem_w, &c.static_memory,
                                          &c.flops, &c.max_mem})
    add_list(h, *list);
  h.add_u64(static_cast<std::uint64_t>(microbatches));
  h.add_double(mem_limit);
  return h.finish();
}

}  // namespace gantry
