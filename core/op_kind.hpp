#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace gantry {

// What an operation computes; the cost model picks an efficiency per kind.
enum class OpKind : std::uint8_t {
  matmul,
  elementwise,
  reduce,
  softmax,
  attention,
  norm,
  embedding,
  formation,  // gathers/concatenates blocks (einsummable "formation")
  send,       // point-to-point transfer modelled as an op (pipelines)
  recv,
  custom,
};
constexpr int kOpKindCount = static_cast<int>(OpKind::custom) + 1;

const char* to_string(OpKind kind);
std::optional<OpKind> parse_op_kind(const std::string& text);

}  // namespace gantry
