#include <nlohmann/json.hpp>

#include "actors/coordinator_state.hpp"
#include "actors/log_line.hpp"
#include "actors/off_thread.hpp"
#include "core/json_util.hpp"
#include "storage/store.hpp"

namespace gantry::coordinator_detail {

namespace {

void reply_via(Self self, const caf::actor& gateway, const std::string& peer, const wire::Reply& r) {
  self->send(gateway, net_out_atom::value, wire::Envelope{peer, wire::Type::reply, wire::encode(r)});
}

// Answers the client whose request is being handled (its gateway sent it).
void reply(Self self, const std::string& peer, const wire::Reply& r) {
  reply_via(self, caf::actor_cast<caf::actor>(self->current_sender()), peer, r);
}

// Asks a local actor (the store, the pool) on behalf of a client and replies with what `answer`
// makes of its answer, or with its error. No timeout: local actors answer, the client has its own
// deadline, and a CAF 0.17 request timeout is a clock entry that lives its whole length even after
// the answer came (at 20,000 queries a second, 10 s timeouts held 200,000 of them: 25 MB).
template <class Value, class Answer, class... Message>
void ask_local(Self self, const caf::actor& whom, const std::string& peer, std::uint64_t id, Answer answer,
               Message&&... message) {
  caf::actor gateway = caf::actor_cast<caf::actor>(self->current_sender());
  self->request(whom, caf::infinite, std::forward<Message>(message)...)
      .then([=](const Value& value) { reply_via(self, gateway, peer, answer(value)); },
            [=](const caf::error& e) { reply_via(self, gateway, peer, wire::Reply{id, false, error_text(self->system(), e), ""}); });
}

nlohmann::json status_json(Self self, const PoolStatus& pool, const GatewayCounters& gateway) {
  CoordinatorState& s = self->state;
  nlohmann::json workers = nlohmann::json::array();
  for (const auto& w : pool.workers)
    workers.push_back({{"name", w.name}, {"host", w.host}, {"pid", w.pid}, {"slots", w.slots}, {"busy", w.busy}, {"done", w.done},
                       {"busy_seconds", w.busy_seconds}, {"silent_seconds", w.silent_seconds}, {"executors", w.executors},
                       {"distrusted", w.distrusted}});
  nlohmann::json queued = nlohmann::json::array(), running = nlohmann::json::array();
  for (const Job& j : s.queue) {  // the head of the queue: a status stays cheap with thousands queued
    if (queued.size() >= 20) break;
    queued.push_back({{"id", j.id}, {"graph", j.record.graph_label}, {"priority", j.spec.priority}});
  }
  for (const auto& [id, j] : s.running) running.push_back({{"id", id}, {"graph", j.record.graph_label}, {"priority", j.spec.priority}});
  return {{"workers", workers}, {"slots", pool.slots()}, {"leases", pool.leased}, {"queued_tasks", pool.queued},
          {"committed", pool.committed}, {"requeued", pool.requeued}, {"stale_results", pool.stale},
          {"malformed", pool.malformed + s.malformed + gateway.malformed}, {"refused", gateway.refused}, {"dropped_sends", gateway.dropped_sends},
          {"jobs_queued", queued}, {"queue_length", s.queue.size()}, {"jobs_running", running},
          {"submit_keys", s.options.submit_keys},  // a client resends a keyed submit only where it is true
          {"improve_seconds", s.options.improve_seconds}, {"background_run", s.improving_id}};
}

}  // namespace

// A client's job is acknowledged only once its QUEUED record is synced: acknowledged before, a
// crash in between lost a job its client had been told was accepted. A job the store cannot
// record is refused, not run (it would not survive a restart, and `jobs` would not list it). A
// submit whose key has a recorded job is answered with that job and runs nothing (the client sent
// it again because no reply came); one that comes while the first is being prepared or recorded
// gets the first one's answer, its job or its refusal (after a refusal the key makes a new try).
void submit_durable(Self self, const caf::actor& gateway, const std::string& peer, const wire::Request& request) {
  CoordinatorState& s = self->state;
  const std::uint64_t rid = request.id;
  const std::string key = request.key;
  const auto answer = [=](const wire::Reply& r) { reply_via(self, gateway, peer, wire::Reply{rid, r.ok, r.error, r.data}); };
  if (key.size() > 64) return answer(wire::Reply{rid, false, "a submit key has at most 64 characters", ""});
  if (!key.empty()) {
    if (!s.keys_read) {
      s.before_keys.emplace_back(gateway, peer, request);
      return;
    }
    if (auto done = s.submitted.find(key); done != s.submitted.end())
      return answer(wire::Reply{rid, true, "", json_text(nlohmann::json{{"job", done->second}})});
    if (auto busy = s.submitting.find(key); busy != s.submitting.end()) return busy->second.push_back(answer);
    s.submitting[key];
  }
  // This submit's answer, and the same to its retries that came while it was being recorded.
  const auto settle = [=](const wire::Reply& r, const std::string& job) {
    answer(r);
    if (key.empty()) return;
    CoordinatorState& st = self->state;
    if (!job.empty()) st.submitted[key] = job;
    auto waiting = st.submitting.find(key);
    if (waiting == st.submitting.end()) return;
    const auto retries = std::move(waiting->second);
    st.submitting.erase(waiting);
    for (const auto& retry : retries) retry(r);
  };
  ProblemCache* cache = s.options.cache;
  const auto hook = s.options.before_build;
  const auto refuse = [=](const std::string& why) { settle(wire::Reply{rid, false, why, ""}, ""); };
  const auto refused = [=](const std::vector<CancelAnswer>& cancels, const std::string& why) {  // nothing to cancel
    for (const CancelAnswer& cancel_answer : cancels) cancel_answer(true, why);
    refuse(why);
  };
  ++s.submits_preparing;
  off_thread<PreparedJob>(self, [spec = request.spec, cache, hook]() mutable { return prepare_job(std::move(spec), cache, true, hook); },
                          [=](Result<PreparedJob> prepared) {
    --self->state.submits_preparing;
    if (!prepared) return refuse(prepared.error().message);
    auto job = std::make_shared<Job>(make_job(self, std::move(prepared).value(), {}));
    job->record.submit_key = key;
    self->state.recording[job->id];  // no cancel yet
    // No timeout: the store actor answers (a timeout would tell the client "refused" while the
    // store may still record the job, which a restart would then run).
    self->request(self->state.store, caf::infinite, put_job_atom::value, job->record)
        .then([=](const StoreReply& stored) {
                std::vector<CancelAnswer> cancels = take_recording(self, job->id);
                if (!stored.ok) return refused(cancels, "job not accepted: recording it failed: " + stored.error);
                job->record.spec.clear();  // stored
                const std::string id = job->id;
                if (!cancels.empty()) cancel_unstarted(self, *job, std::move(cancels));
                else admit(self, std::move(*job));
                settle(wire::Reply{rid, true, "", json_text(nlohmann::json{{"job", id}})}, id);
              },
              [=](const caf::error& e) {
                refused(take_recording(self, job->id), "job not accepted: recording it failed: " + error_text(self->system(), e));
              });
  });
}

void on_client(Self self, const wire::Envelope& e) {
  CoordinatorState& s = self->state;
  const std::string peer = e.peer;
  auto request = wire::decode<wire::Request>(e.payload);
  if (!request) {
    s.malformed_log.note(std::string("dropped a ") + wire::to_string(e.type) + " request from " + peer + ": " + request.error().message, ++s.malformed);
    return reply(self, peer, wire::Reply{0, false, request.error().message, ""});
  }
  const wire::Request& r = request.value();
  switch (e.type) {
    case wire::Type::submit: {
      return submit_durable(self, caf::actor_cast<caf::actor>(self->current_sender()), peer, r);
    }
    case wire::Type::cancel: {
      const caf::actor gateway = caf::actor_cast<caf::actor>(self->current_sender());
      const std::uint64_t rid = r.id;
      return cancel(self, r.job, [=](bool known, const std::string& text) {
        reply_via(self, gateway, peer, wire::Reply{rid, known, known ? "" : text, known ? json_text(nlohmann::json{{"message", text}}) : ""});
      });
    }
    case wire::Type::jobs: {
      const std::uint64_t id = r.id;
      const std::string only = r.job;
      ask_local<StoredJobs>(self, s.store, peer, id, [=](const StoredJobs& jobs) {
        wire::Reply answer{id, jobs.error.empty(), jobs.error, ""};
        std::vector<JobRecord> list;
        for (const JobRecord& j : jobs.jobs) {
          if (!only.empty() && j.id != only) continue;
          auto live = self->state.running.find(j.id);  // a running job's figures as they are now
          list.push_back(live != self->state.running.end() && j.state == JobState::running ? live->second.record : j);
        }
        if (!only.empty() && list.empty() && jobs.error.empty()) answer = wire::Reply{id, false, "no job " + only, ""};
        else answer.data = wire::job_records_json(list);
        return answer;
      }, get_jobs_atom::value, false);  // a listing: the records without their specs
      return;
    }
    case wire::Type::query: {
      const std::uint64_t id = r.id;
      if (r.what == "best") {  // data: the record, or null when there is none
        ask_local<StoredBest>(self, s.store, peer, id, [=](const StoredBest& best) {
          return wire::Reply{id, best.error.empty(), best.error, best.found ? wire::schedule_record_json(best.record) : "null"};
        }, get_best_atom::value, r.graph, r.runtime);
      } else if (r.what == "list") {
        ask_local<StoredBests>(self, s.store, peer, id, [=](const StoredBests& list) {
          std::vector<ScheduleRecord> listed = list.records;  // a listing, not the plans: placements stay home
          for (ScheduleRecord& record : listed) record.placement = Placement{};
          return wire::Reply{id, list.error.empty(), list.error, wire::schedule_records_json(listed)};
        }, list_best_atom::value, r.prefix);
      } else if (r.what == "history") {
        ask_local<StoredHistory>(self, s.store, peer, id, [=](const StoredHistory& history) {
          return wire::Reply{id, history.error.empty(), history.error, wire::history_records_json(history.records)};
        }, get_history_atom::value, r.graph, r.runtime);
      } else if (r.what == "policies") {
        ask_local<StoredPolicies>(self, s.store, peer, id, [=](const StoredPolicies& list) {
          return wire::Reply{id, list.error.empty(), list.error, wire::policy_records_json(list.records)};
        }, list_policies_atom::value);
      } else if (r.what == "policy") {  // data: the policy with its weights and curve, or null
        const auto answer = [=](const StoredPolicy& p) {
          return wire::Reply{id, p.error.empty(), p.error, p.found ? wire::policy_record_json(p.record) : "null"};
        };
        if (!r.job.empty()) {
          ask_local<StoredPolicy>(self, s.store, peer, id, answer, get_job_policy_atom::value, r.job);
        } else if (auto ref = parse_policy_ref(r.policy); !ref) {
          reply(self, peer, wire::Reply{id, false, ref.error().message, ""});
        } else {
          ask_local<StoredPolicy>(self, s.store, peer, id, answer, get_policy_atom::value, ref.value().name, ref.value().version);
        }
      } else {
        reply(self, peer, wire::Reply{id, false, "query '" + r.what + "': expected best, list, history, policies or policy", ""});
      }
      return;
    }
    case wire::Type::status: {
      caf::actor gateway = caf::actor_cast<caf::actor>(self->current_sender());
      const std::uint64_t id = r.id;
      // The pool's view, then the gateway's counters (both local and quick: no timeouts, as above).
      self->request(s.pool, caf::infinite, status_atom::value).then([=](const PoolStatus& pool) {
        const auto answer_with = [=](const GatewayCounters& counters) {
          reply_via(self, gateway, peer, wire::Reply{id, true, "", json_text(status_json(self, pool, counters))});
        };
        self->request(gateway, caf::infinite, status_atom::value)
            .then([=](const GatewayCounters& counters) { answer_with(counters); },
                  [=](const caf::error&) { answer_with(GatewayCounters{}); });
      },
      [=](const caf::error& e) { reply_via(self, gateway, peer, wire::Reply{id, false, error_text(self->system(), e), ""}); });
      return;
    }
    default:
      ++s.malformed;
      return reply(self, peer, wire::Reply{r.id, false, std::string("not a client request: ") + wire::to_string(e.type), ""});
  }
}

}  // namespace gantry::coordinator_detail
