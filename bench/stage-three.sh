#!/usr/bin/env bash
# DOPPLER's stage III on this machine's CPU devices: a stage II policy (imitation then RL on the
# simulator), then stage III from it (RL on makespans measured by the executor), against the
# critical-path teacher. Each placement is measured afresh (median of REPEATS timed runs, the three
# placements interleaved round by round) and simulated twice: on the roofline the policies trained
# on, and on profiles measured here first (gantry profile). Also the profiled lower bound.
# With PROFILED=1, stages II and III and the teacher cost the graph with those profiles (stage II
# then trains on the calibrated simulator) instead of the roofline.
#   usage: [PROFILED=1] bench/stage-three.sh [WORKLOAD] [STAGE2_EPISODES] [STAGE3_EPISODES] [GANTRY]
set -euo pipefail
profiled=$([[ "${PROFILED:-0}" == 1 ]] && echo --profiled || true)
workload=${1:-llama-block:blocks=4,seq=512,hidden=640,heads=10,ffn=1728,dtype_bytes=4}
stage2=${2:-4000}
stage3=${3:-160}
gantry=${4:-./build/gantry}
cluster=cpu-2
rounds=5
data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT
g=(--workload "$workload" --cluster "$cluster")

echo "profiling $cluster ..." >&2
"$gantry" profile --cluster "$cluster" --data "$data/store" > /dev/null
echo "stage II: $stage2 episodes ..." >&2
"$gantry" train "${g[@]}" --stage il+sim --episodes "$stage2" --name stage2 --data "$data/store" $profiled > /dev/null 2>&1
echo "stage III: $stage3 measured episodes from the stage II policy ..." >&2
"$gantry" train "${g[@]}" --stage real --init stage2 --episodes "$stage3" --batch 8 --name stage3 --data "$data/store" \
  $profiled > /dev/null 2>&1
"$gantry" place "${g[@]}" --method cp --data "$data/store" $profiled -f json > "$data/cp.json"
"$gantry" place "${g[@]}" --method doppler --policy stage2 --data "$data/store" $profiled -f json > "$data/stage2.json"
"$gantry" place "${g[@]}" --method doppler --policy stage3 --data "$data/store" $profiled -f json > "$data/stage3.json"
names=(cp stage2 stage3)
for round in $(seq "$rounds"); do
  echo "measuring, round $round of $rounds ..." >&2
  for name in "${names[@]}"; do
    "$gantry" execute "${g[@]}" --placement "$data/$name.json" --repeats 1 --warmup 1 --no-record -f json \
      > "$data/$name.run$round.json"
  done
done
for name in "${names[@]}"; do
  "$gantry" simulate "${g[@]}" --placement "$data/$name.json" -f json > "$data/$name.roofline.json"
  "$gantry" simulate "${g[@]}" --placement "$data/$name.json" --profiled --data "$data/store" -f json > "$data/$name.profiled.json"
done
python3 - "$data" "$rounds" <<'PY'
import json, statistics, sys
data, rounds = sys.argv[1], int(sys.argv[2])
rows = {}
for name in ["cp", "stage2", "stage3"]:
    runs = [json.load(open(f"{data}/{name}.run{r}.json"))["measured"]["median"] for r in range(1, rounds + 1)]
    roof = json.load(open(f"{data}/{name}.roofline.json"))
    prof = json.load(open(f"{data}/{name}.profiled.json"))
    rows[name] = (statistics.median(runs), min(runs), max(runs), roof["makespan"], prof["makespan"], prof.get("lower_bound", 0))
print(f"{'placement':10s} {'measured':>10s} {'min':>9s} {'max':>9s} {'vs cp':>7s} {'roofline sim':>13s} {'profiled sim':>13s}")
cp = rows["cp"][0]
for name, (med, lo, hi, roof, prof, bound) in rows.items():
    print(f"{name:10s} {med*1e3:8.2f}ms {lo*1e3:7.2f}ms {hi*1e3:7.2f}ms {100*(med/cp-1):+6.1f}% {roof*1e3:11.2f}ms {prof*1e3:11.2f}ms")
print(f"profiled lower bound {rows['cp'][5]*1e3:.2f} ms; stage III vs stage II measured {100*(rows['stage3'][0]/rows['stage2'][0]-1):+.1f}%, "
      f"vs the teacher {100*(rows['stage3'][0]/cp-1):+.1f}% (target: <= stage II and <= -10%)")
PY
