#include "core/operation.hpp"

#include <cmath>

namespace gantry {

namespace {

const char* const kFnNames[kTensorFnCount] = {"matmul",    "add",     "relu",    "rmsnorm",   "rope",
                                              "silu_mul",  "attention", "scores", "softmax",  "pv",
                                              "embedding", "xent_part", "xent",   "mean"};
const char* const kDTypeNames[] = {"f32", "bf16", "f64"};

// {minimum, maximum (-1: any)} operand counts per function.
std::pair<int, int> arity(TensorFn fn) {
  switch (fn) {
    case TensorFn::matmul: return {2, 2};
    case TensorFn::add: return {1, -1};
    case TensorFn::relu: return {1, 1};
    case TensorFn::rmsnorm: return {2, 2};
    case TensorFn::rope: return {1, 1};
    case TensorFn::silu_mul: return {2, 2};
    case TensorFn::attention: return {3, -1};
    case TensorFn::scores: return {2, -1};
    case TensorFn::softmax: return {1, 1};
    case TensorFn::pv: return {2, -1};
    case TensorFn::embedding: return {2, 2};
    case TensorFn::xent_part: return {2, 2};
    case TensorFn::xent: return {1, -1};
    case TensorFn::mean: return {1, -1};
  }
  return {1, -1};
}

// The operand that holds integer ids, if the function reads one.
int integer_operand(TensorFn fn) {
  if (fn == TensorFn::embedding) return 0;
  if (fn == TensorFn::xent_part) return 1;
  return -1;
}

std::string describe(int index) { return "operand " + std::to_string(index); }

Status check_slices(const Operand& operand, int index) {
  const bool named = operand.source != Operand::Source::edge;
  std::vector<std::int64_t> shape = operand.shape;
  for (const SliceRange& s : operand.slices) {
    if (s.dim < 0 || s.begin < 0 || s.end <= s.begin)
      return make_error(describe(index) + ": slice [" + std::to_string(s.dim) + ", " + std::to_string(s.begin) + ", " +
                        std::to_string(s.end) + "] is not a non-empty range of a dimension");
    if (!named) continue;  // an edge's shape is known only when it runs
    if (s.dim >= static_cast<int>(shape.size()) || s.end > shape[static_cast<std::size_t>(s.dim)])
      return make_error(describe(index) + " (" + operand.name + "): slice of dimension " + std::to_string(s.dim) +
                        " up to " + std::to_string(s.end) + " is outside its shape");
    shape[static_cast<std::size_t>(s.dim)] = s.end - s.begin;
  }
  return Ok{};
}

}  // namespace

std::vector<std::int64_t> sliced_shape(const Operand& operand) {
  std::vector<std::int64_t> shape = operand.shape;
  for (const SliceRange& s : operand.slices)
    if (s.dim >= 0 && s.dim < static_cast<int>(shape.size())) shape[static_cast<std::size_t>(s.dim)] = s.end - s.begin;
  return shape;
}

Operand Operand::edge(std::vector<SliceRange> slices) {
  Operand o;
  o.slices = std::move(slices);
  return o;
}

Operand Operand::parameter(std::string name, std::vector<std::int64_t> shape, double scale,
                           std::vector<SliceRange> slices) {
  Operand o;
  o.source = Source::parameter;
  o.name = std::move(name);
  o.shape = std::move(shape);
  o.scale = scale;
  o.slices = std::move(slices);
  return o;
}

Operand Operand::input(std::string name, std::vector<std::int64_t> shape, std::vector<SliceRange> slices) {
  Operand o = parameter(std::move(name), std::move(shape), 1, std::move(slices));
  o.source = Source::input;
  return o;
}

Operand Operand::token_ids(std::string name, std::vector<std::int64_t> shape, std::int64_t count,
                           std::vector<SliceRange> slices) {
  Operand o = input(std::move(name), std::move(shape), std::move(slices));
  o.integer = true;
  o.scale = static_cast<double>(count);
  return o;
}

bool Operand::operator==(const Operand& o) const {
  return source == o.source && name == o.name && shape == o.shape && scale == o.scale && integer == o.integer &&
         slices == o.slices;
}

double Operation::attr(const std::string& key, double fallback) const {
  for (const auto& [k, v] : attrs)
    if (k == key) return v;
  return fallback;
}

Operation& Operation::with(std::string key, double value) {
  auto at = attrs.begin();
  while (at != attrs.end() && at->first < key) ++at;
  if (at != attrs.end() && at->first == key)
    at->second = value;
  else
    attrs.emplace(at, std::move(key), value);
  return *this;
}

int Operation::edge_operands() const {
  int count = 0;
  for (const Operand& o : operands) count += o.source == Operand::Source::edge;
  return count;
}

bool Operation::operator==(const Operation& o) const {
  return fn == o.fn && dtype == o.dtype && operands == o.operands && attrs == o.attrs;
}

const char* to_string(TensorFn fn) { return kFnNames[static_cast<int>(fn)]; }

std::optional<TensorFn> parse_tensor_fn(const std::string& text) {
  for (int k = 0; k < kTensorFnCount; ++k)
    if (text == kFnNames[k]) return static_cast<TensorFn>(k);
  return std::nullopt;
}

const char* to_string(DType dtype) { return kDTypeNames[static_cast<int>(dtype)]; }

std::optional<DType> parse_dtype(const std::string& text) {
  for (int k = 0; k < 3; ++k)
    if (text == kDTypeNames[k]) return static_cast<DType>(k);
  return std::nullopt;
}

double dtype_bytes(DType dtype) {
  switch (dtype) {
    case DType::f32: return 4;
    case DType::bf16: return 2;
    case DType::f64: return 8;
  }
  return 4;
}

DType dtype_for_bytes(double bytes) {
  if (bytes == 2) return DType::bf16;
  if (bytes == 8) return DType::f64;
  return DType::f32;
}

Status check_operation(const Operation& operation) {
  const auto [low, high] = arity(operation.fn);
  const int count = static_cast<int>(operation.operands.size());
  if (count < low || (high >= 0 && count > high))
    return make_error(std::string(to_string(operation.fn)) + " takes " +
                      (high == low ? std::to_string(low) : high < 0 ? "at least " + std::to_string(low)
                                                                    : std::to_string(low) + " to " + std::to_string(high)) +
                      " operands, not " + std::to_string(count));
  if (operation.fn == TensorFn::attention && count % 2 == 0)
    return make_error("attention takes q and (key, value) pairs: an odd number of operands, not " + std::to_string(count));
  const int ids = integer_operand(operation.fn);
  for (int i = 0; i < count; ++i) {
    const Operand& o = operation.operands[static_cast<std::size_t>(i)];
    if (o.source != Operand::Source::edge) {
      if (o.name.empty()) return make_error(describe(i) + ": a parameter or input needs a name");
      if (o.shape.empty()) return make_error(describe(i) + " (" + o.name + "): a parameter or input needs a shape");
      for (std::int64_t extent : o.shape)
        if (extent <= 0) return make_error(describe(i) + " (" + o.name + "): shape extents must be positive");
      if (!(o.scale > 0) || !std::isfinite(o.scale))
        return make_error(describe(i) + " (" + o.name + "): scale must be positive and finite");
      if (o.integer && o.source != Operand::Source::input)
        return make_error(describe(i) + " (" + o.name + "): only graph inputs can be integer");
    }
    if (o.integer && i != ids)
      return make_error(describe(i) + " (" + o.name + "): " + to_string(operation.fn) + " reads no integer ids there");
    if (auto sliced = check_slices(o, i); !sliced) return sliced;
  }
  for (const auto& [key, value] : operation.attrs)
    if (!std::isfinite(value)) return make_error("attribute " + key + " is not a finite number");
  return Ok{};
}

}  // namespace gantry
