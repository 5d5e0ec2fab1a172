#!/usr/bin/env bash
# DOPPLER quality table: for each graph (the paper's FFNN and generated DOPPLER-convention graphs),
# the critical-path teacher, HEFT, gantry tune's search (heuristics, then annealing on the rollout
# actors of both cores) with budget B, DOPPLER trained from
# scratch within the same budget (gantry tune --method doppler: imitation, then RL), and the
# built-in policy's zero-shot greedy episode, and search given as many simulator evaluations as
# DOPPLER's episodes (equal evaluations). 4 identical devices, the DOPPLER-compatible simulator.
#   usage: bench/doppler-quality.sh [BUDGET] [GANTRY]       (2 x BUDGET per graph, 6 graphs)
set -euo pipefail
budget=${1:-240s}
gantry=${2:-./build/gantry}
data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT
graphs=(--graph=tests/data/doppler/ffnn_192nodes.txt --workload=llama-block:costs=doppler --workload=llama-layer:costs=doppler
        --workload=chainmm:costs=doppler,blocks=3 --workload=random:costs=doppler,ops=200,seed=5
        --workload=random:costs=doppler,ops=300,skip=0.3,seed=6)
common=(--cluster identical:4 --sim doppler)
printf "%-46s %11s %11s %11s %11s %11s %9s %8s %11s %9s\n" graph cp heft search doppler zero-shot dop/srch episodes search@eq srch/bound
for g in "${graphs[@]}"; do
  place=$("$gantry" place "$g" "${common[@]}" --method cp,heft,doppler --format json)
  tune=$("$gantry" tune "$g" "${common[@]}" --budget "$budget" --data "$data/search" --format json 2>/dev/null)
  out=$("$gantry" tune "$g" "${common[@]}" --method doppler --budget "$budget" --data "$data/doppler" 2>/dev/null)
  tuned=$(awk '/^---/{getline; print $5}' <<<"$out")  # graph, ops, cluster, teacher, best
  episodes=$(awk '/ episodes in /{print $1}' <<<"$out")
  equal=$("$gantry" place "$g" "${common[@]}" --method search --evals "$episodes" --format json)
  echo "$place" > "$data/place.json"
  echo "$equal" > "$data/equal.json"
  echo "$tune" > "$data/tune.json"
  python3 -c '
import json, sys
rows = {r["method"]: r for r in json.load(open(sys.argv[1]))}
equal = json.load(open(sys.argv[2]))
equal = equal[0] if isinstance(equal, list) else equal
tune = json.load(open(sys.argv[6]))
label, tuned, episodes = sys.argv[3].split("=", 1)[1], float(sys.argv[4]), sys.argv[5]
cp, heft, zero = (rows[m]["makespan"] for m in ("cp", "heft", "doppler"))
bound, eq, ts = rows["cp"]["lower_bound"], equal["makespan"], tune["makespan"]
print(f"{label:46s} {cp:11.4g} {heft:11.4g} {ts:11.4g} {tuned:11.4g} {zero:11.4g} {tuned / ts:9.3f} {episodes:>8s} {eq:11.4g} {ts / bound:9.3f}")
' "$data/place.json" "$data/equal.json" "$g" "$tuned" "$episodes" "$data/tune.json"
done
