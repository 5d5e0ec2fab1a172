#pragma once
// Where `gantry query` reads stored plans (and learned policies) from: the local store (read-only, while a job may write
// it) or a coordinator over the wire (`--coordinator`). The verbs are written once against this;
// failures are CliErrors that say which source failed.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/fingerprint.hpp"
#include "storage/records.hpp"

namespace gantry::cli {

struct RemoteArgs;

class ScheduleSource {
 public:
  virtual ~ScheduleSource() = default;
  virtual std::string where() const = 0;  // "in DIR", "at the coordinator tcp://..."
  virtual std::optional<ScheduleRecord> best(const Fingerprint& graph, const Fingerprint& runtime) = 0;
  // Every stored best whose graph fingerprint starts with `graph_prefix`; placements may be left out.
  virtual std::vector<ScheduleRecord> list(const std::string& graph_prefix) = 0;
  virtual std::vector<HistoryRecord> history(const Fingerprint& graph, const Fingerprint& runtime) = 0;
  // Every stored learned policy version, without its weights.
  virtual std::vector<PolicyRecord> policies() = 0;
  // One policy in full (weights, curve): NAME[:VERSION] (no version: the newest), or the one job
  // `job` stored; nullopt when there is none.
  virtual std::optional<PolicyRecord> policy(const std::string& name_version) = 0;
  virtual std::optional<PolicyRecord> policy_of_job(const std::string& job) = 0;
};

// When no best is stored under a runtime key: the bests of the same graph stored under other keys
// (other simulator options, or other profiles: every `execute` and `profile` run adds to them, so
// a --profiled best is found under the profiles it was priced on), as a sentence that names them
// and how to read one; "" when there are none.
std::string other_runtimes_note(const std::vector<ScheduleRecord>& same_graph, const Fingerprint& runtime);

std::unique_ptr<ScheduleSource> local_schedules(const std::string& data_dir);  // "" = the default
std::unique_ptr<ScheduleSource> remote_schedules(const RemoteArgs& remote);

}  // namespace gantry::cli
