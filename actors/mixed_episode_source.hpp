#pragma once
// Stage III with the simulator beside it: a share of the requests is measured for real
// (MeasuredEpisodeSource), the rest are simulated on the rollout pool's workers, so cheap simulated
// exploration goes on while measured episodes correct what the simulator gets wrong. The two
// clocks differ, so a measured makespan is brought to the simulator's scale through the teacher:
// it is multiplied by simulated teacher / measured teacher, and a reward (makespan over the
// problem's simulated teacher) is then the measured ratio to the measured teacher. Each batch
// comes from one source, so its baseline compares episodes of one clock.
#include <vector>

#include "learner/episode_source.hpp"

namespace gantry {

class MixedEpisodeSource : public EpisodeSource {
 public:
  // `to_simulated[i]`: problem i's simulated teacher makespan / its measured one.
  // `measured_share` in (0, 1]: the share of the requests that are measured.
  MixedEpisodeSource(EpisodeSource& simulated, EpisodeSource& measured, std::vector<double> to_simulated,
                     double measured_share);

  int slots() const override { return simulated_.slots() + measured_.slots(); }
  void submit(EpisodeRequest request) override;
  std::optional<Result<EpisodeBatch>> next(double wait_seconds) override;

  long measured_batches() const { return measured_done_; }
  long simulated_batches() const { return simulated_done_; }

 private:
  bool measured_due() const;

  EpisodeSource& simulated_;
  EpisodeSource& measured_;
  std::vector<double> to_simulated_;
  double share_;
  double credit_ = 0;        // requests owed to the measured source
  long measured_pending_ = 0;
  long measured_done_ = 0, simulated_done_ = 0;
};

}  // namespace gantry
