#include "core/graph.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

namespace gantry {

namespace {

bool bad_cost(double value) { return std::isnan(value) || std::isinf(value); }

// A value that must be >= 0 (or the "absent" marker -1 for optional explicit costs).
bool valid_quantity(double value, bool optional) {
  if (bad_cost(value)) return false;
  return value >= 0 || (optional && value == -1);
}

std::string describe_quantity(const char* what, double value) {
  if (bad_cost(value)) return std::string(what) + " is not a finite number";
  std::ostringstream out;
  out << what << " is negative (" << value << ")";
  return out.str();
}

// Finds one cycle among the ops that Kahn's algorithm could not order; returns its path.
std::vector<OpId> find_cycle(int n, const std::vector<std::int32_t>& off, const std::vector<OpId>& succ,
                             const std::vector<int>& indegree_left) {
  std::vector<int> state(n, 0);  // 0 unvisited, 1 on stack, 2 done
  std::vector<OpId> stack;
  std::vector<std::int32_t> next(n, 0);
  for (OpId start = 0; start < n; ++start) {
    if (indegree_left[start] == 0 || state[start] != 0) continue;
    stack.push_back(start);
    state[start] = 1;
    next[start] = off[start];
    while (!stack.empty()) {
      OpId u = stack.back();
      if (next[u] < off[u + 1]) {
        OpId v = succ[next[u]++];
        if (indegree_left[v] == 0) continue;
        if (state[v] == 1) {
          auto it = std::find(stack.begin(), stack.end(), v);
          std::vector<OpId> cycle(it, stack.end());
          cycle.push_back(v);
          return cycle;
        }
        if (state[v] == 0) {
          state[v] = 1;
          next[v] = off[v];
          stack.push_back(v);
        }
      } else {
        state[u] = 2;
        stack.pop_back();
      }
    }
  }
  return {};
}

}  // namespace

// Every edge into an op with an operation feeds one of its edge operands, each exactly once; edges
// into ops without one carry no slot.
Status GraphBuilder::check_operand_slots(const Graph& g, const std::vector<EdgeSpec>& edges) const {
  const int n = g.size();
  std::vector<std::int32_t> bound_count(static_cast<std::size_t>(n), 0);
  std::vector<std::vector<char>> bound(static_cast<std::size_t>(n));
  for (const EdgeSpec& edge : edges) {
    const Operation* op = g.operation(edge.dst);
    auto label = [&] {
      return where(edge.line) + ": edge " + g.name(edge.src) + " -> " + g.name(edge.dst) + ": ";
    };
    if (!op) {
      if (edge.slot >= 0) return make_error(label() + "has operand slot " + std::to_string(edge.slot) + " but " +
                                            g.name(edge.dst) + " has no operation");
      continue;
    }
    const int operands = static_cast<int>(op->operands.size());
    if (edge.slot < 0 || edge.slot >= operands ||
        op->operands[static_cast<std::size_t>(edge.slot)].source != Operand::Source::edge)
      return make_error(label() + "slot " + std::to_string(edge.slot) + " is not an edge operand of " +
                        g.name(edge.dst) + " (" + to_string(op->fn) + " with " + std::to_string(operands) + " operands)");
    auto& seen = bound[static_cast<std::size_t>(edge.dst)];
    seen.resize(static_cast<std::size_t>(operands), 0);
    if (seen[static_cast<std::size_t>(edge.slot)])
      return make_error(label() + "operand slot " + std::to_string(edge.slot) + " of " + g.name(edge.dst) +
                        " is fed by two edges");
    seen[static_cast<std::size_t>(edge.slot)] = 1;
    ++bound_count[static_cast<std::size_t>(edge.dst)];
  }
  for (OpId op = 0; op < n; ++op)
    if (const Operation* operation = g.operation(op); operation && bound_count[op] != operation->edge_operands())
      return make_error(where(0) + ": op " + g.name(op) + ": " + std::to_string(operation->edge_operands()) +
                        " edge operands but " + std::to_string(bound_count[op]) + " edges feed it");
  return Ok{};
}

GraphBuilder::GraphBuilder(std::string source, std::string cost_unit)
    : source_(std::move(source)), cost_unit_(std::move(cost_unit)) {}

OpId GraphBuilder::add_op(OpSpec spec) {
  ops_.push_back(std::move(spec));
  return static_cast<OpId>(ops_.size() - 1);
}

void GraphBuilder::add_edge(EdgeSpec spec) { edges_.push_back(spec); }

std::string GraphBuilder::where(int line) const {
  return line > 0 ? source_ + ":" + std::to_string(line) : source_;
}

// Every quantity's sum over the ops (and the edges) within kLargestTotal: the simulator and the cost model add
// them up (and scale them by rates), and a sum past the largest double is inf, which made
// makespans of inf and bounds of nan.
Status GraphBuilder::check_totals() const {
  const auto sum = [](const auto& items, auto quantity) {  // -1 marks an absent cost: it adds nothing
    double total = 0;
    for (const auto& item : items) total += std::max(0.0, quantity(item));
    return total;
  };
  const auto total_of = [&](auto quantity) { return sum(ops_, quantity); };
  const auto edge_total = [&](auto quantity) { return sum(edges_, quantity); };
  const std::pair<const char*, double> totals[] = {
      {"ops' flops", total_of([](const OpSpec& op) { return op.flops; })},
      {"ops' bytes", total_of([](const OpSpec& op) { return op.bytes; })},
      {"ops' output_bytes", total_of([](const OpSpec& op) { return op.output_bytes; })},
      {"ops' memory", total_of([](const OpSpec& op) { return op.memory; })},
      {"ops' mem_alloc", total_of([](const OpSpec& op) { return op.mem_alloc; })},
      {"ops' cost", total_of([](const OpSpec& op) { return op.cost; })},
      {"ops' transfer cost", total_of([](const OpSpec& op) { return op.transfer_cost; })},
      {"ops' cost on a device kind", total_of([](const OpSpec& op) {
         double most = 0;
         for (const auto& entry : op.cost_by_kind) most = std::max(most, entry.second);
         return most;
       })},
      {"edges' bytes", edge_total([](const EdgeSpec& e) { return e.bytes; })},
      {"edges' transfer cost", edge_total([](const EdgeSpec& e) { return e.cost; })}};
  for (const auto& [what, total] : totals)
    if (!(total <= kLargestTotal)) {
      std::ostringstream out;
      out << source_ << ": the sum of the " << what << " is " << total << ", more than a simulation can add (at most "
          << kLargestTotal << ")";
      return make_error(out.str());
    }
  return Ok{};
}

Result<Graph> GraphBuilder::build() const {
  const int n = static_cast<int>(ops_.size());
  if (n == 0) return make_error(source_ + ": the graph is empty (no operations)");

  Graph g;
  g.source_ = source_;
  g.cost_unit_ = cost_unit_;
  std::map<std::string, int> kind_index;
  for (OpId i = 0; i < n; ++i) {
    const OpSpec& op = ops_[i];
    auto label = [&] {  // built only for an error: graphs have up to millions of ops
      // The op's own name when it has one (STG task "t5", not its internal index 4 as well).
      return where(op.line) + ": op " + (op.name.empty() ? std::to_string(i) : op.name) + ": ";
    };
    for (auto [what, value, optional] :
         {std::tuple{"flops", op.flops, false}, std::tuple{"bytes", op.bytes, false},
          std::tuple{"output_bytes", op.output_bytes, false}, std::tuple{"memory", op.memory, false},
          std::tuple{"mem_alloc", op.mem_alloc, false}, std::tuple{"mem_free", op.mem_free, false},
          std::tuple{"cost", op.cost, true}, std::tuple{"transfer cost", op.transfer_cost, true}})
      if (!valid_quantity(value, optional)) return make_error(label() + describe_quantity(what, value));
    for (const auto& [kind, value] : op.cost_by_kind) {
      if (!valid_quantity(value, false)) return make_error(label() + describe_quantity(("cost on " + kind).c_str(), value));
      kind_index.emplace(kind, static_cast<int>(kind_index.size()));
    }
    if (op.operation)
      if (auto checked = check_operation(*op.operation); !checked) return make_error(label() + checked.error().message);
  }

  g.names_.reserve(n);
  for (OpId i = 0; i < n; ++i) {
    const OpSpec& op = ops_[i];
    g.names_.push_back(op.name.empty() ? "op" + std::to_string(i) : op.name);
    g.kinds_.push_back(op.kind);
    g.flops_.push_back(op.flops);
    g.bytes_.push_back(op.bytes);
    g.output_bytes_.push_back(op.output_bytes);
    g.memory_.push_back(op.memory);
    g.mem_alloc_.push_back(op.mem_alloc);
    g.mem_free_.push_back(op.mem_free);
    g.cost_.push_back(op.cost);
    g.transfer_cost_.push_back(op.transfer_cost);
    g.shapes_.push_back(op.shape);
    g.operation_of_.push_back(op.operation ? static_cast<std::int32_t>(g.operations_.size()) : -1);
    if (op.operation) g.operations_.push_back(*op.operation);
  }
  g.cost_kinds_.resize(kind_index.size());
  g.kind_costs_.assign(kind_index.size(), std::vector<double>(n, -1.0));
  for (const auto& [kind, k] : kind_index) g.cost_kinds_[k] = kind;
  for (OpId i = 0; i < n; ++i)
    for (const auto& [kind, value] : ops_[i].cost_by_kind) g.kind_costs_[kind_index[kind]][i] = value;

  const int m = static_cast<int>(edges_.size());
  for (EdgeId e = 0; e < m; ++e) {
    const EdgeSpec& edge = edges_[e];
    auto label = [&] {
      return where(edge.line) + ": edge " + std::to_string(edge.src) + " -> " + std::to_string(edge.dst) + ": ";
    };
    if (edge.src < 0 || edge.src >= n)
      return make_error(label() + "unknown op id " + std::to_string(edge.src) + " (the graph has " +
                        std::to_string(n) + " ops)");
    if (edge.dst < 0 || edge.dst >= n)
      return make_error(label() + "unknown op id " + std::to_string(edge.dst) + " (the graph has " +
                        std::to_string(n) + " ops)");
    if (edge.src == edge.dst) return make_error(label() + "self loop on op " + g.names_[edge.src]);
    if (!valid_quantity(edge.bytes, false)) return make_error(label() + describe_quantity("bytes", edge.bytes));
    if (!valid_quantity(edge.cost, true)) return make_error(label() + describe_quantity("cost", edge.cost));
    g.edge_src_.push_back(edge.src);
    g.edge_dst_.push_back(edge.dst);
    g.edge_bytes_.push_back(edge.bytes);
    g.edge_cost_.push_back(edge.cost);
    g.edge_slot_.push_back(edge.slot);
  }
  if (auto bound = check_operand_slots(g, edges_); !bound) return bound.error();
  if (Status totals = check_totals(); !totals) return totals.error();  // each quantity is valid by now

  // CSR in both directions; within an op, edges keep their insertion order.
  g.pred_off_.assign(n + 1, 0);
  g.succ_off_.assign(n + 1, 0);
  for (EdgeId e = 0; e < m; ++e) {
    ++g.succ_off_[g.edge_src_[e] + 1];
    ++g.pred_off_[g.edge_dst_[e] + 1];
  }
  for (int i = 0; i < n; ++i) {
    g.succ_off_[i + 1] += g.succ_off_[i];
    g.pred_off_[i + 1] += g.pred_off_[i];
  }
  g.succ_.resize(m);
  g.pred_.resize(m);
  g.succ_edge_.resize(m);
  g.pred_edge_.resize(m);
  std::vector<std::int32_t> succ_fill(g.succ_off_.begin(), g.succ_off_.end() - 1);
  std::vector<std::int32_t> pred_fill(g.pred_off_.begin(), g.pred_off_.end() - 1);
  for (EdgeId e = 0; e < m; ++e) {
    OpId s = g.edge_src_[e], d = g.edge_dst_[e];
    g.succ_[succ_fill[s]] = d;
    g.succ_edge_[succ_fill[s]++] = e;
    g.pred_[pred_fill[d]] = s;
    g.pred_edge_[pred_fill[d]++] = e;
  }

  // Kahn's algorithm, smallest id first among ready ops, so the order is deterministic.
  std::vector<int> indegree(n);
  for (int i = 0; i < n; ++i) indegree[i] = g.pred_off_[i + 1] - g.pred_off_[i];
  std::vector<OpId> ready;
  for (OpId i = n - 1; i >= 0; --i)
    if (indegree[i] == 0) ready.push_back(i);
  g.topo_.reserve(n);
  std::size_t head = 0;
  // A FIFO over `ready` keeps the order stable and linear.
  std::reverse(ready.begin(), ready.end());
  while (head < ready.size()) {
    OpId u = ready[head++];
    g.topo_.push_back(u);
    for (auto k = g.succ_off_[u]; k < g.succ_off_[u + 1]; ++k)
      if (--indegree[g.succ_[k]] == 0) ready.push_back(g.succ_[k]);
  }
  if (static_cast<int>(g.topo_.size()) != n) {
    // Reported at the line of the cycle's first edge (the edges make the cycle, not the ops).
    std::vector<OpId> cycle = find_cycle(n, g.succ_off_, g.succ_, indegree);
    std::vector<int> edge_lines;
    for (std::size_t i = 0; i + 1 < cycle.size(); ++i)
      for (auto k = g.succ_off_[cycle[i]]; k < g.succ_off_[cycle[i] + 1]; ++k)
        if (g.succ_[k] == cycle[i + 1]) {
          edge_lines.push_back(edges_[g.succ_edge_[k]].line);
          break;
        }
    std::ostringstream out;
    out << where(edge_lines.empty() ? 0 : edge_lines[0]) << ": the graph has a cycle: ";
    for (std::size_t i = 0; i < cycle.size(); ++i) out << (i ? " -> " : "") << g.names_[cycle[i]];
    std::vector<int> distinct_lines;
    for (int line : edge_lines)
      if (line > 0 && std::find(distinct_lines.begin(), distinct_lines.end(), line) == distinct_lines.end())
        distinct_lines.push_back(line);
    if (distinct_lines.size() > 1) {
      out << " (edges on lines";
      for (int line : distinct_lines) out << " " << line;
      out << ")";
    }
    return make_error(out.str());
  }
  return g;
}

}  // namespace gantry
