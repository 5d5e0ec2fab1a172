#include "learner/policy_model.hpp"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "learner/exclusive_prefix_sum.hpp"
#include "learner/tensor_memory.hpp"

namespace gantry {
namespace {

using torch::Tensor;
namespace F = torch::nn::functional;

Tensor leaky(const Tensor& x) { return F::leaky_relu(x, F::LeakyReLUFuncOptions().negative_slope(0.1)); }

Tensor longs(const std::vector<std::int64_t>& v) {
  return torch::from_blob(const_cast<std::int64_t*>(v.data()), {static_cast<long>(v.size())}, torch::kLong).clone();
}
Tensor floats(const float* data, std::vector<std::int64_t> shape) {
  return torch::from_blob(const_cast<float*>(data), shape, torch::kFloat).clone();
}

// A graph as tensors: features, edges both ways, and the path-mean matrices of SEL.
struct GraphTensors {
  int n = 0;
  Tensor x, src, dst, edge, inv_in, inv_out, bottom_path, top_path;
};

// Row v averages h over the ops on v's path (following `link` until -1): a sparse [n x n] matrix.
Tensor path_mean(const std::vector<OpId>& link, const std::vector<int>& length) {
  const int n = static_cast<int>(link.size());
  std::vector<std::int64_t> rows, cols;
  std::vector<float> vals;
  for (int v = 0; v < n; ++v)
    for (OpId u = v; u >= 0; u = link[u]) {
      rows.push_back(v);
      cols.push_back(u);
      vals.push_back(1.0f / static_cast<float>(length[v]));
    }
  Tensor index = torch::stack({longs(rows), longs(cols)});
  return torch::sparse_coo_tensor(index, floats(vals.data(), {static_cast<long>(vals.size())}), {n, n}).coalesce();
}

GraphTensors graph_tensors(const Graph& g, const GraphFeatures& f, bool paths) {
  GraphTensors t;
  t.n = g.size();
  t.x = floats(f.node.data(), {t.n, kNodeFeatures});
  std::vector<std::int64_t> src(g.num_edges()), dst(g.num_edges());
  std::vector<float> in(t.n), out(t.n);
  for (EdgeId e = 0; e < g.num_edges(); ++e) {
    src[e] = g.edge_src(e);
    dst[e] = g.edge_dst(e);
  }
  for (OpId v = 0; v < t.n; ++v) {
    in[v] = g.preds(v).empty() ? 0.0f : 1.0f / static_cast<float>(g.preds(v).size());
    out[v] = g.succs(v).empty() ? 0.0f : 1.0f / static_cast<float>(g.succs(v).size());
  }
  t.src = longs(src);
  t.dst = longs(dst);
  t.edge = floats(f.edge.data(), {g.num_edges(), 1});
  t.inv_in = floats(in.data(), {t.n, 1});
  t.inv_out = floats(out.data(), {t.n, 1});
  if (paths) {
    t.bottom_path = path_mean(f.bottom_next, f.bottom_length);
    t.top_path = path_mean(f.top_prev, f.top_length);
  }
  return t;
}

// Ragged per-step lists (CSR) as a padded [steps x width] index matrix and its mask.
struct Padded {
  Tensor index, mask;
};
Padded pad(const std::vector<std::int32_t>& offsets, const std::vector<std::int32_t>& items, std::int64_t shift) {
  const std::size_t steps = offsets.size() - 1;
  std::int32_t width = 1;
  for (std::size_t t = 0; t < steps; ++t) width = std::max(width, offsets[t + 1] - offsets[t]);
  std::vector<std::int64_t> index(steps * width, 0);
  std::vector<std::uint8_t> mask(steps * width, 0);
  for (std::size_t t = 0; t < steps; ++t)
    for (std::int32_t k = offsets[t]; k < offsets[t + 1]; ++k) {
      index[t * width + (k - offsets[t])] = items[k] + shift;
      mask[t * width + (k - offsets[t])] = 1;
    }
  const long s = static_cast<long>(steps);
  return {longs(index).view({s, width}),
          torch::from_blob(mask.data(), {s, width}, torch::kUInt8).clone().to(torch::kBool)};
}

// log-sum-exp over the masked entries of each row.
Tensor masked_logsumexp(const Tensor& values, const Tensor& mask) {
  return values.masked_fill(mask.logical_not(), -1e9).logsumexp(-1);
}
// Entropy of the softmax over the masked entries of each row.
Tensor masked_entropy(const Tensor& logits, const Tensor& mask) {
  Tensor logp = torch::log_softmax(logits.masked_fill(mask.logical_not(), -1e9), -1);
  return -(logp.exp() * logp).masked_fill(mask.logical_not(), 0).sum(-1);
}

}  // namespace

struct PolicyModel::Impl : torch::nn::Module {
  PolicyConfig config;
  std::vector<TensorShape> layout;
  std::map<std::string, Tensor> p;  // by layout name ('.' in names, which torch does not allow)
  std::unique_ptr<torch::optim::Adam> optimizer;
  double lr = 1e-3;

