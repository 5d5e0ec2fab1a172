#!/usr/bin/env bash
# The CUDA executor's checks on a GPU machine that has CUDA and PyTorch but none of gantry's Debian
# packages. Two steps:
#   bash bench/gpu-check.sh prepare DIR   # here, with gantry built: graphs, placements, the JSON headers
#   bash bench/gpu-check.sh run DIR       # there: builds gantry-exec against PyTorch's LibTorch, then
#                                         #   check: small graphs on cuda, values compared with the CPU backend's
#                                         #   time:  GPU-sized graphs on cuda, timed only (the CPU would take minutes)
# DIR should be git-ignored (build/gpu-check) so that it travels with the working tree as a carried
# path. `run` prints one line per placement and writes its measurement to DIR/out (and all of them
# to $OUT/gpu-check-out.tar.gz when $OUT is set); it exits 1 when a run fails or its values differ.
# A build that fails brings its logs and LibTorch's headers back to $OUT instead.
# Placements are on D = 1, 2 and 4 devices: on one GPU, D devices are D partitions of it (streams
# sharing the SMs, and also disjoint SM partitions through green contexts: the check set's HEFT
# placements, every timing placement, and one SM set of 2 and of 4 working alone).
# SETS="check sms time serve" (the default) or any of them: e.g. SETS=sms for the partitions alone.
# The one-device timing runs also write profile samples (kind $DEVICE_KIND, default GPU) into the
# tarball, for `gantry profile --import` where the store is. To try the script on a CPU machine: SMALL=1 BACKEND=cpu EXEC=build/gantry-exec.
# Back here, `gantry bench partitions --cases DIR/cases --runs EXTRACTED/out` says how well the
# simulator predicts the partitioned timings (the co-run slowdown fitted in and out of sample).
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
  "ffnn:layers=4,blocks=4,batch=8192,hidden=8192"
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

# What the machine has, printed first: a failed build is then read against it.
environment() {
  echo "== $(date -u +%FT%TZ) $(uname -m); $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 | head -1 || true)"
  echo "== nvcc: $(nvcc --version 2>&1 | tail -1); cmake: $(cmake --version | head -1); c++: $(c++ --version | head -1)"
  python3 -c 'import torch, os; print("== torch", torch.__version__, "cuda", torch.version.cuda, "cxx11 abi", torch._C._GLIBCXX_USE_CXX11_ABI, os.path.dirname(torch.__file__))' 2>&1 || true
  python3 -c 'import torch, os; print("== CUDAEvent in c10:", os.path.exists(os.path.join(os.path.dirname(torch.__file__), "include/c10/cuda/CUDAEvent.h")))' 2>&1 || true
}

