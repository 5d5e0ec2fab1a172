#include "executor/external_executor.hpp"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "core/child_process.hpp"
#include "core/fingerprint.hpp"
#include "core/graph_io.hpp"
#include "core/json_util.hpp"
#include "executor/cpu/cpu_executor.hpp"
#include "executor/measurement_json.hpp"

namespace gantry {

namespace {

// A folder of its own under the system's temporary folder, removed with the object.
class ScratchFolder {
 public:
  ScratchFolder() {
    std::string pattern = (std::filesystem::temp_directory_path() / "gantry-exec-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("cannot make a temporary folder for gantry-exec's files");
    path_ = pattern;
  }
  ~ScratchFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  if (!(out << text)) throw std::runtime_error("cannot write " + path);
}

// The last lines of a program's output (its error message is there), at most `limit` characters.
std::string tail(const std::string& text, std::size_t limit = 2000) {
  std::string t = text;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  return t.size() <= limit ? t : "..." + t.substr(t.size() - limit);
}

// The program's exit status once it ends (it is waited for however long it runs: a measurement
// cannot be interrupted, and its caller bounds it as it bounds an in-process run).
int run_to_end(ChildProcess& child) {
  for (;;)
    if (const int status = child.wait(3600); status >= 0) return status;
}

Status supported(const std::string& backend, const Cluster& cluster, const ExecOptions& options) {
  if (backend != "cpu" && backend != "cuda") return make_error("backend " + backend + ": expected cpu or cuda");
  if (options.fixed_order) return make_error("gantry-exec runs work-conserving placements, not fixed orders");
  if (options.throttle_links) return make_error("gantry-exec does not throttle links (its copies are the hardware's)");
  if (options.keep_outputs) return make_error("gantry-exec does not return the outputs' values");
  if (backend == "cpu")
    if (Status cpu = check_cpu_cluster(cluster); !cpu) return cpu;
  for (int d = 0; d < cluster.size(); ++d)
    if (cluster.device(d).copy_engine != (backend == "cuda"))
      return make_error("device " + std::to_string(d) + " (" + cluster.device(d).name + ") of cluster " + cluster.name() +
                        (cluster.device(d).copy_engine ? " has" : " has no") + " copy engine; gantry-exec's " + backend +
                        " devices " + (backend == "cuda" ? "have one" : "copy for themselves"));
  return Ok{};
}

std::string stream_counts(const Cluster& cluster) {
  std::string list;
  for (int d = 0; d < cluster.size(); ++d) list += (d ? "," : "") + std::to_string(std::max(1, cluster.device(d).streams));
  return list;
}

}  // namespace

Result<Measurement> execute_through(const std::string& program, const std::string& backend, const Graph& graph,
                                    const Placement& placement, const Cluster& cluster, const ExecOptions& options) {
  if (Status ok = supported(backend, cluster, options); !ok) return make_error("measuring through " + program + ": " + ok.error().message);
  if (auto valid = placement.check(graph, cluster, "the placement to measure"); !valid) return valid.error();
  try {
    ScratchFolder folder;
    write_file(folder.file("graph.json"), graph_to_json(graph));
    write_file(folder.file("placement.json"), placement_to_json(placement, fingerprint(graph).hex(), cluster.name()));
    std::vector<std::string> args = {program,     "--graph",   folder.file("graph.json"),
                                     "--placement", folder.file("placement.json"),
                                     "--backend", backend,     "--devices", std::to_string(cluster.size()),
                                     "--streams", stream_counts(cluster),
                                     "--repeats", std::to_string(options.repeats),
                                     "--warmup",  std::to_string(options.warmup),
                                     "--out",     folder.file("measurement.json")};
    if (!options.pin_threads) args.push_back("--no-pin");
    if (options.sm_partitions) args.insert(args.end(), {"--partition", "sms"});
    ChildProcess child(args, folder.file("log.txt"));
    if (const int status = run_to_end(child); status != 0)
      return make_error(program + " exited with status " + std::to_string(status) + ": " + tail(child.log()));
    auto text = read_text_file(folder.file("measurement.json"));
    if (!text) return make_error(program + " ended without its measurement: " + text.error().message);
    return measurement_from_json(text.value(), graph, program + "'s measurement");
  } catch (const std::exception& e) {
    return make_error(std::string("measuring through ") + program + ": " + e.what());
  }
}

Result<int> cuda_devices_seen_by(const std::string& program) {
  try {
    ScratchFolder folder;
    ChildProcess child({program, "--devices-visible"}, folder.file("log.txt"));
    const int status = run_to_end(child);
    const std::string output = child.log();
    // The count is a line of its own; a CUDA runtime may warn around it (stdout and stderr are one log).
    int count = -1;
    std::istringstream lines(output);
    for (std::string line; std::getline(lines, line);)
      if (!line.empty() && line.size() < 6 && line.find_first_not_of("0123456789") == std::string::npos)
        count = std::stoi(line);
    if (status != 0 || count < 0)
      return make_error(program + " --devices-visible did not print a device count (is it gantry-exec?): " + tail(output));
    return count;
  } catch (const std::exception& e) {
    return make_error(e.what());
  }
}

}  // namespace gantry
