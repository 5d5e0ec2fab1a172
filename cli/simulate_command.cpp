// gantry simulate: run one placement (a JSON file, e.g. from `gantry place -f json`) in the simulator.
#include <iostream>

#include "cli/cli_common.hpp"
#include "cli/commands.hpp"
#include "cli/result_table.hpp"
#include "sim/simulator.hpp"

namespace gantry::cli {

namespace {

struct SimulateArgs {
  ProblemArgs problem;
  SimArgs sim;
  OutputArgs out;
  std::string placement_file;
};

void run_simulate(const SimulateArgs& args) {
  Problem problem = load_problem(args.problem);
  auto placement = read_placement_file(args.placement_file);
  if (!placement) throw CliError(placement.error().message);
  auto valid = placement.value().check(problem.graph, problem.cluster, args.placement_file);
  if (!valid) throw CliError(valid.error().message);
  SimOptions options = args.sim.options();
  options.record = true;
  Simulator sim(problem.graph, *problem.costs, problem.cluster, options);
  MethodRow row;
  row.result = sim.run(placement.value());
  row.outcome.method = "given";
  row.outcome.placement = placement.value();
  row.outcome.makespan = row.result.makespan;
  const double bound = makespan_lower_bound(problem.graph, *problem.costs, problem.cluster, args.sim.options());
  if (args.out.wants_timeline()) write_timelines(args.out, problem, row.result, problem.graph_label + " - " + args.placement_file);
  if (args.out.json()) {
    nlohmann::json j = method_json(problem, row, bound);
    if (options.track_memory) j["peak_memory"] = row.result.peak_memory;
    std::cout << j.dump(2) << "\n";
    return;
  }
  print_methods_table(std::cout, problem, {row}, bound);
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
  cmd->add_option("--placement", args->placement_file, "placement JSON ({\"placement\": [device per op]})")->required();
  args->sim.add_to(*cmd);
  args->out.add_to(*cmd);
  cmd->callback([args] { run_simulate(*args); });
}

}  // namespace gantry::cli