  explicit Impl(const PolicyConfig& c) : config(c), layout(policy_layout(c)) {
    for (const TensorShape& s : layout) {
      std::string name = s.name;
      std::replace(name.begin(), name.end(), '.', '_');
      p[s.name] = register_parameter(name, torch::zeros(s.shape));
    }
    make_optimizer();
  }
  void make_optimizer() {
    optimizer = std::make_unique<torch::optim::Adam>(parameters(), torch::optim::AdamOptions(lr));
  }
  Tensor linear(const Tensor& x, const std::string& name) const { return F::linear(x, p.at(name + ".w"), p.at(name + ".b")); }

  Tensor encode(const GraphTensors& g) const {
    const int h = config.hidden;
    Tensor x = torch::relu(linear(g.x, "enc.in"));
    for (int step = 0; step < config.steps; ++step) {
      Tensor pf = x.mm(p.at("enc.fwd.w").t());
      Tensor pb = x.mm(p.at("enc.bwd.w").t());
      Tensor mf_e = torch::relu(pf.index_select(0, g.src) + g.edge * p.at("enc.fwd.e") + p.at("enc.fwd.b"));
      Tensor mb_e = torch::relu(pb.index_select(0, g.dst) + g.edge * p.at("enc.bwd.e") + p.at("enc.bwd.b"));
      Tensor mf = torch::zeros({g.n, h}).index_add(0, g.dst, mf_e) * g.inv_in;
      Tensor mb = torch::zeros({g.n, h}).index_add(0, g.src, mb_e) * g.inv_out;
      Tensor gi = F::linear(torch::cat({mf, mb}, 1), p.at("enc.gru.wih"), p.at("enc.gru.bih"));
      Tensor gh = F::linear(x, p.at("enc.gru.whh"), p.at("enc.gru.bhh"));
      auto gis = gi.split(h, 1), ghs = gh.split(h, 1);
      Tensor r = torch::sigmoid(gis[0] + ghs[0]);
      Tensor z = torch::sigmoid(gis[1] + ghs[1]);
      Tensor c = torch::tanh(gis[2] + r * ghs[2]);
      x = (1 - z) * c + z * x;
    }
    return x;
  }

  // SEL's static score of every op [n].
  Tensor sel_terms(const GraphTensors& g, const Tensor& h) const {
    Tensor xs = leaky(linear(g.x, "sel.x"));
    Tensor z = torch::cat({h, xs, torch::mm(g.bottom_path, h), torch::mm(g.top_path, h)}, 1);
    return linear(leaky(linear(z, "sel.l1")), "sel.l2").squeeze(1);
  }
  // SEL's logits of packed candidates: their ops' static scores plus the score of their features now.
  Tensor sel_logits(const Tensor& terms, const Tensor& ops, const Tensor& features) const {
    return terms.index_select(0, ops) + linear(leaky(linear(features, "sel.d")), "sel.q").squeeze(1);
  }

