#pragma once
// `gantry bench cluster`: what the cluster costs. Evaluations per second of the same tuning job
// embedded (one process) and on a coordinator with 1 and with 2 worker processes on loopback, per
// rollout slot; the coordinator's sustained message rate with tiny tasks (one evaluation each);
// and its memory with many queued jobs and a stream of `query best` requests.
#include <string>
#include <vector>

namespace gantry {

struct ClusterBenchOptions {
  std::string gantry;                  // the gantry binary that runs coordinator and workers
  std::string workload = "llama-layer";
  std::string cluster = "4xP100-pcie";
  // The rate jobs do a fixed amount of work: `evaluations` simulator runs in batches of
  // `batch_evaluations`, so with one slot the embedded and remote jobs evaluate the very same
  // placements (seeded batches) and their rates compare the transport alone.
  long evaluations = 150000;
  long batch_evaluations = 5000;
  int repeats = 3;                     // jobs per configuration, the median is reported
  double message_seconds = 5;          // the tiny-task job
  int tiny_slots = 8;                  // slots per worker for tiny tasks (2 workers; 4 per core is a worker's most)
  int echo_peers = 2, echo_slots = 32;  // echo peers in place of workers for the coordinator alone
  int ingest_messages = 200000;        // results (for no outstanding lease) sent as fast as possible
  int queued_jobs = 1000;
  int query_requests = 50000;  // memory is read after a fifth of them and after all
  std::string parts = "rates,tiny,echo,ingest,memory";  // the measurements to run
  bool runs(const std::string& part) const { return ("," + parts + ",").find("," + part + ",") != std::string::npos; }
};

struct ClusterBenchRate {
  std::string setup;                   // "embedded, 1 slot", "1 worker, 1 slot", "2 workers, 1 slot each"
  int slots = 0;
  std::vector<double> samples;         // evaluations per second of each job
  std::vector<double> busy;            // share of each job's time its rollouts worked on its tasks
  double median = 0, per_slot = 0;
  double vs_embedded = 0;  // per slot against the embedded job of the same repeat: the median ratio
  double median_busy = 0;
};

struct ClusterBenchResult {
  std::vector<ClusterBenchRate> rates;
  double tasks_per_second = 0;       // tiny tasks (two messages each: an assign and a done)
  double echo_tasks_per_second = 0;  // the same, workers replaced by echo peers
  double cpu_us_per_message = 0, echo_cpu_us_per_message = 0;     // the coordinator's CPU time per message
  double ingest_per_second = 0;  // worker messages the coordinator reads, decodes and settles
  long rss_idle_kb = 0, rss_queued_kb = 0, rss_early_queries_kb = 0, rss_after_queries_kb = 0;
  double query_per_second = 0;
};

ClusterBenchResult run_cluster_bench(const ClusterBenchOptions& options);

}  // namespace gantry
