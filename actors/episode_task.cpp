#include "actors/episode_task.hpp"

#include "actors/net/msgpack_fields.hpp"
#include "actors/problem_spec.hpp"
#include "actors/task_kinds.hpp"

namespace gantry {

namespace {

using wire::Decoder;
using wire::entry;
using wire::get;
using wire::Writer;

const char* const kRequestFields[] = {"policy", "version", "problem", "count", "actor", "epsilon", "teacher_mix", "seed"};
const char* const kBatchFields[] = {"problem", "version", "episodes", "seconds"};

const char* actor_name(Actor a) { return a == Actor::greedy ? "greedy" : a == Actor::teacher ? "teacher" : "sample"; }

// What a slot keeps between tasks: the graph's features, built once per problem.
struct EpisodeScratch : SlotScratch {
  std::shared_ptr<const BuiltProblem> problem;
  TrainingProblem view;
};

}  // namespace

std::string encode_body(const EpisodeRequest& r) {
  Writer w;
  w.map(8);
  w.str("policy");
  w.bin(r.weights ? r.weights->to_bytes() : std::string());
  entry(w, "version", r.version);
  entry(w, "problem", r.problem);
  entry(w, "count", r.count);
  entry(w, "actor", std::string(actor_name(r.options.actor)));
  entry(w, "epsilon", r.options.epsilon);
  entry(w, "teacher_mix", r.options.teacher_mix);
  entry(w, "seed", r.seed);
  return w.take();
}

Result<EpisodeRequest> decode_episode_request(std::string_view body) {
  std::string policy, actor;
  auto r = wire::read_body<EpisodeRequest>(
      body, "episodes request", kRequestFields, [&](Decoder& d, EpisodeRequest& r, std::string_view key) -> const char* {
        if (key == "policy") return wire::get_bin(d, policy);
        if (key == "version") return get(d, r.version);
        if (key == "problem") return get(d, r.problem);
        if (key == "count") return get(d, r.count);
        if (key == "actor") return get(d, actor);
        if (key == "epsilon") return get(d, r.options.epsilon);
        if (key == "teacher_mix") return get(d, r.options.teacher_mix);
        return get(d, r.seed);
      });
  if (!r) return r;
  if (r.value().count < 1 || r.value().count > 100000) return make_error("episodes request: count out of range");
  if (r.value().problem < 0) return make_error("episodes request: negative problem index");
  if (actor == "greedy") r.value().options.actor = Actor::greedy;
  else if (actor == "teacher") r.value().options.actor = Actor::teacher;
  else if (actor == "sample") r.value().options.actor = Actor::sample;
  else return make_error("episodes request: unknown actor \"" + actor + "\"");
  auto weights = PolicyWeights::from_bytes(policy, "episodes request.policy");
  if (!weights) return weights.error();
  r.value().weights = std::make_shared<const PolicyWeights>(std::move(weights).value());
  return r;
}

std::string encode_body(const EpisodeBatch& b) {
  Writer w;
  w.map(4);
  entry(w, "problem", b.problem);
  entry(w, "version", b.version);
  w.str("episodes");
  w.array(static_cast<std::uint32_t>(b.episodes.size()));
  for (const Episode& e : b.episodes) w.bin(e.to_bytes());
  entry(w, "seconds", b.seconds);
  return w.take();
}

Result<EpisodeBatch> decode_episode_batch(std::string_view body) {
  std::string error;
  auto b = wire::read_body<EpisodeBatch>(
      body, "episodes result", kBatchFields, [&](Decoder& d, EpisodeBatch& b, std::string_view key) -> const char* {
        if (key == "problem") return get(d, b.problem);
        if (key == "version") return get(d, b.version);
        if (key == "seconds") return get(d, b.seconds);
        return wire::get_list(d, b.episodes, [&](Episode& e) -> const char* {
          std::string bytes;
          if (wire::get_bin(d, bytes)) return "holds something that is not an episode's bytes";
          auto decoded = Episode::from_bytes(bytes, "episodes result");
          if (!decoded) {
            error = decoded.error().message;
            return "holds a malformed episode";
          }
          e = std::move(decoded).value();
          return nullptr;
        });
      });
  if (!b && !error.empty()) return make_error(b.error().message + " (" + error + ")");
  return b;
}

Result<std::string> run_episodes_task(const std::shared_ptr<const BuiltProblem>& problem, const RolloutTask& task,
                                      std::unique_ptr<SlotScratch>& scratch) {
  auto request = decode_episode_request(task.body);
  if (!request) return request.error();
  auto* cached = dynamic_cast<EpisodeScratch*>(scratch.get());
  if (!cached || cached->problem != problem) {  // a new graph for this slot: its features, once
    auto fresh = std::make_unique<EpisodeScratch>();
    fresh->problem = problem;
    fresh->view = training_view(problem->spec.graph_label, problem->graph, problem->cluster, *problem->costs, problem->sim);
    cached = fresh.get();
    scratch = std::move(fresh);
  }
  auto batch = run_episode_request(cached->view, request.value());
  if (!batch) return batch.error();
  for (const Episode& e : batch.value().episodes)
    if (e.steps() != problem->graph.size()) return make_error("episodes task: an episode did not place every op");
  return encode_body(batch.value());
}

}  // namespace gantry
