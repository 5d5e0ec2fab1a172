#include "executor/program.hpp"

#include <cmath>
#include <limits>
#include <map>
#include <string>

#include "executor/aten_kernels.hpp"

namespace gantry {

namespace {

// Whole named tensors, built once per (name, dtype) however many ops read slices of them.
class NamedTensors {
 public:
  at::Tensor get(const Operand& operand, DType dtype) {
    const std::string key = operand.name + "|" + to_string(dtype);
    auto it = cache_.find(key);
    if (it == cache_.end()) it = cache_.emplace(key, aten::named_tensor(operand, dtype)).first;
    TORCH_CHECK(it->second.sizes() == at::IntArrayRef(operand.shape), "named tensor ", operand.name,
                " is used with two shapes");
    return it->second;
  }

 private:
  std::map<std::string, at::Tensor> cache_;
};

// Proxy GEMM operands of side n, shared by every proxy of that size (they are only read).
class ProxyOperands {
 public:
  explicit ProxyOperands(at::Device device) : device_(device) {}
  at::Tensor get(std::int64_t n) {
    auto it = cache_.find(n);
    if (it == cache_.end())
      it = cache_.emplace(n, at::ones({n, n}, at::TensorOptions(at::kFloat).device(device_)) / static_cast<double>(n)).first;
    return it->second;
  }

 private:
  at::Device device_;
  std::map<std::int64_t, at::Tensor> cache_;
};

}  // namespace

std::int64_t proxy_gemm_side(double flops) {
  if (flops < 2) return 0;
  const double side = std::round(std::cbrt(flops / 2));
  if (side >= 9e18) return std::numeric_limits<std::int64_t>::max();  // past int64 (the memory check refuses it)
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(side));
}

Program::Program(const Graph& graph, at::Device device)
    : graph_(graph), device_(device), prepared_(static_cast<std::size_t>(graph.size())) {
  NamedTensors named;  // built on the host (their values are the host generator's), then moved
  ProxyOperands proxies(device);
  for (OpId op = 0; op < graph.size(); ++op) {
    Prepared& p = prepared_[static_cast<std::size_t>(op)];
    if (const Operation* operation = graph.operation(op)) {
      for (const Operand& operand : operation->operands)
        p.constants.push_back(operand.source == Operand::Source::edge
                                  ? at::Tensor()
                                  : aten::sliced(named.get(operand, operation->dtype), operand.slices).contiguous().to(device));
      continue;
    }
    if (const std::int64_t n = proxy_gemm_side(graph.flops(op)); n > 0) p.proxy_a = p.proxy_b = proxies.get(n);
    p.proxy_elements = std::max<std::int64_t>(1, static_cast<std::int64_t>(graph.output_bytes(op) / 4));
  }
}

at::Tensor Program::run_proxy(const Prepared& p) const {
  if (p.proxy_a.defined()) at::mm(p.proxy_a, p.proxy_b);
  return at::empty({p.proxy_elements}, at::TensorOptions(at::kFloat).device(device_));
}

at::Tensor Program::run(OpId op, const std::vector<at::Tensor>& inputs) const {
  const Prepared& p = prepared_[static_cast<std::size_t>(op)];
  const Operation* operation = graph_.operation(op);
  if (!operation) return run_proxy(p);
  std::vector<at::Tensor> operands = p.constants;
  const auto edges = graph_.in_edges(op);
  const at::ScalarType type = aten::scalar_type(operation->dtype);
  for (std::size_t k = 0; k < edges.size(); ++k) {
    const auto slot = static_cast<std::size_t>(graph_.edge_slot(edges[k]));
    at::Tensor value = aten::sliced(inputs[k], operation->operands[slot].slices);
    // Integer ids stay integers; everything else computes in the op's dtype.
    operands[slot] = value.is_floating_point() && value.scalar_type() != type ? value.to(type) : value;
  }
  return aten::compute(*operation, operands);
}

}  // namespace gantry
