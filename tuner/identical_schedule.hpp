#pragma once
// Scheduling a task graph on P identical processors without communication (P|prec|Cmax, the
// setting of the Standard Task Graph Set): lower bounds, an exact branch-and-bound solver for
// small graphs, and the recognition of placement problems that are of this kind.
#include <cstdint>
#include <vector>

#include "core/graph.hpp"
#include "tuner/placement_method.hpp"

namespace gantry {

// True when every op takes the same time on every device, no transfer costs anything, each
// device runs one op at a time and nothing random or memory-bound is simulated: the problem is
// then P|prec|Cmax with the ops' times, P = the number of devices.
bool is_identical_without_communication(const PlacementProblem& problem);

// The op times of such a problem (device 0's).
std::vector<double> op_durations(const PlacementProblem& problem);

// Graham's list scheduling: whenever processors are free, they take the ready ops that come
// first in a priority list. The schedule it builds from `rank` (lower runs first) is the one the
// simulator's priority dispatch runs with device = machine() and priority = -rank: a free device
// never has a ready op of its own waiting behind the one the list put there. Reusable buffers; no
// allocation after construction.
class ListDecoder {
 public:
  ListDecoder(const Graph& graph, std::vector<double> duration, int processors);
  double decode(const std::int32_t* rank);
  const std::vector<std::int32_t>& machine() const { return machine_; }
  const std::vector<double>& start() const { return start_; }
  const std::vector<double>& ready() const { return ready_; }  // when all predecessors had ended

 private:
  const Graph& graph_;
  std::vector<double> duration_;
  int processors_;
  std::vector<std::int32_t> machine_, pending_, free_, heap_;
  std::vector<double> start_, ready_;
  std::vector<std::pair<double, OpId>> events_;
};

struct IdenticalBounds {
  double critical_path = 0;  // longest chain of op times
  double work = 0;           // total time / P (rounded up when every time is an integer)
  double heads_tails = 0;    // the longest chain with heads and tails strengthened by the work of
                             // each op's ancestors and descendants (a Fernandez-Bussell-style bound)
  double energetic = 0;      // the smallest makespan that passes energetic reasoning over intervals
  double best() const;
};

// Lower bounds on the optimal makespan of `graph` with these op times on `processors` identical
// processors, each valid on its own. The energetic bound is computed when every time is an
// integer (then the optimum is an integer too); otherwise it equals the heads-and-tails bound.
IdenticalBounds identical_lower_bounds(const Graph& graph, const std::vector<double>& duration, int processors);

struct ExactSchedule {
  bool proven = false;     // the makespan is optimal (the search finished within its node limit)
  double makespan = 0;     // the best schedule found
  double lower_bound = 0;  // the bound the search started from (= makespan when proven)
  std::vector<int> machine;
  std::vector<double> start;
  long nodes = 0;
};

// Branch and bound over list schedules: tasks taken in a list, each started on the processor that
// frees first, as early as its predecessors allow (every optimal schedule is such a list schedule
// of its own start order, and only lists whose start times do not decrease are enumerated). With
// node_limit > 0 the search stops after that many nodes and `proven` says whether it finished.
ExactSchedule solve_identical_exact(const Graph& graph, const std::vector<double>& duration, int processors,
                                    long node_limit = 0);

}  // namespace gantry
