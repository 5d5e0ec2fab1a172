#!/usr/bin/env bash
# DOPPLER against its baselines on the same encoder code: for each transformer graph, the dual
# policy and the --ablation variants (plc-only: topological order, random-sel, gdp: one pass),
# each trained from new weights for BUDGET (imitation of the teacher's pick, then RL), 4 identical
# devices, the DOPPLER-compatible simulator, one run per seed. Prints the best placement of each run,
# as a share below the critical-path teacher (higher is better), a row per graph and seed (the
# runs vary by a few points from seed to seed: compare several).
#   usage: bench/doppler-ablations.sh [BUDGET_SECONDS] [GANTRY] [SEEDS]      (8 x BUDGET x seeds)
#   e.g.   bench/doppler-ablations.sh 60 ./build/gantry "1 2 3"
set -euo pipefail
budget=${1:-60}
gantry=${2:-./build/gantry}
read -r -a seeds <<<"${3:-1}"
variants=(dual plc-only random-sel gdp)
printf "%-32s %4s" graph seed; printf " %11s" "${variants[@]}"; printf "\n"
for g in --workload=llama-block:costs=doppler --workload=llama-layer:costs=doppler; do
  for seed in "${seeds[@]}"; do
    printf "%-32s %4s" "${g#--workload=}" "$seed"
    for v in "${variants[@]}"; do
      out=$("$gantry" train "$g" --cluster identical:4 --sim doppler --budget "${budget}s" --stage il+sim --imitate pick \
            --batch 16 --ablation "$v" --seed "$seed" --no-store 2>/dev/null)
      # The result table's row: graph, ops, cluster, teacher, best, greedy, share lower.
      awk '/^---/{getline; printf " %10.1f%%", 100 * (1 - $5 / $4)}' <<<"$out"
    done
    printf "\n"
  done
done
