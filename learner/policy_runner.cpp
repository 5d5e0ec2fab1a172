#include "learner/policy_runner.hpp"

#include <algorithm>
#include <cmath>

namespace gantry {
namespace {

// Ops per block of the encoder's and SEL's per-op temporaries (their size stays bounded on graphs
// of many ops).
constexpr int kBlock = 256;

float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

}  // namespace

PolicyRunner::PolicyRunner(const PolicyWeights& weights, const GraphFeatures& features, const Graph& graph)
    : weights_(weights), features_(features) {
  encode(graph);
  if (config().ablation == Ablation::gdp) {
    const int n = features_.ops, d = config().devices;
    gdp_logit_.resize(static_cast<std::size_t>(n) * d);
    WeightColumns(weights_.at("gdp.w"), 0, hidden()).multiply(h_.data(), hidden(), n, gdp_logit_.data(), d, weights_.at("gdp.b").data.data());
    return;
  }
  if (config().ablation == Ablation::dual) sel_head();
  plc_terms();
}

// The message-passing encoder: h0 = relu(W x + b); then `steps` rounds of mean-aggregated
// messages along the edges (from predecessors) and against them (from successors),
// m = relu(W h_u + e_uv w_e + b), fed with h to a GRU cell (PyTorch's gate layout: r, z, n).
void PolicyRunner::encode(const Graph& g) {
  const int n = features_.ops, hd = hidden();
  h_.assign(static_cast<std::size_t>(n) * hd, 0.0f);
  WeightColumns(weights_.at("enc.in.w"), 0, kNodeFeatures)
      .multiply(features_.node.data(), kNodeFeatures, n, h_.data(), hd, weights_.at("enc.in.b").data.data());
  for (float& x : h_) x = std::max(x, 0.0f);
  const WeightColumns fwd(weights_.at("enc.fwd.w"), 0, hd), bwd(weights_.at("enc.bwd.w"), 0, hd);
  const WeightColumns gru_in(weights_.at("enc.gru.wih"), 0, 2 * hd), gru_h(weights_.at("enc.gru.whh"), 0, hd);
  const float *ef = weights_.at("enc.fwd.e").data.data(), *bf = weights_.at("enc.fwd.b").data.data();
  const float *eb = weights_.at("enc.bwd.e").data.data(), *bb = weights_.at("enc.bwd.b").data.data();
  const float *bih = weights_.at("enc.gru.bih").data.data(), *bhh = weights_.at("enc.gru.bhh").data.data();
  std::vector<float> pf(h_.size()), pb(h_.size()), next(h_.size());
  std::vector<float> ms(kBlock * 2 * hd), gis(kBlock * 3 * hd), ghs(kBlock * 3 * hd);
  for (int step = 0; step < config().steps; ++step) {
    fwd.multiply(h_.data(), hd, n, pf.data(), hd);
    bwd.multiply(h_.data(), hd, n, pb.data(), hd);
    for (int first = 0; first < n; first += kBlock) {
      const int count = std::min(kBlock, n - first);
      for (int i = 0; i < count; ++i) {
        const int v = first + i;
        float* m = &ms[i * 2 * hd];
        std::fill(m, m + 2 * hd, 0.0f);
        const Span<OpId> preds = g.preds(v), succs = g.succs(v);
        for (std::size_t j = 0; j < preds.size(); ++j) {
          const float e = features_.edge[g.in_edges(v)[j]];
          const float* p = &pf[preds[j] * hd];
          for (int k = 0; k < hd; ++k) m[k] += std::max(p[k] + e * ef[k] + bf[k], 0.0f);
        }
        for (std::size_t j = 0; j < succs.size(); ++j) {
          const float e = features_.edge[g.out_edges(v)[j]];
          const float* p = &pb[succs[j] * hd];
          for (int k = 0; k < hd; ++k) m[hd + k] += std::max(p[k] + e * eb[k] + bb[k], 0.0f);
        }
        if (!preds.empty()) for (int k = 0; k < hd; ++k) m[k] /= static_cast<float>(preds.size());
        if (!succs.empty()) for (int k = 0; k < hd; ++k) m[hd + k] /= static_cast<float>(succs.size());
      }
      gru_in.multiply(ms.data(), 2 * hd, count, gis.data(), 3 * hd, bih);
      gru_h.multiply(&h_[static_cast<std::size_t>(first) * hd], hd, count, ghs.data(), 3 * hd, bhh);
      for (int i = 0; i < count; ++i) {
        const float* h = &h_[static_cast<std::size_t>(first + i) * hd];
        const float *gi = &gis[i * 3 * hd], *gh = &ghs[i * 3 * hd];
        float* out = &next[static_cast<std::size_t>(first + i) * hd];
        for (int k = 0; k < hd; ++k) {
          const float r = sigmoid(gi[k] + gh[k]);
          const float z = sigmoid(gi[hd + k] + gh[hd + k]);
          const float c = std::tanh(gi[2 * hd + k] + r * gh[2 * hd + k]);
          out[k] = (1 - z) * c + z * h[k];
        }
      }
    }
    h_.swap(next);
  }
}

// SEL: [h_v, leaky(W x_v + b), mean h over v's longest path to a sink, mean h over its longest
// path from a source] -> leaky(W1 . + b1) -> w2 . + b2, once per op here; plus, per candidate and
// step, q . leaky(Wd f + bd) + bq of its features now (sel_logits).
void PolicyRunner::sel_head() {
  const int n = features_.ops, hd = hidden(), a = head();
  std::vector<float> bottom(h_.size()), top(h_.size());
  // Path sums by recursion along the path links, O(ops x hidden) whatever the path lengths: an op
  // after the op it links to, which has a path one op shorter.
  std::vector<OpId> by_bottom(n), by_top(n);
  for (int v = 0; v < n; ++v) by_bottom[v] = by_top[v] = v;
  std::sort(by_bottom.begin(), by_bottom.end(), [&](OpId x, OpId y) { return features_.bottom_length[x] < features_.bottom_length[y]; });
  std::sort(by_top.begin(), by_top.end(), [&](OpId x, OpId y) { return features_.top_length[x] < features_.top_length[y]; });
  for (OpId v : by_bottom) {
    const OpId next = features_.bottom_next[v];
    for (int k = 0; k < hd; ++k) bottom[v * hd + k] = h_[v * hd + k] + (next >= 0 ? bottom[next * hd + k] : 0.0f);
  }
  for (OpId v : by_top) {
    const OpId prev = features_.top_prev[v];
    for (int k = 0; k < hd; ++k) top[v * hd + k] = h_[v * hd + k] + (prev >= 0 ? top[prev * hd + k] : 0.0f);
  }
  sel_candidate_ = WeightColumns(weights_.at("sel.d.w"), 0, kCandidateFeatures);
  const WeightColumns x_layer(weights_.at("sel.x.w"), 0, kNodeFeatures), l1(weights_.at("sel.l1.w"), 0, 4 * hd);
  const WeightTensor& w2 = weights_.at("sel.l2.w");
  const float *bx = weights_.at("sel.x.b").data.data(), *b1 = weights_.at("sel.l1.b").data.data();
  const float b2 = weights_.at("sel.l2.b").data[0];
  std::vector<float> zs(kBlock * 4 * hd), hids(kBlock * a);
  sel_static_.resize(n);
  for (int first = 0; first < n; first += kBlock) {
    const int count = std::min(kBlock, n - first);
    x_layer.multiply(&features_.node[static_cast<std::size_t>(first) * kNodeFeatures], kNodeFeatures, count, &zs[hd], 4 * hd, bx);
    for (int i = 0; i < count; ++i) {
      const int v = first + i;
      float* z = &zs[i * 4 * hd];
      std::copy(&h_[v * hd], &h_[v * hd] + hd, z);
      for (int k = 0; k < hd; ++k) z[hd + k] = leaky(z[hd + k]);
      const float lb = static_cast<float>(features_.bottom_length[v]), lt = static_cast<float>(features_.top_length[v]);
      for (int k = 0; k < hd; ++k) {
        z[2 * hd + k] = bottom[v * hd + k] / lb;
        z[3 * hd + k] = top[v * hd + k] / lt;
      }
    }
    l1.multiply(zs.data(), 4 * hd, count, hids.data(), a, b1);
    for (int i = 0; i < count; ++i) {
      const float* hid = &hids[i * a];
      float logit = b2;
      for (int k = 0; k < a; ++k) logit += w2.data[k] * leaky(hid[k]);
      sel_static_[first + i] = logit;
    }
  }
}

void PolicyRunner::sel_logits(const std::vector<OpId>& candidates, const float* features, float* out) const {
  const int st = state();
  const WeightTensor& q = weights_.at("sel.q.w");
  const float* bd = weights_.at("sel.d.b").data.data();
  const float bq = weights_.at("sel.q.b").data[0];
  float hid[kMaxWidth];
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    sel_candidate_.multiply(features + i * kCandidateFeatures, hid, bd);
    float logit = sel_static_[candidates[i]] + bq;
    for (int k = 0; k < st; ++k) logit += q.data[k] * leaky(hid[k]);
    out[i] = logit;
  }
}

