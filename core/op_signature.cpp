#include "core/op_signature.hpp"

#include <cmath>

namespace gantry {

namespace {

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? "," : "") + std::to_string(shape[i]);
  return out + "]";
}

bool gemm_like(TensorFn fn) {
  return fn == TensorFn::matmul || fn == TensorFn::attention || fn == TensorFn::scores || fn == TensorFn::pv;
}

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

double log2_of(double value) { return std::log2(std::max(1.0, value)); }

double product(const std::vector<std::int64_t>& shape, std::size_t from, std::size_t to) {
  double p = 1;
  for (std::size_t i = from; i < to && i < shape.size(); ++i) p *= static_cast<double>(shape[i]);
  return p;
}

// GEMM-like: log2 of (rows, inner, output width) from the first operand's and the output's shapes.
std::vector<double> gemm_features(const std::vector<std::int64_t>& first, const std::vector<std::int64_t>& out,
                                  double flops) {
  if (first.empty() || out.empty()) return {log2_of(flops)};
  const double rows = product(out, 0, out.size() - 1), width = static_cast<double>(out.back());
  const double inner = rows * width > 0 ? flops / (2 * rows * width) : static_cast<double>(first.back());
  return {log2_of(rows), log2_of(inner), log2_of(width)};
}

}  // namespace

OpSignature op_signature(const Graph& g, OpId op) {
  const Operation* operation = g.operation(op);
  if (!operation)
    return {"proxy", "proxy/flops=" + number(g.flops(op)) + "/out=" + number(g.output_bytes(op)), g.flops(op),
            {log2_of(g.flops(op)), log2_of(g.output_bytes(op))}};
  OpSignature s;
  s.family = std::string(to_string(operation->fn)) + "/" + to_string(operation->dtype);
  s.work = gemm_like(operation->fn) ? g.flops(op) : g.bytes(op);
  // Edge operands in slot order: the producer's output shape (as declared), then its slices.
  std::vector<std::string> operands(operation->operands.size());
  const auto edges = g.in_edges(op);
  for (EdgeId e : edges) {
    const auto slot = static_cast<std::size_t>(g.edge_slot(e));
    operands[slot] = shape_text(g.shape(g.edge_src(e)));
  }
  s.signature = s.family + "/out=" + shape_text(g.shape(op));
  for (std::size_t k = 0; k < operands.size(); ++k) {
    const Operand& operand = operation->operands[k];
    s.signature += "/" + (operand.source == Operand::Source::edge ? operands[k] : shape_text(sliced_shape(operand)));
    for (const SliceRange& r : operand.slices)
      if (operand.source == Operand::Source::edge) s.signature += "{" + std::to_string(r.dim) + ":" + std::to_string(r.end - r.begin) + "}";
  }
  // Attributes that change the work done (positions only shift values; eps and theta change none).
  for (const char* key : {"heads"})
    if (const double v = operation->attr(key, -1); v >= 0) s.signature += std::string("/") + key + "=" + number(v);
  if (gemm_like(operation->fn)) {
    std::vector<std::int64_t> first_shape;
    for (EdgeId e : edges)
      if (g.edge_slot(e) == 0) first_shape = g.shape(g.edge_src(e));
    if (operation->operands[0].source != Operand::Source::edge) first_shape = sliced_shape(operation->operands[0]);
    s.features = gemm_features(first_shape, g.shape(op), g.flops(op));
  } else {
    s.features = {log2_of(s.work)};
  }
  return s;
}

OpSignature transfer_signature(double bytes) {
  return {"transfer", "transfer/bytes=" + number(bytes), bytes, {log2_of(bytes)}};
}

}  // namespace gantry
