#include "actors/mixed_episode_source.hpp"

namespace gantry {

MixedEpisodeSource::MixedEpisodeSource(EpisodeSource& simulated, EpisodeSource& measured, std::vector<double> to_simulated,
                                       double measured_share)
    : simulated_(simulated), measured_(measured), to_simulated_(std::move(to_simulated)), share_(measured_share) {}

// Requests go to the measured source at the share, spread evenly (a credit that grows by the share
// with each request and pays one measured request per whole unit).
void MixedEpisodeSource::submit(EpisodeRequest request) {
  credit_ += share_;
  if (credit_ >= 1) {
    credit_ -= 1;
    ++measured_pending_;
    measured_.submit(std::move(request));
  } else {
    simulated_.submit(std::move(request));
  }
}

// A measured request is run (the measured source works on this thread) when the measured batches
// fall behind their share of what came back, or when no simulated one is ready.
bool MixedEpisodeSource::measured_due() const {
  if (measured_pending_ == 0) return false;
  const double done = static_cast<double>(measured_done_ + simulated_done_ + 1);
  return static_cast<double>(measured_done_) < share_ * done;
}

std::optional<Result<EpisodeBatch>> MixedEpisodeSource::next(double wait_seconds) {
  std::optional<Result<EpisodeBatch>> batch;
  bool measured = measured_due();
  if (!measured) {
    batch = simulated_.next(measured_pending_ > 0 ? 0 : wait_seconds);
    measured = !batch && measured_pending_ > 0;
  }
  if (measured) {
    batch = measured_.next(wait_seconds);
    if (!batch) return batch;
    --measured_pending_;
    ++measured_done_;
    if (batch->ok()) {
      EpisodeBatch& b = batch->value();
      const double scale = to_simulated_.at(static_cast<std::size_t>(b.problem));
      for (Episode& e : b.episodes) e.makespan *= scale;
    }
    return batch;
  }
  if (batch) ++simulated_done_;
  return batch;
}

}  // namespace gantry
