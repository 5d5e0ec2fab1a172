#pragma once
// The `episodes` task kind: a batch of DOPPLER episodes of one policy version on one graph, for a
// learner (learner/trainer.hpp). The request carries the policy as bytes, so any worker that runs
// the kind can serve any version; the answer carries the episodes as recorded (each tagged with its
// version), which the learner turns into gradient steps.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "actors/rollout_task.hpp"
#include "core/result.hpp"
#include "learner/episode.hpp"
#include "learner/episode_source.hpp"

namespace gantry {

struct BuiltProblem;
struct SlotScratch;

inline constexpr const char* kEpisodesTask = "episodes";

// EpisodeRequest's fields on the wire, the policy as its bytes.
std::string encode_body(const EpisodeRequest& request);
Result<EpisodeRequest> decode_episode_request(std::string_view body);

std::string encode_body(const EpisodeBatch& batch);
Result<EpisodeBatch> decode_episode_batch(std::string_view body);

Result<std::string> run_episodes_task(const std::shared_ptr<const BuiltProblem>& problem, const RolloutTask& task,
                                      std::unique_ptr<SlotScratch>& scratch);

}  // namespace gantry
