#!/usr/bin/env bash
# The built-in policy's zero-shot greedy episode against the critical-path teacher on graphs it was
# not trained on (the paper's FFNN file and generated DOPPLER-convention graphs of other sizes than
# bench/train-default-policy.sh's), on 4 and 8 identical devices, the DOPPLER-compatible simulator:
# makespans, the share above (+) or below (-) the teacher, the lower bound's share, and the
# episode's time. Seconds in all; needs python3. POLICY: a .policy file instead of the built-in one
# (a candidate from bench/train-default-policy.sh before it is shipped).
#   usage: bench/doppler-zero-shot.sh [GANTRY] [POLICY]
set -euo pipefail
gantry=${1:-./build/gantry}
policy=()
if [ -n "${2:-}" ]; then policy=(--policy "$2"); fi
graphs=(--graph=tests/data/doppler/ffnn_192nodes.txt --workload=llama-block:costs=doppler --workload=llama-layer:costs=doppler
        --workload=llama-layer:costs=doppler,layers=2 --workload=chainmm:costs=doppler,blocks=3 --workload=ffnn:costs=doppler
        --workload=random:costs=doppler,ops=200,seed=5 --workload=random:costs=doppler,ops=300,skip=0.3,seed=6)
printf "%-46s %7s %11s %11s %9s %9s %8s\n" graph devices cp zero-shot "vs cp" "bound" seconds
for devices in 4 8; do
  for g in "${graphs[@]}"; do
    "$gantry" place "$g" --cluster "identical:$devices" --sim doppler --method cp,doppler "${policy[@]}" --format json | python3 -c '
import json, sys
rows = {r["method"]: r for r in json.load(sys.stdin)}
cp, zero, bound = rows["cp"]["makespan"], rows["doppler"]["makespan"], rows["cp"]["lower_bound"]
print("%-46s %7s %11.4g %11.4g %+8.1f%% %+8.1f%% %8.3f" % (sys.argv[1].split("=", 1)[1], sys.argv[2], cp, zero,
      100 * (zero / cp - 1), 100 * (bound / cp - 1), rows["doppler"]["seconds"]))' "$g" "$devices"
  done
done
