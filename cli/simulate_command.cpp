// gantry simulate: run one placement (a JSON file, e.g. from `gantry place -f json`) in the simulator.
#include <algorithm>
#include <cmath>
#include <iostream>

#include "cli/cli_common.hpp"
#include "cli/commands.hpp"
#include "cli/result_table.hpp"
#include "core/fingerprint.hpp"
#include "sim/noise.hpp"
#include "sim/simulator.hpp"

namespace gantry::cli {

namespace {

struct SimulateArgs {
  ProblemArgs problem;
  SimArgs sim;
  OutputArgs out;
  std::string placement_file, data;
  int repeats = 1;
  bool profiled = false;
};

// Makespans of `repeats` noise draws of one placement (draw 0 is the one recorded and shown).
struct NoiseSpread {
  int draws = 0;
  double mean = 0, stddev = 0, min = 0, max = 0;
};

NoiseSpread noise_spread(const Problem& problem, SimOptions options, const Placement& placement, int repeats) {
  options.record = false;
  options.track_memory = false;
  std::vector<double> makespans;
  const std::uint64_t seed = options.seed;
  Simulator sim(problem.graph, *problem.costs, problem.cluster, options);
  for (int k = 0; k < repeats; ++k) {
    options.seed = noise_draw_seed(seed, k);
    sim.set_options(options);
    makespans.push_back(sim.run(placement).makespan);
  }
  NoiseSpread spread;
  spread.draws = repeats;
  for (double m : makespans) spread.mean += m / repeats;
  for (double m : makespans) spread.stddev += (m - spread.mean) * (m - spread.mean);
  spread.stddev = repeats > 1 ? std::sqrt(spread.stddev / (repeats - 1)) : 0;
  spread.min = *std::min_element(makespans.begin(), makespans.end());
  spread.max = *std::max_element(makespans.begin(), makespans.end());
  return spread;
}

void run_simulate(const SimulateArgs& args) {
  Problem problem = load_problem(args.problem);
  if (args.profiled) use_profiles(problem, load_profiles(args.data));
  const Placement placement = read_placement_for(args.placement_file, problem);
  auto valid = placement.check(problem.graph, problem.cluster, args.placement_file);
  if (!valid) throw CliError(valid.error().message);
  SimOptions options = args.sim.options();
  options.record = true;
  Simulator sim(problem.graph, *problem.costs, problem.cluster, options);
  MethodRow row;
  row.result = sim.run(placement);
  row.outcome.method = "given";
  row.outcome.placement = placement;
  row.outcome.makespan = row.result.makespan;
  const double bound = makespan_lower_bound(problem.graph, *problem.costs, problem.cluster, args.sim.options());
  if (args.out.wants_timeline()) write_timelines(args.out, problem, row.result, problem.graph_label + " - " + args.placement_file);
  const bool noisy = options.noise_sigma > 0;
  if (!noisy && args.repeats > 1) throw CliError("--repeats needs --noise: without noise every run gives the same makespan");
  const NoiseSpread spread = noisy ? noise_spread(problem, options, placement, args.repeats) : NoiseSpread{};
  const std::string& unit = problem.graph.cost_unit();
  if (args.out.json()) {
    nlohmann::json j = method_json(problem, row, bound);
    if (options.track_memory) j["peak_memory"] = row.result.peak_memory;
    if (noisy)
      j["noise"] = {{"sigma", options.noise_sigma}, {"draws", spread.draws}, {"mean", spread.mean},
                    {"stddev", spread.stddev}, {"min", spread.min}, {"max", spread.max}};
    std::cout << j.dump(2) << "\n";
    return;
  }
  print_methods_table(std::cout, problem, {row}, bound);
  if (noisy)
    std::cout << "\nnoise sigma " << options.noise_sigma << " over " << spread.draws << " draws: mean "
              << format_time(spread.mean, unit) << ", sd " << format_time(spread.stddev, unit) << ", min "
              << format_time(spread.min, unit) << ", max " << format_time(spread.max, unit)
              << " (the table and timelines show draw 0)\n";
  if (options.track_memory) {
    std::cout << "\npeak memory per device:";
    for (double m : row.result.peak_memory) std::cout << "  " << format_bytes(m);
    std::cout << "\n";
  }
}

}  // namespace

void add_simulate_command(CLI::App& app) {
  auto args = std::make_shared<SimulateArgs>();
  CLI::App* cmd = app.add_subcommand("simulate", "simulate a given placement and report its makespan and metrics");
  args->problem.add_to(*cmd);
  cmd->add_option("--placement", args->placement_file, "placement JSON ({\"placement\": [device per op]})")->required()->check(file_path());
  args->sim.add_to(*cmd);
  add_profiled_flag(*cmd, args->profiled);
  cmd->add_option("--data", args->data, "store directory of --profiled (default: $GANTRY_DATA or ./gantry-data)");
  cmd->add_option("--repeats", args->repeats, "with --noise: noise draws to report the mean and spread over")
      ->capture_default_str()
      ->check(whole_in(1, 100000));
  args->out.add_to(*cmd);
  cmd->callback([args] { run_simulate(*args); });
}

}  // namespace gantry::cli
