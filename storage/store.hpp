#pragma once
// The RocksDB store: one database directory with the column families meta, graphs, clusters,
// profiles, episodes, schedules, history, policies and jobs. One process owns it (a second gets
// "database in use by PID on HOST"); read-only users open it as a secondary instance. No RocksDB
// type appears here (pimpl).
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/profile_table.hpp"
#include "core/result.hpp"
#include "storage/records.hpp"

namespace gantry {

struct StoreStats {
  struct Family {
    std::string name;
    std::uint64_t keys = 0;   // estimated (RocksDB "rocksdb.estimate-num-keys")
    std::uint64_t bytes = 0;  // live SST + memtable bytes
  };
  std::vector<Family> families;
  int schema_version = 0;
  std::string path;
};

struct VerifyReport {
  std::uint64_t records = 0;        // values decoded
  std::vector<std::string> problems;  // empty = healthy
};

class Store {
 public:
  static constexpr int kSchemaVersion = 2;

  // Opens (creating if needed) as the single writer. Fails with a clear message when another
  // process holds the database or when it was written by a newer schema.
  static Result<std::unique_ptr<Store>> open(const std::string& path);
  // Opens an existing database read-only as a RocksDB secondary instance (works while another
  // process writes it); `catch_up()` refreshes it. A damaged database (a table file the MANIFEST
  // lists is missing or has another size) is refused unless `allow_damaged` (db verify, which
  // reports the damage): a secondary instance would silently answer from the files left.
  static Result<std::unique_ptr<Store>> open_read_only(const std::string& path, bool allow_damaged = false);
  ~Store();

  const std::string& path() const;
  bool read_only() const;
  Status catch_up();

  // Stores `record` as the best of its (graph, cluster) only if its makespan is strictly lower
  // than the stored one; the new best and its history entry commit in one synced WriteBatch.
  // Thread-safe: concurrent callers in one process never let a worse result replace a better one.
  Result<bool> put_if_better(const ScheduleRecord& record);
  Result<std::optional<ScheduleRecord>> best(const Fingerprint& graph, const Fingerprint& cluster) const;
  // Records a real measurement with the stored best (synced), only if that best still has
  // `placement`: false when there is no best or it has changed since the placement was read.
  Result<bool> record_measurement(const Fingerprint& graph, const Fingerprint& cluster, const Placement& placement,
                                  double median_seconds, int runs, const std::string& backend);
  // Every stored best, or those whose graph fingerprint starts with `graph_prefix` (hex).
  Result<std::vector<ScheduleRecord>> list_best(const std::string& graph_prefix = "") const;
  Result<std::vector<HistoryRecord>> history(const Fingerprint& graph, const Fingerprint& cluster) const;

  // Episodes are bulk data: written without sync; sync_wal() makes them durable.
  Status put_episode(const EpisodeRecord& episode);
  Status put_episodes(const std::vector<EpisodeRecord>& episodes);  // one write for all of them
  Result<std::vector<EpisodeRecord>> episodes(const std::string& job_id) const;
  Status sync_wal();

  // Learned policies by name and version (synced). version 0 in put_policy means "the next
  // version of that name", which the returned record carries; policy() with version 0 is the newest.
  Result<PolicyRecord> put_policy(PolicyRecord policy);
  Result<std::optional<PolicyRecord>> policy(const std::string& name, std::uint64_t version = 0) const;
  // Every version of every policy, without their weights and curves (listings).
  Result<std::vector<PolicyRecord>> policies() const;
  // The policy job `job` stored (the last one, should it have stored several), in full.
  Result<std::optional<PolicyRecord>> policy_of_job(const std::string& job) const;

  // Measured op and transfer times: `samples` merged into the stored running statistics of each
  // (device kind, signature) in one synced write; profiles() reads them all.
  Status add_profiles(const ProfileTable& samples);
  Result<ProfileTable> profiles() const;

  // A job's record, synced; its spec (when not empty) is kept apart from it, and a record put
  // without one keeps the spec stored before.
  Status put_job(const JobRecord& job);
  Result<std::optional<JobRecord>> job(const std::string& id) const;  // with its spec
  // Every job; their specs (megabytes each for large graphs) only when asked for.
  Result<std::vector<JobRecord>> jobs(bool with_specs = false) const;
  // Removes a job: its record, spec, batch summaries and checkpoint, in one synced write. Stored
  // bests and their history keep its id. (A coordinator keeps the newest background improvement
  // runs of each problem only.)
  Status drop_job(const std::string& id);

  // A running job's checkpoint (opaque bytes: what it needs to go on after its process died), one
  // per job id, replaced by each put (synced); dropped when the job ends, or by the next writable
  // open when the job is recorded as ended (or not at all).
  Status put_checkpoint(const std::string& job_id, const std::string& bytes);
  Result<std::optional<std::string>> checkpoint(const std::string& job_id) const;
  Status drop_checkpoint(const std::string& job_id);

  // The graph / cluster a fingerprint stands for, as JSON text (so a best can be re-simulated).
  Status put_graph(const Fingerprint& fp, const std::string& json_text);
  Result<std::optional<std::string>> graph(const Fingerprint& fp) const;
  // Clusters are stored as YAML content (Cluster::to_yaml); stores written before that hold the
  // --cluster string (a preset name, identical:N or a file path).
  Status put_cluster(const Fingerprint& fp, const std::string& yaml_or_name);
  Result<std::optional<std::string>> cluster(const Fingerprint& fp) const;

  // A consistent copy in `dir`: a RocksDB checkpoint (hard links) from the writer; from a
  // read-only instance (no lock needed, works while another process writes) a new database with
  // every record of every family, as of the moment of the copy.
  Status backup(const std::string& dir) const;
  // Every table file the MANIFEST lists present and whole (a paranoid open), checksums of every
  // block of every file, and a decode of every value.
  Result<VerifyReport> verify() const;

  // Fault injection (tests): the next `sync_wal` / `put_if_better` / `put_job` calls fail with an error.
  struct Faults {
    int sync_wal = 0;
    int put_if_better = 0;
    int put_job = 0;
  };
  void inject_faults(const Faults& faults);
  // Tests: `hook` runs after each job record is stored, on the thread that stored it (set it
  // before any job is stored).
  void on_job_stored(std::function<void(const JobRecord&)> hook);
  std::uint64_t wal_syncs() const;  // successful sync_wal() calls so far
  Result<StoreStats> stats() const;

 private:
  // Missing or truncated table files, one line each (empty = none): a paranoid read-only open.
  std::vector<std::string> file_problems() const;
  Result<JobRecord> read_job(std::string_view id, std::string_view bytes, bool with_spec) const;
  Status write_job(const JobRecord& job);
  struct Impl;
  explicit Store(std::unique_ptr<Impl> impl);
  Status drop_ended_checkpoints();  // on open: those of jobs that ended or are not recorded
  Status copy_records(const std::string& dir) const;
  std::unique_ptr<Impl> impl_;
};

// Whether `name` can name a stored policy (and be named back: not "builtin", no ':' or '/', no
// ".policy" ending, which read as a version, a file or the shipped policy).
Status valid_policy_name(const std::string& name);

// "NAME" (version 0: the newest) or "NAME:VERSION" of a stored policy; the error names `text`.
struct PolicyRef {
  std::string name;
  std::uint64_t version = 0;
};
Result<PolicyRef> parse_policy_ref(const std::string& text);

// The data directory: --data, else $GANTRY_DATA, else ./gantry-data.
std::string default_data_dir();

}  // namespace gantry
