#pragma once
// Deadlock check for per-device orders executed with blocking point-to-point communication: each
// task first receives its inputs from other devices, computes, then sends its outputs, and a send
// or receive completes only when the peer reaches the matching receive or send (rendezvous). An
// order that is fine with asynchronous transfers can deadlock this way (1F1B with naive blocking
// sends does); the report names the cycle of waiting devices.
#include <string>
#include <vector>

#include "core/pipeline_scheme.hpp"

namespace gantry {

struct BlockingCheck {
  bool progresses = true;
  std::string cycle;  // "device 0 (send ... to 1) -> device 1 (send ... to 0) -> device 0"
};

// `batched`: the sends that follow a task and the receives that precede the next one are posted
// together and waited on together (torch.distributed.batch_isend_irecv; Megatron's
// send_forward_recv_backward), as pipeline executors do; a transfer completes once both ends
// are posted. 1F1B deadlocks with one blocking send or receive at a time and progresses batched.
BlockingCheck check_blocking_order(const PipelineScheme& scheme, bool batched = false);

// The same orders run by a program that follows their asynchronous timeline, as an executor
// would write it: every device posts its transfers in one global order, their producers' end
// times (ties by tensor), each send after its producer and each receive before its consumer,
// one blocking call at a time. A transfer then never waits on one later in that order, so the
// program progresses whenever the timeline is one (an induction over the order), zero-bubble
// orders included. `end`: device -> the end time of each of its tasks, in order. When the
// times contradict the orders (a receive due after its consumer started), `cycle` says where.
BlockingCheck check_timeline_program(const PipelineScheme& scheme, const std::vector<std::vector<double>>& end);

// Device -> the end time of each of its tasks, from their start times (PipelineEvaluation::start).
std::vector<std::vector<double>> task_end_times(const PipelineScheme& scheme, const StageCosts& costs,
                                                const std::vector<std::vector<double>>& start);

}  // namespace gantry
