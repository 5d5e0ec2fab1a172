// Pipeline tuning as a job: the problem as content, the moves' wire form, a worker's evaluation
// of them against the tuner's own evaluator, and whole jobs on an embedded cluster (tuning on
// the pool's workers gives what tuning alone gives; the best is stored and resumed from; a
// cancelled job keeps its best).
#include <catch2/catch.hpp>

#include <atomic>
#include <cmath>
#include <optional>

#include "actors/embedded_job.hpp"
#include "actors/net/wire.hpp"
#include "actors/pipeline_job.hpp"
#include "actors/pipeline_moves_task.hpp"
#include "actors/pipeline_problem.hpp"
#include "actors/problem_spec.hpp"
#include "actors/task_kinds.hpp"
#include "core/cluster.hpp"
#include "core/fingerprint.hpp"
#include "sim/runtime_fingerprint.hpp"
#include "storage/store.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/tuner/pipeline_fixtures.hpp"
#include "tuner/pipeline/memory_fitting.hpp"

using namespace gantry;

namespace {

PipelineProblemSpec llama_problem(int pp, int microbatches) {
  PipelineProblemSpec spec;
  spec.model = "llama-3-8b";
  spec.cluster_yaml = Cluster::load("8xH100-nvswitch").value().to_yaml();
  spec.pp = pp;
  spec.microbatches = microbatches;
  return spec;
}

JobSpec pipeline_job(const PipelineProblemSpec& problem) {
  JobSpec spec;
  spec.kind = "pipeline";
  spec.problem.pipeline_json = pipeline_problem_json(problem);
  spec.problem.graph_label = "llama";
  spec.budget_seconds = 0;  // until a pass gains too little: the same work as a tuning alone
  spec.pipeline.max_chunks = 2;
  return spec;
}

// The candidates a tuner sends: its starts, and one with explicit per-device orders.
std::vector<PipelineCandidate> some_candidates(const PipelineProblemSpec& problem, const PipelineSource& source) {
  auto starts = pipeline_tuning_starts(problem);
  REQUIRE(starts);
  std::vector<PipelineCandidate> out = starts.value();
  CandidateEvaluator evaluator(*source.stages, source.microbatches, source.links);
  PipelineCandidate ordered = out.front();
  ordered.order = evaluator.build(ordered).value().first.schedule;
  std::swap(ordered.order[0][1], ordered.order[0][2]);
  out.push_back(ordered);
  PipelineCandidate offloading = out.front();  // the cluster's host links carry it
  offloading.offload.assign(offloading.placement.size(), 0.0);
  offloading.offload[0] = 0.5;
  offloading.reload_ahead = 3;
  out.push_back(offloading);
  for (MemoryReserve reserve : {MemoryReserve::newcomer, MemoryReserve::held}) {  // later F wait for room
    PipelineCandidate packing = out.front();
    packing.rules.reserve = reserve;
    out.push_back(packing);
  }
  return out;
}

}  // namespace

