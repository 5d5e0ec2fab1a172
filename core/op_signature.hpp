#pragma once
// What a measured op time is filed under: its family (the function and dtype, or "proxy" for ops
// without an operation), its exact signature (the family with every operand's and the output's
// shape and the attributes that change the work) and its work, the number measured times of one
// family are interpolated over: flops for GEMM-like functions and proxies, bytes for the rest
// (memory-bound on every device gantry models), and features that place it among its family.
#include <string>

#include "core/graph.hpp"

namespace gantry {

struct OpSignature {
  std::string family;
  std::string signature;
  double work = 0;
  // Where the op sits among its family, in log2 units, for interpolating between measured shapes:
  // rows, inner and output width of a GEMM-like function; log2 of the work otherwise.
  std::vector<double> features;
};

OpSignature op_signature(const Graph& graph, OpId op);

// Transfers are profiled like ops: family "transfer", work = bytes.
OpSignature transfer_signature(double bytes);

}  // namespace gantry
