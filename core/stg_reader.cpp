// The Standard Task Graph Set format (Tobita & Kasahara): '#' comments, line 1 = N real tasks,
// then N+2 lines "id cost npred pred...". Task 0 is a dummy entry and N+1 a dummy exit (cost 0);
// both are dropped, so task i becomes op i-1. No communication; processors are identical.
#include <sstream>

#include "core/graph_io.hpp"

namespace gantry {

Result<Graph> read_graph_stg(const std::string& text, const std::string& source) {
  std::stringstream in(text);
  std::string line;
  int line_no = 0;
  long long n = -1;
  GraphBuilder builder(source, "units");
  long long expected_id = 0;
  while (std::getline(in, line)) {
    ++line_no;
    auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    std::stringstream fields(line);
    const std::string where = source + ":" + std::to_string(line_no);
    if (n < 0) {
      if (!(fields >> n) || n <= 0) return make_error(where + ": expected the task count N >= 1");
      if (n > 50000000) return make_error(where + ": task count " + std::to_string(n) + " is too large");
      continue;
    }
    if (expected_id > n + 1) return make_error(where + ": more task lines than N + 2 = " + std::to_string(n + 2));
    long long id, cost, npred;
    if (!(fields >> id >> cost >> npred))
      return make_error(where + ": expected 'id cost npred pred...'");
    if (id != expected_id)
      return make_error(where + ": expected task id " + std::to_string(expected_id) + ", found " + std::to_string(id));
    if (cost < 0) return make_error(where + ": task " + std::to_string(id) + " has a negative cost");
    if (npred < 0 || npred > n + 1)
      return make_error(where + ": task " + std::to_string(id) + " lists " + std::to_string(npred) +
                        " predecessors (expected 0 to " + std::to_string(n + 1) + ")");
    std::vector<long long> preds;  // read one at a time: npred alone must not size an allocation
    for (long long k = 0; k < npred; ++k) {
      long long p = 0;
      if (!(fields >> p)) return make_error(where + ": task " + std::to_string(id) + " lists fewer than " +
                                            std::to_string(npred) + " predecessors");
      preds.push_back(p);
    }
    if (std::string extra; fields >> extra)
      return make_error(where + ": task " + std::to_string(id) + " says it has " + std::to_string(npred) +
                        " predecessors but the line lists more ('" + extra + "' and after)");
    ++expected_id;
    if (id == 0 || id == n + 1) {  // dummy entry / exit: costing something, it would be dropped
      if (cost != 0)
        return make_error(where + ": task " + std::to_string(id) + " is the dummy " + (id == 0 ? "entry" : "exit") +
                          ", which costs 0 in STG (found " + std::to_string(cost) + ")");
      continue;
    }
    OpSpec op;
    op.name = "t" + std::to_string(id);
    op.cost = static_cast<double>(cost);
    op.line = line_no;
    builder.add_op(std::move(op));
    for (long long p : preds) {
      if (p == 0) continue;  // the dummy entry
      if (p < 0 || p > n)
        return make_error(where + ": task " + std::to_string(id) + " depends on unknown task " + std::to_string(p));
      builder.add_edge(EdgeSpec{static_cast<OpId>(p - 1), static_cast<OpId>(id - 1), 0, -1, line_no});
    }
  }
  if (n < 0) return make_error(source + ": the graph is empty (no task count)");
  if (expected_id < n + 2)
    return make_error(source + ": expected " + std::to_string(n + 2) + " task lines, found " + std::to_string(expected_id));
  return builder.build();
}

}  // namespace gantry