TEST_CASE("a pipeline problem travels as JSON and builds the same stage costs", "[actors][pipeline]") {
  const PipelineProblemSpec spec = llama_problem(4, 8);
  auto parsed = parse_pipeline_problem(pipeline_problem_json(spec), "test");
  REQUIRE(parsed);
  CHECK(parsed.value().model == "llama-3-8b");
  CHECK(parsed.value().pp == 4);
  CHECK(parsed.value().microbatches == 8);
  CHECK(parsed.value().cluster_yaml == spec.cluster_yaml);
  auto a = build_pipeline_source(spec);
  auto b = build_pipeline_source(parsed.value());
  REQUIRE(a);
  REQUIRE(b);
  CHECK(a.value().problem == b.value().problem);
  // The cluster went through YAML; its runtime key is the preset's own (stored bests stay found).
  const Cluster preset = Cluster::load("8xH100-nvswitch").value();
  CHECK(a.value().runtime == pipeline_runtime_fingerprint(&preset, LinkModel::contention));
  CHECK(a.value().stages->devices() == 4);

  SECTION("errors name the problem and the field") {
    auto unknown = parse_pipeline_problem(R"({"model": "llama-3-8b", "cluster": "x", "layers": 3})", "job.pipeline");
    REQUIRE_FALSE(unknown);
    CHECK(unknown.error().message == "job.pipeline: unknown field \"layers\"");
    auto two = parse_pipeline_problem(R"({"model": "llama-3-8b", "stages": "{}", "cluster": "x"})", "job.pipeline");
    REQUIRE_FALSE(two);
    CHECK(two.error().message.find("exactly one of model, hf_config or stages") != std::string::npos);
    auto no_cluster = parse_pipeline_problem(R"({"model": "llama-3-8b"})", "job.pipeline");
    REQUIRE_FALSE(no_cluster);
    CHECK(no_cluster.error().message == "job.pipeline: a model needs a cluster");
    PipelineProblemSpec too_deep = spec;
    too_deep.pp = 9;
    auto built = build_pipeline_source(too_deep);
    REQUIRE_FALSE(built);
    CHECK(built.error().message == "--pp 9: cluster 8xH100-nvswitch has only 8 devices");
  }
}

TEST_CASE("a pipeline job spec round-trips through the wire", "[actors][pipeline]") {
  JobSpec spec = pipeline_job(llama_problem(4, 8));
  spec.pipeline.min_gain = 0.01;
  spec.pipeline.max_passes = 3;
  spec.pipeline.walk_share = 0.5;
  spec.pipeline.kick_share = 1.5;
  auto back = wire::parse_job_spec_text(wire::job_spec_text(spec));
  REQUIRE(back);
  CHECK(back.value().kind == "pipeline");
  CHECK(back.value().problem.pipeline_json == spec.problem.pipeline_json);
  CHECK(back.value().pipeline.max_chunks == 2);
  CHECK(back.value().pipeline.min_gain == 0.01);
  CHECK(back.value().pipeline.max_passes == 3);
  CHECK(back.value().pipeline.walk_share == 0.5);
  CHECK(back.value().pipeline.kick_share == 1.5);
  CHECK(problem_key(back.value().problem) == problem_key(spec.problem));
  // A graph problem's key is what it was before pipeline problems existed (graph, cluster,
  // simulator options under the same tag), so stored jobs and caches keep finding it.
  ProblemSpec graph;
  graph.graph_json = "{}";
  graph.cluster_yaml = "name: x\n";
  graph.sim_json = "{}";
  Hasher before;
  before.add_string("gantry-problem-1");
  before.add_string(graph.graph_json);
  before.add_string(graph.cluster_yaml);
  before.add_string(graph.sim_json);
  CHECK(problem_key(graph) == before.finish());
  CHECK_FALSE(problem_key(spec.problem) == problem_key(graph));
}

