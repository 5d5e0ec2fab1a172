// gantry export: a graph (a file or a generated workload) in another format, for other tools: the
// DOPPLER text format that DOPPLER's public code and `gantry place --graph X.txt` read, or gantry
// JSON.
#include <iostream>

#include "cli/cli_common.hpp"
#include "core/json_util.hpp"
#include "cli/commands.hpp"
#include "core/graph_io.hpp"

namespace gantry::cli {

namespace {

struct ExportArgs {
  ProblemArgs problem;
  std::string to = "json", output;
};

void run_export(const ExportArgs& args) {
  const Graph graph = load_graph(args.problem);
  std::string text;
  if (args.to == "doppler") {
    auto doppler = graph_to_doppler(graph);
    if (!doppler) throw CliError(doppler.error().message);
    text = std::move(doppler).value();
  } else {
    text = graph_to_json(graph) + "\n";
  }
  if (args.output.empty() || args.output == "-") {
    std::cout << text;
    return;
  }
  if (Status written = write_text_file(args.output, text); !written) throw CliError("--output: " + written.error().message);
  std::cerr << "gantry export: " << graph.size() << " ops, " << graph.num_edges() << " edges -> " << args.output << "\n";
}

}  // namespace

void add_export_command(CLI::App& app) {
  auto args = std::make_shared<ExportArgs>();
  CLI::App* cmd = app.add_subcommand("export", "write a graph (file or workload) as DOPPLER text or gantry JSON");
  args->problem.add_graph_to(*cmd);
  cmd->add_option("--to", args->to, "format: doppler (needs DOPPLER costs: a .txt graph or costs=doppler) or json")
      ->check(CLI::IsMember({"doppler", "json"}))
      ->capture_default_str();
  cmd->add_option("-o,--output", args->output, "file to write (default: standard output)")->check(file_path());
  cmd->footer("Example: gantry export --workload llama-block:costs=doppler --to doppler -o llama-block.txt\n"
              "         gantry tune --graph llama-block.txt --cluster identical:4 --sim doppler");
  cmd->callback([args] { run_export(*args); });
}

}  // namespace gantry::cli
