// gantry bench: performance and quality benchmarks (never run as tests: machines are noisy).
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <nlohmann/json.hpp>

#include "bench/cluster_bench.hpp"
#include "bench/pipeline_bench.hpp"
#include "bench/learner_bench.hpp"
#include "bench/sim_bench.hpp"
#include "bench/stg_bench.hpp"
#include "bench/store_bench.hpp"
#include "bench/tune_bench.hpp"
#include "cli/cli_common.hpp"
#include "cli/commands.hpp"
#include "cli/duration.hpp"
#include "bench/executor_bench.hpp"
#include "bench/fidelity_bench.hpp"
#include "bench/partition_bench.hpp"
#include "cli/text_table.hpp"

namespace gantry::cli {

namespace {

void add_bench_sim(CLI::App& bench) {
  auto options = std::make_shared<SimBenchOptions>();
  auto out = std::make_shared<OutputArgs>();
  CLI::App* cmd = bench.add_subcommand(
      "sim", "simulated ops per second on 1k/10k/100k-op random graphs, 8 devices, both engines, with the "
             "scaling ratios (10k and 100k against 1k, DOPPLER-compatible against default) of this one run");
  cmd->add_option("--sizes", options->sizes, "graph sizes in ops")->capture_default_str()->check(whole_in(1, 10000000));
  cmd->add_option("--engines", options->engines, "engines: default, doppler")->capture_default_str()->delimiter(',');
  cmd->add_option("--cluster", options->cluster, "cluster")->capture_default_str();
  cmd->add_option("--seconds", options->seconds_per_size, "time spent per size and engine")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--placements", options->placements,
                  "distinct random placements cycled through (1 = repeat one placement, which the branch "
                  "predictor learns on small graphs)")
      ->capture_default_str()
      ->check(whole_in(1, 1000));
  out->add_to(*cmd, false);
  cmd->callback([options, out] {
    auto rows = run_sim_bench(*options);
    auto rate = [&](const std::string& engine, int ops) {
      for (const auto& r : rows)
        if (r.engine == engine && r.ops == ops) return r.ops_per_second;
      return 0.0;
    };
    if (out->json()) {
      nlohmann::json j = nlohmann::json::array();
      for (const auto& r : rows)
        j.push_back({{"engine", r.engine}, {"ops", r.ops}, {"edges", r.edges}, {"devices", r.devices}, {"runs", r.runs},
                     {"median_us", r.median_us}, {"min_us", r.min_us}, {"max_us", r.max_us},
                     {"ops_per_second", r.ops_per_second}});
      std::cout << j.dump(2) << "\n";
      return;
    }
    TextTable table({"engine", "ops", "edges", "devices", "runs", "median us/sim", "min us", "Mops/s (median)",
                     "vs smallest", "vs default"});
    const int smallest = *std::min_element(options->sizes.begin(), options->sizes.end());
    for (const auto& r : rows) {
      const double base = rate(r.engine, smallest), plain = rate("default", r.ops);
      table.add({r.engine, std::to_string(r.ops), std::to_string(r.edges), std::to_string(r.devices), std::to_string(r.runs),
                 format_fixed(r.median_us, 1), format_fixed(r.min_us, 1), format_fixed(r.ops_per_second / 1e6, 2),
                 base > 0 ? format_fixed(100 * r.ops_per_second / base, 0) + "%" : "-",
                 plain > 0 ? format_fixed(100 * r.ops_per_second / plain, 0) + "%" : "-"});
    }
    table.print(std::cout);
  });
}

void add_bench_stg(CLI::App& bench) {
  auto options = std::make_shared<StgBenchOptions>();
  auto out = std::make_shared<OutputArgs>();
  auto budget = std::make_shared<std::string>("2s");
  options->data_dir = "tests/data/stg";
  CLI::App* cmd = bench.add_subcommand(
      "stg", "placement quality vs the published optima of the STG 50-task set, or (--tasks N, --generated) on "
             "generated STG-like graphs vs their exact optimum (small graphs) or best proven lower bound");
  cmd->add_option("--data", options->data_dir, "folder with 50/*.stg and optimal/*.csv")->capture_default_str();
  cmd->add_option("--procs", options->processors, "processor counts")->capture_default_str();
  cmd->add_option("--methods", options->methods, "methods to compare")->capture_default_str();
  cmd->add_option("--budget", *budget, "search budget per graph")->capture_default_str();
  cmd->add_option("--limit", options->limit, "graphs per processor count (0 = all)");
  cmd->add_option("--tasks", options->tasks, "tasks per graph: 50 = the published set, other counts are generated")
      ->capture_default_str()
      ->check(whole_in(1, 100000));
  cmd->add_flag("--generated", options->generated, "use generated graphs even for --tasks 50");
  cmd->add_option("--count", options->count, "generated graphs per processor count")->capture_default_str()->check(whole_in(1, 100000));
  cmd->add_option("--seed", options->seed, "seed of the generated set")->capture_default_str()->check(seed_number());
  cmd->add_option("--exact-max", options->exact_max_tasks, "generated graphs up to this many tasks get the exact solver")
      ->capture_default_str();
  out->add_to(*cmd, false);
  cmd->callback([options, out, budget] {
    auto seconds = parse_duration(*budget);
    if (!seconds) throw CliError("--budget: " + seconds.error().message);
    options->budget_seconds = seconds.value();
    if (isatty(STDERR_FILENO))
      options->progress = [](const std::string& what) { std::fprintf(stderr, "\r  %-40s", what.c_str()); };
    auto rows = run_stg_bench(*options);
    if (isatty(STDERR_FILENO)) std::fprintf(stderr, "\n");
    if (out->json()) {
      nlohmann::json j = nlohmann::json::array();
      for (const auto& r : rows)
        j.push_back({{"method", r.method}, {"processors", r.processors}, {"graphs", r.graphs}, {"mean_gap", r.mean_gap},
                     {"max_gap", r.max_gap}, {"optimal", r.optimal}, {"below_bound", r.below_bound},
                     {"vs_lower_bound", r.vs_lower_bound}});
      std::cout << j.dump(2) << "\n";
      return;
    }
    TextTable table({"method", "procs", "graphs", "mean gap", "max gap", "at reference", "below bound", "vs bound only"});
    for (const auto& r : rows)
      table.add({r.method, std::to_string(r.processors), std::to_string(r.graphs), format_fixed(100 * r.mean_gap, 3) + "%",
                 format_fixed(100 * r.max_gap, 2) + "%", std::to_string(r.optimal), std::to_string(r.below_bound),
                 std::to_string(r.vs_lower_bound)});
    table.print(std::cout);
    std::cout << "gap = (makespan - reference) / reference; the reference is the proven optimum, or for the "
                 "graphs counted in 'vs bound only' the best proven lower bound (the optimum is unknown)\n";
  });
}

void add_bench_tune(CLI::App& bench) {
  auto options = std::make_shared<TuneBenchOptions>();
  auto out = std::make_shared<OutputArgs>();
  CLI::App* cmd = bench.add_subcommand("tune", "evaluations per second of `gantry tune` with 1 and 2 rollout actors");
  cmd->add_option("--workload", options->workload, "workload")->capture_default_str();
  cmd->add_option("--cluster", options->cluster, "cluster")->capture_default_str();
  cmd->add_option("--rollouts", options->rollouts, "rollout counts to compare")->capture_default_str();
  cmd->add_option("--seconds", options->seconds, "length of each job")->capture_default_str();
  cmd->add_option("--repeats", options->repeats, "jobs per configuration (median reported)")->capture_default_str();
  out->add_to(*cmd, false);
  cmd->callback([options, out] {
    auto rows = run_tune_bench(*options);
    if (out->json()) {
      nlohmann::json j = nlohmann::json::array();
      for (const auto& r : rows)
        j.push_back({{"rollouts", r.rollouts}, {"evals_per_second", r.evals_per_second}, {"samples", r.samples},
                     {"speedup", r.speedup}});
      std::cout << j.dump(2) << "\n";
      return;
    }
    TextTable table({"rollouts", "evals/s (median)", "samples", "speedup vs first"});
    for (const auto& r : rows) {
      std::string samples;
      for (double x : r.samples) samples += (samples.empty() ? "" : " ") + format_fixed(x, 0);
      table.add({std::to_string(r.rollouts), format_fixed(r.evals_per_second, 0), samples, format_fixed(r.speedup, 2) + "x"});
    }
    table.print(std::cout);
  });
}

void add_bench_cluster(CLI::App& bench) {
  auto options = std::make_shared<ClusterBenchOptions>();
  auto out = std::make_shared<OutputArgs>();
  CLI::App* cmd = bench.add_subcommand(
      "cluster", "evaluations per second embedded and on 1 and 2 worker processes, message rate, memory under load");
  cmd->add_option("--workload", options->workload, "workload of the tuning jobs")->capture_default_str();
  cmd->add_option("--cluster", options->cluster, "cluster of the tuning jobs")->capture_default_str();
  cmd->add_option("--evals", options->evaluations, "simulator runs of each rate job")->capture_default_str()->check(whole_in(1000, 1000000000));
  cmd->add_option("--batch-evals", options->batch_evaluations, "simulator runs per batch of the rate jobs")
      ->capture_default_str()
      ->check(whole_in(1, 100000000));
  cmd->add_option("--repeats", options->repeats, "jobs per configuration (median reported)")->capture_default_str()->check(whole_in(1, 1000));
  cmd->add_option("--queued-jobs", options->queued_jobs, "jobs submitted for the memory check (one runs, the rest queue)")
      ->capture_default_str()
      ->check(whole_in(1, 1000000));
  cmd->add_option("--query-requests", options->query_requests, "`query best` requests for the memory check")
      ->capture_default_str()
      ->check(whole_in(5, 100000000));
  cmd->add_option("--parts", options->parts,
                  "measurements to run, comma-separated: rates (evals/s embedded, 1 and 2 workers), tiny (tiny tasks on 2 "
                  "workers), echo (the coordinator alone, echo peers as workers), ingest, memory")
      ->capture_default_str()
      ->check([](const std::string& parts) {
        std::stringstream in(parts);
        for (std::string part; std::getline(in, part, ',');)
          if (part != "rates" && part != "tiny" && part != "echo" && part != "ingest" && part != "memory")
            return "unknown part '" + part + "' (rates, tiny, echo, ingest, memory)";
        return std::string();
      });
  cmd->add_option("--message-seconds", options->message_seconds, "length of the tiny-task jobs")
      ->capture_default_str()
      ->check(finite_in(1, 3600));
  cmd->add_option("--tiny-slots", options->tiny_slots, "rollout slots of each of the 2 workers for tiny tasks")
      ->capture_default_str()
      ->check(whole_in(1, 256));
  out->add_to(*cmd, false);
  cmd->callback([options, out] {
    options->gantry = std::filesystem::read_symlink("/proc/self/exe").string();  // this gantry runs the processes
    const ClusterBenchResult r = run_cluster_bench(*options);
    if (out->json()) {
      nlohmann::json rates = nlohmann::json::array();
      for (const auto& x : r.rates)
        rates.push_back({{"setup", x.setup}, {"slots", x.slots}, {"samples", x.samples}, {"median", x.median},
                         {"per_slot", x.per_slot}, {"vs_embedded", x.vs_embedded}, {"busy", x.busy},
                         {"median_busy", x.median_busy}});
      std::cout << nlohmann::json{{"rates", rates}, {"tasks_per_second", r.tasks_per_second},
                                  {"messages_per_second", 2 * r.tasks_per_second}, {"ingest_per_second", r.ingest_per_second},
                                  {"echo_tasks_per_second", r.echo_tasks_per_second},
                                  {"echo_messages_per_second", 2 * r.echo_tasks_per_second},
                                  {"cpu_us_per_message", r.cpu_us_per_message},
                                  {"echo_cpu_us_per_message", r.echo_cpu_us_per_message},
                                  {"rss_idle_kb", r.rss_idle_kb},
                                  {"rss_queued_kb", r.rss_queued_kb}, {"queued_jobs", options->queued_jobs - 1},
                                  {"query_per_second", r.query_per_second}, {"rss_early_queries_kb", r.rss_early_queries_kb},
                                  {"rss_after_queries_kb", r.rss_after_queries_kb}}
                       .dump(2)
                << "\n";
      return;
    }
    const ClusterBenchOptions& o = *options;  // a part not run prints nothing
    if (o.runs("rates")) {
      TextTable table({"setup", "evals/s (median)", "samples", "per slot", "per slot vs embedded (median of paired runs)",
                       "rollouts busy (median)"});
      for (const auto& x : r.rates) {
        std::string samples;
        for (double s : x.samples) samples += (samples.empty() ? "" : " ") + format_fixed(s, 0);
        table.add({x.setup, format_fixed(x.median, 0), samples, format_fixed(x.per_slot, 0),
                   format_fixed(100 * x.vs_embedded, 1) + "%", format_fixed(100 * x.median_busy, 2) + "%"});
      }
      table.print(std::cout);
    }
    // Every tiny task is two messages through the coordinator: an assign and a done.
    if (o.runs("tiny"))
      std::cout << "tiny tasks (2 workers x " << o.tiny_slots << " slots): " << format_fixed(r.tasks_per_second, 0)
                << " tasks/s = " << format_fixed(2 * r.tasks_per_second, 0) << " messages/s (assign + done), coordinator CPU "
                << format_fixed(r.cpu_us_per_message, 1) << " us/message\n";
    if (o.runs("echo"))
      std::cout << "coordinator alone (echo peers, " << o.echo_peers << " x " << o.echo_slots
                << " slots): " << format_fixed(r.echo_tasks_per_second, 0) << " tasks/s = "
                << format_fixed(2 * r.echo_tasks_per_second, 0) << " messages/s, coordinator CPU "
                << format_fixed(r.echo_cpu_us_per_message, 1) << " us/message\n";
    if (o.runs("ingest"))
      std::cout << "coordinator ingest: " << format_fixed(r.ingest_per_second, 0) << " results/s read, decoded and settled\n";
    if (o.runs("memory"))
      std::cout << "coordinator memory: " << r.rss_idle_kb << " kB idle, " << r.rss_queued_kb << " kB with 1 job running and "
                << o.queued_jobs - 1 << " queued, " << r.rss_early_queries_kb << " kB after " << o.query_requests / 5 << " and "
                << r.rss_after_queries_kb << " kB after " << o.query_requests << " query best requests ("
                << format_fixed(r.query_per_second, 0) << "/s)\n";
  });
}

void add_bench_store(CLI::App& bench) {
  auto options = std::make_shared<StoreBenchOptions>();
  auto out = std::make_shared<OutputArgs>();
  CLI::App* cmd = bench.add_subcommand("store", "put_if_better throughput and query-best latency with many schedules");
  cmd->add_option("--schedules", options->schedules, "stored schedules")->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--queries", options->queries, "timed queries")->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--dir", options->dir, "database directory (default: a temporary one)");
  out->add_to(*cmd, false);
  cmd->callback([options, out] {
    StoreBenchResult r = run_store_bench(*options);
    nlohmann::json j = {{"schedules", r.schedules}, {"puts_per_second", r.puts_per_second},
                        {"improving_puts_per_second", r.improving_puts_per_second},
                        {"query_p50_us", r.query_p50_us}, {"query_p99_us", r.query_p99_us},
                        {"query_max_us", r.query_max_us}, {"secondary_query_p50_us", r.reopen_query_p50_us},
                        {"secondary_query_p99_us", r.reopen_query_p99_us}};
    if (out->json()) {
      std::cout << j.dump(2) << "\n";
      return;
    }
    TextTable table({"measure", "value"});
    table.add({"stored schedules", std::to_string(r.schedules)});
    table.add({"put_if_better/s (new keys, synced)", format_fixed(r.puts_per_second, 0)});
    table.add({"put_if_better/s (existing keys)", format_fixed(r.improving_puts_per_second, 0)});
    table.add({"query best p50 / p99 / max", format_fixed(r.query_p50_us, 1) + " / " + format_fixed(r.query_p99_us, 1) + " / " +
                                                format_fixed(r.query_max_us, 1) + " us"});
    table.add({"query best p50 / p99 (secondary)", format_fixed(r.reopen_query_p50_us, 1) + " / " + format_fixed(r.reopen_query_p99_us, 1) + " us"});
    table.print(std::cout);
  });
}