TEST_CASE("pipeline moves and their results round-trip in MessagePack", "[actors][pipeline]") {
  const PipelineProblemSpec problem = llama_problem(4, 8);
  auto source = build_pipeline_source(problem);
  REQUIRE(source);
  const auto candidates = some_candidates(problem, source.value());
  const std::string body = encode_body(candidates);
  auto decoded = decode_pipeline_moves(body);
  REQUIRE(decoded);
  REQUIRE(decoded.value().size() == candidates.size());
  for (std::size_t i = 0; i < candidates.size(); ++i) CHECK(decoded.value()[i] == candidates[i]);
  for (std::size_t cut : {body.size() / 2, body.size() - 1}) CHECK_FALSE(decode_pipeline_moves(body.substr(0, cut)));
  // Rule flags a worker cannot honour are refused by name: both packing rules at once, or a
  // rule this version does not know (the first candidate's flags, a one-byte integer, rewritten).
  const std::size_t flags_at = body.find("\xa5" "flags");
  REQUIRE(flags_at != std::string::npos);
  REQUIRE(static_cast<unsigned char>(body[flags_at + 6]) < 0x80);
  for (auto [flags, problem] : {std::pair{'\x30', "bits 4 and 5"}, std::pair{'\x40', "bits above 5"}}) {
    std::string bad = body;
    bad[flags_at + 6] = flags;
    auto refused = decode_pipeline_moves(bad);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().message.find(problem) != std::string::npos);
  }

  std::vector<MoveResult> results(2);
  results[0].ok = true;
  results[0].result.evaluation.completed = true;
  results[0].result.evaluation.iteration_time = 1.25;
  results[0].result.evaluation.busy = {1, 0.5};
  results[0].result.evaluation.peak_memory = {3e9, 2e9};
  results[1].error = "stage 3 is on device 9 of 4";
  auto back = decode_move_results(encode_body(results));
  REQUIRE(back);
  REQUIRE(back.value().size() == 2);
  CHECK(back.value()[0].ok);
  CHECK(back.value()[0].result.iteration_time == 1.25);
  CHECK(back.value()[0].result.evaluation.busy == std::vector<double>{1, 0.5});
  CHECK(back.value()[0].result.evaluation.peak_memory == std::vector<double>{3e9, 2e9});
  CHECK_FALSE(back.value()[1].ok);
  CHECK(back.value()[1].error == "stage 3 is on device 9 of 4");
  results[0].result.evaluation.out_of_memory = true;  // what does not fit is infinitely slow to the tuner
  CHECK(std::isinf(decode_move_results(encode_body(results)).value()[0].result.iteration_time));
}

TEST_CASE("a pipeline-moves task evaluates each move as the tuner's own evaluator does", "[actors][pipeline]") {
  const PipelineProblemSpec problem = llama_problem(4, 8);
  ProblemSpec spec;
  spec.pipeline_json = pipeline_problem_json(problem);
  auto built = build_problem(spec);
  REQUIRE(built);
  const PipelineSource& source = *built.value()->pipeline;
  std::vector<PipelineCandidate> moves = some_candidates(problem, source);
  PipelineCandidate broken = moves.front();
  broken.placement.back() = 7;  // a device the problem does not have
  moves.insert(moves.begin() + 1, broken);

  RolloutTask task;
  task.kind = kPipelineMovesTask;
  task.problem = built.value()->key;
  task.body = encode_body(moves);
  std::unique_ptr<SlotScratch> scratch;
  const TaskKind* kind = find_task_kind(kPipelineMovesTask);
  REQUIRE(kind != nullptr);
  CHECK(kind->pipeline);
  for (int round = 0; round < 2; ++round) {  // the second reuses the slot's compiled structures
    auto answer = kind->run(built.value(), task, scratch);
    REQUIRE(answer);
    auto results = decode_move_results(answer.value());
    REQUIRE(results);
    REQUIRE(results.value().size() == moves.size());
    CandidateEvaluator local(*source.stages, source.microbatches, source.links);
    for (std::size_t i = 0; i < moves.size(); ++i) {
      auto expected = local.evaluate(moves[i]);
      REQUIRE(results.value()[i].ok == static_cast<bool>(expected));
      if (!expected) continue;
      CHECK(results.value()[i].result.iteration_time == expected.value().iteration_time);
      CHECK(results.value()[i].result.evaluation.busy == expected.value().evaluation.busy);
      CHECK(results.value()[i].result.evaluation.peak_memory == expected.value().evaluation.peak_memory);
    }
    CHECK_FALSE(results.value()[1].ok);
  }
  // A graph task kind refuses a pipeline problem (and the moves kind a graph one).
  CHECK_FALSE(find_task_kind("anneal")->pipeline);
}

