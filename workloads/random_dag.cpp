// Random layered DAGs for scaling benchmarks (1k to 100k+ ops). Ops are spread over `layers`
// layers (every layer non-empty); each op after the first layer draws predecessors from the
// previous layer, or with probability `skip` from any earlier layer:
//   fan_in mode (edge_prob = 0): 1 + Poisson(fan_in - 1) distinct predecessors (mean fan_in);
//   edge_prob mode: each op of the previous layer independently with probability edge_prob
//   (at least one).
// Layer sizes: 1 + a multinomial share of the other ops; the first layer holds exactly the sources.
// Edge counts are random except where the parameters fix them: fan_in=1 gives one predecessor per
// op outside the first layer; layers=ops a chain of ops - 1 edges (skip=0); edge_prob=1 with
// skip=0 joins every op to every op of the previous layer.
// Costs: flops log-uniform over a 16x range, rescaled to mean `flops`; output sizes log-uniform,
// rescaled so that (mean edge bytes / 10 GB/s) / (mean flops / 10 TFLOP/s) = ccr exactly. The
// random draws do not depend on ccr, so edge bytes scale proportionally with it.
// Determinism: the draws come from workloads/seeded_rng.hpp, the same on every platform.
#include <algorithm>
#include <cmath>
#include <random>

#include "workloads/generators.hpp"
#include "workloads/seeded_rng.hpp"

namespace gantry {

namespace {

using namespace workload_detail;

constexpr double kLinkBandwidth = 10e9;  // bytes/s: the ccr reference link
constexpr double kDevicePeak = 10e12;    // flop/s: the ccr reference device
const double kSpread = std::log(4.0);    // log-uniform factor in [1/4, 4]

struct RandomShape {
  std::int64_t ops = 200;
  std::int64_t layers = 0;
  double fan_in = 2;
  double edge_prob = 0;
  double skip = 0.1;
  double ccr = 1;
  double flops = 1e10;
  std::uint64_t seed = 1;
};

using Rng = SeededRng;

Result<RandomShape> read_shape(const WorkloadParams& p) {
  RandomShape s;
  auto ops = p.get_int("ops", 200, 1, static_cast<std::int64_t>(kMaxOps));
  if (!ops) return ops.error();
  s.ops = ops.value();
  auto layers = p.get_int("layers", 0, 0, s.ops);
  if (!layers) return layers.error();
  s.layers = layers.value() > 0 ? layers.value()
                                : std::max<std::int64_t>(1, std::llround(std::sqrt(static_cast<double>(s.ops))));
  const std::pair<const char*, Result<double>> reals[] = {
      {"fan_in", p.get_real("fan_in", 2, 1, 64)},     {"edge_prob", p.get_real("edge_prob", 0, 0, 1)},
      {"skip", p.get_real("skip", 0.1, 0, 1)},        {"ccr", p.get_real("ccr", 1, 0, 1e9)},
      {"flops", p.get_real("flops", 1e10, 1, 1e20)},
  };
  for (const auto& [key, value] : reals)
    if (!value) return value.error();
  s.fan_in = reals[0].second.value();
  s.edge_prob = reals[1].second.value();
  s.skip = reals[2].second.value();
  s.ccr = reals[3].second.value();
  s.flops = reals[4].second.value();
  auto seed = p.get_int("seed", 1, 0, (std::int64_t{1} << 53) - 1);
  if (!seed) return seed.error();
  s.seed = static_cast<std::uint64_t>(seed.value());
  return s;
}

double expected_edges(const RandomShape& s) {
  const double n = static_cast<double>(s.ops);
  if (s.edge_prob > 0) return n * std::max(1.0, s.edge_prob * n / static_cast<double>(s.layers));
  return n * s.fan_in;
}

// Draws the structure and raw costs; ids are numbered layer by layer, so they are topological.
class DagSampler {
 public:
  explicit DagSampler(const RandomShape& s) : s_(s), rng_(s.seed) {}

  Result<Graph> build() {
    lay_out_layers();
    raw_flops_.resize(static_cast<std::size_t>(s_.ops));
    raw_output_.resize(static_cast<std::size_t>(s_.ops));
    for (std::int64_t layer = 0; layer < s_.layers; ++layer)
      for (std::int64_t op = start_[layer]; op < start_[layer + 1]; ++op) {
        raw_flops_[op] = rng_.log_uniform(kSpread);
        raw_output_[op] = rng_.log_uniform(kSpread);
        if (layer > 0) choose_preds(layer, op);
      }
    return emit();
  }

 private:
  void lay_out_layers() { start_ = random_layer_starts(rng_, s_.ops, s_.layers); }


  bool chosen(OpId op) const {
    for (OpId p : preds_) if (p == op) return true;
    return false;
  }

