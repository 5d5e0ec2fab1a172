#!/usr/bin/env bash
# DOPPLER few-shot: does fine-tuning the built-in policy (pre-trained on other graphs) reach the
# from-scratch result in a quarter of the time? For each graph: `tune --method doppler` from new
# weights for BUDGET (imitation, then RL), then `train --init builtin --stage sim` for BUDGET/4
# with its learning curve; prints both bests and when the fine-tuned run first matched the
# from-scratch best (4 identical devices, the DOPPLER-compatible simulator, 2 cores, one run).
#   usage: bench/doppler-few-shot.sh [BUDGET_SECONDS] [GANTRY]     (5 x BUDGET x 3 graphs / 4)
set -euo pipefail
budget=${1:-240}
gantry=${2:-./build/gantry}
quarter=$((budget / 4))
data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT
graphs=(--workload=llama-block:costs=doppler --workload=llama-layer:costs=doppler --workload=random:costs=doppler,ops=200,seed=5)
common=(--cluster identical:4 --sim doppler)
printf "%-40s %11s %11s %11s %11s %9s %14s\n" graph cp zero-shot "scratch@${budget}s" "fine@${quarter}s" fine/scr "fine reached"
for g in "${graphs[@]}"; do
  zero=$("$gantry" place "$g" "${common[@]}" --method doppler --format json)
  scratch=$("$gantry" tune "$g" "${common[@]}" --method doppler --budget "${budget}s" --data "$data/scratch" 2>/dev/null)
  fine=$("$gantry" train "$g" "${common[@]}" --init builtin --stage sim --budget "${quarter}s" --data "$data/fine" \
         --name fine --curve "$data/fine.csv" 2>/dev/null)
  # The result table's row: graph, ops, cluster, teacher, best, greedy, ...
  read -r teacher scratch_best < <(awk '/^---/{getline; print $4, $5}' <<<"$scratch")
  fine_best=$(awk '/^---/{getline; print $5}' <<<"$fine")
  echo "$zero" > "$data/zero.json"
  python3 -c '
import csv, json, sys
label, teacher, scratch, fine = sys.argv[1].split("=", 1)[1], float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
zero = json.load(open(sys.argv[5]))
zero = zero[0] if isinstance(zero, list) else zero
zero_makespan = zero["makespan"]
reached = "not reached"
for row in csv.DictReader(open(sys.argv[6])):
    if float(row["best_ratio"]) * teacher <= scratch * (1 + 1e-9):
        reached = "at %.1fs" % float(row["seconds"])
        break
print(f"{label:40s} {teacher:11.4g} {zero_makespan:11.4g} {scratch:11.4g} {fine:11.4g} {fine / scratch:9.3f} {reached:>14s}")
' "$g" "$teacher" "$scratch_best" "$fine_best" "$data/zero.json" "$data/fine.csv"
done