TEST_CASE("a pipeline job tunes on the pool's workers as the tuner alone, stores its best and resumes from it",
          "[actors][pipeline][cluster]") {
  gantry::testing::TempDir tmp;
  // Microbatches enough for some steps to reach PipelineTuneOptions::min_tasks_elsewhere.
  const PipelineProblemSpec problem = llama_problem(4, 32);
  const JobSpec spec = pipeline_job(problem);

  // The tuner alone, every move evaluated here.
  auto source = build_pipeline_source(problem);
  REQUIRE(source);
  auto starts = pipeline_tuning_starts(problem);
  REQUIRE(starts);
  CandidateEvaluator evaluator(*source.value().stages, source.value().microbatches, source.value().links);
  PipelineTuneOptions alone;
  alone.max_chunks = 2;
  auto expected = tune_pipeline(evaluator, starts.value(), alone);
  REQUIRE(expected);

  auto run = [&](std::optional<PipelineJobReport>& report) {
    auto store = Store::open(tmp.file("db"));
    REQUIRE(store);
    EmbeddedJobOptions options;
    options.rollouts = 2;
    options.hooks.on_pipeline_tuned = [&](const PipelineJobReport& r) { report = r; };
    return run_embedded_job(std::shared_ptr<Store>(std::move(store).value()), spec, options);
  };
  std::optional<PipelineJobReport> first;
  auto outcome = run(first);
  REQUIRE(outcome);
  CHECK(outcome.value().state == JobState::complete);
  REQUIRE(first);
  CHECK(first->tasks > 0);  // the moves went through the pool
  CHECK_FALSE(first->resumed);
  CHECK(first->tuned.best == expected.value().best);
  CHECK(first->tuned.best_result.iteration_time == expected.value().best_result.iteration_time);
  CHECK(first->tuned.evaluations == expected.value().evaluations);
  CHECK(first->stored);
  CHECK(outcome.value().best.makespan == first->tuned.best_result.iteration_time);
  {
    auto store = Store::open(tmp.file("db"));
    REQUIRE(store);
    auto best = store.value()->best(source.value().problem, source.value().runtime);
    REQUIRE(best);
    REQUIRE(best.value());
    CHECK(best.value()->makespan == first->tuned.best_result.iteration_time);
    CHECK(best.value()->job_id == outcome.value().job_id);
    auto stored = candidate_from_json(best.value()->candidate, "stored");
    REQUIRE(stored);
    CHECK(evaluator.evaluate(stored.value()).value().iteration_time == first->tuned.best_result.iteration_time);
  }
  std::optional<PipelineJobReport> second;
  auto again = run(second);
  REQUIRE(again);
  REQUIRE(second);
  CHECK(second->resumed);
  CHECK(second->resumed_time == first->tuned.best_result.iteration_time);
  CHECK(second->tuned.best_result.iteration_time <= first->tuned.best_result.iteration_time);
}

TEST_CASE("a cancelled pipeline job ends CANCELLED with its best so far stored", "[actors][pipeline][cluster]") {
  gantry::testing::TempDir tmp;
  const PipelineProblemSpec problem = llama_problem(8, 32);  // seconds of tuning: the cancel lands first
  auto store = Store::open(tmp.file("db"));
  REQUIRE(store);
  std::atomic<bool> cancel{true};
  std::optional<PipelineJobReport> report;
  EmbeddedJobOptions options;
  options.rollouts = 1;
  options.cancel = &cancel;
  options.hooks.on_pipeline_tuned = [&](const PipelineJobReport& r) { report = r; };
  auto outcome = run_embedded_job(std::shared_ptr<Store>(std::move(store).value()), pipeline_job(problem), options);
  REQUIRE(outcome);
  CHECK(outcome.value().state == JobState::cancelled);
  REQUIRE(report);
  CHECK(report->tuned.stopped);
  CHECK(report->stored);
  CHECK(report->tuned.best_result.iteration_time <= report->tuned.start_result.iteration_time);
}

