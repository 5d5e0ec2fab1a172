#!/usr/bin/env bash
# The pipeline co-tuner against the exact optimum (branch and bound over every partition,
# stage-to-device map with up to 2 stages per device and per-device order) on small generated
# models: Llama, Nemotron-H and Jamba layer mixes with the real layer sizes but few layers, 2 to 4
# devices of 8xH100-nvswitch, 3 to 6 microbatches. Prints the tuner's gap to the optimum and both
# times (the exact search starts cold, without the tuner's time as its bound: how long it takes
# alone). The last cases of the first block take the exact search seconds to a minute. The second
# block limits memory so that it binds (the exact search then also tries recomputation per device,
# and takes far longer: its bound is the work left); there the tuner may offload activations,
# which the exact search does not, and a negative gap means it beat the optimum without offload.
# One run each; python3.
#   usage: bench/pipeline-exact.sh [TIME_LIMIT] [GANTRY]      (TIME_LIMIT per case, default 120s)
set -euo pipefail
limit=${1:-120s}
gantry=${2:-./build/gantry}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/llama-2l.json" <<'JSON'
{"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
 "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 2, "vocab_size": 32000}
JSON
cat >"$dir/nemotron-h-7l.json" <<'JSON'
{"architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h", "hidden_size": 4096, "intermediate_size": 21504,
 "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 7, "hybrid_override_pattern": "M-M*-M-",
 "mamba_num_heads": 128, "mamba_head_dim": 64, "ssm_state_size": 128, "n_groups": 8, "conv_kernel": 4,
 "vocab_size": 131072, "head_dim": 128}
JSON
cat >"$dir/jamba-4l.json" <<'JSON'
{"architectures": ["JambaForCausalLM"], "model_type": "jamba", "hidden_size": 4096, "intermediate_size": 14336,
 "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 4, "attn_layer_period": 4,
 "attn_layer_offset": 2, "expert_layer_period": 2, "expert_layer_offset": 1, "num_experts": 16,
 "num_experts_per_tok": 2, "mamba_d_state": 16, "mamba_d_conv": 4, "mamba_expand": 2, "vocab_size": 65536}
JSON
printf "%-22s %3s %3s  %12s %12s %8s  %9s %9s %9s  %s\n" model pp m tuned optimum gap "tuner s" "exact s" speedup search
while read -r model pp m memory; do
  [[ -z "$model" ]] && continue
  memory_flag=()
  [[ -n "${memory:-}" ]] && memory_flag=(--mem-limit "$memory")
  "$gantry" pipeline tune --hf-config "$dir/$model.json" --pp "$pp" --microbatches "$m" --max-chunks 2 --exact "$limit" --exact-cold \
    "${memory_flag[@]}" --no-store -f json | python3 -c '
import json, sys
model, pp, m, memory = sys.argv[1:5]
j = json.load(sys.stdin)
e, t = j["exact"], j["tuned"]
speed = e["seconds"] / e["tuner_seconds"] if e["tuner_seconds"] > 0 else float("inf")
fits = t["completed"] and not t["out_of_memory"]
gap = 100 * (t["iteration_time"] / e["optimum"] - 1) if fits and e["optimum"] > 0 else float("nan")
label = model + (" " + memory if memory else "")
print("%-22s %3s %3s  %12s %10.3fms %7.2f%%  %9.4f %9.3f %8.0fx  %s%s" % (label, pp, m,
      "%.3fms" % (1e3 * t["iteration_time"]) if fits else "none fits", 1e3 * e["optimum"], gap, e["tuner_seconds"],
      e["seconds"], speed, "finished" if e["finished"] else "UNFINISHED (gap to the best found)",
      ", recomputing stages %s" % e["recompute"] if e["recompute"] else ""))' "$model" "$pp" "$m" "${memory:-}"
done <<'CASES'
llama-2l 2 4
llama-2l 3 6
nemotron-h-7l 2 4
nemotron-h-7l 2 6
nemotron-h-7l 3 3
nemotron-h-7l 3 6
nemotron-h-7l 4 4
nemotron-h-7l 4 5
nemotron-h-7l 4 6
jamba-4l 2 4
jamba-4l 3 3
jamba-4l 3 6
jamba-4l 4 4

llama-2l 2 3 7.5GiB
llama-2l 2 3 7GiB
llama-2l 2 4 8GiB
llama-2l 2 4 7.5GiB
llama-2l 2 6 8GiB
nemotron-h-7l 2 3 22GiB
nemotron-h-7l 2 3 21GiB
nemotron-h-7l 2 3 20GiB
CASES
