#include "bench/store_bench.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <random>
#include <stdexcept>

#include "storage/store.hpp"

namespace gantry {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

ScheduleRecord synthetic(long i, double makespan, int ops, std::mt19937_64& rng) {
  ScheduleRecord r;
  r.graph = Fingerprint{0x6a09e667f3bcc908ull ^ static_cast<std::uint64_t>(i) * 0x9e3779b97f4a7c15ull,
                        static_cast<std::uint64_t>(i)};
  r.cluster = Fingerprint{0xbb67ae8584caa73bull, 0x3c6ef372fe94f82bull};
  r.graph_label = "bench-" + std::to_string(i);
  r.cluster_name = "4xP100-pcie";
  r.method = "search";
  r.sim = "default";
  r.unit = "s";
  r.makespan = makespan;
  r.lower_bound = makespan * 0.9;
  for (int k = 0; k < ops; ++k) r.placement.device.push_back(static_cast<std::int32_t>(rng() % 4));
  r.job_id = "bench";
  r.found_at = 0;
  return r;
}

void percentiles(std::vector<double> micros, double& p50, double& p99, double* max = nullptr) {
  std::sort(micros.begin(), micros.end());
  p50 = micros[micros.size() / 2];
  p99 = micros[std::min(micros.size() - 1, micros.size() * 99 / 100)];
  if (max) *max = micros.back();
}

std::vector<double> time_queries(const Store& store, long schedules, long queries, std::mt19937_64& rng) {
  std::vector<double> micros;
  micros.reserve(queries);
  for (long q = 0; q < queries; ++q) {
    const long i = static_cast<long>(rng() % schedules);
    const Fingerprint graph{0x6a09e667f3bcc908ull ^ static_cast<std::uint64_t>(i) * 0x9e3779b97f4a7c15ull,
                            static_cast<std::uint64_t>(i)};
    const auto t0 = Clock::now();
    auto best = store.best(graph, Fingerprint{0xbb67ae8584caa73bull, 0x3c6ef372fe94f82bull});
    micros.push_back(seconds_since(t0) * 1e6);
    if (!best || !best.value()) throw std::runtime_error("bench store: a stored schedule was not found");
  }
  return micros;
}

}  // namespace

StoreBenchResult run_store_bench(const StoreBenchOptions& options) {
  std::string dir = options.dir;
  const bool temporary = dir.empty();
  if (!temporary) {  // the benchmark writes fake plans: never into a store that holds real ones
    std::error_code ec;
    if (std::filesystem::exists(dir, ec) &&
        (!std::filesystem::is_directory(dir, ec) || !std::filesystem::is_empty(dir, ec)))
      throw std::runtime_error("bench store --dir " + dir +
                               ": it already exists and is not an empty directory (the benchmark writes fake "
                               "plans); give a new or empty directory");
  }
  if (temporary) {
    char tmpl[] = "/tmp/gantry-bench-store-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) throw std::runtime_error("cannot create a temporary directory under /tmp");
    dir = tmpl;
  }
  StoreBenchResult result;
  result.schedules = options.schedules;
  std::mt19937_64 rng(5);
  {
    auto opened = Store::open(dir);
    if (!opened) throw std::runtime_error(opened.error().message);
    Store& store = *opened.value();
    auto t0 = Clock::now();
    for (long i = 0; i < options.schedules; ++i) {
      auto r = store.put_if_better(synthetic(i, 1.0 + (rng() % 1000) * 1e-3, options.ops_per_placement, rng));
      if (!r) throw std::runtime_error(r.error().message);
    }
    result.puts_per_second = options.schedules / seconds_since(t0);
    const long updates = std::min<long>(options.schedules, 5000);
    t0 = Clock::now();
    for (long u = 0; u < updates; ++u) {
      const long i = static_cast<long>(rng() % options.schedules);
      auto r = store.put_if_better(synthetic(i, (rng() % 2) ? 0.5 : 2.0, options.ops_per_placement, rng));
      if (!r) throw std::runtime_error(r.error().message);
    }
    result.improving_puts_per_second = updates / seconds_since(t0);
    percentiles(time_queries(store, options.schedules, options.queries, rng), result.query_p50_us,
                result.query_p99_us, &result.query_max_us);
  }
  {
    auto reader = Store::open_read_only(dir);
    if (!reader) throw std::runtime_error(reader.error().message);
    percentiles(time_queries(*reader.value(), options.schedules, options.queries, rng), result.reopen_query_p50_us,
                result.reopen_query_p99_us);
  }
  if (temporary) std::filesystem::remove_all(dir);
  return result;
}

}  // namespace gantry
