#!/usr/bin/env bash
# The CUDA executor's checks on a GPU machine that has CUDA and PyTorch but none of gantry's Debian
# packages. Two steps:
#   bash bench/gpu-check.sh prepare DIR   # here, with gantry built: graphs, placements, the JSON headers
#   bash bench/gpu-check.sh run DIR       # there: builds gantry-exec against PyTorch's LibTorch, then
#                                         #   check: small graphs on cuda, values compared with the CPU backend's
#                                         #   time:  GPU-sized graphs on cuda, timed only (the CPU would take minutes)
# DIR should be git-ignored (build/gpu-check) so that it travels with the working tree as a carried
# path. `run` prints one line per placement and writes its measurement to DIR/out (and to $OUT/gpu-check
# as it goes, when $OUT is set); it exits 1 when a run fails or its values differ.
# Placements are on D = 1, 2 and 4 devices: on one GPU, D devices are D partitions of it (streams
# sharing the SMs). To try the script on a CPU machine: SMALL=1 BACKEND=cpu EXEC=build/gantry-exec.
set -euo pipefail
mode=${1:?usage: gpu-check.sh prepare|run DIR}
dir=${2:?usage: gpu-check.sh prepare|run DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
backend=${BACKEND:-cuda}

check_graphs=(
  "ffnn:layers=3,blocks=3,batch=256,hidden=256"
  "chainmm:blocks=3,size=256"
  "llama-block:blocks=2,seq=128,hidden=256,heads=4,ffn=512"
  "llama-block:blocks=2,seq=128,hidden=256,heads=4,ffn=512,dtype_bytes=2"
)
time_graphs=(
  "ffnn:layers=8,blocks=4,batch=8192,hidden=8192"
  "chainmm:blocks=4,size=8192"
  "llama-block:blocks=4,seq=4096,hidden=4096,heads=32,ffn=11008,dtype_bytes=2"
)
if [ -n "${SMALL:-}" ]; then
  time_graphs=("ffnn:layers=2,blocks=2,batch=64,hidden=64")
fi

# prepare_set NAME GRAPH...: each graph as JSON and its placements on 1, 2 and 4 devices.
prepare_set() {
  local set=$1 gantry=${GANTRY:-$root/build/gantry} i=0
  shift
  mkdir -p "$dir/cases/$set"
  for graph in "$@"; do
    i=$((i + 1))
    "$gantry" export --workload "$graph" --to json -o "$dir/cases/$set/g$i.json" 2> /dev/null
    "$gantry" place --workload "$graph" --cluster identical:1 --method single -f json > "$dir/cases/$set/g$i-d1-single.json"
    for d in 2 4; do
      for method in round-robin heft; do
        "$gantry" place --workload "$graph" --cluster "identical:$d" --method "$method" -f json > "$dir/cases/$set/g$i-d$d-$method.json"
      done
    done
  done
}

prepare() {
  rm -rf "$dir/cases"
  mkdir -p "$dir/include"
  cp -r /usr/include/nlohmann "$dir/include/"  # json.hpp and json_fwd.hpp: the GPU machine has neither
  prepare_set check "${check_graphs[@]}"
  prepare_set time "${time_graphs[@]}"
  echo "prepared $(find "$dir/cases" -name '*.json' | wc -l) files in $dir"
}

build() {
  if [ -n "${EXEC:-}" ]; then echo "$EXEC"; return; fi
  local prefix
  prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
  cmake -S "$root/executor/standalone" -B "$dir/build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
        -DGANTRY_JSON_INCLUDE="$dir/include" > "$dir/cmake.log" 2>&1 || { tail -20 "$dir/cmake.log" >&2; exit 1; }
  cmake --build "$dir/build" > "$dir/build.log" 2>&1 || { tail -40 "$dir/build.log" >&2; exit 1; }
  echo "$dir/build/gantry-exec"
}

run() {
  local exec failed=0
  exec=$(build)
  echo "CUDA devices visible: $("$exec" --devices-visible)"
  mkdir -p "$dir/out"
  if [ -n "${OUT:-}" ]; then mkdir -p "$OUT/gpu-check"; fi
  for set in check time; do
    local flags=(--repeats 5)
    if [ "$set" = check ]; then flags=(--repeats 2 --check); fi
    for placement in "$dir/cases/$set"/g*-d*-*.json; do
      local name graph
      name=$set-$(basename "$placement" .json)
      graph="$(dirname "$placement")/$(basename "$placement" | cut -d- -f1).json"
      if "$exec" --graph "$graph" --placement "$placement" --backend "$backend" "${flags[@]}" \
           --out "$dir/out/$name.json" 2> "$dir/out/$name.err"; then
        python3 - "$dir/out/$name.json" "$name" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
line = f"{sys.argv[2]:26s} median {m['median']*1e3:9.3f} ms  min {m['min']*1e3:9.3f}  max {m['max']*1e3:9.3f}  transfers {len(m['transfers']):4d}"
if 'check' in m:
    c = m['check']
    line += f"  values match: {c['match']} (max diff {c['max_abs_difference']:.2e}, tolerance {c['tolerance']:g} of {c['scale']:.3g})"
print(line)
PY
      else
        failed=1
        echo "$name FAILED: $(tail -1 "$dir/out/$name.err")"
      fi
      if [ -n "${OUT:-}" ]; then cp "$dir/out/$name".* "$OUT/gpu-check/"; fi
    done
  done
  return $failed
}

case "$mode" in
  prepare) prepare ;;
  run) run ;;
  *) echo "gpu-check.sh: mode $mode: expected prepare or run" >&2; exit 2 ;;
esac
