#include "executor/external_executor.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/child_process.hpp"
#include "core/fingerprint.hpp"
#include "core/graph_io.hpp"
#include "core/json_util.hpp"
#include "core/temp_folder.hpp"
#include "executor/cpu/cpu_executor.hpp"
#include "executor/measurement_json.hpp"

namespace gantry {

namespace {


// The last lines of a program's output (its error message is there), at most `limit` characters.
std::string tail(const std::string& text, std::size_t limit = 2000) {
  std::string t = text;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  return t.size() <= limit ? t : "..." + t.substr(t.size() - limit);
}

// A value per device as gantry-exec takes it: one for all when they agree (the form a person
// types, kept so requests read the same in logs), else the list.
template <typename ValueOf>
std::string per_device(const Cluster& cluster, ValueOf value_of) {
  std::string list;
  bool same = true;
  for (int d = 0; d < cluster.size(); ++d) {
    list += (d ? "," : "") + std::to_string(value_of(d));
    same = same && value_of(d) == value_of(0);
  }
  return same ? std::to_string(value_of(0)) : list;
}

// One `PROGRAM --serve` per program, started at the first request (the device count a command
// asks for first, or a measurement) and kept, so that LibTorch's load and a GPU's start are paid
// once; each measurement is one request to it. A request past its time limit stops the server, as
// do its end during a request, an answer that is not a status and a failed request (a GPU error
// may have left its CUDA state unusable): the next request starts another. A server found ended
// when a request is sent is started again (the request never reached it, so it runs once).
class Server {
 public:
  explicit Server(std::string program) : program_(std::move(program)) {}

  // Runs one gantry-exec run's arguments (without the program): Ok, or why it failed.
  Status run(const std::vector<std::string>& args, double time_limit) {
    auto answer = ask(args, time_limit, "a measurement");
    if (!answer) return answer.error();
    return Ok{};
  }

  // The CUDA devices the program sees.
  Result<int> devices() {
    auto answer = ask({"--devices-visible"}, 120, "the device count");  // a CUDA runtime's start, at most
    if (!answer) return answer.error();
    const nlohmann::json& devices = answer.value()["devices"];
    if (!devices.is_number_integer() || devices.get<int>() < 0)
      return make_error(program_ + " answered no device count (is it gantry-exec?)");
    return devices.get<int>();
  }

 private:
  // One request and its answer (a JSON object whose status is 0), or why not.
  Result<nlohmann::json> ask(const std::vector<std::string>& args, double time_limit, const std::string& what) {
    std::lock_guard<std::mutex> one_at_a_time(mutex_);
    const std::string request = nlohmann::json(args).dump();
    if (!child_ || !child_->send_line(request)) {  // not started, or ended since the last request
      start();
      if (!child_->send_line(request)) return make_error(ended("before it took a request"));
    }
    std::string line;
    const int read = child_->read_line(&line, time_limit > 0 ? time_limit : 1e9);
    if (read == 0) {
      child_.reset();  // stopped: SIGTERM, then SIGKILL, to its process group
      return make_error(program_ + " ran past the time limit of " + std::to_string(static_cast<long>(time_limit)) +
                        " s for " + what + " and was stopped");
    }
    if (read < 0) return make_error(ended("during " + what));
    auto answer = parse_json(line, program_ + "'s answer");
    if (!answer || !answer.value().is_object() || !answer.value().contains("status")) {
      child_.reset();  // out of step with its answers: none after this can be trusted
      return make_error(program_ + " answered " + tail(line, 200) + ", not a status (is it gantry-exec --serve?)");
    }
    if (answer.value()["status"] == 0) return answer;
    child_.reset();
    const std::string error = answer.value().value("error", std::string("failed"));
    return make_error(program_ + ": " + error + hint(error));
  }

  void start() {
    child_.reset();
    child_ = std::make_unique<ChildProcess>(std::vector<std::string>{program_, "--serve", "--end-with-stdin"}, folder_.file("log.txt"),
                                            ChildOptions{/*own_process_group=*/true, /*talk=*/true});
  }

  // Why the server ended, once it has (its process group stopped too: a wrapper's pipeline).
  std::string ended(const std::string& when) {
    const int status = child_->stop(5);
    const std::string log = child_->log();
    child_.reset();
    return program_ + " exited with status " + std::to_string(status) + ": " + tail(log) + " (its log: " +
           folder_.file("log.txt") + ") (" + when + ")" + hint(log);
  }

  std::string hint(const std::string& said) const {
    return said.find("unknown flag") != std::string::npos
               ? " (is " + program_ + " older than this gantry? rebuild it from this source tree)"
               : "";
  }


