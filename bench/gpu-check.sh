#!/usr/bin/env bash
# The CUDA executor's checks on a GPU machine that has CUDA and PyTorch but none of gantry's Debian
# packages. Two steps:
#   bash bench/gpu-check.sh prepare DIR   # here, with gantry built: graphs, placements, the JSON header
#   bash bench/gpu-check.sh run DIR       # there: builds gantry-exec against PyTorch's LibTorch, runs
#                                         # every placement on cuda with --check, writes DIR/out/*.json
# DIR should be git-ignored (build/gpu-check) so that it travels with the working tree as a carried
# path. `run` prints one line per placement (median, min, max, whether the values match the CPU
# backend's) and exits 1 when a run fails or its values differ.
# To try the script itself on a CPU machine: SMALL=1 (tiny graphs) and BACKEND=cpu EXEC=build/gantry-exec
# (an existing gantry-exec instead of building one).
set -euo pipefail
mode=${1:?usage: gpu-check.sh prepare|run DIR}
dir=${2:?usage: gpu-check.sh prepare|run DIR}
root=$(cd "$(dirname "$0")/.." && pwd)

# GPU-sized graphs (tens to hundreds of milliseconds on one H200), placed on D = 1, 2 and 4
# devices: on one GPU, D devices are D partitions of it (streams sharing the SMs).
graphs=(
  "ffnn:layers=8,blocks=4,batch=8192,hidden=8192"
  "chainmm:blocks=4,size=8192"
  "llama-block:blocks=4,seq=4096,hidden=4096,heads=32,ffn=11008,dtype_bytes=2"
)
if [ -n "${SMALL:-}" ]; then
  graphs=("ffnn:layers=2,blocks=2,batch=64,hidden=64" "chainmm:blocks=2,size=64"
          "llama-block:blocks=2,seq=16,hidden=32,heads=2,ffn=48,dtype_bytes=2")
fi
backend=${BACKEND:-cuda}

prepare() {
  local gantry=${GANTRY:-$root/build/gantry}
  mkdir -p "$dir/include/nlohmann" "$dir/cases"
  cp /usr/include/nlohmann/json.hpp "$dir/include/nlohmann/"  # the device has no nlohmann-json3-dev
  local i=0
  for graph in "${graphs[@]}"; do
    i=$((i + 1))
    "$gantry" export --workload "$graph" --to json -o "$dir/cases/g$i.json"
    "$gantry" place --workload "$graph" --cluster identical:1 --method single -f json > "$dir/cases/g$i-d1-single.json"
    for d in 2 4; do
      for method in round-robin heft; do
        "$gantry" place --workload "$graph" --cluster "identical:$d" --method "$method" -f json > "$dir/cases/g$i-d$d-$method.json"
      done
    done
  done
  echo "prepared $(ls "$dir/cases" | wc -l) files in $dir"
}

run() {
  local exec=${EXEC:-}
  if [ -z "$exec" ]; then
    local prefix
    prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
    cmake -S "$root/executor/standalone" -B "$dir/build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
          -DGANTRY_JSON_INCLUDE="$dir/include" > "$dir/cmake.log"
    cmake --build "$dir/build" > "$dir/build.log"
    exec="$dir/build/gantry-exec"
  fi
  echo "CUDA devices visible: $("$exec" --devices-visible)"
  mkdir -p "$dir/out"
  local failed=0
  for placement in "$dir"/cases/g*-d*-*.json; do
    local name graph
    name=$(basename "$placement" .json)
    graph="$dir/cases/${name%%-*}.json"
    if "$exec" --graph "$graph" --placement "$placement" --backend "$backend" --repeats 5 --check \
         --out "$dir/out/$name.json" 2> "$dir/out/$name.err"; then
      python3 -c "import json,sys; m=json.load(open(sys.argv[1])); c=m['check']; print(f\"{sys.argv[2]:28s} median {m['median']*1e3:9.3f} ms  min {m['min']*1e3:9.3f}  max {m['max']*1e3:9.3f}  transfers {len(m['transfers']):4d}  values match: {c['match']} (max diff {c['max_abs_difference']:.2e})\")" "$dir/out/$name.json" "$name"
    else
      failed=1
      echo "$name FAILED: $(tail -1 "$dir/out/$name.err")"
    fi
  done
  if [ -n "${OUT:-}" ]; then cp -r "$dir/out" "$OUT/gpu-check"; fi
  return $failed
}

case "$mode" in
  prepare) prepare ;;
  run) run ;;
  *) echo "gpu-check.sh: mode $mode: expected prepare or run" >&2; exit 2 ;;
esac
