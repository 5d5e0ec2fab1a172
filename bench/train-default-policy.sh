#!/usr/bin/env bash
# Reproduces configs/policies/doppler-default.policy, the policy `gantry place --method doppler`
# uses when no --policy is given: a dual policy pre-trained on generated DOPPLER-convention graphs
# only (random layered DAGs, and transformer blocks, layers, FFNNs and chain products of other sizes
# than the paper's and of the evaluation graphs of bench/doppler-quality.sh), each on 4 and on 8
# identical devices, the DOPPLER-compatible simulator. Stage I imitates the critical-path teacher's
# own choices; stage II is policy gradient on simulated makespans.
#   usage: bench/train-default-policy.sh [GANTRY] [OUT]      (about 5 minutes on 2 cores)
set -euo pipefail
gantry=${1:-./build/gantry}
out=${2:-configs/policies/doppler-default.policy}
data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT

graphs=()
for seed in 11 12 13 14; do graphs+=(--workload "random:costs=doppler,ops=150,seed=$seed"); done
for seed in 21 22; do graphs+=(--workload "random:costs=doppler,ops=250,skip=0.3,seed=$seed"); done
graphs+=(--workload "llama-block:costs=doppler,blocks=2" --workload "llama-block:costs=doppler,blocks=3")
graphs+=(--workload "llama-layer:costs=doppler,blocks=2" --workload "ffnn:costs=doppler,layers=3,blocks=2")
graphs+=(--workload "chainmm:costs=doppler,blocks=2" --workload "chainmm:costs=doppler,blocks=4")

common=(--cluster identical:4 --cluster identical:8 --sim doppler --data "$data" --name default --seed 1)
"$gantry" train "${graphs[@]}" "${common[@]}" --stage il --imitate pick --episodes 16000 --batch 8 --lr 3e-3
"$gantry" train "${graphs[@]}" "${common[@]}" --stage sim --init default --budget 150s --batch 16 --lr 1e-3 --save "$out"
echo "wrote $out"
