#!/usr/bin/env bash
# How much room the critical-path teacher leaves on this machine's CPU devices: for llama-block
# graphs of thirteen sizes, the teacher's makespan, the best a 5-second search finds, and the lower
# bound (work / devices, or the critical path), all on profiles measured here first. Stage III's
# target asks for a policy 10% below the teacher; where the teacher is within a few percent of the
# bound, no placement can be.
#   usage: bench/teacher-gap.sh [GANTRY] [PROFILE_STORE]   (a store from `gantry profile`; default: profile first)
set -euo pipefail
gantry=${1:-./build/gantry}
store=${2:-}
cluster=cpu-2
if [[ -z "$store" ]]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  store=$tmp/store
  echo "profiling $cluster ..." >&2
  "$gantry" profile --cluster "$cluster" --data "$store" > /dev/null
fi
printf "%-62s %10s %10s %10s %8s %10s\n" "llama-block" "cp" "search" "bound" "cp/bound" "search/cp"
while read -r spec; do
  "$gantry" place --workload "llama-block:$spec,dtype_bytes=4" --cluster "$cluster" --method cp,search --budget 5s \
    --profiled --data "$store" -f json | python3 -c '
import json, sys
rows = {r["method"]: r for r in json.load(sys.stdin)}
cp, search, bound = rows["cp"]["makespan"], rows["search"]["makespan"], rows["cp"]["lower_bound"]
print("%-62s %8.3f ms %7.3f ms %7.3f ms %+7.1f%% %+9.1f%%" % (sys.argv[1], 1e3 * cp, 1e3 * search, 1e3 * bound,
      100 * (cp / bound - 1), 100 * (search / cp - 1)))' "$spec"
done <<'SIZES'
blocks=4,seq=512,hidden=640,heads=10,ffn=1728
blocks=2,seq=256,hidden=256,heads=4,ffn=688
blocks=4,seq=128,hidden=256,heads=4,ffn=688
blocks=8,seq=256,hidden=256,heads=8,ffn=688
blocks=3,seq=1024,hidden=512,heads=8,ffn=1376
blocks=6,seq=384,hidden=384,heads=6,ffn=1024
blocks=2,seq=2048,hidden=256,heads=4,ffn=688
blocks=4,seq=2048,hidden=256,heads=4,ffn=688,fused_attention=0
blocks=8,seq=64,hidden=128,heads=8,ffn=344
blocks=5,seq=640,hidden=320,heads=5,ffn=864
blocks=8,seq=1024,hidden=128,heads=8,ffn=344
blocks=8,seq=128,hidden=256,heads=8,ffn=688
blocks=8,seq=256,hidden=128,heads=8,ffn=344
SIZES
