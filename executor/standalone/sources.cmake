# gantry-exec's sources, relative to the repository root: what running a graph JSON needs, and
# nothing that needs more than LibTorch and the header-only nlohmann JSON library (no yaml-cpp,
# RocksDB, CAF or ZeroMQ). The main build compiles them into gantry-exec too, so the closure is
# checked on every build.
set(GANTRY_EXEC_SOURCES
  core/op_kind.cpp core/operation.cpp core/graph.cpp core/graph_json.cpp core/graph_loader.cpp core/doppler_reader.cpp
  core/stg_reader.cpp core/json_util.cpp core/placement.cpp core/cluster.cpp core/fingerprint.cpp
  core/op_signature.cpp core/profile_table.cpp
  executor/named_tensor.cpp executor/aten_kernels.cpp executor/program.cpp executor/placed_run.cpp
  executor/run_statistics.cpp executor/measurement_json.cpp executor/profile_samples.cpp executor/co_run.cpp executor/cpu/cpu_executor.cpp executor/cpu/device_arena.cpp executor/cuda/cuda_executor.cpp executor/cuda/green_partitions.cpp
  executor/standalone/gantry_exec.cpp)
