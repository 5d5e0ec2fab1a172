#pragma once
// Per-device orders from priorities and limits: a list scheduler that runs the pipeline with the
// real costs and records what each device does. A free device runs, among the work that can start
// now, a ready F or B of its deepest stage (F first or B first, by rule), else a pending W (it
// fills what would be a bubble and frees memory); when nothing can start now it waits for its
// earliest F or B. An F of a device's entry stage (its first stage: a new microbatch on the
// device) needs room under the device's in-flight limit and, by rule, under its memory limit
// (and, by rule, an F of a later stage waits for room too).
// ZB-H1 and ZB-V are two sets of rules; the tuner's schedule phase searches over them.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/pipeline_scheme.hpp"
#include "core/result.hpp"

namespace gantry {

// With ListScheduleRules::respect_memory, what an entry F (a new microbatch on the device)
// reserves besides its own activations. Short of `all`, later F wait for room (by `held`, the
// newest microbatch's also for the room reserved for the held ones),
// which packs memory as an optimal order does (a microbatch's later F after an older one's W or B
// frees room) but can leave every device waiting for room that only its own later work would
// free: then the earliest waiting F of a later stage (else an entry F) runs anyway, and the
// evaluator finds the scheme over its limit (the tuner rejects it).
enum class MemoryReserve : std::uint8_t {
  all,       // what every microbatch the device holds, and this one, will still allocate there (no F waits)
  newcomer,  // what this microbatch will still allocate there, and the held ones' B gradients
  held,      // what the microbatches the device holds will still allocate there, and this one's B gradients
};
const char* to_string(MemoryReserve reserve);  // "all", "newcomer", "held"
std::optional<MemoryReserve> memory_reserve_from(const std::string& name);  // none for another name

struct ListScheduleRules {
  // Per device: the warm-up depth, i.e. how many (microbatch, stage) activations the device may
  // hold between their F and B, counted over all its stages; only an F of its entry stage waits
  // for a place under it.
  std::vector<int> in_flight_limit;
  bool f_before_b = true;      // when an F and a B can both start now
  bool split_backward = true;  // B and W as two tasks (zero bubble) or one fused BW
  // W waits until nothing else can start (fills bubbles); false: W runs as soon as its B is done
  // and the device is free, before any F or B that could also start.
  bool delay_w = true;
  // An entry F waits while the device's activations, with what `reserve` says the device's
  // microbatches will still allocate there, would exceed costs.max_mem minus its static memory
  // (unless the device holds nothing, so that the schedule always progresses). Offloaded
  // activations count from their F until their B only as the copies back in flight.
  bool respect_memory = true;
  MemoryReserve reserve = MemoryReserve::all;
};

// Orders for `shape`'s placement and microbatches (its schedule is replaced) with `costs` (one
// entry per stage of the placement).
Result<PipelineScheme> pipeline_list_schedule(PipelineScheme shape, const StageCosts& costs, const ListScheduleRules& rules);

}  // namespace gantry
