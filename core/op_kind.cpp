#include "core/op_kind.hpp"

namespace gantry {

namespace {
const char* const kNames[kOpKindCount] = {"matmul", "elementwise", "reduce", "softmax",
                                          "attention", "norm", "embedding", "formation",
                                          "send", "recv", "custom"};
}

const char* to_string(OpKind kind) { return kNames[static_cast<int>(kind)]; }

std::optional<OpKind> parse_op_kind(const std::string& text) {
  for (int k = 0; k < kOpKindCount; ++k)
    if (text == kNames[k]) return static_cast<OpKind>(k);
  return std::nullopt;
}

}  // namespace gantry