  std::string program_;
  TempFolder folder_{"gantry-exec"};  // its log
  std::unique_ptr<ChildProcess> child_;
  std::mutex mutex_;
};

Server& server_for(const std::string& program) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<Server>> servers;  // kept to the process's end
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<Server>& server = servers[program];
  if (!server) server = std::make_unique<Server>(program);
  return *server;
}

// The measurement is the one asked for: a bad file must not reach code that indexes by device.
Status check_against_request(const Measurement& m, const std::string& backend, const Placement& placement,
                             const Cluster& cluster, const ExecOptions& options, const std::string& program) {
  const std::string what = program + "'s measurement: ";
  if (m.backend != backend) return make_error(what + "backend " + m.backend + ", not " + backend);
  if (static_cast<int>(m.makespans.size()) != options.repeats)
    return make_error(what + std::to_string(m.makespans.size()) + " timed runs, not " + std::to_string(options.repeats));
  for (const OpRecord& r : m.median_run.ops)
    if (r.device != placement.device[static_cast<std::size_t>(r.op)])
      return make_error(what + "op " + std::to_string(r.op) + " ran on device " + std::to_string(r.device) +
                        ", placed on " + std::to_string(placement.device[static_cast<std::size_t>(r.op)]));
  for (const TransferRecord& t : m.median_run.transfers)
    if (t.from >= cluster.size() || t.to >= cluster.size())  // (copies to their own device: refused when read)
      return make_error(what + "a copy from device " + std::to_string(t.from) + " to " + std::to_string(t.to) + " of " +
                        std::to_string(cluster.size()));
  return Ok{};
}

}  // namespace

Status can_execute_through(const std::string& backend, const Cluster& cluster, const ExecOptions& options) {
  if (backend != "cpu" && backend != "cuda") return make_error("backend " + backend + ": expected cpu or cuda");
  if (options.fixed_order) return make_error("gantry-exec runs work-conserving placements, not fixed orders");
  if (options.throttle_links) return make_error("gantry-exec does not throttle links (its copies are the hardware's)");
  if (options.keep_outputs) return make_error("gantry-exec does not return the outputs' values");
  if (backend == "cpu")
    if (Status cpu = check_cpu_cluster(cluster); !cpu) return cpu;
  for (int d = 0; backend == "cuda" && d < cluster.size(); ++d)  // its times would be filed as the core's
    if (cluster.device(d).kind == "CPU")
      return make_error("cluster " + cluster.name() + " mixes CPU cores and GPUs (device " + std::to_string(d) + ", " +
                        cluster.device(d).name + "): gantry-exec runs every device on one backend");
  return Ok{};
}

Result<Measurement> execute_through(const std::string& program, const std::string& backend, const Graph& graph,
                                    const Placement& placement, const Cluster& cluster, const ExecOptions& options,
                                    double time_limit) {
  if (Status ok = can_execute_through(backend, cluster, options); !ok)
    return make_error("measuring through " + program + ": " + ok.error().message);
  if (auto valid = placement.check(graph, cluster, "the placement to measure"); !valid) return valid.error();
  try {
    TempFolder folder("gantry-exec");
    for (const auto& [name, text] : {std::pair<std::string, std::string>{"graph.json", graph_to_json(graph)},
                                     {"placement.json", placement_to_json(placement, fingerprint(graph).hex(), cluster.name())}})
      if (Status written = write_text_file(folder.file(name), text); !written) return written.error();
    std::vector<std::string> args = {
        "--graph", folder.file("graph.json"), "--placement", folder.file("placement.json"),
        "--backend", backend, "--devices", std::to_string(cluster.size()),
        "--streams", per_device(cluster, [&](int d) { return std::max(1, cluster.device(d).streams); }),
        "--repeats", std::to_string(options.repeats), "--warmup", std::to_string(options.warmup),
        "--out", folder.file("measurement.json")};
    // Only where a device differs from the backend's default (copy engines on GPUs, none on cores).
    for (int d = 0; d < cluster.size(); ++d)
      if (cluster.device(d).copy_engine != (backend == "cuda")) {
        args.insert(args.end(), {"--copy-engines", per_device(cluster, [&](int e) { return cluster.device(e).copy_engine ? 1 : 0; })});
        break;
      }
    if (!options.pin_threads) args.push_back("--no-pin");
    if (options.sm_partitions) args.insert(args.end(), {"--partition", "sms"});
    if (Status ran = server_for(program).run(args, time_limit); !ran) return ran.error();
    auto text = read_text_file(folder.file("measurement.json"));
    if (!text) return make_error(program + " ended without its measurement: " + text.error().message);
    auto measured = measurement_from_json(text.value(), graph, program + "'s measurement");
    if (!measured) return measured;
    if (Status ok = check_against_request(measured.value(), backend, placement, cluster, options, program); !ok)
      return ok.error();
    return measured;
  } catch (const std::exception& e) {
    return make_error(std::string("measuring through ") + program + ": " + e.what());
  }
}

Result<int> cuda_devices_seen_by(const std::string& program) {
  try {
    return server_for(program).devices();
  } catch (const std::exception& e) {
    return make_error(std::string(e.what()));
  }
}

}  // namespace gantry
