#pragma once
// The wire protocol between gantry processes (docs/protocol.md). A message is three ZeroMQ frames
// after the routing identity: [protocol version: 1 byte] [type: 1 byte] [payload], the payload a
// MessagePack map with its schema version in "v". Decoding never throws: a malformed, oversized,
// truncated or wrong-version message is an error value naming what is wrong.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "actors/job_spec.hpp"
#include "actors/rollout_task.hpp"
#include "core/result.hpp"
#include "storage/records.hpp"

namespace gantry::wire {

constexpr std::uint8_t kProtocolVersion = 1;
constexpr int kSchemaVersion = 2;                     // the payloads' "v" (2: tasks of any kind)
constexpr std::size_t kMaxPayloadBytes = 256u << 20;  // larger is refused unread

enum class Type : std::uint8_t {
  hello = 1,        // worker -> coordinator: name, slots
  heartbeat = 2,    // both ways, every second
  assign = 3,       // coordinator -> worker: a leased task
  done = 4,         // worker -> coordinator: a lease's result
  need_problem = 5, // worker -> coordinator: send me this problem's content
  problem = 6,      // coordinator -> worker: a problem's content
  submit = 7,       // client -> coordinator: a job
  status = 8,       // client -> coordinator: workers, slots, leases, queue
  cancel = 9,       // client -> coordinator: stop a job
  jobs = 10,        // client -> coordinator: job records
  reply = 11,       // coordinator -> client: the answer to a request (ok or error)
  bye = 12,         // worker -> coordinator: leaving; its leases go back to the queue now
  query = 13,       // client -> coordinator: the stored best of a (graph, runtime) key
};
constexpr std::uint8_t kLastType = 13;
const char* to_string(Type type);

struct Hello {
  std::string name, host;
  long pid = 0;
  int slots = 0;
  std::vector<std::string> kinds;  // the task kinds it runs (actors/task_kinds.hpp)
};

struct Assign {
  std::uint64_t lease = 0;
  double deadline_seconds = 0;  // the worker's answer is worthless after this long
  RolloutTask task;
};

struct Done {
  std::uint64_t lease = 0;
  TaskResult result;
};

struct NeedProblem {
  Fingerprint key;
};

struct ProblemContent {
  Fingerprint key;
  ProblemSpec spec;
};

// Client requests carry an id that the reply repeats.
struct Request {
  std::uint64_t id = 0;
  std::string job;        // cancel, jobs (one job; empty = all)
  JobSpec spec;           // submit
  std::string what = "best";   // query: "best", "list", "history", "policies" or "policy"
  Fingerprint graph, runtime;  // query best, history: the store key
  std::string prefix;          // query list: a graph fingerprint prefix (hex; empty = all)
  std::string policy;          // query policy: NAME[:VERSION] (or, when `job` is set, the policy that job stored)
  std::string key;             // submit: the client's key for it, the same on a retry (empty: none)
};

struct Reply {
  std::uint64_t id = 0;
  bool ok = true;
  std::string error;
  std::string data;       // JSON text: the answer (a job id, a status, job records, a best)
};

// A message as it crossed the wire, before its payload is read.
struct Envelope {
  std::string peer;       // the sender's routing identity (coordinator side) or "" (worker side)
  Type type = Type::heartbeat;
  std::string payload;
};

// Checks the version and type frames; the error says what is wrong with them.
Result<Type> parse_header(std::string_view version, std::string_view type);

std::string encode(const Hello& m);
std::string encode(const Assign& m);
std::string encode(const Done& m);
std::string encode(const NeedProblem& m);
std::string encode(const ProblemContent& m);
std::string encode(const Request& m);
std::string encode(const Reply& m);
std::string encode_empty();  // heartbeat, bye

template <class T>
Result<T> decode(std::string_view payload);

// A job spec as JSON text, as the store keeps it for a coordinator's restart.
std::string job_spec_text(const JobSpec& spec);
Result<JobSpec> parse_job_spec_text(const std::string& text);

// A stored best as a query reply carries it (every field, so a client can print or re-simulate it).
std::string schedule_record_json(const ScheduleRecord& record);
Result<ScheduleRecord> schedule_record_from_json(const std::string& text);
// Lists of them (query list: without their placements) and of a best's improvements.
std::string schedule_records_json(const std::vector<ScheduleRecord>& records);
Result<std::vector<ScheduleRecord>> schedule_records_from_json(const std::string& text);
std::string history_records_json(const std::vector<HistoryRecord>& records);
Result<std::vector<HistoryRecord>> history_records_from_json(const std::string& text);
// Stored policies as a query lists them (without their weights and curves), and one in full.
std::string policy_records_json(const std::vector<PolicyRecord>& records);
Result<std::vector<PolicyRecord>> policy_records_from_json(const std::string& text);
std::string policy_record_json(const PolicyRecord& record);
Result<PolicyRecord> policy_record_from_json(const std::string& text);

// JSON views shared with the CLI's output (jobs and schedules as the clients print them).
std::string job_records_json(const std::vector<JobRecord>& jobs);
Result<std::vector<JobRecord>> job_records_from_json(const std::string& text);

}  // namespace gantry::wire
