// gantry profile: measure op and transfer times on this machine's CPU devices (or its GPUs, through
// a gantry-exec program) and store them in the store's profiles, which `--profiled` simulations use
// instead of the roofline.
#include <iostream>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <nlohmann/json.hpp>

#include "cli/cli_common.hpp"
#include "cli/commands.hpp"
#include "cli/text_table.hpp"
#include "core/json_util.hpp"
#include "executor/cpu/cpu_executor.hpp"
#include "executor/external_executor.hpp"
#include "executor/profile_samples.hpp"
#include "executor/profiler.hpp"
#include "storage/store.hpp"
#include "workloads/workload.hpp"

namespace gantry::cli {

namespace {

struct ProfileArgs {
  std::string cluster = "cpu-2", data, link_ladder = "link-ladder", gantry_exec;
  std::vector<std::string> workloads, imports;
  int random_placements = 3, repeats = 3;
  bool no_store = false, no_pin = false;
  std::uint64_t seed = 1;
  OutputArgs out;
};

struct FamilySummary {
  int signatures = 0;
  double samples = 0, fastest = 1e300, slowest = 0;
};

void print_summary(const ProfileTable& table) {
  std::map<std::pair<std::string, std::string>, FamilySummary> families;
  for (const ProfileEntry& e : table.entries()) {
    if (is_co_run_entry(e)) continue;  // a factor, not an op's time: print_co_run
    FamilySummary& f = families[{e.device_kind, e.op.family}];
    ++f.signatures;
    f.samples += e.seconds.count;
    f.fastest = std::min(f.fastest, e.seconds.mean);
    f.slowest = std::max(f.slowest, e.seconds.mean);
  }
  TextTable t({"device kind", "family", "signatures", "samples", "fastest mean", "slowest mean"});
  for (const auto& [key, f] : families)
    t.add({key.first, key.second, std::to_string(f.signatures), format_fixed(f.samples, 0), format_time(f.fastest, "s"),
           format_time(f.slowest, "s")});
  t.print(std::cout);
}

// Each device kind's co-run slowdown (core/profile_table.hpp).
void print_co_run(const ProfileTable& table, const Cluster& cluster) {
  std::set<std::string> kinds;
  for (const Device& d : cluster.devices())
    if (kinds.insert(d.kind).second)
      std::cout << "ops on " << d.kind << " devices beside another busy device of their host: "
                << format_fixed(table.co_run_slowdown(d.kind), 3)
                << "x their solo time (the times above are solo times; 1x: not measured, or no slowdown)\n";
}

// Each device pair's fitted link (its own transfers, else its kinds').
void print_links(const ProfileTable& table, const Cluster& cluster) {
  for (int a = 0; a < cluster.size(); ++a)
    for (int b = 0; b < cluster.size(); ++b) {
      if (a == b) continue;
      auto fit = table.link(cluster.device(a).kind, cluster.device(b).kind, 0, std::pair{a, b});
      std::cout << "transfers " << cluster.device(a).name << " -> " << cluster.device(b).name << ": ";
      if (fit && fit->bandwidth > 0)
        std::cout << "latency " << format_time(fit->latency, "s") << ", bandwidth " << format_bytes(fit->bandwidth)
                  << "/s (least squares of the relative error over the measured sizes)\n";
      else
        std::cout << "not enough distinct sizes measured for a fit\n";
    }
}

// Adds `table` to the store's profiles (unless --no-store); what became of it, for the output.
std::string store_profiles(const ProfileArgs& args, const ProfileTable& table) {
  if (args.no_store) return "not stored (--no-store)";
  const std::string dir = args.data.empty() ? default_data_dir() : args.data;
  auto store = Store::open(dir);
  if (!store) throw CliError(store.error().message);
  if (auto added = store.value()->add_profiles(table); !added) throw CliError(added.error().message);
  return "added to the profiles in " + dir;
}

nlohmann::json entries_json(const ProfileTable& table) {
  nlohmann::json entries = nlohmann::json::array();
  for (const ProfileEntry& e : table.entries())
    entries.push_back({{"kind", e.device_kind}, {"family", e.op.family}, {"signature", e.op.signature},
                       {"work", e.op.work}, {"count", e.seconds.count}, {"mean", e.seconds.mean},
                       {"stddev", std::sqrt(e.seconds.variance())}});
  return entries;
}

// Samples measured elsewhere (`gantry-exec --profile-out` on a GPU machine that lacks gantry's
// store), merged into one table; each file is checked as it is read.
void run_import(const ProfileArgs& args) {
  ProfileTable table;
  for (const std::string& file : args.imports) {
    auto text = read_text_file(file);  // its errors name the file
    if (!text) throw CliError("--import: " + text.error().message);
    auto samples = profiles_from_json(text.value(), file);
    if (!samples) throw CliError("--import: " + samples.error().message);
    if (samples.value().empty()) throw CliError("--import " + file + ": it holds no profile entries");
    for (const ProfileEntry& e : samples.value().entries()) table.merge(e);
  }
  const std::string stored = store_profiles(args, table);
  if (args.out.json()) {
    std::cout << nlohmann::json{{"imported", args.imports}, {"entries", entries_json(table)}, {"stored", !args.no_store}}.dump(2)
              << "\n";
    return;
  }
  std::cout << "imported " << args.imports.size() << " file(s): " << measured_signatures(table) << " signatures, " << stored
            << "\n\n";
  print_summary(table);
}

// --gantry-exec: the profiler's runs in that program, on the cluster's backend. On GPUs, one per
// device: partitions of a GPU are slower than the cluster's devices, and profiles keep device
// kinds' own times.
ProfilerOptions::Execute through_program(const std::string& program, const Cluster& cluster, const ExecOptions& exec) {
  const std::string backend = measure_backend(cluster);
  const int gpus = checked_gantry_exec(program, backend, cluster, exec);
  if (!gives_profile_samples(backend, gpus, cluster))
    throw CliError("--gantry-exec " + program + " sees " + std::to_string(gpus) + " GPU(s) and --cluster " + cluster.name() +
                   " has " + std::to_string(cluster.size()) + " devices: profiles need a GPU per device (partitions of "
                   "one are not the cluster's devices); profile a cluster of at most " + std::to_string(gpus) +
                   " devices of the same kind");
  return [program, backend](const Graph& graph, const Placement& placement, const Cluster& c, const ExecOptions& o) {
    return execute_through(program, backend, graph, placement, c, o);
  };
}

void run_profile(const ProfileArgs& args) {
  if (!args.imports.empty()) return run_import(args);
  auto cluster = Cluster::load(args.cluster);
  if (!cluster) throw CliError(cluster.error().message);
  ProfilerOptions options;
  options.random_placements = args.random_placements;
  options.exec.repeats = args.repeats;
  options.exec.pin_threads = !args.no_pin;
  options.seed = args.seed;
  options.link_ladder = args.link_ladder == "none" ? "" : args.link_ladder;
  if (args.gantry_exec.empty()) {
    if (Status cpu = check_cpu_cluster(cluster.value()); !cpu)
      throw CliError(cpu.error().message + " (this process profiles CPU cores; --gantry-exec PATH profiles GPUs through "
                     "a gantry-exec built with CUDA)");
  } else {
    options.execute = through_program(args.gantry_exec, cluster.value(), options.exec);
  }
  const std::vector<std::string> specs = args.workloads.empty() ? default_profile_workloads() : args.workloads;
  std::vector<std::pair<std::string, Graph>> graphs;
  for (const std::string& spec : specs) {
    auto g = make_workload(spec, args.seed);
    if (!g) throw CliError("--workload " + spec + ": " + g.error().message);
    graphs.emplace_back(spec, std::move(g).value());
  }
  const bool interactive = isatty(STDERR_FILENO) && !args.out.json();
  options.progress = [&](const std::string& graph, int done, int total) {
    if (interactive) std::fprintf(stderr, "\r  %3d/%d runs  %-70.70s", done, total, graph.c_str());
  };
  if (!args.out.json())
    std::fprintf(stderr, "profiling %zu graphs on %s (%d devices)...\n", graphs.size(), cluster.value().name().c_str(),
                 cluster.value().size());
  auto table = profile_cluster(cluster.value(), graphs, options);
  if (interactive) std::fprintf(stderr, "\n");
  if (!table) throw CliError(table.error().message);
  const std::string stored = store_profiles(args, table.value());
  if (args.out.json()) {
    const nlohmann::json entries = entries_json(table.value());
    nlohmann::json co_run = nlohmann::json::object();
    for (const Device& d : cluster.value().devices()) co_run[d.kind] = table.value().co_run_slowdown(d.kind);
    std::cout << nlohmann::json{{"cluster", cluster.value().name()},
                                {"entries", entries},
                                {"co_run_slowdown", co_run},
                                {"stored", !args.no_store}}
                     .dump(2)
              << "\n";
    return;
  }
  std::cout << "profiled " << graphs.size() << " graphs on " << cluster.value().name() << ": "
            << measured_signatures(table.value()) << " signatures, " << stored << "\n\n";
  print_summary(table.value());
  std::cout << "\n";
  print_co_run(table.value(), cluster.value());
  print_links(table.value(), cluster.value());
}

}  // namespace

void add_profile_command(CLI::App& app) {
  auto args = std::make_shared<ProfileArgs>();
  CLI::App* cmd = app.add_subcommand(
      "profile", "measure op and transfer times on this machine's CPU devices (the executor), or its GPUs through "
                 "--gantry-exec, and add them to the store's profiles, which --profiled simulations prefer over the "
                 "roofline");
  cmd->add_option("--cluster", args->cluster,
                  "cluster whose devices run on this machine's cores (or, with --gantry-exec, a cluster of GPUs: one "
                  "per device)")
      ->capture_default_str();
  cmd->add_option("--workload", args->workloads,
                  "workloads whose ops to measure (repeatable; default: a grid of chainmm, ffnn, llama-block, "
                  "llama-layer and proxy-GEMM sizes; op-grid is a sweep of GEMM shapes, whose times run faster "
                  "than inside real graphs)");
  cmd->add_option("--link-ladder", args->link_ladder,
                  "workload run once per ordered device pair, its sources on one device and its readers on the "
                  "other, to fit each link's latency and bandwidth (none: only the workloads' own transfers)")
      ->capture_default_str();
  cmd->add_option("--random-placements", args->random_placements, "random placements per workload, besides "
                                                                  "all ops on one device (one per device kind: solo "
                                                                  "times) and round-robin")
      ->capture_default_str()
      ->check(whole_in(0, 100));
  cmd->add_option("--repeats", args->repeats, "rounds: each placement runs once per round, interleaved with the others; every run's times are kept, except where a signature took more than 1.5x its lower median over the rounds (a burst of interference)")
      ->capture_default_str()
      ->check(whole_in(1, 100));
  cmd->add_option("--seed", args->seed, "seed of the random placements")->capture_default_str()->check(seed_number());
  cmd->add_option("--import", args->imports,
                  "add these profile files instead of measuring here (repeatable): samples measured elsewhere, "
                  "e.g. by `gantry-exec --profile-out F --device-kind H200` on a GPU machine without gantry's store; "
                  "their device kind is what a cluster file's devices must name for --profiled simulations to use them");
  cmd->add_option("--data", args->data, "store directory (default ./gantry-data or $GANTRY_DATA)");
  cmd->add_flag("--no-store", args->no_store, "measure and print only");
  cmd->add_flag("--no-pin", args->no_pin, "do not pin device threads to cores");
  add_gantry_exec_option(*cmd, args->gantry_exec, "on GPUs, one GPU per --cluster device");
  args->out.add_to(*cmd, false);
  cmd->callback([args, cmd] {
    // --import measures nothing: the measuring options given with it would be ignored.
    for (const char* measuring :
         {"--cluster", "--workload", "--link-ladder", "--random-placements", "--repeats", "--seed", "--no-pin", "--gantry-exec"})
      if (!args->imports.empty() && cmd->count(measuring) > 0)
        throw CliError(std::string("--import measures nothing here: ") + measuring + " does not apply");
    run_profile(*args);
  });
}

}  // namespace gantry::cli
