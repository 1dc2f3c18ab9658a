#!/usr/bin/env bash
# CTest (label k8s): the manifests of `shardflow run --backend k8s --dry-run` against the real control plane
# of tools/k8s-testenv (built on first use, cached).
#   1. every committed scenario's Jobs (--emulate) pass the API server's validation (kubectl apply
#      --dry-run=server);
#   2. an emulated Indexed Job runs on the fake nodes and each index's pod runs the duration the scenario
#      sampled for it (the shardflow.io/duration-ms-by-index annotation read by the KWOK stage), to the
#      second (pod timestamps have one-second resolution).
# Usage: k8s_manifests_server_test.sh SHARDFLOW_EXE SOURCE_DIR
set -euo pipefail
exe=$1
src=$2
name="sf-manifests-$$"
testenv="$src/tools/k8s-testenv"
cleanup() { "$testenv/down" --name "$name" >/dev/null 2>&1 || true; }
trap cleanup EXIT
kubeconfig=$("$testenv/up" --name "$name" --nodes 4 --cpu 16 --memory 64Gi --gpu 4 --label accel=a100 | tail -1)
kubectl=("$("$testenv/build")/kubectl" --kubeconfig "$kubeconfig")
work=$(mktemp -d)
trap 'cleanup; rm -rf "$work"' EXIT

cd "$src"
for s in scenarios/*.yaml scenarios/local/*.yaml; do
  "$exe" run "$s" --backend k8s --dry-run --emulate --run-id check >"$work/m.yaml"
  out=$("${kubectl[@]}" apply --dry-run=server -f "$work/m.yaml" 2>&1) || { echo "FAIL $s: $out"; exit 1; }
  jobs=$(grep -c '^kind: Job$' "$work/m.yaml")
  created=$(grep -c 'created (server dry run)' <<<"$out")
  [ "$jobs" = "$created" ] || { echo "FAIL $s: $jobs Jobs, $created accepted: $out"; exit 1; }
  echo "ok $s: $jobs Jobs accepted by the API server (dry run)"
done

# An Indexed Job of 6 pods with sampled durations of about 1 to 6 s, all at once.
"$exe" run scenarios/argo-parallelism-limit.yaml --backend k8s --dry-run --emulate --run-id idx \
  --set 'pipeline.steps[0].parallel_for={count: 6, parallelism: 6}' \
  --set 'pipeline.steps[0].duration={base: 3s, noise: {lognormal_sigma: 0.5}}' >"$work/a.yaml"
want=$(sed -n 's/.*shardflow.io\/duration-ms-by-index: "\(.*\)"/\1/p' "$work/a.yaml")
[ -n "$want" ] || { echo "FAIL: no duration-ms-by-index annotation"; exit 1; }
"${kubectl[@]}" apply -f "$work/a.yaml" >/dev/null
"${kubectl[@]}" wait --for=condition=Complete job/sf-idx-sleep --timeout=120s >/dev/null
"${kubectl[@]}" get pods -l shardflow.io/run=idx -o json >"$work/pods.json"
python3 - "$work/pods.json" "$want" <<'PY'
import datetime, json, sys
pods = json.load(open(sys.argv[1]))["items"]
want = [int(x) for x in sys.argv[2].split(",")]
parse = lambda s: datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ")
seen = {}
for p in pods:
    i = int(p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"])
    t = p["status"]["containerStatuses"][0]["state"]["terminated"]
    seen[i] = (parse(t["finishedAt"]) - parse(t["startedAt"])).total_seconds()
assert sorted(seen) == list(range(len(want))), f"indexes {sorted(seen)}, want 0..{len(want) - 1}"
for i, ms in enumerate(want):
    # Timestamps are whole seconds: the measured span is within 1 s of the sampled duration.
    assert abs(seen[i] - ms / 1000) <= 1.0, f"index {i}: ran {seen[i]} s, sampled {ms} ms"
    print(f"ok index {i}: sampled {ms} ms, ran {seen[i]:.0f} s")
PY
echo "PASS"
