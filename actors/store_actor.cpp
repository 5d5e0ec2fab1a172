#include "actors/store_actor.hpp"

#include "actors/log_line.hpp"
#include "actors/messages.hpp"
#include "core/profile_table.hpp"

namespace gantry {

caf::behavior store_actor(caf::event_based_actor* self, std::shared_ptr<Store> store) {
  // Episodes are written unsynced; a periodic WAL sync bounds what a crash can lose.
  // `armed`: a flush timer is pending. A failed sync re-arms it, so a later one can succeed.
  auto dirty = std::make_shared<bool>(false);
  auto armed = std::make_shared<bool>(false);
  // Episodes that arrive together are written together: the first of them sends us a `write`,
  // which comes after every message already in the mailbox, so one write takes them all (at
  // thousands of batches a second, one write each cost more than the rest of the coordinator).
  // A read of episodes (tally) writes them first, and so do a sync and the writes that sync the
  // log (a best, a job record), which then cover them.
  auto pending = std::make_shared<std::vector<EpisodeRecord>>();
  auto write_pending = [store, pending] {
    if (pending->empty()) return;
    if (!store->put_episodes(*pending))  // one write refused (a bad record): each on its own, so the others land
      for (const EpisodeRecord& episode : *pending)
        if (auto s = store->put_episode(episode); !s)
          log_line(std::string() + "gantry: storing episode " + std::to_string(episode.sequence) + " of job " +
                   episode.job_id + " failed: " + s.error().message);
    pending->clear();
  };
  self->attach_functor([write_pending] { write_pending(); });
  auto sync = [store, dirty, write_pending] {
    write_pending();
    if (!*dirty) return StoreReply{};
    auto s = store->sync_wal();
    if (!s) return StoreReply{false, false, s.error().message};  // stays dirty
    *dirty = false;
    return StoreReply{};
  };
  return {
      [=](put_best_atom, const ScheduleRecord& record) {
        write_pending();
        auto r = store->put_if_better(record);
        return r ? StoreReply{true, r.value(), {}} : StoreReply{false, false, r.error().message};
      },
      [=](put_episode_atom, const EpisodeRecord& episode) {
        if (pending->empty()) self->send(self, write_atom::value);
        pending->push_back(episode);
        *dirty = true;
        if (!*armed) {
          *armed = true;
          self->delayed_send(self, std::chrono::seconds(1), flush_atom::value);
        }
      },
      [=](put_measurement_atom, const StoredMeasurement& m) {
        write_pending();
        auto r = store->record_measurement(m.graph, m.runtime, m.placement, m.median, m.runs, m.backend);
        return r ? StoreReply{true, r.value(), {}} : StoreReply{false, false, r.error().message};
      },
      [=](add_profiles_atom, const std::string& samples_json) {
        // Said here too: measurers send these without waiting for the answer.
        auto samples = profiles_from_json(samples_json, "a measurement's profile samples");
        auto s = samples ? store->add_profiles(samples.value()) : Status(samples.error());
        if (!s) log_line("gantry: a measurement was not added to the profiles: " + s.error().message);
        return s ? StoreReply{} : StoreReply{false, false, s.error().message};
      },
      [=](put_job_atom, const JobRecord& job) {
        write_pending();
        auto s = store->put_job(job);
        return s ? StoreReply{} : StoreReply{false, false, s.error().message};
      },
      [=](get_best_atom, const Fingerprint& graph, const Fingerprint& runtime) {
        auto r = store->best(graph, runtime);
        if (!r) return StoredBest{false, {}, r.error().message};
        if (!r.value()) return StoredBest{};
        return StoredBest{true, *r.value(), {}};
      },
      [=](list_best_atom, const std::string& graph_prefix) {
        auto r = store->list_best(graph_prefix);
        return r ? StoredBests{std::move(r).value(), {}} : StoredBests{{}, r.error().message};
      },
      [=](get_history_atom, const Fingerprint& graph, const Fingerprint& runtime) {
        auto r = store->history(graph, runtime);
        return r ? StoredHistory{std::move(r).value(), {}} : StoredHistory{{}, r.error().message};
      },
      [=](get_jobs_atom, bool with_specs) {
        auto r = store->jobs(with_specs);
        return r ? StoredJobs{r.value(), {}} : StoredJobs{{}, r.error().message};
      },
      [=](drop_jobs_atom, const std::vector<std::string>& ids) {
        for (const std::string& id : ids)
          if (Status dropped = store->drop_job(id); !dropped) return StoreReply{false, false, dropped.error().message};
        return StoreReply{};
      },
      [=](get_job_atom, const std::string& id) {
        auto r = store->job(id);
        if (!r) return StoredJobs{{}, r.error().message};
        return r.value() ? StoredJobs{{*r.value()}, {}} : StoredJobs{};
      },
      [=](put_content_atom, const Fingerprint& graph, const std::string& graph_json, const Fingerprint& runtime,
          const std::string& cluster_yaml) {
        // The content, not a --cluster string: a file can move, a preset can change.
        auto g = graph_json.empty() ? Status(Ok{}) : store->put_graph(graph, graph_json);
        if (!g) return StoreReply{false, false, g.error().message};
        auto c = store->put_cluster(runtime, cluster_yaml);
        return c ? StoreReply{} : StoreReply{false, false, c.error().message};
      },
      [=](tally_atom, const std::string& job) {
        write_pending();
        EpisodeTally t;
        auto episodes = store->episodes(job);
        if (!episodes) {
          t.error = episodes.error().message;
          return t;
        }
        for (const EpisodeRecord& e : episodes.value()) {
          ++t.episodes;
          t.evaluations += e.candidates;
          t.last_sequence = std::max(t.last_sequence, static_cast<long>(e.sequence));
          t.last_time = std::max(t.last_time, e.time);
        }
        return t;
      },
      [=](put_policy_atom, const PolicyRecord& policy) {
        auto r = store->put_policy(policy);
        return r ? StoredPolicy{true, std::move(r).value(), {}} : StoredPolicy{false, {}, r.error().message};
      },
      [=](get_policy_atom, const std::string& name, std::uint64_t version) {
        auto r = store->policy(name, version);
        if (!r) return StoredPolicy{false, {}, r.error().message};
        if (!r.value()) return StoredPolicy{};
        return StoredPolicy{true, std::move(*r.value()), {}};
      },
      [=](get_job_policy_atom, const std::string& job) {
        auto r = store->policy_of_job(job);
        if (!r) return StoredPolicy{false, {}, r.error().message};
        if (!r.value()) return StoredPolicy{};
        return StoredPolicy{true, std::move(*r.value()), {}};
      },
      [=](put_checkpoint_atom, const std::string& job, const std::string& bytes) {
        write_pending();  // the batches it counts are stored before it
        auto s = store->put_checkpoint(job, bytes);
        return s ? StoreReply{} : StoreReply{false, false, s.error().message};
      },
      [=](get_checkpoint_atom, const std::string& job) {
        auto r = store->checkpoint(job);
        if (!r) return StoredCheckpoint{false, {}, r.error().message};
        if (!r.value()) return StoredCheckpoint{};
        return StoredCheckpoint{true, std::move(*r.value()), {}};
      },
      [=](drop_checkpoint_atom, const std::string& job) {
        auto s = store->drop_checkpoint(job);
        return s ? StoreReply{} : StoreReply{false, false, s.error().message};
      },
      [=](list_policies_atom) {
        auto r = store->policies();
        return r ? StoredPolicies{std::move(r).value(), {}} : StoredPolicies{{}, r.error().message};
      },
      [=](write_atom) { write_pending(); },
      [=](sync_atom) { return sync(); },
      [=](flush_atom) {  // a timer message: answering it would send a reply to ourselves
        *armed = false;
        StoreReply r = sync();
        if (!r.ok) {
          log_line(std::string() + "gantry: WAL sync failed (retried in 1 s): " + r.error);
          *armed = true;
          self->delayed_send(self, std::chrono::seconds(1), flush_atom::value);
        }
      },
  };
}

}  // namespace gantry
