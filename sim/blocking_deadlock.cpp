#include "sim/blocking_deadlock.hpp"

#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

namespace gantry {

namespace {

// One step of a device's program: receive a tensor, run a task, or send a tensor.
struct Action {
  enum Kind { recv, compute, send } kind;
  int peer = -1;  // the other device (recv / send)
  int key = 0;    // identifies the tensor: both ends of a transfer carry the same key
  std::string what;
};

// Tensor keys: activation of (m, s -> s+1) and gradient of (m, s+1 -> s).
int activation_key(int m, int s, int stages) { return 2 * (m * stages + s); }
int gradient_key(int m, int s, int stages) { return 2 * (m * stages + s) + 1; }

std::vector<std::vector<Action>> programs(const PipelineScheme& scheme) {
  const int stages = scheme.num_stages();
  std::vector<std::vector<Action>> out(scheme.num_devices());
  for (int d = 0; d < scheme.num_devices(); ++d)
    for (const PipeTask& t : scheme.schedule[d]) {
      const int s = t.stage, m = t.microbatch;
      const bool forward = t.op == PipeOp::F, backward = t.op == PipeOp::B || t.op == PipeOp::BW;
      if (forward && s > 0 && scheme.placement[s - 1] != d)
        out[d].push_back({Action::recv, scheme.placement[s - 1], activation_key(m, s - 1, stages), "recv activation " + std::to_string(m)});
      if (backward && s + 1 < stages && scheme.placement[s + 1] != d)
        out[d].push_back({Action::recv, scheme.placement[s + 1], gradient_key(m, s, stages), "recv gradient " + std::to_string(m)});
      out[d].push_back({Action::compute, -1, 0, task_name(t)});
      if (forward && s + 1 < stages && scheme.placement[s + 1] != d)
        out[d].push_back({Action::send, scheme.placement[s + 1], activation_key(m, s, stages), "send activation " + std::to_string(m)});
      if (backward && s > 0 && scheme.placement[s - 1] != d)
        out[d].push_back({Action::send, scheme.placement[s - 1], gradient_key(m, s - 1, stages), "send gradient " + std::to_string(m)});
    }
  return out;
}

// Compute steps always complete (their inputs were received before them): past them; whether any.
bool skip_compute(const std::vector<Action>& program, std::size_t& pc) {
  const std::size_t before = pc;
  while (pc < program.size() && program[pc].kind == Action::compute) ++pc;
  return pc != before;
}

// One rendezvous at a time: a send or receive completes when the peer stands on its match.
void run_one_at_a_time(const std::vector<std::vector<Action>>& program, std::vector<std::size_t>& pc) {
  const int devices = static_cast<int>(program.size());
  // A send/recv pair completes when both devices stand on it. Repeat until nothing moves.
  for (bool moved = true; moved;) {
    moved = false;
    for (int d = 0; d < devices; ++d) {
      moved = skip_compute(program[d], pc[d]) || moved;
      if (pc[d] >= program[d].size()) continue;
      const Action& a = program[d][pc[d]];
      const int peer = a.peer;
      if (pc[peer] >= program[peer].size()) continue;
      const Action& b = program[peer][pc[peer]];
      const bool match = b.peer == d && b.key == a.key && b.kind != a.kind && b.kind != Action::compute;
      if (match) {
        ++pc[d];
        ++pc[peer];
        moved = true;
      }
    }
  }
}

// Batches: a device posts every transfer up to its next compute step at once and moves on when
// each of them has been posted by its peer too (then both ends are done).
void run_batched(const std::vector<std::vector<Action>>& program, std::vector<std::size_t>& pc) {
  const int devices = static_cast<int>(program.size());
  auto batch_end = [&](int d) {
    std::size_t e = pc[d];
    while (e < program[d].size() && program[d][e].kind != Action::compute) ++e;
    return e;
  };
  // Where device `peer` has the counterpart of `a` (sent by or to device d) posted now, or -1.
  auto posted = [&](int d, const Action& a) -> long {
    const int peer = a.peer;
    for (std::size_t i = pc[peer]; i < batch_end(peer); ++i) {
      const Action& b = program[peer][i];
      if (b.peer == d && b.key == a.key && b.kind != a.kind) return static_cast<long>(i);
    }
    return -1;
  };
  std::vector<std::vector<char>> done(devices);
  for (int d = 0; d < devices; ++d) done[d].assign(program[d].size(), 0);
  for (bool moved = true; moved;) {
    moved = false;
    for (int d = 0; d < devices; ++d) {
      moved = skip_compute(program[d], pc[d]) || moved;
      const std::size_t end = batch_end(d);
      for (std::size_t i = pc[d]; i < end; ++i) {
        if (done[d][i]) continue;
        const long j = posted(d, program[d][i]);
        if (j < 0) continue;
        done[d][i] = 1;  // both ends are posted: the transfer happens
        done[program[d][i].peer][j] = 1;
        moved = true;
      }
      bool all = pc[d] < end;
      for (std::size_t i = pc[d]; i < end; ++i) all = all && done[d][i];
      if (all) {
        pc[d] = end;
        moved = true;
      }
    }
  }
  // A stuck device waits on the first transfer of its batch that has not happened.
  for (int d = 0; d < devices; ++d)
    while (pc[d] < program[d].size() && done[d][pc[d]]) ++pc[d];
}

// A transfer as one device sees it: when (its producer's end, then the producer's rank in the
// timeline), which tensor, and the task it follows (a send: its producer) or precedes (a receive:
// its consumer).
struct Timed {
  double time;
  long rank;
  int key;
  Action action;
  std::size_t task;
};

// Every task's rank in a topological order of the timeline (data dependencies and each device's
// order, earliest end first): ties of time, which zero-length tasks make, follow the dependencies.
// False when the orders contradict the dependencies.
bool timeline_ranks(const PipelineScheme& scheme, const std::vector<std::vector<double>>& end,
                    std::vector<std::vector<long>>& rank) {
  const int stages = scheme.num_stages();
  std::map<std::tuple<int, int, int>, std::pair<int, std::size_t>> where;  // (op, microbatch, stage) -> task
  for (int d = 0; d < scheme.num_devices(); ++d)
    for (std::size_t i = 0; i < scheme.schedule[d].size(); ++i) {
      const PipeTask& t = scheme.schedule[d][i];
      where[{static_cast<int>(t.op == PipeOp::BW ? PipeOp::B : t.op), t.microbatch, t.stage}] = {d, i};
    }
  // Data predecessors of a task (its device's order is the other edge).
  auto inputs = [&](const PipeTask& t) {
    std::vector<std::pair<int, std::size_t>> in;
    auto add = [&](PipeOp op, int m, int s) {
      auto it = where.find({static_cast<int>(op), m, s});
      if (it != where.end()) in.push_back(it->second);
    };
    if (t.op == PipeOp::F && t.stage > 0) add(PipeOp::F, t.microbatch, t.stage - 1);
    if (t.op == PipeOp::B || t.op == PipeOp::BW) {
      if (t.stage + 1 < stages) add(PipeOp::B, t.microbatch, t.stage + 1);
      else add(PipeOp::F, t.microbatch, t.stage);
    }
    return in;
  };
  std::vector<std::size_t> next(scheme.num_devices(), 0);
  rank.assign(scheme.num_devices(), {});
  for (int d = 0; d < scheme.num_devices(); ++d) rank[d].assign(scheme.schedule[d].size(), -1);
  long given = 0;
  for (bool moved = true; moved;) {  // the ready head of every device, earliest end first
    moved = false;
    int pick = -1;
    for (int d = 0; d < scheme.num_devices(); ++d) {
      if (next[d] >= scheme.schedule[d].size()) continue;
      bool ready = true;
      for (auto [pd, pi] : inputs(scheme.schedule[d][next[d]])) ready = ready && rank[pd][pi] >= 0;
      if (ready && (pick < 0 || end[d][next[d]] < end[pick][next[pick]])) pick = d;
    }
    if (pick >= 0) {
      rank[pick][next[pick]++] = given++;
      moved = true;
    }
  }
  for (int d = 0; d < scheme.num_devices(); ++d)
    if (next[d] < scheme.schedule[d].size()) return false;
  return true;
}

// Each device's program in the timeline's global transfer order; false (with `where`) when a
// receive would have to come after its consumer.
bool timeline_programs(const PipelineScheme& scheme, const std::vector<std::vector<double>>& end,
                       std::vector<std::vector<Action>>& out, std::string& where) {
  const int stages = scheme.num_stages();
  std::vector<std::vector<long>> rank;
  if (!timeline_ranks(scheme, end, rank)) {
    where = "the orders contradict the dependencies";
    return false;
  }
  std::map<std::tuple<int, int, int>, std::pair<double, long>> ends;  // (forward?, microbatch, stage) -> end, rank
  for (int d = 0; d < scheme.num_devices(); ++d)
    for (std::size_t i = 0; i < scheme.schedule[d].size(); ++i) {
      const PipeTask& t = scheme.schedule[d][i];
      if (t.op != PipeOp::W) ends[{t.op == PipeOp::F, t.microbatch, t.stage}] = {end[d][i], rank[d][i]};
    }
  out.assign(scheme.num_devices(), {});
  for (int d = 0; d < scheme.num_devices(); ++d) {
    std::vector<Timed> comm;
    for (std::size_t i = 0; i < scheme.schedule[d].size(); ++i) {
      const PipeTask& t = scheme.schedule[d][i];
      const int s = t.stage, m = t.microbatch;
      const bool forward = t.op == PipeOp::F, backward = t.op == PipeOp::B || t.op == PipeOp::BW;
      auto recv = [&](std::pair<double, long> producer, int peer, int key, const std::string& what) {
        comm.push_back({producer.first, producer.second, key, {Action::recv, peer, key, what}, i});
      };
      auto send = [&](int peer, int key, const std::string& what) {
        comm.push_back({end[d][i], rank[d][i], key, {Action::send, peer, key, what}, i});
      };
      if (forward && s > 0 && scheme.placement[s - 1] != d)
        recv(ends[{true, m, s - 1}], scheme.placement[s - 1], activation_key(m, s - 1, stages), "recv activation " + std::to_string(m));
      if (backward && s + 1 < stages && scheme.placement[s + 1] != d)
        recv(ends[{false, m, s + 1}], scheme.placement[s + 1], gradient_key(m, s, stages), "recv gradient " + std::to_string(m));
      if (forward && s + 1 < stages && scheme.placement[s + 1] != d)
        send(scheme.placement[s + 1], activation_key(m, s, stages), "send activation " + std::to_string(m));
      if (backward && s > 0 && scheme.placement[s - 1] != d)
        send(scheme.placement[s - 1], gradient_key(m, s - 1, stages), "send gradient " + std::to_string(m));
    }
    std::sort(comm.begin(), comm.end(), [](const Timed& a, const Timed& b) {
      return std::tie(a.time, a.rank, a.key) < std::tie(b.time, b.rank, b.key);
    });
    std::size_t next = 0;  // the next task to run
    auto run_through = [&](std::size_t last) {
      for (; next <= last && next < scheme.schedule[d].size(); ++next)
        out[d].push_back({Action::compute, -1, 0, task_name(scheme.schedule[d][next])});
    };
    for (const Timed& c : comm) {
      if (c.action.kind == Action::send) {
        run_through(c.task);
      } else if (next > c.task) {
        where = "device " + std::to_string(d) + ": " + c.action.what + " is due after " +
                task_name(scheme.schedule[d][c.task]) + " started";
        return false;
      }
      out[d].push_back(c.action);
    }
    run_through(scheme.schedule[d].size());
  }
  return true;
}

// Runs `program` and says whether every device reaches its end, or names the cycle of waiting devices.
BlockingCheck verdict(const std::vector<std::vector<Action>>& program, bool batched);

}  // namespace

BlockingCheck check_timeline_program(const PipelineScheme& scheme, const std::vector<std::vector<double>>& end) {
  std::vector<std::vector<Action>> program;
  std::string where;
  if (!timeline_programs(scheme, end, program, where)) return BlockingCheck{false, where};
  return verdict(program, /*batched=*/false);
}

BlockingCheck check_blocking_order(const PipelineScheme& scheme, bool batched) { return verdict(programs(scheme), batched); }

std::vector<std::vector<double>> task_end_times(const PipelineScheme& scheme, const StageCosts& costs,
                                                const std::vector<std::vector<double>>& start) {
  std::vector<std::vector<double>> end(scheme.num_devices());
  for (int d = 0; d < scheme.num_devices(); ++d)
    for (std::size_t i = 0; i < scheme.schedule[d].size(); ++i)
      end[d].push_back(start[d][i] + task_cost(scheme.schedule[d][i].op, scheme.schedule[d][i].stage, costs).time);
  return end;
}

namespace {

BlockingCheck verdict(const std::vector<std::vector<Action>>& program, bool batched) {
  const int devices = static_cast<int>(program.size());
  std::vector<std::size_t> pc(devices, 0);
  if (batched) run_batched(program, pc);
  else run_one_at_a_time(program, pc);
  BlockingCheck result;
  for (int d = 0; d < devices; ++d)
    if (pc[d] < program[d].size()) result.progresses = false;
  if (result.progresses) return result;
  // Every stuck device waits for the peer of its current send / receive: follow until a repeat.
  for (int first = 0; first < devices; ++first) {
    if (pc[first] >= program[first].size()) continue;
    std::vector<int> seen(devices, 0);
    int d = first;
    while (d >= 0 && !seen[d] && pc[d] < program[d].size()) {
      seen[d] = 1;
      d = program[d][pc[d]].peer;
    }
    if (d < 0 || pc[d] >= program[d].size()) continue;
    const int start = d;
    do {
      const Action& a = program[d][pc[d]];
      result.cycle += "device " + std::to_string(d) + " (" + a.what + (a.kind == Action::send ? " to " : " from ") +
                      std::to_string(a.peer) + ") -> ";
      d = a.peer;
    } while (d != start);
    result.cycle += "device " + std::to_string(start);
    return result;
  }
  result.cycle = "devices wait on devices that have finished";
  return result;
}

}  // namespace

}  // namespace gantry