// PLC's first layer splits over its input [device features' embedding, h_v, device summary]:
// the h_v part (with the bias) and each op's summary part are computed once per op here.
void PolicyRunner::plc_terms() {
  const int n = features_.ops, hd = hidden(), a = head();
  const WeightTensor& w1 = weights_.at("plc.l1.w");
  node_term_.resize(static_cast<std::size_t>(n) * a);
  summary_term_.resize(static_cast<std::size_t>(n) * a);
  WeightColumns(w1, state(), hd).multiply(h_.data(), hd, n, node_term_.data(), a, weights_.at("plc.l1.b").data.data());
  WeightColumns(w1, state() + hd, hd).multiply(h_.data(), hd, n, summary_term_.data(), a);
  plc_device_ = WeightColumns(weights_.at("plc.f.w"), 0, kDeviceFeatures);
  plc_state_ = WeightColumns(w1, 0, state());
}

void PolicyRunner::plc_logits(OpId op, const float* features, const float* summary_sum, const int* counts,
                              int devices, float* out) const {
  const int st = state(), a = head();
  const WeightTensor& w2 = weights_.at("plc.l2.w");
  const float* bf = weights_.at("plc.f.b").data.data();
  const float b2 = weights_.at("plc.l2.b").data[0];
  float u[kMaxWidth], hid[kMaxWidth];
  for (int d = 0; d < devices; ++d) {
    plc_device_.multiply(features + d * kDeviceFeatures, u, bf);
    for (int k = 0; k < st; ++k) u[k] = leaky(u[k]);
    plc_state_.multiply(u, hid, &node_term_[static_cast<std::size_t>(op) * a]);
    const float scale = counts[d] > 0 ? 1.0f / static_cast<float>(counts[d]) : 0.0f;
    float logit = b2;
    for (int k = 0; k < a; ++k) logit += w2.data[k] * leaky(hid[k] + summary_sum[d * a + k] * scale);
    out[d] = logit;
  }
}

}  // namespace gantry
