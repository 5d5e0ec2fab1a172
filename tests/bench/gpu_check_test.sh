#!/usr/bin/env bash
# bench/gpu-check.sh runs only where a GPU is lent, rarely: this runs it here on the CPU backend
# (SMALL graphs, the partitions left out), so that a change that breaks it shows in CI instead of
# on the GPU machine. Usage: gpu_check_test.sh GANTRY GANTRY_EXEC
set -euo pipefail
gantry=${1:?usage: gpu_check_test.sh GANTRY GANTRY_EXEC}
exec_binary=${2:?usage: gpu_check_test.sh GANTRY GANTRY_EXEC}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/out"
touch "$work/log"
fail() { cat "$work/log"; echo "FAIL: $1"; exit 1; }

GANTRY=$gantry SMALL=1 bash "$root/bench/gpu-check.sh" prepare "$work/dir" > /dev/null
OUT=$work/out SMALL=1 BACKEND=cpu EXEC=$exec_binary bash "$root/bench/gpu-check.sh" run "$work/dir" > "$work/log" 2>&1 ||
  { cat "$work/log"; echo "FAIL: gpu-check.sh run exited non-zero"; exit 1; }

# Four check graphs on five placements each (one device; round-robin and HEFT on 2 and 4), values
# compared with one CPU device; one SMALL timing graph on the same five, and on one device with 4 streams.
[ "$(grep -c '^check-.*values match: True' "$work/log")" -eq 20 ] || fail "expected 20 matching check lines"
[ "$(grep -c '^time-' "$work/log")" -eq 6 ] || fail "expected 6 timing lines"
! grep -q 'FAILED' "$work/log" || fail "a run failed"
# The timing set again through one server: five placements, twice.
grep -q '^serve: 10/10 requests answered ok by one server' "$work/log" || fail "the server did not answer 10 of 10"
[ "$(grep -c '^serve-.*(one-shot' "$work/log")" -eq 10 ] || fail "expected 10 served runs beside their one-shot runs"
# Everything comes back in one file, with the one-device run's profile samples.
tar -tzf "$work/out/gpu-check-out.tar.gz" > "$work/files" || fail "no tarball of the measurements"
grep -q 'out/time-g1-d1-single.profiles.json' "$work/files" || fail "no profile samples in the tarball"
[ "$(grep -c '\.json$' "$work/files")" -ge 27 ] || fail "measurements missing from the tarball"
# What `gantry bench partitions` makes of them: the four partitioned timings (2 and 4 devices, two
# placements) predicted, all on streams (the SM partitions are a GPU's).
mkdir -p "$work/back"
tar -xzf "$work/out/gpu-check-out.tar.gz" -C "$work/back"
"$gantry" bench partitions --cases "$work/dir/cases" --runs "$work/back/out" -f json > "$work/partitions.json" ||
  fail "bench partitions failed"
python3 - "$work/partitions.json" <<'PY' || fail "bench partitions: not the four streams runs"
import json, sys
r = json.load(open(sys.argv[1]))
assert len(r["rows"]) == 4, r["rows"]
assert sorted((row["devices"], row["placement"]) for row in r["rows"]) == [(2, "heft"), (2, "round-robin"), (4, "heft"), (4, "round-robin")]
assert [m["mode"] for m in r["modes"]] == ["streams"] and r["modes"][0]["runs"] == 4
assert all(row["measured"] > 0 and row["in_sample"] > 0 for row in r["rows"])
PY
# Given an SM run of 4 and a run of one of 4 SM sets alone (copies of CPU runs standing in for the
# GPU's), that run is costed from the lone set's times, as its own kind.
cp "$work/back/out/time-g1-d4-heft.json" "$work/back/out/time-g1-d4-heft-sms.json"
cp "$work/back/out/time-g1-d1-single.json" "$work/back/out/time-g1-d1-single-sms-of4.json"
"$gantry" bench partitions --cases "$work/dir/cases" --runs "$work/back/out" -f json > "$work/partitions.json" ||
  fail "bench partitions with SM runs failed"
python3 - "$work/partitions.json" <<'PY' || fail "bench partitions: the SM run is not costed from the lone set"
import json, sys
r = json.load(open(sys.argv[1]))
assert [(m["mode"], m["runs"]) for m in r["modes"]] == [("streams", 4), ("sms-of4", 1)], r["modes"]
PY
! "$gantry" bench partitions --cases "$work/nowhere" --runs "$work/back/out" 2> "$work/err" || fail "no cases, yet it ran"
grep -q "no graphs in $work/nowhere/time" "$work/err" || fail "bench partitions did not name the missing cases"
echo "gpu-check.sh dry run: 20 checks, 6 timings, profiles, partitions: ok"