void add_bench_pipeline(CLI::App& bench) {
  auto seconds = std::make_shared<double>(2.0);
  auto out = std::make_shared<OutputArgs>();
  CLI::App* cmd = bench.add_subcommand("pipeline", "evaluations per second of p=8/m=32 and p=64/m=256 schemes: the full "
                                      "simulation of a report, the search loop's evaluator, and the list scheduler that plans a candidate's orders");
  cmd->add_option("--seconds", *seconds, "time spent per case")->capture_default_str();
  out->add_to(*cmd, false);
  cmd->callback([seconds, out] {
    auto rows = run_pipeline_bench({{8, 32}, {64, 256}}, *seconds);
    if (out->json()) {
      nlohmann::json j = nlohmann::json::array();
      for (const auto& r : rows)
        j.push_back({{"schedule", r.schedule}, {"engine", r.engine}, {"stages", r.stages}, {"microbatches", r.microbatches}, {"ops", r.ops},
                     {"runs", r.runs}, {"median_ms", r.median_ms}, {"min_ms", r.min_ms},
                     {"evaluations_per_second", r.evaluations_per_second()}});
      std::cout << j.dump(2) << "\n";
      return;
    }
    TextTable table({"schedule", "engine", "p", "m", "ops", "runs", "median ms", "min ms", "evaluations/s"});
    for (const auto& r : rows)
      table.add({r.schedule, r.engine, std::to_string(r.stages), std::to_string(r.microbatches), std::to_string(r.ops),
                 std::to_string(r.runs), format_fixed(r.median_ms, 4), format_fixed(r.min_ms, 4),
                 format_fixed(r.evaluations_per_second(), 0)});
    table.print(std::cout);
  });
}

