#pragma once
// A graph compiled for execution: every op's named operands built and sliced once, before any
// timing, and how to run one op from the values its in-edges deliver. Ops without an operation
// run a proxy: a square GEMM of their flops, producing a tensor of their output bytes. Internal to
// executor/ (includes ATen); one Program serves every thread of its device (running an op only
// reads it). Its tensors live on its device: a CUDA backend keeps one Program per GPU.
#include <ATen/ATen.h>

#include <vector>

#include "core/graph.hpp"

namespace gantry {

// The side n of the square GEMM that stands for an op of `flops` without an operation (2 n^3
// FLOPs); 0 below 2 FLOPs (no GEMM).
std::int64_t proxy_gemm_side(double flops);

class Program {
 public:
  explicit Program(const Graph& graph, at::Device device = at::kCPU);

  const Graph& graph() const { return graph_; }
  // Runs `op`: `inputs[k]` is the value of the producer of in_edges(op)[k].
  at::Tensor run(OpId op, const std::vector<at::Tensor>& inputs) const;

 private:
  struct Prepared {
    std::vector<at::Tensor> constants;  // per operand: the sliced named tensor (undefined for edges)
    at::Tensor proxy_a, proxy_b;        // a proxy's GEMM operands (undefined: no GEMM)
    std::int64_t proxy_elements = 1;    // a proxy's output, in floats
  };
  at::Tensor run_proxy(const Prepared& prepared) const;

  const Graph& graph_;
  at::Device device_;
  std::vector<Prepared> prepared_;
};

}  // namespace gantry