  // Per-step log-probabilities [B x N] of the batch's actions, plus imitation and entropy terms.
  struct StepTerms {
    Tensor logp, imitation, entropy;
  };
  StepTerms step_terms(const Graph& graph, const GraphFeatures& features, const std::vector<const Episode*>& eps,
                       bool want_imitation, bool all_ties = true) const {
    const bool dual = config.ablation == Ablation::dual;
    GraphTensors g = graph_tensors(graph, features, dual);
    Tensor h = encode(g);
    const long b = static_cast<long>(eps.size()), n = g.n, d = eps.front()->devices;
    std::vector<std::int64_t> ops, dev;
    for (const Episode* e : eps) {
      if (e->steps() != n) throw std::invalid_argument("episode of another graph in a batch");
      ops.insert(ops.end(), e->ops.begin(), e->ops.end());
      dev.insert(dev.end(), e->device.begin(), e->device.end());
    }
    Tensor op_t = longs(ops), dev_t = longs(dev).view({b, n});
    StepTerms out;
    out.entropy = torch::zeros({b, n});
    out.imitation = torch::zeros({b, n});
    out.logp = torch::zeros({b, n});

    // Device choice.
    Tensor dev_logits;
    if (config.ablation == Ablation::gdp) {
      dev_logits = linear(h, "gdp").index_select(0, op_t).view({b, n, d});
    } else {
      std::vector<float> feats;
      for (const Episode* e : eps) feats.insert(feats.end(), e->device_features.begin(), e->device_features.end());
      const long hd = config.hidden, st = config.state;
      Tensor w1 = p.at("plc.l1.w");
      Tensor u = leaky(linear(floats(feats.data(), {b, n, d, kDeviceFeatures}), "plc.f"));
      Tensor part_u = u.matmul(w1.narrow(1, 0, st).t());
      Tensor node = (h.mm(w1.narrow(1, st, hd).t()) + p.at("plc.l1.b")).index_select(0, op_t).view({b, n, 1, -1});
      Tensor summary = h.mm(w1.narrow(1, st + hd, hd).t()).index_select(0, op_t).view({b, n, 1, -1});
      Tensor onehot = F::one_hot(dev_t, d).to(torch::kFloat);                          // [b, n, d]
      Tensor contrib = onehot.unsqueeze(-1) * summary;                                   // [b, n, d, a]
      Tensor before = exclusive_prefix_sum(contrib);
      Tensor count = exclusive_prefix_sum(onehot).clamp_min(1).unsqueeze(-1);
      dev_logits = linear(leaky(part_u + node + before / count), "plc.l2").squeeze(-1);  // [b, n, d]
    }
    Tensor dev_logp = torch::log_softmax(dev_logits, -1);
    out.logp = out.logp + dev_logp.gather(-1, dev_t.unsqueeze(-1)).squeeze(-1);
    out.entropy = out.entropy - (dev_logp.exp() * dev_logp).sum(-1);
    if (want_imitation) {
      std::vector<std::uint8_t> mask(static_cast<std::size_t>(b * n * d), 0);
      for (long i = 0; i < b; ++i) {
        const Episode& e = *eps[i];
        for (long t = 0; t < n; ++t)
          for (std::int32_t k = e.teacher_device_offsets[t]; k < e.teacher_device_offsets[t + 1]; ++k)
            if (all_ties || k == e.teacher_device_offsets[t]) mask[(i * n + t) * d + e.teacher_devices[k]] = 1;
      }
      Tensor m = torch::from_blob(mask.data(), {b, n, d}, torch::kUInt8).clone().to(torch::kBool);
      out.imitation = out.imitation + masked_logsumexp(dev_logp, m);
    }

    // Op choice: uniform for random-sel (a constant, kept so that log-probabilities match the
    // rollouts'), none for the topological orders, SEL for the dual policy.
    if (config.ablation == Ablation::random_sel) {
      std::vector<float> uniform;
      for (const Episode* e : eps)
        for (long t = 0; t < n; ++t)
          uniform.push_back(-std::log(static_cast<float>(e->candidate_offsets[t + 1] - e->candidate_offsets[t])));
      out.logp = out.logp + floats(uniform.data(), {b, n});
    }
    if (dual) {
      Tensor terms = sel_terms(g, h);
      // Every step's candidates packed in one list; per step the positions of its candidates, of
      // the teacher's among them and of the one chosen.
      std::vector<std::int32_t> offsets{0}, positions, t_offsets{0}, t_positions;
      std::vector<std::int64_t> cand_ops, chosen;
      std::vector<float> cand_features;
      for (const Episode* e : eps) {
        if (e->candidate_features.size() != e->candidates.size() * kCandidateFeatures)
          throw std::invalid_argument("episode without SEL's candidate features in a dual policy's batch");
        cand_features.insert(cand_features.end(), e->candidate_features.begin(), e->candidate_features.end());
        for (long t = 0; t < n; ++t) {
          const auto first = e->candidates.begin() + e->candidate_offsets[t];
          const auto last = e->candidates.begin() + e->candidate_offsets[t + 1];
          const auto t_first = e->teacher_ops.begin() + e->teacher_op_offsets[t];
          const auto t_last = e->teacher_ops.begin() + e->teacher_op_offsets[t + 1];
          const OpId pick = t_first == t_last ? -1 : *std::min_element(t_first, t_last);
          for (auto it = first; it != last; ++it) {
            const auto pos = static_cast<std::int32_t>(cand_ops.size());
            positions.push_back(pos);
            cand_ops.push_back(*it);
            if (*it == e->ops[t]) chosen.push_back(pos);
            if (all_ties ? std::find(t_first, t_last, *it) != t_last : *it == pick) t_positions.push_back(pos);
          }
          offsets.push_back(static_cast<std::int32_t>(positions.size()));
          t_offsets.push_back(static_cast<std::int32_t>(t_positions.size()));
        }
      }
      const long k = static_cast<long>(cand_ops.size());
      if (static_cast<long>(chosen.size()) != b * n) throw std::invalid_argument("an episode chose an op that was not a candidate");
      Tensor logits = sel_logits(terms, longs(cand_ops), floats(cand_features.data(), {k, kCandidateFeatures}));
      Padded c = pad(offsets, positions, 0);
      Tensor cand_logits = logits.index_select(0, c.index.flatten()).view(c.index.sizes());
      Tensor log_z = masked_logsumexp(cand_logits, c.mask);
      out.logp = out.logp + (logits.index_select(0, longs(chosen)) - log_z).view({b, n});
      out.entropy = out.entropy + masked_entropy(cand_logits, c.mask).view({b, n});
      if (want_imitation) {
        Padded t = pad(t_offsets, t_positions, 0);
        Tensor teacher_logits = logits.index_select(0, t.index.flatten()).view(t.index.sizes());
        out.imitation = out.imitation + (masked_logsumexp(teacher_logits, t.mask) - log_z).view({b, n});
      }
    }
    return out;
  }

