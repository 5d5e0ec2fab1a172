#!/usr/bin/env bash
# DOPPLER quality table: for each graph (the paper's FFNN and generated DOPPLER-convention graphs),
# the critical-path teacher, HEFT and search (annealing) with budget B, DOPPLER trained from
# scratch within the same budget (gantry tune --method doppler: imitation, then RL), and the
# built-in policy's zero-shot greedy episode. 4 identical devices, the DOPPLER-compatible simulator.
#   usage: bench/doppler-quality.sh [BUDGET] [GANTRY]       (2 x BUDGET per graph)
set -euo pipefail
budget=${1:-240s}
gantry=${2:-./build/gantry}
data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT
graphs=(--graph=tests/data/doppler/ffnn_192nodes.txt --workload=llama-block:costs=doppler --workload=llama-layer:costs=doppler
        --workload=chainmm:costs=doppler,blocks=3 --workload=random:costs=doppler,ops=200,seed=5
        --workload=random:costs=doppler,ops=300,skip=0.3,seed=6)
common=(--cluster identical:4 --sim doppler)
printf "%-46s %12s %12s %12s %12s %12s %9s\n" graph cp heft search doppler zero-shot "dop/srch"
for g in "${graphs[@]}"; do
  place=$("$gantry" place "$g" "${common[@]}" --method cp,heft,search,doppler --budget "$budget" --format json)
  tuned=$("$gantry" tune "$g" "${common[@]}" --method doppler --budget "$budget" --data "$data" 2>/dev/null | awk '/^---/{getline; print $4}')
  echo "$place" > "$data/place.json"
  python3 -c '
import json, sys
rows = {r["method"]: r["makespan"] for r in json.load(open(sys.argv[1]))}
label, tuned = sys.argv[2].split("=", 1)[1], float(sys.argv[3])
cp, heft, search, zero = rows["cp"], rows["heft"], rows["search"], rows["doppler"]
print(f"{label:46s} {cp:12.4g} {heft:12.4g} {search:12.4g} {tuned:12.4g} {zero:12.4g} {tuned / search:9.3f}")
' "$data/place.json" "$g" "$tuned"
done
