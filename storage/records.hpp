#pragma once
// What the store keeps. Plain structs: the RocksDB encoding (MessagePack with a schema version,
// big-endian keys) lives in storage/codec.cpp and never leaks into headers.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/fingerprint.hpp"
#include "core/placement.hpp"

namespace gantry {

// The best known placement of one graph on one cluster (column family `schedules`).
struct ScheduleRecord {
  Fingerprint graph, cluster;
  std::string graph_label;    // where the graph came from (file or workload spec), for listings
  std::string cluster_name;
  std::string method;         // what found it (heft, search, ...)
  std::string sim;            // simulator mode it was evaluated with ("default", "doppler", ...)
  std::string unit;           // the graph's cost unit
  double makespan = 0;
  double lower_bound = 0;
  Placement placement;
  std::string job_id;
  double found_at = 0;        // unix seconds
  long evaluations = 0;       // evaluations the job had spent when it found this
};

// One improvement of a (graph, cluster) best, in time order (column family `history`).
struct HistoryRecord {
  double time = 0;  // unix seconds
  double makespan = 0;
  std::string method;
  std::string job_id;
  long evaluations = 0;
};

// A batch of candidates evaluated by one rollout (column family `episodes`, key job | sequence).
struct EpisodeRecord {
  std::string job_id;
  std::uint64_t sequence = 0;
  int rollout = 0;            // which rollout actor
  long candidates = 0;        // placements evaluated in the batch
  double best_makespan = 0;   // best of the batch
  double mean_makespan = 0;
  double time = 0;            // unix seconds
};

enum class JobState { running, complete, failed, cancelled };
const char* to_string(JobState state);  // "RUNNING", "COMPLETE", "FAILED", "CANCELLED"
// The inverse of to_string (case-insensitive); nullopt for anything else.
std::optional<JobState> parse_job_state(const std::string& text);

struct JobRecord {
  std::string id;
  JobState state = JobState::running;
  Fingerprint graph, cluster;
  std::string graph_label, cluster_name;
  double started = 0, finished = 0;  // unix seconds (finished = 0 while running)
  long evaluations = 0;
  double best_makespan = 0;
  std::string message;  // why it failed, or a summary
};

}  // namespace gantry
