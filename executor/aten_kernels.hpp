#pragma once
// The ATen implementation of every TensorFn (core/operation.hpp). Internal to executor/ and its
// tests: this header includes ATen, which no public header may.
#include <ATen/ATen.h>

#include <vector>

#include "core/operation.hpp"

namespace gantry::aten {

at::ScalarType scalar_type(DType dtype);

// A named tensor, whole: normal values in `dtype`, or int64 token ids (executor/named_tensor.hpp).
at::Tensor named_tensor(const Operand& operand, DType dtype);

// `tensor` narrowed by each slice in turn (a view, no copy).
at::Tensor sliced(at::Tensor tensor, const std::vector<SliceRange>& slices);

// The operation on its operands in order (already sliced and, except integer ids, in its dtype).
// Shapes that do not fit throw c10::Error naming the problem.
at::Tensor compute(const Operation& operation, const std::vector<at::Tensor>& operands);

}  // namespace gantry::aten
