#include "cli/schedule_source.hpp"

#include "actors/net/client.hpp"
#include "actors/net/wire.hpp"
#include "cli/cli_common.hpp"
#include "cli/job_args.hpp"
#include "storage/store.hpp"

namespace gantry::cli {

namespace {

template <class T>
T or_throw(Result<T> r) {
  if (!r) throw CliError(r.error().message);
  return std::move(r).value();
}

class LocalSchedules : public ScheduleSource {
 public:
  explicit LocalSchedules(std::unique_ptr<Store> store) : store_(std::move(store)) {}
  std::string where() const override { return "in " + store_->path(); }
  std::optional<ScheduleRecord> best(const Fingerprint& graph, const Fingerprint& runtime) override {
    return or_throw(store_->best(graph, runtime));
  }
  std::vector<ScheduleRecord> list(const std::string& graph_prefix) override { return or_throw(store_->list_best(graph_prefix)); }
  std::vector<HistoryRecord> history(const Fingerprint& graph, const Fingerprint& runtime) override {
    return or_throw(store_->history(graph, runtime));
  }
  std::vector<PolicyRecord> policies() override { return or_throw(store_->policies()); }
  std::optional<PolicyRecord> policy(const std::string& name_version) override {
    const PolicyRef ref = or_throw(parse_policy_ref(name_version));
    return or_throw(store_->policy(ref.name, ref.version));
  }
  std::optional<PolicyRecord> policy_of_job(const std::string& job) override { return or_throw(store_->policy_of_job(job)); }

 private:
  std::unique_ptr<Store> store_;
};

class RemoteSchedules : public ScheduleSource {
 public:
  explicit RemoteSchedules(ClientOptions client) : client_(std::move(client)) {}
  std::string where() const override { return "at the coordinator " + client_.endpoint; }
  std::optional<ScheduleRecord> best(const Fingerprint& graph, const Fingerprint& runtime) override {
    wire::Request request;
    request.what = "best";
    request.graph = graph;
    request.runtime = runtime;
    const std::string data = ask(request);
    if (data == "null") return std::nullopt;
    return parsed(wire::schedule_record_from_json(data));
  }
  std::vector<ScheduleRecord> list(const std::string& graph_prefix) override {
    wire::Request request;
    request.what = "list";
    request.prefix = graph_prefix;
    return parsed(wire::schedule_records_from_json(ask(request)));
  }
  std::vector<HistoryRecord> history(const Fingerprint& graph, const Fingerprint& runtime) override {
    wire::Request request;
    request.what = "history";
    request.graph = graph;
    request.runtime = runtime;
    return parsed(wire::history_records_from_json(ask(request)));
  }
  std::vector<PolicyRecord> policies() override {
    wire::Request request;
    request.what = "policies";
    return parsed(wire::policy_records_from_json(ask(request)));
  }
  std::optional<PolicyRecord> policy(const std::string& name_version) override {
    wire::Request request;
    request.what = "policy";
    request.policy = name_version;
    return one_policy(request);
  }
  std::optional<PolicyRecord> policy_of_job(const std::string& job) override {
    wire::Request request;
    request.what = "policy";
    request.job = job;
    return one_policy(request);
  }

 private:
  std::optional<PolicyRecord> one_policy(const wire::Request& request) const {
    const std::string data = ask(request);
    if (data == "null") return std::nullopt;
    return parsed(wire::policy_record_from_json(data));
  }
  std::string ask(const wire::Request& request) const {
    auto reply = call_coordinator(client_, wire::Type::query, request);
    if (!reply) throw CliError(reply.error().message + " (asking " + client_.endpoint + ")");
    return reply.value().data;
  }
  template <class T>
  T parsed(Result<T> r) const {
    if (!r) throw CliError("the coordinator at " + client_.endpoint + " sent " + r.error().message);
    return std::move(r).value();
  }
  ClientOptions client_;
};

}  // namespace

std::unique_ptr<ScheduleSource> local_schedules(const std::string& data_dir) {
  return std::make_unique<LocalSchedules>(or_throw(Store::open_read_only(data_dir.empty() ? default_data_dir() : data_dir)));
}

std::unique_ptr<ScheduleSource> remote_schedules(const RemoteArgs& remote) {
  return std::make_unique<RemoteSchedules>(remote.client());
}

std::string other_runtimes_note(const std::vector<ScheduleRecord>& same_graph, const Fingerprint& runtime) {
  std::string listed;
  int shown = 0;
  for (const ScheduleRecord& r : same_graph) {
    if (r.cluster == runtime || r.is_pipeline()) continue;
    if (++shown > 3) continue;
    listed += std::string(listed.empty() ? "" : "; ") + r.cluster_name + ", sim " + r.sim + ", " + r.method + " " +
              format_time(r.makespan, r.unit) + " (--fingerprint " + r.graph.hex() + ":" + r.cluster.hex() + ")";
  }
  if (shown == 0) return "";
  return ". This graph has bests under other simulator options or profiles (profiles change with every `execute` "
         "and `profile` run): " + listed + (shown > 3 ? "; and " + std::to_string(shown - 3) + " more" : "") +
         "; `gantry query best --fingerprint G:R` shows one";
}

}  // namespace gantry::cli