void add_bench_learner(CLI::App& bench) {
  auto options = std::make_shared<LearnerBenchOptions>();
  auto out = std::make_shared<OutputArgs>();
  CLI::App* cmd = bench.add_subcommand(
      "learner", "DOPPLER policies: rollout episodes/s per core by graph size (200 to 20k ops), a greedy "
                 "placement's latency, trained episodes/s of gantry train");
  cmd->add_option("--sizes", options->sizes, "graph sizes in ops")->capture_default_str()->check(whole_in(2, 10000000));
  cmd->add_option("--batch", options->batch, "episodes per encoder pass")->capture_default_str()->check(whole_in(1, 4096));
  cmd->add_option("--seconds", options->seconds_per_size, "time per size")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--train-seconds", options->train_seconds, "length of the training run")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--threads", options->threads, "rollout threads of the training run")->capture_default_str()->check(whole_in(1, 256));
  cmd->add_option("--train-workload", options->train_workload,
                  "graph of the training run, on 4 identical devices with DOPPLER's simulator (e.g. llama-block:costs=doppler)")
      ->capture_default_str();
  out->add_to(*cmd, false);
  cmd->callback([options, out] {
    const LearnerBenchResult r = run_learner_bench(*options);
    if (out->json()) {
      nlohmann::json rows = nlohmann::json::array();
      for (const auto& x : r.rollouts)
        rows.push_back({{"ops", x.ops}, {"edges", x.edges}, {"encoder_ms", x.encoder_ms}, {"episode_ms", x.episode_ms},
                        {"episodes_per_second", x.episodes_per_second}, {"us_per_op", x.us_per_op},
                        {"candidates_per_step", x.candidates_per_step}});
      nlohmann::json j = {{"rollouts", rows}, {"greedy_ops", r.greedy_ops}, {"greedy_ms", r.greedy_ms},
                          {"train_workload", options->train_workload}, {"train_ops", r.train_ops},
                          {"train_episodes_per_second", r.train_episodes_per_second}, {"train_episodes", r.train_episodes},
                          {"train_seconds", r.train_seconds}, {"learner_busy", r.learner_busy}};
      std::cout << j.dump(2) << "\n";
      return;
    }
    TextTable table({"ops", "edges", "encoder ms", "episode ms (median)", "episodes/s/core", "us per op", "candidates/step"});
    for (const auto& x : r.rollouts)
      table.add({std::to_string(x.ops), std::to_string(x.edges), format_fixed(x.encoder_ms, 2), format_fixed(x.episode_ms, 3),
                 format_fixed(x.episodes_per_second, 1), format_fixed(x.us_per_op, 2), format_fixed(x.candidates_per_step, 1)});
    table.print(std::cout);
    std::printf("greedy placement (encoder + episode) on %d ops: %.2f ms (median of 20)\n", r.greedy_ops, r.greedy_ms);
    std::printf("gantry train, %s (%d ops), %d rollout thread(s) + learner: %ld trained episodes in %.1f s = %.1f episodes/s "
                "(learner busy %.0f%%)\n", options->train_workload.c_str(), r.train_ops, options->threads, r.train_episodes,
                r.train_seconds, r.train_episodes_per_second, 100 * r.learner_busy);
  });
}

}  // namespace