TEST_CASE("a coordinator refuses a job whose kind does not match its problem", "[actors][pipeline][cluster]") {
  gantry::testing::TempDir tmp;
  auto store = Store::open(tmp.file("db"));
  REQUIRE(store);
  std::shared_ptr<Store> shared(std::move(store).value());
  JobSpec tune_of_pipeline = pipeline_job(llama_problem(4, 8));
  tune_of_pipeline.kind = "tune";
  auto refused = run_embedded_job(shared, tune_of_pipeline, {});
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find("a tune job needs a graph problem, not a pipeline problem") != std::string::npos);
  JobSpec pipeline_of_graph;
  pipeline_of_graph.kind = "pipeline";
  pipeline_of_graph.problem.graph_json = "{}";
  auto refused_too = run_embedded_job(shared, pipeline_of_graph, {});
  REQUIRE_FALSE(refused_too);
  CHECK(refused_too.error().message.find("a pipeline job needs a pipeline problem") != std::string::npos);
}

TEST_CASE("the bound with whole layers per device", "[actors][pipeline]") {
  // Layers of F = B = W = t, so F+B+W = 3t, on 2 devices. By hand: times 15, 3, 3, 3, 3 give
  // max(27 / 2, 15 (the longest alone), 2 x 3, 3 x 3) = 15; five layers of 6 give 18 (one device
  // runs three of them), above work / devices = 15.
  PipelineSource source;
  source.has_layers = true;
  source.layers = 5;
  source.microbatches = 4;
  source.stages = gantry::testing::layer_source({5, 1, 1, 1, 1}, 2);
  CHECK(pipeline_layer_bound(source).value() == Approx(4 * 15.0));
  source.stages = gantry::testing::layer_source({2, 2, 2, 2, 2}, 2);
  CHECK(pipeline_layer_bound(source).value() == Approx(4 * 18.0));
  source.has_layers = false;  // stage files: no layers to count
  CHECK(pipeline_layer_bound(source).value() == 0);
}

TEST_CASE("a model whose static memory no partition fits is refused with what it needs", "[actors][pipeline]") {
  // By hand: five layers of static memory 1 fit two devices of 2 and 3 (two layers and three)
  // and not of 2 and 2.9; two layers of 1 do not fit four devices of 0.9 (4 x 0.9 holds both in
  // all, but no device holds one).
  PipelineSource source;
  source.has_layers = true;
  source.layers = 5;
  source.microbatches = 4;
  source.problem_label = "five layers";
  gantry::testing::LayerSourceOptions o;
  o.params = 1;
  o.device_mem = {2, 3};
  source.stages = gantry::testing::layer_source({1, 1, 1, 1, 1}, 2, o);
  CHECK(check_static_memory_fits(source));
  o.device_mem = {2, 2.9};
  source.stages = gantry::testing::layer_source({1, 1, 1, 1, 1}, 2, o);
  auto refused = check_static_memory_fits(source);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find("five layers: its parameters, gradients and optimizer state need") == 0);
  o.device_mem = {0.9, 0.9, 0.9, 0.9};
  source.layers = 2;
  source.stages = gantry::testing::layer_source({1, 1}, 4, o);
  auto one_layer = check_static_memory_fits(source);
  REQUIRE_FALSE(one_layer);
  CHECK(one_layer.error().message.find("layer 0 alone needs") != std::string::npos);
  o.device_mem = {0.9, 0.9, 0.9, 0};  // a device without a limit holds anything
  source.stages = gantry::testing::layer_source({1, 1}, 4, o);
  CHECK(check_static_memory_fits(source));

  // Mixtral-8x7B (46.7B parameters, its model card) at 18 bytes a parameter needs 782.9 GiB:
  // more than 8 x 80 GiB (H100), less than 8 x 131.3 GiB (H200, 141 GB).
  PipelineProblemSpec spec;
  spec.model = "mixtral-8x7b";
  spec.cluster_yaml = Cluster::load("8xH100-nvswitch").value().to_yaml();
  spec.pp = 8;
  spec.microbatches = 16;
  auto h100 = build_pipeline_source(spec);
  REQUIRE(h100);
  auto too_small = check_static_memory_fits(h100.value());
  REQUIRE_FALSE(too_small);
  CHECK(too_small.error().message.find("need 782.9 GiB in all") != std::string::npos);
  CHECK(too_small.error().message.find("640.0 GiB in all") != std::string::npos);
  spec.cluster_yaml = Cluster::load("8xH200-nvswitch").value().to_yaml();
  auto h200 = build_pipeline_source(spec);
  REQUIRE(h200);
  CHECK(check_static_memory_fits(h200.value()));
}

