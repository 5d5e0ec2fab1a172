#include "actors/learner_checkpoint.hpp"

#include "actors/net/msgpack_fields.hpp"

namespace gantry {

namespace {

using wire::Decoder;
using wire::entry;
using wire::get;
using wire::Writer;

const char* const kFields[] = {"stage",   "stage_episodes", "stage_seconds",  "episodes", "batches",
                               "seconds", "measured_folded", "weights", "best_makespans", "bests"};

}  // namespace

std::string encode_checkpoint(const LearnerCheckpoint& c) {
  Writer w;
  w.map(10);
  entry(w, "stage", c.stage);
  entry(w, "stage_episodes", c.stage_episodes);
  entry(w, "stage_seconds", c.stage_seconds);
  entry(w, "episodes", c.episodes);
  entry(w, "batches", c.batches);
  entry(w, "seconds", c.seconds);
  entry(w, "measured_folded", c.measured_folded);
  w.str("weights");
  w.bin(c.weights);
  entry(w, "best_makespans", c.best_makespans);
  w.str("bests");
  w.array(static_cast<std::uint32_t>(c.bests.size()));
  for (const Placement& p : c.bests) wire::put(w, p);
  return w.take();
}

Result<LearnerCheckpoint> decode_checkpoint(std::string_view bytes) {
  auto c = wire::read_body<LearnerCheckpoint>(
      bytes, "learner checkpoint", kFields, [](Decoder& d, LearnerCheckpoint& c, std::string_view key) -> const char* {
        if (key == "stage") return get(d, c.stage);
        if (key == "stage_episodes") return get(d, c.stage_episodes);
        if (key == "stage_seconds") return get(d, c.stage_seconds);
        if (key == "episodes") return get(d, c.episodes);
        if (key == "batches") return get(d, c.batches);
        if (key == "seconds") return get(d, c.seconds);
        if (key == "measured_folded") return get(d, c.measured_folded);
        if (key == "weights") return wire::get_bin(d, c.weights);
        if (key == "best_makespans") return get(d, c.best_makespans);
        return wire::get_list(d, c.bests, [&](Placement& p) { return get(d, p, "learner checkpoint.bests"); });
      });
  if (!c) return c.error();
  const LearnerCheckpoint& v = c.value();
  const std::pair<const char*, double> counts[] = {{"stage", v.stage},       {"stage_episodes", v.stage_episodes},
                                                   {"stage_seconds", v.stage_seconds}, {"episodes", v.episodes},
                                                   {"batches", v.batches},   {"seconds", v.seconds}};
  for (const auto& [field, value] : counts)
    if (!(value >= 0)) return make_error(std::string("learner checkpoint.") + field + ": " + std::to_string(value) + " is negative");
  if (c.value().bests.size() != c.value().best_makespans.size())
    return make_error("learner checkpoint: " + std::to_string(c.value().bests.size()) + " bests for " +
                      std::to_string(c.value().best_makespans.size()) + " makespans");
  return c;
}

}  // namespace gantry
