// gantry workloads / gantry clusters: what is built in.
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/cli_common.hpp"
#include "cli/commands.hpp"
#include "cli/text_table.hpp"
#include "workloads/workload.hpp"

namespace gantry::cli {

void add_workloads_command(CLI::App& app) {
  auto format = std::make_shared<OutputArgs>();
  CLI::App* cmd = app.add_subcommand("workloads", "list the built-in graph generators and their parameters");
  format->add_to(*cmd, false);
  cmd->callback([format] {
    nlohmann::json list = nlohmann::json::array();
    for (const WorkloadInfo& w : workload_list()) {
      auto g = make_workload(w.name);
      const int ops = g ? g.value().size() : 0;
      list.push_back({{"name", w.name}, {"ops", ops}, {"params", w.params_help}, {"description", w.description}});
      if (!format->json())
        std::cout << w.name << " (" << ops << " ops by default)\n  " << w.description << "\n  parameters: "
                  << w.params_help << "\n\n";
    }
    if (format->json())
      std::cout << list.dump(2) << "\n";
    else
      std::cout << "use as --workload NAME or --workload NAME:key=value,key=value\n";
  });
}

void add_clusters_command(CLI::App& app) {
  auto format = std::make_shared<OutputArgs>();
  CLI::App* cmd = app.add_subcommand("clusters", "list the built-in cluster presets");
  format->add_to(*cmd, false);
  cmd->callback([format] {
    nlohmann::json list = nlohmann::json::array();
    TextTable table({"cluster", "devices", "kind", "peak TFLOP/s", "memory", "hosts"});
    for (const std::string& name : Cluster::preset_names()) {
      auto c = Cluster::load(name == "identical:N" ? "identical:4" : name);
      if (!c) continue;
      const Device& d = c.value().device(0);
      int hosts = 0;
      for (const Device& dev : c.value().devices()) hosts = std::max(hosts, dev.host + 1);
      list.push_back({{"name", name}, {"devices", c.value().size()}, {"kind", d.kind}, {"peak_flops", d.peak_flops},
                      {"memory", d.memory}, {"hosts", hosts}});
      table.add({name, name == "identical:N" ? "N" : std::to_string(c.value().size()), d.kind,
                 std::to_string(static_cast<int>(d.peak_flops / 1e12)), format_bytes(d.memory), std::to_string(hosts)});
    }
    if (format->json())
      std::cout << list.dump(2) << "\n";
    else
      table.print(std::cout);
  });
}

}  // namespace gantry::cli