void add_bench_executor(CLI::App& bench) {
  auto options = std::make_shared<ExecutorBenchOptions>();
  auto out = std::make_shared<OutputArgs>();
  auto no_pin = std::make_shared<bool>(false);
  CLI::App* cmd = bench.add_subcommand(
      "executor", "the CPU executor's cost per op, with empty ops: a chain and independent ops on one device, "
                  "independent ops on two, and a chain hopping between two devices (a transfer per op)");
  cmd->add_option("--ops", options->ops, "ops per graph")->capture_default_str()->check(whole_in(10, 10000000));
  cmd->add_option("--repeats", options->repeats, "timed runs per shape")->capture_default_str()->check(whole_in(1, 1000));
  cmd->add_flag("--no-pin", *no_pin, "do not pin device threads to cores");
  out->add_to(*cmd, false);
  cmd->callback([options, out, no_pin] {
    options->pin = !*no_pin;
    const auto rows = run_executor_bench(*options);
    if (out->json()) {
      nlohmann::json j = nlohmann::json::array();
      for (const auto& r : rows)
        j.push_back({{"shape", r.shape}, {"ops", r.ops}, {"devices", r.devices}, {"runs", r.runs},
                     {"median_us_per_op", r.median_us_per_op}, {"min_us_per_op", r.min_us_per_op},
                     {"max_us_per_op", r.max_us_per_op}});
      std::cout << j.dump(2) << "\n";
      return;
    }
    TextTable table({"shape", "ops", "devices", "runs", "median us/op", "min us/op", "max us/op"});
    for (const auto& r : rows)
      table.add({r.shape, std::to_string(r.ops), std::to_string(r.devices), std::to_string(r.runs),
                 format_fixed(r.median_us_per_op, 2), format_fixed(r.min_us_per_op, 2), format_fixed(r.max_us_per_op, 2)});
    table.print(std::cout);
  });
}

