#!/usr/bin/env bash
# End to end with a real client: the Kubeflow Pipelines SDK (build/kfp-venv, from scripts/setup --kfp)
# compiles scenarios/kfp/shard_preprocess_train.py, then shardflow plans the compiled file: kfp_sdk_check
# (tests/cli/kfp_sdk_check.cpp) checks its shape against the Python source, and `simulate` and
# `sweep` run it with the model overlay, as docs/kfp-import.md shows.
#   kfp_sdk_test.sh SOURCE_DIR SHARDFLOW KFP_SDK_CHECK
# Exit 77 (CTest: skipped) when the SDK is not installed.
set -euo pipefail
src=$1 shardflow=$2 check=$3
py=$src/build/kfp-venv/bin/python
want=$(sed -n 's/^KFP_VERSION=//p' "$src/scripts/setup")
have=$("$py" -c 'import kfp; print(kfp.__version__)' 2>/dev/null || true)
if [ "$have" != "$want" ]; then
  echo "kfp $want is not in build/kfp-venv (found: ${have:-none}); run scripts/setup --kfp" >&2
  exit 77
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

"$py" "$src/scenarios/kfp/shard_preprocess_train.py" "$out/pipeline.yaml"
grep -q '^sdkVersion: kfp-'"$want"'$' "$out/pipeline.yaml"
SHARDFLOW_KFP_COMPILED=$out/pipeline.yaml "$check"

model=$src/scenarios/kfp/shard_preprocess_train.model.yaml
"$shardflow" simulate "$out/pipeline.yaml" --overlay "$model" --out "$out/sim" -q 2> "$out/stderr"
# Every component has a model and the overlay gives the cluster: nothing to warn about.
if [ -s "$out/stderr" ]; then cat "$out/stderr" >&2; exit 1; fi
# The same pipeline written as a scenario (scenarios/shard-preprocess-train.yaml) simulates the same, once
# its aggregate and train steps get the images the Python components name: the scheduler's ImageLocality
# and the image pulls see them.
"$shardflow" simulate "$src/scenarios/shard-preprocess-train.yaml" --out "$out/yaml" -q \
  --set 'pipeline.steps[aggregate].image=ghcr.io/acme/aggregate:1.2' \
  --set 'pipeline.steps[train].image=ghcr.io/acme/train:1.2'
python3 - "$out/sim/metrics.json" "$out/yaml/metrics.json" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
for key in ("makespan_s", "cost", "attempts", "tasks_failed"):
    if a[key] != b[key]:
        sys.exit(f"{key}: compiled pipeline {a[key]}, scenario {b[key]}")
PY
"$shardflow" sweep "$out/pipeline.yaml" --overlay "$model" --vary 'cluster.node_pools[cpu].count=10,20' \
  -r 2 --out "$out/sweep" -q
test -s "$out/sweep/sweep.csv"
# Without the overlay it still runs, on the default cluster and durations, and says so once each.
"$shardflow" simulate "$out/pipeline.yaml" --out "$out/default" -q 2> "$out/stderr"
test "$(grep -c 'warning: no cluster given' "$out/stderr")" = 1
test "$(grep -c 'has no duration model' "$out/stderr")" = 3
# explain shows the loop that --set pipeline.steps[for-loop-2].parallel_for.parallelism changes, with its
# 100 items and the ParallelFor's parallelism=50, in the table and in --json.
"$shardflow" explain "$out/pipeline.yaml" --overlay "$model" > "$out/explain.txt"
grep -qx '  for-loop-2                     -      100          50  group' "$out/explain.txt" ||
  { cat "$out/explain.txt" >&2; exit 1; }
"$shardflow" explain --json "$out/pipeline.yaml" --overlay "$model" > "$out/explain.json"
python3 - "$out/explain.json" <<'PY'
import json, sys
groups = {g["path"]: g for g in json.load(open(sys.argv[1]))["groups"]}
want = {"path": "for-loop-2", "instances": 100, "loop_count": 100, "parallelism": 50, "group_parallelism": 0}
if groups.get("for-loop-2") != want:
    sys.exit(f"explain --json: for-loop-2 is {groups.get('for-loop-2')}, want {want}")
PY
echo "ok: kfp $have compiled the seed pipeline; shardflow planned, explained, simulated and swept it"