  // A uniformly random op of a layer before `layer - 1`; -1 when there is none.
  OpId earlier_op(std::int64_t layer) {
    const std::int64_t count = start_[layer - 1];
    return count > 0 ? static_cast<OpId>(rng_.below(count)) : -1;
  }

  void choose_preds(std::int64_t layer, std::int64_t op) {
    preds_.clear();
    const std::int64_t first = start_[layer - 1], width = start_[layer] - first;
    if (s_.edge_prob > 0) {
      const bool all = s_.edge_prob >= 1;
      for (std::int64_t i = all ? 0 : rng_.geometric(s_.edge_prob); i < width;
           i += 1 + (all ? 0 : rng_.geometric(s_.edge_prob)))
        preds_.push_back(static_cast<OpId>(first + i));
      if (preds_.empty()) preds_.push_back(static_cast<OpId>(first + rng_.below(width)));
      // Skip connections replace some picks (kept when the replacement is already chosen).
      for (OpId& pred : preds_)
        if (rng_.uniform() < s_.skip) {
          OpId other = earlier_op(layer);
          if (other >= 0 && !chosen(other)) pred = other;
        }
    } else {
      const std::int64_t available = start_[layer];
      const std::int64_t wanted = std::min(available, 1 + rng_.poisson(s_.fan_in - 1));
      for (std::int64_t tries = 0; tries < 4 * wanted && static_cast<std::int64_t>(preds_.size()) < wanted; ++tries) {
        OpId pick = rng_.uniform() < s_.skip ? earlier_op(layer) : -1;
        if (pick < 0) pick = static_cast<OpId>(first + rng_.below(width));
        if (!chosen(pick)) preds_.push_back(pick);
      }
    }
    for (OpId pred : preds_) edges_.push_back({pred, static_cast<OpId>(op)});
  }

  Result<Graph> emit() const {
    double flops_sum = 0, edge_raw = 0;
    for (double f : raw_flops_) flops_sum += f;
    for (const auto& edge : edges_) edge_raw += raw_output_[edge.first];
    // Mean transfer time over mean compute time on the reference link and device equals ccr.
    const double target_edge_bytes = s_.ccr * s_.flops / kDevicePeak * kLinkBandwidth;
    double raw_mean = 0;
    if (!edges_.empty()) {
      raw_mean = edge_raw / static_cast<double>(edges_.size());
    } else {
      for (double o : raw_output_) raw_mean += o;
      raw_mean /= static_cast<double>(s_.ops);
    }
    const double byte_scale = target_edge_bytes / raw_mean;
    const double flop_scale = s_.flops * static_cast<double>(s_.ops) / flops_sum;

    GraphBuilder graph("random");
    std::vector<double> input_bytes(static_cast<std::size_t>(s_.ops), 0);
    for (const auto& edge : edges_) input_bytes[edge.second] += raw_output_[edge.first] * byte_scale;
    for (std::int64_t layer = 0; layer < s_.layers; ++layer)
      for (std::int64_t op = start_[layer]; op < start_[layer + 1]; ++op) {
        const double out = raw_output_[op] * byte_scale;
        graph.add_op(make_op(label("", "op", {layer, op - start_[layer]}), OpKind::custom,
                             raw_flops_[op] * flop_scale, input_bytes[op] + out, out, {}));
      }
    for (const auto& [src, dst] : edges_) graph.add_edge(src, dst, raw_output_[src] * byte_scale);
    return graph.build();
  }

  RandomShape s_;
  Rng rng_;
  std::vector<std::int64_t> start_;  // first op of each layer, plus the total
  std::vector<double> raw_flops_, raw_output_;
  std::vector<OpId> preds_;
  std::vector<std::pair<OpId, OpId>> edges_;
};

}  // namespace

WorkloadInfo random_dag_info() {
  return {"random",
          "random layered DAG: ops over layers (0: sqrt(ops)), fan_in predecessors on average or "
          "edge_prob per previous-layer op, skip = share of edges from older layers, mean op flops, "
          "ccr = mean transfer time on 10 GB/s over mean compute time on 10 TFLOP/s; deterministic per seed",
          "ops=200 layers=0 fan_in=2 edge_prob=0 skip=0.1 ccr=1 flops=1e10 seed=1"};
}

Result<Graph> make_random_dag(const WorkloadParams& given) {
  const WorkloadParams params = named(given, "random");
  auto shape = read_shape(params);
  if (!shape) return shape.error();
  auto budget = check_budget(params, static_cast<double>(shape.value().ops), expected_edges(shape.value()));
  if (!budget) return budget.error();
  return DagSampler(shape.value()).build();
}

}  // namespace gantry
