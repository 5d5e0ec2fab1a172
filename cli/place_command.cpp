// gantry place: run placement methods on a graph and cluster and compare their simulated makespans.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/cli_common.hpp"
#include "cli/commands.hpp"
#include "cli/duration.hpp"
#include "cli/policy_source.hpp"
#include "learner/learned_placement.hpp"
#include "storage/store.hpp"
#include "cli/result_table.hpp"
#include "core/fingerprint.hpp"
#include "sim/simulator.hpp"
#include "tuner/placement_method.hpp"

namespace gantry::cli {

namespace {

struct PlaceArgs {
  ProblemArgs problem;
  SimArgs sim;
  OutputArgs out;
  std::string methods = "all", budget = "2s", policy, data;
  long evals = 0;
  int samples = 200;
  bool budget_given = false, profiled = false;
};

std::vector<std::string> method_list(const std::string& text) {
  std::vector<std::string> names;
  if (text == "all") {
    for (const MethodInfo& m : placement_methods()) names.push_back(m.name);
    return names;
  }
  std::size_t begin = 0;
  while (begin <= text.size()) {
    std::size_t comma = text.find(',', begin);
    if (comma == std::string::npos) comma = text.size();
    names.push_back(text.substr(begin, comma - begin));
    begin = comma + 1;
  }
  return names;
}

void run_place(const PlaceArgs& args) {
  Problem problem = load_problem(args.problem);
  if (args.profiled) use_profiles(problem, load_profiles(args.data));
  const SimOptions options = args.sim.options();
  const PlacementProblem placement_problem{problem.graph, problem.cluster, *problem.costs, options};
  auto seconds = parse_duration(args.budget);
  if (!seconds) throw CliError("--budget: " + seconds.error().message);
  SearchBudget budget;
  // --evals alone means "until N evaluations"; with --budget both limits apply.
  budget.seconds = args.evals > 0 && !args.budget_given ? 0 : seconds.value();
  budget.evaluations = args.evals;
  budget.seed = args.problem.seed;
  budget.samples = args.samples;
  const bool interactive = isatty(STDERR_FILENO) && !args.out.json();
  if (interactive)
    budget.on_improvement = [&](double t, long evals, double makespan) {
      std::fprintf(stderr, "  search %7.2fs %9ld evals  makespan %s\n", t, evals,
                   format_time(makespan, problem.graph.cost_unit()).c_str());
    };

  std::vector<MethodRow> rows;
  for (const std::string& name : method_list(args.methods)) {
    if (interactive) std::fprintf(stderr, "running %s...\n", name.c_str());
    auto outcome = name == "doppler" && !args.policy.empty()
                       ? place_with_policy(load_policy(args.policy, args.data).weights, placement_problem)
                       : run_placement_method(name, placement_problem, budget);
    if (!outcome) throw CliError(outcome.error().message);
    // A heuristic that alone takes longer than the budget cannot be cut short: say so.
    if (name == "search" && budget.seconds > 0 && outcome.value().seconds > budget.seconds * 1.05 + 0.05)
      std::fprintf(stderr, "gantry: search took %.2f s, %.2f s over its %.2f s budget (a starting heuristic ran past it)\n",
                   outcome.value().seconds, outcome.value().seconds - budget.seconds, budget.seconds);
    // `heuristics` reports its winner's name; beside that heuristic's own row, two rows of one
    // name would not say which is which.
    if (name == "heuristics") outcome.value().method = "heuristics (" + outcome.value().method + ")";
    rows.push_back(MethodRow{outcome.value(), {}});
  }
  // Re-simulate every result with metrics (and timelines for the best).
  SimOptions full = options;
  full.record = true;
  Simulator sim(problem.graph, *problem.costs, problem.cluster, full);
  std::size_t best = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    rows[i].result = sim.run(rows[i].outcome.placement);
    if (rows[i].outcome.makespan < rows[best].outcome.makespan) best = i;
  }
  const double bound = makespan_lower_bound(problem.graph, *problem.costs, problem.cluster, args.sim.options());
  if (args.out.wants_timeline())
    write_timelines(args.out, problem, rows[best].result,
                    problem.graph_label + " on " + problem.cluster.name() + " - " + rows[best].outcome.method);
  if (args.out.json())
    std::cout << methods_json(problem, rows, bound).dump(2) << "\n";
  else
    print_methods_table(std::cout, problem, rows, bound);
}

}  // namespace

void add_place_command(CLI::App& app) {
  auto args = std::make_shared<PlaceArgs>();
  CLI::App* cmd = app.add_subcommand("place", "place a graph's ops on a cluster's devices with heuristics or search");
  args->problem.add_to(*cmd);
  cmd->add_option("-m,--method", args->methods,
                  "method(s): single, round-robin, random, cp, heft, search, heuristics, doppler, a comma list, or all")
      ->capture_default_str();
  auto* budget = cmd->add_option("--budget", args->budget, "time budget of `search` (e.g. 2s, 500ms, 1m)")->capture_default_str();
  cmd->add_option("--evals", args->evals, "simulation budget of `search`, the heuristics it starts from included (instead of time)")
      ->check(whole_in(1, 1000000000000));
  cmd->add_option("--samples", args->samples, "placements drawn by `random`")->capture_default_str()->check(whole_in(1, 100000000));
  cmd->add_option("--policy", args->policy,
                  "policy for doppler: NAME[:VERSION] from the store or a .policy file (default: the built-in one)");
  args->data = default_data_dir();
  cmd->add_option("--data", args->data,
                  "data directory of --policy NAME and --profiled (default: $GANTRY_DATA or ./gantry-data)");
  add_profiled_flag(*cmd, args->profiled);
  args->sim.add_to(*cmd);
  args->out.add_to(*cmd);
  cmd->callback([args, budget] {
    args->budget_given = budget->count() > 0;
    run_place(*args);
  });
}

}  // namespace gantry::cli
