#!/usr/bin/env bash
# CTest (label k8s): the prediction of reports/k8s-prediction.md for two shapes. The nested shape (a looped
# group with group parallelism, tests/kube/scenarios/nested.yaml) and many-jobs (20 one-pod Jobs, 10 at
# once: the Job controller's API rate limit decides it) run once each with `run --backend k8s --emulate` on
# a tools/k8s-testenv cluster and are simulated with the kwok-testenv preset
# (scripts/k8s-prediction-report); each predicted makespan must be within 10% of the measured one.
# Usage: k8s_prediction_test.sh SHARDFLOW_EXE SOURCE_DIR
set -euo pipefail
exe=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$src/scripts/k8s-prediction-report" --exe "$exe" --shapes "many-jobs nested" --runs 1 --out "$work" --report - >"$work/log" 2>&1 ||
  { echo "FAIL: scripts/k8s-prediction-report:"; cat "$work/log"; exit 1; }
python3 - "$work/results.jsonl" <<'PY'
import json, sys
for r in (json.loads(l) for l in open(sys.argv[1])):
    if r["exit"] != 0 or r["measured_s"] is None:
        sys.exit("FAIL: %s run %d: exit %d" % (r["shape"], r["run"], r["exit"]))
    err = (r["predicted_s"] - r["measured_s"]) / r["measured_s"] * 100
    msg = "%s run %d: measured %.2f s, predicted %.2f s (%+.1f%%, load %s)" % (
        r["shape"], r["run"], r["measured_s"], r["predicted_s"], err, r["load"])
    if abs(err) > 10:
        sys.exit("FAIL: " + msg + ": more than 10% off")
    print("ok " + msg)
print("PASS")
PY
