#pragma once
// A static dataflow graph: operations 0..n-1 stored as arrays (struct of arrays), edges with CSR
// predecessor and successor lists, and a cached topological order. Immutable once built: a
// GraphBuilder validates everything (ids, self loops, cycles, costs) and names the offending input.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/largest_total.hpp"
#include "core/op_kind.hpp"
#include "core/operation.hpp"
#include "core/result.hpp"
#include "core/span.hpp"

namespace gantry {

using OpId = std::int32_t;
using EdgeId = std::int32_t;

// Everything known about one operation. Costs are optional: `cost` < 0 means "derive the time
// from flops/bytes with the cost model"; per-device-kind costs override both.
struct OpSpec {
  std::string name;
  OpKind kind = OpKind::custom;
  double flops = 0;          // floating-point operations
  double bytes = 0;          // bytes read + written (roofline memory term)
  double output_bytes = 0;   // size of the produced tensor
  double memory = 0;         // workspace held while the op runs
  double mem_alloc = 0;      // bytes that stay allocated from the op's start (e.g. activations of F)
  double mem_free = 0;       // bytes released at the op's end (e.g. activations freed by B / W)
  double cost = -1;          // explicit time on any device, in the graph's cost unit
  std::vector<std::pair<std::string, double>> cost_by_kind;  // explicit time per device kind
  double transfer_cost = -1; // explicit time to ship the output to another device (DOPPLER comm)
  std::vector<std::int64_t> shape;  // output shape, for real execution (optional)
  std::optional<Operation> operation;  // what it computes, for real execution (none: a proxy GEMM)
  int line = 0;              // source line, for error messages (0 = unknown)
};

struct EdgeSpec {
  OpId src = 0;
  OpId dst = 0;
  double bytes = 0;   // size of the tensor shipped along the edge
  double cost = -1;   // explicit transfer time when src and dst are on different devices
  int line = 0;
  int slot = -1;      // which operand of dst's operation the edge feeds (-1: dst has no operation)
};

class Graph {
 public:
  Graph() = default;

  int size() const { return static_cast<int>(names_.size()); }
  int num_edges() const { return static_cast<int>(edge_src_.size()); }
  const std::string& source() const { return source_; }
  const std::string& cost_unit() const { return cost_unit_; }

  const std::string& name(OpId op) const { return names_[op]; }
  OpKind kind(OpId op) const { return kinds_[op]; }
  double flops(OpId op) const { return flops_[op]; }
  double bytes(OpId op) const { return bytes_[op]; }
  double output_bytes(OpId op) const { return output_bytes_[op]; }
  double memory(OpId op) const { return memory_[op]; }
  double mem_alloc(OpId op) const { return mem_alloc_[op]; }
  double mem_free(OpId op) const { return mem_free_[op]; }
  double cost(OpId op) const { return cost_[op]; }
  double transfer_cost(OpId op) const { return transfer_cost_[op]; }
  const std::vector<std::int64_t>& shape(OpId op) const { return shapes_[op]; }
  // What the op computes, or nullptr when it has no operation (executors run a proxy GEMM).
  const Operation* operation(OpId op) const {
    return operation_of_[op] < 0 ? nullptr : &operations_[static_cast<std::size_t>(operation_of_[op])];
  }
  bool has_operations() const { return !operations_.empty(); }
  // Device kinds that have explicit per-op costs, and the cost of `op` on kind `k` (< 0: none).
  const std::vector<std::string>& cost_kinds() const { return cost_kinds_; }
  double cost_for_kind(int k, OpId op) const { return kind_costs_[k][op]; }

  OpId edge_src(EdgeId e) const { return edge_src_[e]; }
  OpId edge_dst(EdgeId e) const { return edge_dst_[e]; }
  double edge_bytes(EdgeId e) const { return edge_bytes_[e]; }
  double edge_cost(EdgeId e) const { return edge_cost_[e]; }
  int edge_slot(EdgeId e) const { return edge_slot_[e]; }

  Span<OpId> preds(OpId op) const { return {pred_.data() + pred_off_[op], count(pred_off_, op)}; }
  Span<OpId> succs(OpId op) const { return {succ_.data() + succ_off_[op], count(succ_off_, op)}; }
  // Edge ids parallel to preds()/succs().
  Span<EdgeId> in_edges(OpId op) const { return {pred_edge_.data() + pred_off_[op], count(pred_off_, op)}; }
  Span<EdgeId> out_edges(OpId op) const { return {succ_edge_.data() + succ_off_[op], count(succ_off_, op)}; }
  const std::vector<OpId>& topo_order() const { return topo_; }
  // Position of op's first successor in the CSR successor array (0..num_edges()): lets other
  // modules keep per-edge data in successor order, which the simulator reads sequentially.
  std::int32_t succ_begin(OpId op) const { return succ_off_[op]; }

 private:
  friend class GraphBuilder;
  static std::size_t count(const std::vector<std::int32_t>& off, OpId op) {
    return static_cast<std::size_t>(off[op + 1] - off[op]);
  }

  std::string source_;
  std::string cost_unit_ = "s";
  std::vector<std::string> names_;
  std::vector<OpKind> kinds_;
  std::vector<double> flops_, bytes_, output_bytes_, memory_, mem_alloc_, mem_free_, cost_, transfer_cost_;
  std::vector<std::vector<std::int64_t>> shapes_;
  std::vector<Operation> operations_;   // only the ops that have one (graphs reach millions of ops)
  std::vector<std::int32_t> operation_of_;  // op -> index into operations_, -1 for none
  std::vector<std::string> cost_kinds_;
  std::vector<std::vector<double>> kind_costs_;  // [kind][op], -1 where absent
  std::vector<OpId> edge_src_, edge_dst_;
  std::vector<double> edge_bytes_, edge_cost_;
  std::vector<std::int32_t> edge_slot_;
  std::vector<std::int32_t> pred_off_, succ_off_;
  std::vector<OpId> pred_, succ_;
  std::vector<EdgeId> pred_edge_, succ_edge_;
  std::vector<OpId> topo_;
};

class GraphBuilder {
 public:
  // `source` names the input in error messages (a file path or a generator name).
  explicit GraphBuilder(std::string source = "graph", std::string cost_unit = "s");

  OpId add_op(OpSpec spec);
  void add_edge(EdgeSpec spec);
  void add_edge(OpId src, OpId dst, double bytes = 0, int slot = -1) { add_edge(EdgeSpec{src, dst, bytes, -1, 0, slot}); }
  int size() const { return static_cast<int>(ops_.size()); }
  OpSpec& op(OpId id) { return ops_[id]; }

  // Validates and freezes the graph: unknown ids, self loops, cycles (one is reported with its
  // path), negative or NaN costs, quantities adding up past kLargestTotal, an empty graph, and operations whose operands and edge slots do
  // not match one to one are errors that name the source and line.
  Result<Graph> build() const;

 private:
  std::string where(int line) const;
  Status check_operand_slots(const Graph& graph, const std::vector<EdgeSpec>& edges) const;
  Status check_totals() const;
  std::string source_, cost_unit_;
  std::vector<OpSpec> ops_;
  std::vector<EdgeSpec> edges_;
};

}  // namespace gantry
