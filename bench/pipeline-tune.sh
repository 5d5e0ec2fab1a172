#!/usr/bin/env bash
# The pipeline co-tuner against its baselines on the issue's models (p = 8 stages, 32 microbatches,
# sequence 4096, the devices' memory) and on others: per case, 1F1B on a uniform partition (the
# reference), the best baseline schedule x partition, random search and annealing with the tuner's
# evaluations, the tuned scheme, the lower bound (work / devices), the tuner's wall time, and
# bubble and overlap before (1F1B / uniform) and after. "lbound": the larger of that bound and
# the one with whole layers per device (actors/pipeline_problem.hpp, pipeline_layer_bound);
# "cbound": the same with at most --max-chunks (4) stages per device, as the searches' schemes
# (and the tuned one's count when larger; tuner/pipeline/layer_bound.hpp). Then per-stage cost files against the
# zero-bubble paper's closed forms. One run each, simulated; needs python3.
# SEED seeds the tuner's kicks and walk and the searches (the table's comparisons at equal
# evaluations vary with it; compare several). The last cases are the catalog's models from Hugging
# Face config.json files (configs/models/). ONLY=REGEX runs the cases whose label matches.
#   usage: [ONLY=REGEX] bench/pipeline-tune.sh [GANTRY] [SEED]
set -euo pipefail
gantry=${1:-./build/gantry}
seed=${2:-1}
files=$(mktemp -d)
trap 'rm -rf "$files"' EXIT

report() {  # label, then the JSON of `gantry pipeline tune -f json` on stdin
  python3 -c '
import json, sys
label = sys.argv[1]
j = json.load(sys.stdin)
t = j["tuned"]
rows = {b["scheme"]: b for b in j["baselines"]}
ref = j["reference_1f1b_uniform"]
ref_row = rows.get("1f1b / uniform", rows.get("1f1b"))
fixed = [b for b in j["baselines"] if b["runs"] and not b["scheme"].startswith(("random", "annealing"))]
best = min(fixed, key=lambda b: b["iteration_time"]) if fixed else None
def search(prefix):
    for b in j["baselines"]:
        if b["scheme"].startswith(prefix):
            return "%.3f" % b["iteration_time"] if b["runs"] else "OOM"
    return "-"
ok = t["completed"] and not t["out_of_memory"]
T = t["iteration_time"]
cbound = max(j["stage_limited_layer_bound"], j["layer_bound"], j["lower_bound"])
print("%-34s %8.3f%s %-24s %8s %8s %8s %7s %7s %8.3f %6s %8.3f %6s %8.3f %6s %6d %6.1f  %5.1f%% -> %5.1f%%  %5.1f%% -> %5.1f%%" % (
    label, ref, "" if j["reference_fits"] else "*",
    ("%s %.3f" % (best["scheme"], best["iteration_time"])) if best else "-",
    search("random"), search("annealing"), "%.3f" % T if ok else "none",
    "%.3fx" % (ref / T) if ok else "-", "%.3fx" % (best["iteration_time"] / T) if ok and best else "-",
    j["lower_bound"], "%.1f%%" % (100 * (T / j["lower_bound"] - 1)) if ok else "-",
    max(j["layer_bound"], j["lower_bound"]),
    "%.1f%%" % (100 * (T / j["layer_bound"] - 1)) if ok and j["layer_bound"] > j["lower_bound"] else "-",
    cbound, "%.1f%%" % (100 * (T / cbound - 1)) if ok and cbound > max(j["layer_bound"], j["lower_bound"]) else "-",
    j["evaluations"], j["seconds"],
    100 * (ref_row["bubble_ratio"] if ref_row and ref_row["runs"] else float("nan")), 100 * t["bubble_ratio"],
    100 * (ref_row["overlap_ratio"] if ref_row and ref_row["runs"] else float("nan")), 100 * t["overlap_ratio"]))
' "$1"
}

printf "%-34s %9s %-24s %8s %8s %8s %7s %7s %8s %6s %8s %6s %8s %6s %6s %6s  %-16s  %s\n" case 1f1b/unif "best baseline" random anneal tuned \
  vs1f1b vsbest bound above lbound above cbound above evals secs "bubble 1f1b->tuned" "overlap 1f1b->tuned"
while read -r label args; do
  [[ -n "${ONLY:-}" && ! "$label" =~ $ONLY ]] && continue
  # shellcheck disable=SC2086
  "$gantry" pipeline tune $args --search-baselines --seed "$seed" --no-store -f json | report "$label"