TEST_CASE("a stage file fixes each device's work: the bound is the busiest device's, and every device needs a stage",
          "[actors][pipeline]") {
  // By hand: three devices doing F+B+W of 3, 6 and 2 a microbatch; with 4 microbatches the second
  // device alone computes 24 whatever the scheme (its stages share its work), above the
  // average 11 x 4 / 3.
  StageCosts per_device = gantry::testing::uniform_stages(3, 1, 1, 1);
  per_device.f[1] = per_device.b[1] = per_device.w[1] = 2;
  per_device.b[2] = 0;
  PipelineSource source;
  source.has_layers = false;
  source.microbatches = 4;
  source.stages = stage_file_source(per_device, 0);
  CHECK(pipeline_work_bound(source).value() == Approx(24));

  // A scheme that leaves device 2 without a stage would drop its work: refused, naming it.
  PipelineScheme scheme;
  scheme.num_microbatches = 1;
  scheme.placement = {0, 1, 1};
  scheme.schedule.resize(3);
  auto dropped = source.stages->costs_of(scheme, "s.json");
  REQUIRE_FALSE(dropped);
  CHECK_THAT(dropped.error().message, Catch::Contains("s.json: placement: no stage on device 2"));
  scheme.placement = {0, 1, 2, 1};  // device 1's work split over its two stages
  auto shared = source.stages->costs_of(scheme, "s.json");
  REQUIRE(shared);
  CHECK(shared.value().f == std::vector<double>{1, 1, 1, 1});
}

TEST_CASE("the work bound divides the work by the devices' speeds on a mixed cluster", "[actors][pipeline]") {
  // On identical devices: the work of any scheme's stages / devices. On 4 H100 and 4 A100 a layer
  // runs r times longer on an A100; when r is the same for every layer, the work W at H100 speed
  // takes W / (4 + 4 / r) at best, which a scheme's own work / devices does not bound.
  PipelineProblemSpec spec = llama_problem(8, 32);
  auto same = build_pipeline_source(spec);
  REQUIRE(same);
  auto set = same.value().stages->stages(StageLayout{});
  REQUIRE(set);
  CHECK(pipeline_work_bound(same.value()).value() ==
        Approx(pipeline_lower_bound(set.value().costs, 32, 8)).epsilon(1e-9));

  spec.cluster_yaml = Cluster::load("4xH100+4xA100-ib").value().to_yaml();
  auto mixed = build_pipeline_source(spec);
  REQUIRE(mixed);
  const int layers = mixed.value().layers;
  auto h100 = per_layer_costs(*mixed.value().stages, layers, 0), a100 = per_layer_costs(*mixed.value().stages, layers, 7);
  REQUIRE(h100);
  REQUIRE(a100);
  auto time = [](const StageCosts& c, int i) { return c.f[i] + c.b[i] + c.w[i]; };
  double work = 0, ratio = time(a100.value(), 0) / time(h100.value(), 0);
  for (int i = 0; i < layers; ++i) {
    work += time(h100.value(), i);
    REQUIRE(time(a100.value(), i) / time(h100.value(), i) == Approx(ratio));
  }
  REQUIRE(ratio > 2);
  CHECK(pipeline_work_bound(mixed.value()).value() == Approx(32 * work / (4 + 4 / ratio)));
}