void add_bench_fidelity(CLI::App& bench) {
  auto options = std::make_shared<FidelityOptions>();
  auto out = std::make_shared<OutputArgs>();
  CLI::App* cmd = bench.add_subcommand(
      "fidelity", "profile the CPU devices, then measure and simulate random, heuristic and searched placements of "
                  "chainmm, ffnn and llama-block graphs: predicted, measured and error per placement, mean and 90th "
                  "percentile error (-f json: mean_error, p90_error as fractions)");
  cmd->add_option("--cluster", options->cluster, "cluster of CPU devices")->capture_default_str();
  cmd->add_option("--graph", options->graphs, "workloads to measure (repeatable)")->capture_default_str();
  cmd->add_option("--profile", options->profile,
                  "what to profile first: grid (gantry profile's defaults, other sizes than the graphs), graphs "
                  "(the measured graphs themselves) or both")
      ->capture_default_str()
      ->check(CLI::IsMember({"grid", "graphs", "both"}));
  cmd->add_option("--random", options->random_placements, "random placements per graph")->capture_default_str();
  cmd->add_option("--repeats", options->repeats, "timed runs per placement")->capture_default_str();
  out->add_to(*cmd, false);
  cmd->callback([options, out] {
    if (!out->json() && isatty(STDERR_FILENO))
      options->progress = [](const std::string& what) { std::fprintf(stderr, "\r  %-90.90s", what.c_str()); };
    const FidelityReport r = run_fidelity_bench(*options);
    if (options->progress) std::fprintf(stderr, "\n");
    if (out->json()) {
      nlohmann::json rows = nlohmann::json::array();
      for (const auto& row : r.rows)
        rows.push_back({{"graph", row.graph}, {"placement", row.placement}, {"measured", row.measured},
                        {"spread", row.spread}, {"predicted", row.predicted}, {"error", row.error()},
                        {"roofline", row.roofline}});
      std::cout << nlohmann::json{{"cluster", options->cluster}, {"profile", options->profile},
                                  {"profile_signatures", r.profile_signatures}, {"profile_seconds", r.profile_seconds},
                                  {"co_run_slowdown", r.co_run_slowdown}, {"rows", rows}, {"mean_error", r.mean_error}, {"p90_error", r.p90_error},
                                  {"roofline_mean_error", r.roofline_mean_error},
                                  {"roofline_p90_error", r.roofline_p90_error},
                                  {"noise_mean_error", r.noise_mean_error}, {"noise_p90_error", r.noise_p90_error}}
                       .dump(2)
                << "\n";
      return;
    }
    TextTable table({"graph", "placement", "measured", "spread", "predicted", "error", "roofline"});
    for (const auto& row : r.rows)
      table.add({row.graph, row.placement, format_time(row.measured, "s"), format_fixed(100 * row.spread, 1) + "%",
                 format_time(row.predicted, "s"), format_fixed(100 * row.error(), 1) + "%",
                 format_time(row.roofline, "s")});
    table.print(std::cout);
    std::cout << "\nprofiled " << r.profile_signatures << " signatures (" << options->profile << ") in "
              << format_fixed(r.profile_seconds, 1) << " s; ops beside a busy device: "
              << format_fixed(r.co_run_slowdown, 3) << "x their solo time\n"
              << r.rows.size() << " placements: mean |error| " << format_fixed(100 * r.mean_error, 1) << "%, 90th percentile "
              << format_fixed(100 * r.p90_error, 1) << "% (uncalibrated roofline: " << format_fixed(100 * r.roofline_mean_error, 1)
              << "%, " << format_fixed(100 * r.roofline_p90_error, 1) << "%)\n"
              << "the machine's own noise: odd rounds against even rounds of the same placement, mean "
              << format_fixed(100 * r.noise_mean_error, 1) << "%, 90th percentile " << format_fixed(100 * r.noise_p90_error, 1)
              << "%\n";
  });
}

