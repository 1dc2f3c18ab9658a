#!/usr/bin/env bash
# CTest (label k8s): `shardflow sweep --emit-job N --image IMAGE` writes manifests (a ConfigMap, a claim and
# an Indexed Job) that the real API server of tools/k8s-testenv accepts (kubectl apply --dry-run=server),
# with completions N and each pod's --shard $(JOB_COMPLETION_INDEX)/N.
# Usage: k8s_sweep_job_test.sh SHARDFLOW_EXE SOURCE_DIR
set -euo pipefail
exe=$1
src=$2
name="plan-sweepjob-$$"
testenv="$src/tools/k8s-testenv"
work=$(mktemp -d)
cleanup() { "$testenv/down" --name "$name" >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT
kubeconfig=$("$testenv/up" --name "$name" --nodes 1 --cpu 16 --memory 64Gi | tail -1)
kubectl=("$("$testenv/build")/kubectl" --kubeconfig "$kubeconfig")

cd "$src"
"$exe" sweep scenarios/shard-preprocess-train.yaml --vary 'cluster.node_pools[cpu].count=10,20,40' \
  --vary 'pipeline.steps[preprocess].parallel_for.parallelism=25,50,100' -r 20 --deadline 1h30m \
  --overlay scenarios/local-overlays/shard-preprocess-train.yaml \
  --emit-job 3 --image registry.example/shardflow:1 --out "$work/job" >"$work/out.txt"
m="$work/job/sweep-job.yaml"
[ -s "$m" ] || { echo "FAIL: no sweep-job.yaml"; cat "$work/out.txt"; exit 1; }
out=$("${kubectl[@]}" apply --dry-run=server -f "$m" 2>&1) || { echo "FAIL: $out"; exit 1; }
echo "$out"
for kind in configmap persistentvolumeclaim job.batch; do
  grep -q "^$kind/.* created (server dry run)$" <<<"$out" || { echo "FAIL: no $kind accepted"; exit 1; }
done
# What the server would store: an Indexed Job of 3 completions whose pods run slice INDEX/3.
"${kubectl[@]}" apply --dry-run=server -f "$m" -o json >"$work/objects.json"
python3 - "$work/objects.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
items = doc["items"] if doc.get("kind") == "List" else [doc]
job = next(i for i in items if i["kind"] == "Job")
assert job["spec"]["completionMode"] == "Indexed", job["spec"]
assert job["spec"]["completions"] == 3 and job["spec"]["parallelism"] == 3
c = job["spec"]["template"]["spec"]["containers"][0]
args = c["args"]
assert args[:2] == ["sweep", "/sweep/input/scenario.yaml"], args
assert args[args.index("--shard") + 1] == "$(JOB_COMPLETION_INDEX)/3", args
assert args[args.index("--out") + 1] == "/sweep/results/shard-$(JOB_COMPLETION_INDEX)", args
assert args[args.index("--overlay") + 1] == "/sweep/input/overlay-0.yaml", args
cm = next(i for i in items if i["kind"] == "ConfigMap")
assert sorted(cm["data"]) == ["overlay-0.yaml", "scenario.yaml"], sorted(cm["data"])
assert cm["data"]["scenario.yaml"] == open("scenarios/shard-preprocess-train.yaml").read()
print("ok: Indexed Job of 3, args", " ".join(args))
PY
# Bad input: --emit-job without --image.
if "$exe" sweep scenarios/argo-parallelism-limit.yaml --vary 'pipeline.steps[sleep].parallel_for.parallelism=1,2' \
    --emit-job 2 --out "$work/bad" 2>"$work/err"; then
  echo "FAIL: --emit-job without --image succeeded"; exit 1
fi
[ "$(cat "$work/err")" = "--image: --emit-job needs the image to run (--image IMAGE)" ] || {
  echo "FAIL: $(cat "$work/err")"; exit 1; }
# Bad input: an --image that is no image reference.
if "$exe" sweep scenarios/argo-parallelism-limit.yaml --vary 'pipeline.steps[sleep].parallel_for.parallelism=1,2' \
    --emit-job 2 --image 'ghcr.io/acme/sweep:1
' --out "$work/bad" 2>"$work/err"; then
  echo "FAIL: --emit-job with an image with a line break succeeded"; exit 1
fi
[ "$(cat "$work/err")" = '--image: "ghcr.io/acme/sweep:1\x0a" is not an image reference ([REGISTRY[:PORT]/]NAME[:TAG][@DIGEST]): it has a line break' ] || {
  echo "FAIL: $(cat "$work/err")"; exit 1; }
echo "PASS"