TEST_CASE("nemotron-h-8b's bound with whole layers and at most 4 stages per device", "[actors][pipeline]") {
  // Its layers: an embedding (no time), 24 Mamba and 24 MLP layers alternating (Mamba first), 4
  // attention layers (shorter than a Mamba layer) after some Mamba layers, and the output head.
  // On 8 devices some device holds 7 of the 49 layers at least as long as a Mamba layer (those 48
  // and the head); with the head it runs longer than the sets below. In at most 4 runs of
  // consecutive layers, where Mamba and MLP alternate, at most 4 + #MLP of the 7 are Mamba: 5
  // Mamba and 2 MLP at best. With one run per device, some device holds 4 of the 25 layers at
  // least as long as an MLP (the MLPs and the head): 4 MLPs and the 3 Mamba layers between them.
  // With any runs, 7 Mamba layers.
  PipelineProblemSpec spec = llama_problem(8, 32);
  spec.model = "nemotron-h-8b";
  auto source = build_pipeline_source(spec);
  REQUIRE(source);
  auto layers = per_layer_costs(*source.value().stages, source.value().layers, 0);
  REQUIRE(layers);
  const StageCosts& c = layers.value();
  auto time = [&](int i) { return c.f[i] + c.b[i] + c.w[i]; };
  const double mamba = time(1), mlp = time(2), head = time(c.num_stages() - 1);
  REQUIRE(mlp > mamba);
  REQUIRE(head + 6 * mamba > 5 * mamba + 2 * mlp);  // a set with the head: the head and 6 more
  REQUIRE(head + 3 * mlp + 2 * mamba > 3 * mamba + 4 * mlp);  // one run with the head and 3 MLPs
  int attention = 0;
  for (int i = 1; i + 1 < c.num_stages(); ++i)
    if (time(i) != Approx(mamba) && time(i) != Approx(mlp)) {
      CHECK(time(i) < mamba);
      ++attention;
    }
  REQUIRE(attention == 4);
  CHECK(pipeline_layer_bound(source.value(), 4).value() == Approx(32 * (5 * mamba + 2 * mlp)));
  CHECK(pipeline_layer_bound(source.value(), 1).value() == Approx(32 * (3 * mamba + 4 * mlp)));
  CHECK(pipeline_layer_bound(source.value()).value() == Approx(32 * 7 * mamba));
}

TEST_CASE("the tuning starts of a memory-bound model include partitions that leave the first stages room",
          "[actors][pipeline]") {
  // llama-3-8b on 4 devices with 45 GiB each: the time-balanced partitions leave the first stage
  // too little memory for its warm-up; a lighter first stage holds more microbatches.
  PipelineProblemSpec spec = llama_problem(4, 8);
  spec.mem_limit = 45.0 * (1 << 30);
  auto source = build_pipeline_source(spec);
  REQUIRE(source);
  auto starts = pipeline_tuning_starts(spec);
  REQUIRE(starts);
  auto fitting_starts = memory_fitting_candidates(*source.value().stages, source.value().layers, source.value().microbatches);
  REQUIRE(fitting_starts);
  REQUIRE_FALSE(fitting_starts.value().empty());
  CandidateEvaluator evaluator(*source.value().stages, source.value().microbatches, source.value().links);
  double balanced = 1e300, fitting = 1e300;
  for (const PipelineCandidate& c : starts.value()) {
    auto r = evaluator.evaluate(c);
    REQUIRE(r);
    const auto& f = fitting_starts.value();
    double& best = std::find(f.begin(), f.end(), c) != f.end() ? fitting : balanced;
    best = std::min(best, r.value().iteration_time);
  }
  CHECK(fitting < 0.95 * balanced);
}