# gantry-exec by hand (g++ and the wheel's headers and libraries), for when LibTorch's CMake files
# do not configure on the machine.
build_by_hand() {
  local torch abi cuda_include out=$dir/hand cuda_flags=() cuda_libs=()
  torch=${TORCH_DIR:-$(python3 -c 'import torch, os; print(os.path.dirname(torch.__file__))')}
  abi=${TORCH_ABI:-$(python3 -c 'import torch; print(int(torch._C._GLIBCXX_USE_CXX11_ABI))')}
  if [ -f "$torch/include/c10/cuda/CUDAStream.h" ]; then
    local cuda_home=${CUDA_HOME:-}
    if [ -z "$cuda_home" ] && command -v nvcc > /dev/null; then cuda_home=$(dirname "$(dirname "$(command -v nvcc)")"); fi
    cuda_include=${cuda_home:-/usr/local/cuda}/include
    if [ ! -f "$cuda_include/cuda_runtime_api.h" ]; then
      echo "no CUDA headers in $cuda_include: set CUDA_HOME to the CUDA toolkit" >&2
      return 1
    fi
    cuda_flags=(-DGANTRY_WITH_CUDA=1 "-I$cuda_include")
    cuda_libs=(-ltorch_cuda -lc10_cuda)
  fi
  mkdir -p "$out"
  grep -v '^#' "$root/executor/standalone/sources.cmake" | grep -o '[A-Za-z0-9_/.-]*\.cpp' |
    xargs -P "$(nproc)" -I{} sh -c 'r=$0 o=$1; shift; c++ "$@" -c "$r/{}" -o "$o/$(echo {} | tr / _).o"' "$root" "$out" \
      "-std=${CXX_STD:-c++17}" -O2 "-D_GLIBCXX_USE_CXX11_ABI=$abi" ${cuda_flags[@]+"${cuda_flags[@]}"} "-I$root" "-I$dir/include" \
      "-I$torch/include" "-I$torch/include/torch/csrc/api/include" || return 1
  c++ "$out"/*.o -o "$out/gantry-exec" -L"$torch/lib" -Wl,--no-as-needed -ltorch ${cuda_libs[@]+"${cuda_libs[@]}"} -ltorch_cpu -lc10 \
      -Wl,--as-needed -Wl,-rpath,"$torch/lib" -Wl,--allow-shlib-undefined -lpthread -ldl || return 1
  echo "$out/gantry-exec"
}

# On a failed build: the logs and LibTorch's headers come back, so the code can be compiled
# against them (-fsyntax-only) before the next try on a GPU machine.
keep_failure() {
  [ -n "${OUT:-}" ] || return 0
  cp "$dir"/*.log "$OUT/" 2> /dev/null || true
  local torch
  torch=$(python3 -c 'import torch, os; print(os.path.dirname(torch.__file__))')
  tar -C "$torch" -cf - include | xz -T0 -6 > "$OUT/torch-include.tar.xz"
}

build() {
  if [ -n "${EXEC:-}" ]; then echo "$EXEC"; return; fi
  local prefix
  prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
  if cmake -S "$root/executor/standalone" -B "$dir/build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
        -DGANTRY_JSON_INCLUDE="$dir/include" > "$dir/cmake.log" 2>&1; then
    if cmake --build "$dir/build" -- -k 0 > "$dir/build.log" 2>&1; then echo "$dir/build/gantry-exec"; return; fi
    grep -B2 -A12 -m 8 'error' "$dir/build.log" >&2 || tail -40 "$dir/build.log" >&2
  else
    tail -25 "$dir/cmake.log" >&2
    echo "== LibTorch's CMake files did not configure: building by hand" >&2
    if build_by_hand > "$dir/hand.log" 2>&1; then tail -1 "$dir/hand.log"; return; fi
    grep -B2 -A12 -m 8 'error' "$dir/hand.log" >&2 || tail -40 "$dir/hand.log" >&2
  fi
  keep_failure
  exit 1
}

# SETS (default "check sms time serve") picks what `run` does: values on small graphs, SM
# partitions, timing of GPU-sized graphs, the timing placements again through one server.
wants() { [[ " ${SETS:-check sms time serve} " == *" $1 "* ]]; }

# The timing set's placements through one `gantry-exec --serve` (as a gantry built without CUDA
# measures through it), each twice, SM partitions too on cuda: every answer, each run's median
# beside the one-shot run's, and the server's peak memory (one process serving many runs).
serve_set() {
  local requests=$dir/out/serve-requests.jsonl answers=$dir/out/serve-answers.jsonl
  : > "$requests"
  for round in 1 2; do
    for placement in "$dir/cases/time"/g*-d*-*.json; do
      local name graph
      name=$(basename "$placement" .json)
      graph="$(dirname "$placement")/$(echo "$name" | cut -d- -f1).json"
      python3 -c 'import json, sys; print(json.dumps(sys.argv[1:]))' --graph "$graph" --placement "$placement"         --backend "$backend" --repeats 5 --out "$dir/out/serve-$name-$round.json" >> "$requests"
      case "$name" in *-d[24]-*) if [ "$backend" = cuda ]; then
        python3 -c 'import json, sys; print(json.dumps(sys.argv[1:]))' --graph "$graph" --placement "$placement"           --backend "$backend" --repeats 5 --partition sms --out "$dir/out/serve-$name-sms-$round.json" >> "$requests"
      fi ;; esac
    done
  done
  local timed=()  # the peak memory, where GNU time is there
  if [ -x /usr/bin/time ]; then timed=(/usr/bin/time -f '%M' -o "$dir/out/serve-rss-kb"); else echo 0 > "$dir/out/serve-rss-kb"; fi
  ${timed[@]+"${timed[@]}"} "$exec" --serve < "$requests" > "$answers" 2> "$dir/out/serve.err" ||
    { failed=1; echo "serve FAILED: $(tail -3 "$dir/out/serve.err" | tr '\n' ' ')"; return; }
  python3 - "$dir/out" "$requests" "$answers" <<'PY' || failed=1
import json, os, sys
out, requests, answers = sys.argv[1], open(sys.argv[2]).read().splitlines(), open(sys.argv[3]).read().splitlines()
ok = sum(json.loads(a)["status"] == 0 for a in answers)
rss = open(os.path.join(out, "serve-rss-kb")).read().split()[-1]
print(f"serve: {ok}/{len(requests)} requests answered ok by one server, peak memory {int(rss) // 1024} MiB (0: not measured)")
for request, answer in zip(requests, answers):
    args = json.loads(request)
    m = args[args.index("--out") + 1]
    if json.loads(answer)["status"] != 0 or not os.path.exists(m):
        print(f"serve-{os.path.basename(m)} FAILED: {answer}")
        continue
    base = os.path.basename(m)[len("serve-"):-len(".json")].rsplit("-", 1)[0]  # without the round
    one_shot = os.path.join(out, "time-" + base + ".json")
    line = f"serve-{os.path.basename(m)[6:-5]:28s} median {json.load(open(m))['median'] * 1e3:9.3f} ms"
    if os.path.exists(one_shot):
        line += f"  (one-shot {json.load(open(one_shot))['median'] * 1e3:9.3f} ms)"
    print(line)
sys.exit(0 if ok == len(requests) == len(answers) else 1)
PY
}

# run_case SET PLACEMENT [FLAGS...]: one gantry-exec run, one summary line.
run_case() {
  local set=$1 placement=$2 name graph
  shift 2
  name=$set-$(basename "$placement" .json)${SUFFIX:-}
  graph="$(dirname "$placement")/$(basename "$placement" | cut -d- -f1).json"
  if "$exec" --graph "$graph" --placement "$placement" --backend "$backend" "$@" \
       --out "$dir/out/$name.json" 2> "$dir/out/$name.err"; then
    python3 - "$dir/out/$name.json" "$name" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
ops = len(m['ops'])
line = (f"{sys.argv[2]:30s} ops {ops:4d} median {m['median']*1e3:9.3f} ms  min {m['min']*1e3:9.3f}  max {m['max']*1e3:9.3f}"
        f"  per op {m['median']/ops*1e6:8.1f} us  transfers {len(m['transfers']):4d}")
if 'SM partitions' in m.get('layout', ''):
    line += f"  [{m['layout']}]"
if 'check' in m:
    c = m['check']
    line += f"  values match: {c['match']} (max diff {c['max_abs_difference']:.2e}, tolerance {c['tolerance']:g} of {c['scale']:.3g})"
print(line)
PY
  else
    failed=1
    echo "$name FAILED: $(tail -3 "$dir/out/$name.err" | tr '\n' ' ')"
  fi
}

run() {
  local failed=0
  environment
  exec=$(build)
  echo "CUDA devices visible: $("$exec" --devices-visible)"
  rm -rf "$dir/out"
  mkdir -p "$dir/out"
  if wants check; then
    for placement in "$dir/cases/check"/g*-d*-*.json; do run_case check "$placement" --repeats 2 --check; done
  fi
  # D devices on one GPU as D SM partitions (green contexts) instead of D sets of streams.
  if wants sms && [ "$backend" = cuda ]; then
    for placement in "$dir/cases/check"/g*-d[24]-heft.json; do SUFFIX=-sms run_case check "$placement" --repeats 2 --check --partition sms; done
    for placement in "$dir/cases/time"/g*-d[24]-*.json; do SUFFIX=-sms run_case time "$placement" --repeats 5 --partition sms; done
    # One partition working alone, its neighbours idle: an SM set's own op times (a smaller GPU),
    # for `gantry bench partitions` to tell that from the slowdown busy neighbours add.
    for placement in "$dir/cases/time"/g*-d1-single.json; do
      for n in 2 4; do SUFFIX=-sms-of$n run_case time "$placement" --repeats 5 --devices $n --partition sms; done
    done
  fi
  if wants time; then
    # The whole GPU's op times (one device) also as profile samples, for `gantry profile --import`.
    for placement in "$dir/cases/time"/g*-d*-*.json; do
      local profile=()
      case "$placement" in *-d1-*) profile=(--profile-out "$dir/out/time-$(basename "$placement" .json).profiles.json" \
                                            --device-kind "${DEVICE_KIND:-GPU}") ;; esac
      run_case time "$placement" --repeats 5 ${profile[@]+"${profile[@]}"}  # (an empty array under set -u)
    done
    # One device with four streams: the same GPU, its ops free to overlap (the simulator's streams).
    for placement in "$dir/cases/time"/g*-d1-*.json; do SUFFIX=-s4 run_case time "$placement" --repeats 5 --streams 4; done
  fi
  if wants serve; then serve_set; fi
  # Every measurement in one file: what comes back from a machine is a few files.
  if [ -n "${OUT:-}" ]; then tar -C "$dir" -czf "$OUT/gpu-check-out.tar.gz" out; fi
  return $failed
}

case "$mode" in
  prepare) prepare ;;
  run) run ;;
  *) echo "gpu-check.sh: mode $mode: expected prepare or run" >&2; exit 2 ;;
esac
