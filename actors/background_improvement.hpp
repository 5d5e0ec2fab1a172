#pragma once
// Background improvement (`gantry coordinator --improve`): when the cluster has been idle a while,
// the coordinator tunes a stored problem again, starting from its stored best, so the answers keep
// improving while nobody asks for work. This file decides which: the problems of the tune and
// pipeline jobs clients submitted (their specs are stored), least recently tuned first, so every
// problem takes its turn; a background run counts as tuning its problem.
#include <string>
#include <vector>

#include "storage/records.hpp"

namespace gantry {

// The record message of a background run starts with this (for people: the record's `improves`
// says it is one).
inline constexpr const char* kBackgroundMessage = "background improvement";

bool is_background_run(const JobRecord& record);

// Whether a stored best is at its lower bound (within rounding): no run can improve it.
bool at_lower_bound(const ScheduleRecord& best);

// Jobs whose spec may be run again, in the order to try them: per problem (kind, graph, runtime)
// of tune and pipeline jobs that are neither queued nor running, its jobs newest first but
// background runs left out (they store no spec; jobs run in their own process, `gantry tune`,
// have none either: the caller skips them); problems ordered by when any of their jobs,
// background runs included, last started (the least recently tuned first, ties by the problem's
// newest job id). Problems with a job queued or running are left out.
std::vector<std::string> improvement_order(const std::vector<JobRecord>& records);

// The background runs of the problem (graph, runtime) beyond the newest `keep` that have ended
// (or were interrupted), oldest first: an idle cluster makes one per run's length, and every
// listing of the jobs reads them all, so a coordinator drops these.
std::vector<std::string> background_runs_beyond(const std::vector<JobRecord>& records, const Fingerprint& graph,
                                                const Fingerprint& runtime, std::size_t keep);

}  // namespace gantry