  Tensor loss(const std::vector<GraphBatch>& batches, const Objective& o, LossReport& report) const {
    Tensor total = torch::zeros({});
    double imitation = 0, entropy = 0;
    long steps = 0;
    for (const GraphBatch& batch : batches) {
      StepTerms s = step_terms(*batch.graph, *batch.features, batch.episodes, o.imitation > 0, o.all_ties);
      Tensor term = torch::zeros({});
      if (o.policy > 0) {
        std::vector<float> adv(batch.advantages.begin(), batch.advantages.end()), behaviour;
        for (const Episode* e : batch.episodes) behaviour.insert(behaviour.end(), e->behaviour_logp.begin(), e->behaviour_logp.end());
        Tensor a = floats(adv.data(), {static_cast<long>(adv.size()), 1});
        Tensor mu = floats(behaviour.data(), s.logp.sizes().vec());
        Tensor rho = (s.logp.detach() - mu).exp().clamp_max(1.0);
        term = term - o.policy * (a * rho * s.logp).mean();
      }
      if (o.imitation > 0) term = term - o.imitation * s.imitation.mean();
      if (o.entropy > 0) term = term - o.entropy * s.entropy.mean();
      total = total + term;
      imitation += -s.imitation.sum().item<double>();
      entropy += s.entropy.sum().item<double>();
      steps += s.logp.numel();
    }
    total = total / static_cast<double>(batches.size());
    report.loss = total.item<double>();
    report.imitation = o.imitation > 0 ? imitation / steps : 0;
    report.entropy = entropy / steps;
    return total;
  }
};

void set_training_threads(int threads) { torch::set_num_threads(std::max(1, threads)); }

PolicyModel::PolicyModel(const PolicyConfig& config, std::uint64_t seed) : impl_(std::make_unique<Impl>(config)) {
  keep_tensor_memory();
  torch::manual_seed(seed);
  torch::NoGradGuard no_grad;
  for (auto& [name, t] : impl_->p) {
    if (t.dim() == 2 && t.size(0) > 0) torch::nn::init::orthogonal_(t);
    else if (name.size() > 2 && name.compare(name.size() - 2, 2, ".e") == 0) t.normal_(0, 0.1);
    else t.zero_();
  }
}

PolicyModel::PolicyModel(const PolicyWeights& weights) : impl_(std::make_unique<Impl>(weights.config)) {
  keep_tensor_memory();
  load(weights);
}
PolicyModel::~PolicyModel() = default;
PolicyModel::PolicyModel(PolicyModel&&) noexcept = default;
PolicyModel& PolicyModel::operator=(PolicyModel&&) noexcept = default;

const PolicyConfig& PolicyModel::config() const { return impl_->config; }

PolicyWeights PolicyModel::weights() const {
  PolicyWeights w;
  w.config = impl_->config;
  for (const TensorShape& s : impl_->layout) {
    Tensor t = impl_->p.at(s.name).detach().contiguous();
    WeightTensor out{s.shape, std::vector<float>(t.data_ptr<float>(), t.data_ptr<float>() + t.numel())};
    w.tensors[s.name] = std::move(out);
  }
  return w;
}

void PolicyModel::load(const PolicyWeights& weights) {
  torch::NoGradGuard no_grad;
  for (const TensorShape& s : impl_->layout) {
    const WeightTensor& src = weights.at(s.name);
    impl_->p.at(s.name).copy_(floats(src.data.data(), s.shape));
  }
}

void PolicyModel::set_learning_rate(double lr) {
  impl_->lr = lr;
  for (auto& group : impl_->optimizer->param_groups())
    static_cast<torch::optim::AdamOptions&>(group.options()).lr(lr);
}

double PolicyModel::learning_rate() const { return impl_->lr; }

LossReport PolicyModel::update(const std::vector<GraphBatch>& batches, const Objective& objective) {
  LossReport report;
  impl_->optimizer->zero_grad();
  Tensor loss = impl_->loss(batches, objective, report);
  loss.backward();
  report.grad_norm = objective.clip > 0 ? torch::nn::utils::clip_grad_norm_(impl_->parameters(), objective.clip)
                                        : torch::nn::utils::clip_grad_norm_(impl_->parameters(), 1e30);
  impl_->optimizer->step();
  return report;
}

LossReport PolicyModel::evaluate(const std::vector<GraphBatch>& batches, const Objective& objective) {
  torch::NoGradGuard no_grad;
  LossReport report;
  impl_->loss(batches, objective, report);
  return report;
}

std::vector<double> PolicyModel::step_log_probs(const Graph& graph, const GraphFeatures& features, const Episode& episode) {
  torch::NoGradGuard no_grad;
  Tensor logp = impl_->step_terms(graph, features, {&episode}, false).logp.flatten();
  return std::vector<double>(logp.data_ptr<float>(), logp.data_ptr<float>() + logp.numel());
}

}  // namespace gantry