void print_partition_report(const PartitionReport& r) {
  TextTable table({"graph", "devices", "placement", "mode", "measured", "no slowdown", "in sample", "out of sample", "factor out"});
  const auto error = [](double predicted, double measured) { return format_fixed(100 * (predicted / measured - 1), 1) + "%"; };
  for (const auto& row : r.rows)
    table.add({std::filesystem::path(row.graph).filename().string(), std::to_string(row.devices), row.placement, row.mode,
               format_time(row.measured, "s"), error(row.no_slowdown, row.measured), error(row.in_sample, row.measured),
               error(row.out_of_sample, row.measured), format_fixed(row.out_of_sample_factor, 3)});
  table.print(std::cout);
  std::cout << "\npredicted / measured - 1: mean |error| and 90th percentile\n";
  for (const auto& m : r.modes)
    std::cout << "  " << m.mode << " (" << m.runs << " runs, factor " << format_fixed(m.factor, 3)
              << "): no slowdown " << format_fixed(100 * m.no_slowdown_mean, 1) << "% / " << format_fixed(100 * m.no_slowdown_p90, 1)
              << "%; in sample " << format_fixed(100 * m.in_sample_mean, 1) << "% / " << format_fixed(100 * m.in_sample_p90, 1)
              << "%; out of sample " << format_fixed(100 * m.out_of_sample_mean, 1) << "% / "
              << format_fixed(100 * m.out_of_sample_p90, 1) << "%\n";
}

