// The stage III mix: the share of requests that is measured, spread evenly, and measured makespans
// brought to the simulator's clock through the teacher's two makespans.
#include <catch2/catch.hpp>
#include <deque>

#include "actors/mixed_episode_source.hpp"

using namespace gantry;

namespace {

// Answers every request at once with one episode of a fixed makespan, and counts them.
class FixedSource : public EpisodeSource {
 public:
  explicit FixedSource(double makespan) : makespan_(makespan) {}
  int slots() const override { return 2; }
  void submit(EpisodeRequest request) override {
    ++submitted;
    queue_.push_back(request.problem);
  }
  std::optional<Result<EpisodeBatch>> next(double) override {
    if (queue_.empty()) return std::nullopt;
    EpisodeBatch b;
    b.problem = queue_.front();
    queue_.pop_front();
    Episode e;
    e.makespan = makespan_;
    b.episodes.push_back(e);
    return Result<EpisodeBatch>(b);
  }
  int submitted = 0;

 private:
  double makespan_;
  std::deque<int> queue_;
};

}  // namespace

TEST_CASE("a quarter of stage III's requests is measured, and their makespans come back on the simulator's clock", "[actors]") {
  FixedSource simulated(10.0), measured(2.0);
  // Problem 0's teacher: 6 simulated, 4 measured; problem 1's: 9 and 3.
  MixedEpisodeSource mixed(simulated, measured, {6.0 / 4.0, 9.0 / 3.0}, 0.25);
  for (int i = 0; i < 8; ++i) {
    EpisodeRequest r;
    r.problem = i % 2;
    mixed.submit(r);
  }
  CHECK(measured.submitted == 2);  // requests 4 and 8
  CHECK(simulated.submitted == 6);
  std::vector<double> makespans;
  for (int i = 0; i < 8; ++i) {
    auto batch = mixed.next(0);
    REQUIRE(batch.has_value());
    REQUIRE(batch->ok());
    makespans.push_back(batch->value().episodes.at(0).makespan);
  }
  CHECK_FALSE(mixed.next(0).has_value());
  CHECK(mixed.measured_batches() == 2);
  CHECK(mixed.simulated_batches() == 6);
  // Both measured requests were problem 1's (the 4th and 8th): 2 x 9/3.
  CHECK(std::count(makespans.begin(), makespans.end(), 6.0) == 2);
  CHECK(std::count(makespans.begin(), makespans.end(), 10.0) == 6);
  // The measured ones are not left to the end: one comes back among the first four.
  CHECK(std::find(makespans.begin(), makespans.begin() + 4, 6.0) != makespans.begin() + 4);
}
