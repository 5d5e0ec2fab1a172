// gantry workloads / gantry clusters: what is built in.
#include <cstdio>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/cli_common.hpp"
#include "cli/commands.hpp"
#include "cli/text_table.hpp"
#include "workloads/model_catalog.hpp"
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
      std::cout << "use as --workload NAME or --workload NAME:key=value,key=value\n"
                << "every workload also takes costs=physical (times from flops, bytes and the cluster; the default) or\n"
                << "costs=doppler (DOPPLER's convention: multiply-adds, comm = 4 x compute; simulate with --sim doppler)\n";
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

void add_models_command(CLI::App& app) {
  auto format = std::make_shared<OutputArgs>();
  CLI::App* cmd = app.add_subcommand("models", "list the heterogeneous model catalog for pipelines");
  format->add_to(*cmd, false);
  cmd->callback([format] {
    nlohmann::json list = nlohmann::json::array();
    TextTable table({"model", "family", "layers", "layer types", "parameters", "published"});
    for (const ModelInfo& m : model_catalog()) {
      auto layers = model_layers(m.name);
      if (!layers) throw CliError(layers.error().message);
      std::map<std::string, int> types;
      for (const LayerCost& l : layers.value()) ++types[to_string(l.type)];
      std::string mix;
      for (const auto& [type, count] : types) mix += (mix.empty() ? "" : " ") + type + "=" + std::to_string(count);
      const double params = total_params(layers.value());
      char p[32], pub[32];
      std::snprintf(p, sizeof p, "%.2fB", params / 1e9);
      std::snprintf(pub, sizeof pub, "%.1fB", m.published_params / 1e9);
      list.push_back({{"name", m.name}, {"family", m.family}, {"layers", layers.value().size()}, {"types", types},
                      {"params", params}, {"published_params", m.published_params}, {"hf", m.hf_id}});
      table.add({m.name, m.family, std::to_string(layers.value().size()), mix, p, pub});
    }
    if (format->json())
      std::cout << list.dump(2) << "\n";
    else
      table.print(std::cout);
  });
}

}  // namespace gantry::cli