done <<'EOF'
nemotron-h-8b/8xH100 --model nemotron-h-8b --cluster 8xH100-nvswitch --pp 8 --microbatches 32
llama-3-8b/8xH100 --model llama-3-8b --cluster 8xH100-nvswitch --pp 8 --microbatches 32
jamba-v0.1/8xH200 --model jamba-v0.1 --cluster 8xH200-nvswitch --pp 8 --microbatches 32
mixtral-8x7b/8xH200 --model mixtral-8x7b --cluster 8xH200-nvswitch --pp 8 --microbatches 32
llama-3-8b/4xH100+4xA100 --model llama-3-8b --cluster 4xH100+4xA100-ib --pp 8 --microbatches 32
nemotron-h-8b/8xH100,m=64 --model nemotron-h-8b --cluster 8xH100-nvswitch --pp 8 --microbatches 64
llama-3-8b/2x8xH100,p=16,m=64 --model llama-3-8b --cluster 2x8xH100-ib --pp 16 --microbatches 64
nemotron-h-47b/2x8xH100,p=16,m=64 --model nemotron-h-47b --cluster 2x8xH100-ib --pp 16 --microbatches 64
bamba-9b/8xH100 --model bamba-9b --cluster 8xH100-nvswitch --pp 8 --microbatches 32
falcon-mamba-7b/8xH100 --model falcon-mamba-7b --cluster 8xH100-nvswitch --pp 8 --microbatches 32
qwen3-30b-a3b/8xH200 --model qwen3-30b-a3b --cluster 8xH200-nvswitch --pp 8 --microbatches 32
qwen1.5-moe-a2.7b/8xH100 --model qwen1.5-moe-a2.7b --cluster 8xH100-nvswitch --pp 8 --microbatches 32
EOF
echo "(* 1F1B on a uniform partition does not fit in memory: its time as if it did)"
[[ -n "${ONLY:-}" ]] && exit 0  # the model cases only

# Per-stage costs: identical stages (F = B = W = 1, no transfer time), p = 8, m = 32, memory for
# 1F1B's p activations and for ZB-H2's 2p - 1. The paper's makespans: ZB-H1 m(F+B+W) + (p-1)(F+B-W)
# = 103; ZB-H2 fills the bubble but device p-1 still idles (p-1)F before its first F: >= 103.
echo
printf "%-40s %10s %10s %10s\n" "stage file" "ZB-H1" "ZB-H2" tuned
for mem in 80 150; do
  cat >"$files/uniform.json" <<EOF
{"n_stages": 8, "n_micro": 32, "cost_f": 1, "cost_b": 1, "cost_w": 1, "cost_comm": 0,
 "mem_f": 10, "mem_b": -8, "mem_w": -2, "max_mem": $mem}
EOF
  tuned=$("$gantry" pipeline tune --stages "$files/uniform.json" --no-store -f json | python3 -c 'import json,sys; print("%.3f" % json.load(sys.stdin)["tuned"]["iteration_time"])')
  printf "%-40s %10s %10s %10s\n" "uniform p=8 m=32 max_mem=$mem" 103 ">=103" "$tuned"
done
zb=$("$gantry" pipeline tune --stages configs/pipelines/zb-example.json --no-store -f json | python3 -c '
import json,sys; j=json.load(sys.stdin); z={b["scheme"]: b for b in j["baselines"]}
print("%.5f %.5f %.5f" % (z["zb"]["iteration_time"], z["zbv"]["iteration_time"] if z["zbv"]["runs"] else float("nan"), j["tuned"]["iteration_time"]))')
read -r h1 v tuned <<<"$zb"
printf "%-40s %10s %10s %10s   (our zb and zbv constructions)\n" "configs/pipelines/zb-example.json" "$h1" "$v" "$tuned"

# The job's moves evaluated on 1 and on 2 worker slots: the same scheme and evaluations, and the
# tuning's time (the parallel speedup of the pool; on a 2-core machine 2 slots is the most that helps).
echo
printf "%-34s %8s %8s %8s %8s %8s\n" case slots tuned evals secs speedup
while read -r label args; do
  one=""
  for slots in 1 2; do
    # shellcheck disable=SC2086
    line=$("$gantry" pipeline tune $args --rollouts $slots --no-store -f json | python3 -c '
import json, sys; j = json.load(sys.stdin); print("%.6f %d %.2f" % (j["tuned"]["iteration_time"], j["evaluations"], j["seconds"]))')
    read -r tuned evals secs <<<"$line"
    [ -z "$one" ] && one=$secs
    printf "%-34s %8d %8s %8s %8s %7.2fx\n" "$label" "$slots" "$tuned" "$evals" "$secs" "$(python3 -c "print($one / $secs)")"
  done
done <<'EOF2'
llama-3-8b/8xH100 --model llama-3-8b --cluster 8xH100-nvswitch --pp 8 --microbatches 32
llama-3-8b/2x8xH100,p=16,m=64 --model llama-3-8b --cluster 2x8xH100-ib --pp 16 --microbatches 64
EOF2