void add_bench_partitions(CLI::App& bench) {
  auto options = std::make_shared<PartitionOptions>();
  auto out = std::make_shared<OutputArgs>();
  CLI::App* cmd = bench.add_subcommand(
      "partitions",
      "how well the simulator predicts D devices run as D partitions of one GPU, from bench/gpu-check.sh's runs: solo "
      "op times from each graph's one-device run, the co-run slowdown fitted from the partitioned runs, each "
      "partitioned run predicted without it, with it fitted on every graph (in sample) and on the other graphs only "
      "(out of sample); streams and SM partitions apart");
  cmd->add_option("--cases", options->cases, "the prepared cases (gpu-check.sh prepare DIR: DIR/cases)")->required();
  cmd->add_option("--runs", options->runs, "gantry-exec's measurements brought back (the out/ of gpu-check-out.tar.gz)")->required();
  cmd->add_option("--set", options->set, "which set of cases (time: the GPU-sized graphs, whose runs include the partitions; or check)")->capture_default_str();
  out->add_to(*cmd, false);
  cmd->callback([options, out] {
    PartitionReport r;
    try {
      r = run_partition_bench(*options);
    } catch (const std::exception& e) {
      throw CliError(e.what());
    }
    if (!out->json()) return print_partition_report(r);
    nlohmann::json rows = nlohmann::json::array(), modes = nlohmann::json::array();
    for (const auto& row : r.rows)
      rows.push_back({{"graph", row.graph}, {"devices", row.devices}, {"placement", row.placement}, {"mode", row.mode},
                      {"measured", row.measured}, {"no_slowdown", row.no_slowdown}, {"in_sample", row.in_sample},
                      {"out_of_sample", row.out_of_sample}, {"out_of_sample_factor", row.out_of_sample_factor}});
    for (const auto& m : r.modes)
      modes.push_back({{"mode", m.mode}, {"runs", m.runs}, {"factor", m.factor},
                       {"no_slowdown_mean_error", m.no_slowdown_mean}, {"no_slowdown_p90_error", m.no_slowdown_p90},
                       {"in_sample_mean_error", m.in_sample_mean}, {"in_sample_p90_error", m.in_sample_p90},
                       {"out_of_sample_mean_error", m.out_of_sample_mean}, {"out_of_sample_p90_error", m.out_of_sample_p90}});
    std::cout << nlohmann::json{{"rows", rows}, {"modes", modes}}.dump(2) << "\n";
  });
}

void add_bench_command(CLI::App& app) {
  CLI::App* bench = app.add_subcommand("bench", "benchmarks: sim (simulator speed), stg (placement quality vs optima), tune (rollout scaling), cluster (coordinator and workers), store (RocksDB), pipeline, learner (DOPPLER policies), executor, fidelity, partitions (GPU partitions predicted)");
  bench->require_subcommand(1);
  add_bench_sim(*bench);
  add_bench_stg(*bench);
  add_bench_tune(*bench);
  add_bench_cluster(*bench);
  add_bench_store(*bench);
  add_bench_pipeline(*bench);
  add_bench_learner(*bench);
  add_bench_executor(*bench);
  add_bench_fidelity(*bench);
  add_bench_partitions(*bench);
}

}  // namespace gantry::cli
