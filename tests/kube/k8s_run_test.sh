#!/usr/bin/env bash
# CTest (label k8s): `shardflow run --backend k8s` end to end against the real control plane of
# tools/k8s-testenv (20 KWOK nodes with 4 GPUs each, labelled accel=a100). Scenarios: tests/kube/scenarios.
#   a. the seed scenario's shape (200 shards at most 20 at once, fan-in, a sweep of 3 on GPU nodes) and a
#      looped group with group parallelism run to completion under --emulate and hold their limits
#      (k8s_run_check.py reads the traces);
#   b. retries: the indexes sampled to fail are retried up to the limit, the run names exactly those
#      (exit 1), the trace has every attempt, the API server has one pod per attempt;
#   c. cleanup: after a run nothing with its label is left; after a --keep run, `k8s cleanup` leaves
#      nothing; `k8s status` tells both states;
#   e. resume: the controller is killed (SIGKILL) in the middle of a loop; `run --resume DIR` finishes
#      the run, and each index completed exactly once (trace and API server);
#   h. Ctrl-C (SIGINT) in the middle of a loop: exit 130, the shards not done reported unfinished (counted
#      in tasks failed), their attempts cancelled, the objects left for `k8s cleanup`;
#   i. a pod deleted in the middle of a loop: it ends Failed, its task is retried, the run finishes;
#   f. faults: through tools/k8s-testenv/faultproxy (429 with Retry-After, 500, 503, watch streams cut in
#      the middle of an event, a 410 Gone on a watch) the nested run finishes with the same tasks done;
#      API requests per task of the runs are printed (run.json's count; the proxy's count);
#   g. the API server away for 45 s in the middle of a run (the proxy closes every connection): the run
#      says so, waits, makes the Job it could not, says the server is back and finishes the same tasks;
#   d. bad input on the real server: a namespace that does not exist, a step no node can hold, a wrong
#      token (one error line each, non-zero exit, the token never printed).
# Usage: k8s_run_test.sh SHARDFLOW_EXE SOURCE_DIR
set -euo pipefail
exe=$1
src=$2
name="k8sb-run-$$"
testenv="$src/tools/k8s-testenv"
work=$(mktemp -d)
proxy_pid=
cleanup() {
  [ -z "$proxy_pid" ] || kill "$proxy_pid" 2>/dev/null || true
  "$testenv/down" --name "$name" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
kc=$("$testenv/up" --name "$name" --nodes 20 --cpu 16 --memory 64Gi --gpu 4 --label accel=a100 | tail -1)
kubectl=("$("$testenv/build")/kubectl" --kubeconfig "$kc")
check="python3 $src/tests/kube/k8s_run_check.py"
scen="$src/tests/kube/scenarios"
run() { "$exe" run "$@" --backend k8s --emulate --kubeconfig "$kc"; }
# Nothing with the label $1 in the namespace, within 60 s (the garbage collector works in the background).
gone() {
  for _ in $(seq 120); do
    left=$("${kubectl[@]}" get jobs,pods,configmaps -l "shardflow.io/run=$1" -o name 2>/dev/null | wc -l)
    [ "$left" = 0 ] && return 0
    sleep 0.5
  done
  echo "FAIL: $left objects of run $1 are left:"; "${kubectl[@]}" get jobs,pods,configmaps -l "shardflow.io/run=$1"
  return 1
}

# a. The seed shape and the nested shape.
"${kubectl[@]}" get nodes -o json >"$work/nodes.json"
t0=$SECONDS
run "$scen/seed-shape.yaml" --run-id seed --out "$work/seed" >"$work/seed.out" 2>"$work/seed.err" ||
  { echo "FAIL: seed-shape exit $?"; cat "$work/seed.out" "$work/seed.err"; exit 1; }
echo "ok seed-shape ran in $((SECONDS - t0)) s: $(grep -m1 makespan "$work/seed.out")"
grep -q "tasks done" "$work/seed.err" || { echo "FAIL: no progress line on stderr"; exit 1; }
$check seed-shape "$work/seed/trace.json" "$work/nodes.json"
for f in trace.json trace.csv metrics.json metrics.csv timeline.json run.json; do
  [ -s "$work/seed/$f" ] || { echo "FAIL: no $f"; exit 1; }
done
run "$scen/nested.yaml" --run-id nested --out "$work/nested" >"$work/nested.out" 2>&1 ||
  { echo "FAIL: nested exit $?"; cat "$work/nested.out"; exit 1; }
$check nested "$work/nested/trace.json"

# c (first half). A finished run leaves nothing.
gone seed && gone nested && echo "ok after the runs, nothing with their labels is left (jobs, pods, configmaps)"

# b. Retries: the indexes whose sampled attempt 0 fails (the emulated pods fail on every attempt).
fails=$("$exe" run "$scen/retries.yaml" --backend k8s --dry-run --emulate --run-id x |
        sed -n 's/.*shardflow.io\/fail-indexes: "\(.*\)"/\1/p')
[ -n "$fails" ] || { echo "FAIL: the retries scenario samples no failure"; exit 1; }
set +e
run "$src/tests/kube/scenarios/retries.yaml" --run-id retries --keep --out "$work/retries" >"$work/retries.out" 2>&1
rc=$?
set -e
[ $rc = 1 ] || { echo "FAIL: retries exit $rc, want 1"; cat "$work/retries.out"; exit 1; }
want=$(tr ',' '\n' <<<"$fails" | sed 's/.*/flaky[&] (3 attempts)/' | paste -sd, | sed 's/,/, /g')
got=$(sed -n 's/^  failed tasks //p' "$work/retries.out")
[ "$got" = "$want" ] || { echo "FAIL: failed tasks \"$got\", want \"$want\""; cat "$work/retries.out"; exit 1; }
echo "ok retries: exit 1, the run names exactly the exhausted indexes: $got"
# The prediction includes the tasks that fail their runs (only a pod that fits no node leaves none).
grep -q "^k8s run retries: .* tasks; the simulator predicts [0-9]" "$work/retries.out" ||
  { echo "FAIL: no prediction for a run with failing tasks:"; head -3 "$work/retries.out"; exit 1; }
$check retries "$work/retries/trace.json" "$fails"
# Progress comes every 5 s even while nothing moves (the retries' 10 s backoffs), and its last line, all
# tasks resolved, has ETA 0s.
python3 - "$work/retries.out" <<'PY'
import re, sys
lines = [l for l in open(sys.argv[1]) if re.search(r" tasks done, .* elapsed", l)]
def seconds(text):
    total = 0.0
    for n, u in re.findall(r"([0-9.]+)(h|ms|m|s)", text):
        total += float(n) * {"h": 3600, "m": 60, "s": 1, "ms": 0.001}[u]
    return total
at = [seconds(re.search(r"; (\S+) elapsed", l).group(1)) for l in lines]
gaps = [b - a for a, b in zip(at, at[1:])]
if not lines or max(gaps, default=0) > 6.5 or not lines[-1].rstrip().endswith("ETA 0s"):
    sys.exit("FAIL: progress lines %s apart (want at most ~5 s), last %r" % (gaps, lines[-1:] ))
print("ok progress: %d lines, at most %.1f s apart through the retries' backoffs; the last says ETA 0s"
      % (len(lines), max(gaps, default=0)))
PY
pods=$("${kubectl[@]}" get pods -l shardflow.io/run=retries -o name | wc -l)
attempts=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['attempts']))" "$work/retries/trace.json")
[ "$pods" = "$attempts" ] || { echo "FAIL: $pods pods on the API server, $attempts attempts in the trace"; exit 1; }
echo "ok the API server has one pod per attempt of the trace ($pods)"

# A second run with the kept run's id is refused before it writes anything: its run file would let
# `run --resume` take the kept run over and delete its objects.
set +e
run "$src/tests/kube/scenarios/retries.yaml" --run-id retries --out "$work/dup" >"$work/dup.out" 2>&1
rc=$?
set -e
[ $rc = 2 ] || { echo "FAIL: a second run with id retries: exit $rc, want 2"; cat "$work/dup.out"; exit 1; }
grep -q "^--run-id retries: a run with this id exists already in namespace default" "$work/dup.out" ||
  { echo "FAIL: duplicate id said:"; cat "$work/dup.out"; exit 1; }
[ ! -e "$work/dup/run.json" ] || { echo "FAIL: the refused run wrote $work/dup/run.json"; exit 1; }
if "$exe" run --resume "$work/dup" >"$work/dup-resume.out" 2>&1; then
  echo "FAIL: run --resume of the refused run succeeded"; exit 1
fi
pods=$("${kubectl[@]}" get pods -l shardflow.io/run=retries -o name | wc -l)
[ "$pods" = "$attempts" ] || { echo "FAIL: the kept run has $pods pods after the refused one, want $attempts"; exit 1; }
echo "ok a second run with a kept run's id is refused (exit 2), writes no run file, and leaves the kept run alone"
# ... and a run with another id is refused the kept run's --out (its run.json is how `k8s status` and `run
# --resume` reach the kept run), with the cleanup command that reaches the same cluster.
set +e
run "$src/tests/kube/scenarios/retries.yaml" --run-id other --out "$work/retries" >"$work/reuse.out" 2>&1
rc=$?
set -e
[ $rc = 2 ] || { echo "FAIL: a run into the kept run's --out: exit $rc, want 2"; cat "$work/reuse.out"; exit 1; }
grep -qF "$work/retries/run.json belongs to run retries (finished, kept), whose objects may still be on the cluster" "$work/reuse.out" &&
  grep -qF "(shardflow k8s cleanup retries --kubeconfig $kc --context " "$work/reuse.out" ||
  { echo "FAIL: a run into the kept run's --out said:"; cat "$work/reuse.out"; exit 1; }
[ "$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["run_id"])' "$work/retries/run.json")" = retries ] ||
  { echo "FAIL: the refused run changed the kept run's run.json"; exit 1; }
echo "ok a run into a kept run's --out is refused (exit 2) and leaves its run.json"

# c (second half). A kept run is there until `k8s cleanup`; `k8s status` tells both.
"$exe" k8s status "$work/retries" >"$work/status1.out"
grep -q "cluster .* Jobs" "$work/status1.out" || { echo "FAIL: status of a kept run:"; cat "$work/status1.out"; exit 1; }
"$exe" k8s cleanup retries --kubeconfig "$kc" >"$work/cleanup.out"
grep -q "nothing with its label is left" "$work/cleanup.out" || { echo "FAIL: cleanup said:"; cat "$work/cleanup.out"; exit 1; }
gone retries
"$exe" k8s status "$work/retries" >"$work/status2.out"
grep -q "nothing with the label shardflow.io/run=retries is left" "$work/status2.out" ||
  { echo "FAIL: status after cleanup:"; cat "$work/status2.out"; exit 1; }
echo "ok k8s cleanup retries: nothing with its label is left (checked with kubectl); k8s status says so"

# Starts resume.yaml (a loop of 60 shards, 10 at once) as run ID in the background, its output in OUT,
# and waits until 15 shards have succeeded (at most 60 s): sets pid and n (the shards done).
# Not through run(): `run ... &` is a subshell whose kill would leave shardflow running, still writing to
# $work/ID while a later run does (here the subshell execs it: the pid is shardflow's). Started in the
# kubeconfig's directory with --kubeconfig relative to it: `run --resume` and `k8s status`, from here, must
# still find it (run.json records it as an absolute path).
start_loop() {  # start_loop ID OUT [RUN FLAGS...]
  local id=$1 out=$2
  shift 2
  (cd "$(dirname "$kc")" && exec "$exe" run "$scen/resume.yaml" --backend k8s --emulate \
    --kubeconfig "$(basename "$kc")" --run-id "$id" --out "$work/$id" "$@" >"$out" 2>&1) &
  pid=$!
  n=0
  for _ in $(seq 240); do
    n=$("${kubectl[@]}" get pods -l "shardflow.io/run=$id" --field-selector=status.phase=Succeeded -o name | wc -l)
    [ "$n" -ge 15 ] && break
    sleep 0.25
  done
}

# e. Resume after SIGKILL in the middle of the loop.
start_loop resume "$work/resume1.out" --keep
kill -KILL "$pid"
wait "$pid" 2>/dev/null || true
! pgrep -f -- "--out $work/resume" >/dev/null || { echo "FAIL: the killed run is still running"; exit 1; }
[ "$n" -ge 15 ] && [ "$n" -lt 60 ] || { echo "FAIL: $n shards done when the controller was killed"; exit 1; }
echo "ok controller killed (SIGKILL) with $n of 60 shards done"
[ "$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["kubeconfig"])' "$work/resume/run.json")" = "$kc" ] ||
  { echo "FAIL: run.json does not record the relative --kubeconfig as $kc"; cat "$work/resume/run.json"; exit 1; }
"$exe" k8s status "$work/resume" >"$work/resume-status.out" 2>&1 ||
  { echo "FAIL: k8s status of the killed run, from another directory: exit $?"; cat "$work/resume-status.out"; exit 1; }
sleep 2  # the Job controller goes on without it
# The pod times the killed run took from its clock, journaled as they came (the resumed run keeps them).
[ -s "$work/resume/pods.jsonl" ] || { echo "FAIL: the killed run left no pods.jsonl"; ls -la "$work/resume"; exit 1; }
cp "$work/resume/pods.jsonl" "$work/resume-journal.jsonl"
"$exe" run --resume "$work/resume" >"$work/resume2.out" 2>&1 || { echo "FAIL: resume exit $?"; cat "$work/resume2.out"; exit 1; }
[ ! -e "$work/resume/pods.jsonl" ] || { echo "FAIL: the finished run left its pods.jsonl"; exit 1; }
echo "ok run --resume: $(grep -m1 '^ran' "$work/resume2.out")"
# Its first progress line counts what the killed run did (it said 0 done: the line came at the first of
# the replayed events).
first=$(grep -m1 -oE '^[0-9]+/61 tasks done' "$work/resume2.out" | cut -d/ -f1)
[ -n "$first" ] && [ "$first" -ge "$n" ] ||
  { echo "FAIL: the resumed run's first progress line says ${first:-no} tasks done, want at least $n:"; cat "$work/resume2.out"; exit 1; }
echo "ok the resumed run's first progress line: $first tasks done (at least the $n done before the kill)"
"${kubectl[@]}" get pods -l shardflow.io/run=resume -o json >"$work/resume-pods.json"
$check resume "$work/resume/trace.json" "$work/resume-pods.json" "$work/resume-journal.jsonl" "$n"
jobs=$("${kubectl[@]}" get jobs -l shardflow.io/run=resume -o name | wc -l)
[ "$jobs" = 2 ] || { echo "FAIL: $jobs Jobs for the resumed run, want 2 (shards, merge)"; exit 1; }
"$exe" k8s cleanup resume --kubeconfig "$kc" >/dev/null
gone resume && echo "ok resumed run: 2 Jobs, each made once; cleaned up"

# h. Ctrl-C in the middle of the loop: exit 130, the shards not done are "unfinished" and the merge after
#    them "never started" (both counted in tasks failed, as the other backends count them), their attempts
#    cancelled; the objects are left for cleanup.
start_loop intr "$work/intr.out"
kill -INT "$pid"
set +e
wait "$pid"
rc=$?
set -e
[ $rc = 130 ] || { echo "FAIL: exit $rc after SIGINT, want 130"; cat "$work/intr.out"; exit 1; }
python3 - "$work/intr/trace.json" "$work/intr.out" <<'PY'
import json, re, sys
trace, out = json.load(open(sys.argv[1])), open(sys.argv[2]).read()
ok = {a["task"] for a in trace["attempts"] if a["outcome"] == "succeeded"}
left = 60 - len(ok)  # shards not done; the merge after them never started
if not 0 < left < 60:
    sys.exit("FAIL: %d of 60 shards done when interrupted" % len(ok))
want = ("\n  unfinished   %d tasks had not finished when the run was interrupted; it ended at " % left,
        ", and 1 after them never started (counted in tasks failed)\n")
if "interrupted: what had not finished is recorded as cancelled" not in out or any(w not in out for w in want):
    sys.exit("FAIL: the interrupted run's summary lacks %r:\n%s" % (want, out))
if "  failed tasks " in out or trace["tasks_failed"] != left + 1:
    sys.exit("FAIL: tasks_failed %d (want the %d unfinished + the merge that never started), or tasks "
             "named as failed:\n%s" % (trace["tasks_failed"], left, out))
bad = [a for a in trace["attempts"] if a["task"] not in ok and a["outcome"] != "cancelled"]
if bad:
    sys.exit("FAIL: attempts of unfinished tasks not cancelled: %s" % bad[:3])
# ETA 0s is for a run whose tasks all ended; an interrupted run's last progress line has no ETA.
eta0 = [l for l in out.splitlines() if re.search(r" tasks done, .*ETA 0s\s*$", l)]
if eta0:
    sys.exit("FAIL: the interrupted run's progress says ETA 0s: %r" % eta0[-1])
print("ok Ctrl-C (SIGINT) with %d of 60 shards done: exit 130, %d unfinished + 1 never started (tasks "
      "failed %d), their attempts cancelled" % (len(ok), left, trace["tasks_failed"]))
PY
grep -q "k8s run intr: its objects are still on the cluster" "$work/intr.out" ||
  { echo "FAIL: the interrupted run does not say its objects are left"; cat "$work/intr.out"; exit 1; }
"$exe" k8s cleanup intr --kubeconfig "$kc" >/dev/null
gone intr && echo "ok interrupted run cleaned up"

# i. A pod deleted in the middle of the loop (kubectl delete pod): the test cluster plays its kubelet (the
#    pod ends Failed, exit code 137), the Job controller counts it and makes another after its backoff; the
#    run finishes with the failed attempt and its retry in the trace (the pod stayed Terminating for ever,
#    and the run with it, before tools/k8s-testenv/stages.yaml's shardflow-pod-kill).
start_loop del "$work/del.out" --set 'pipeline.steps[shards].retries={max: 1}'
victim=
for _ in $(seq 80); do  # the Job controller makes the pods in waves: wait for one to be running (awk, not
  # head: head would end kubectl with SIGPIPE, a failed pipeline under pipefail)
  victim=$("${kubectl[@]}" get pods -l shardflow.io/run=del --field-selector=status.phase=Running -o name | awk "NR == 1")
  [ -n "$victim" ] && break
  sleep 0.1
done
[ -n "$victim" ] || { echo "FAIL: no running pod to delete"; exit 1; }
"${kubectl[@]}" delete "$victim" --wait=false >/dev/null
wait "$pid" || { echo "FAIL: exit $? after a pod was deleted"; cat "$work/del.out"; exit 1; }
python3 - "$work/del/trace.json" "${victim#pod/}" <<'PY'
import json, sys
trace, victim = json.load(open(sys.argv[1])), sys.argv[2]
failed = [a for a in trace["attempts"] if a["outcome"] == "failed"]
if len(failed) != 1 or failed[0].get("error") != "exit code 137 (Error): killed: the pod was deleted":
    sys.exit("FAIL: want one failed attempt, killed: %s" % failed)
t = failed[0]["task"]
retry = [a for a in trace["attempts"] if a["task"] == t and a["attempt"] == 1]
if len(retry) != 1 or retry[0]["kind"] != "retry" or retry[0]["outcome"] != "succeeded":
    sys.exit("FAIL: the deleted pod's task has no successful retry: %s" % retry)
done = {a["task"] for a in trace["attempts"] if a["outcome"] == "succeeded"}
if len(done) != 61 or trace["tasks_failed"] != 0:
    sys.exit("FAIL: %d of 61 tasks done, %d failed" % (len(done), trace["tasks_failed"]))
print("ok pod %s deleted in the middle of the loop: its attempt failed (exit code 137), its retry succeeded, "
      "61 of 61 tasks done" % victim)
PY
gone del && echo "ok the run with a deleted pod left nothing"

# f. Faults between the client and the API server.
(
  # shellcheck source=../../tools/k8s-testenv/lib.sh
  source "$testenv/lib.sh"
  ensure_go
  cd "$testenv/faultproxy" && "${GO[@]}" build -o "$work/faultproxy" .
)
field() { sed -n "s/^ *$1: //p" "$kc" | head -1; }
# start_proxy NAME FLAGS...: the fault proxy in front of the cluster's API server with these faults, its
# output in $work/NAME.out and .err; sets proxy_pid and port (the proxy's, on 127.0.0.1).
start_proxy() {
  local out=$1; shift
  "$work/faultproxy" -upstream "$(field server)" -ca "$(field certificate-authority)" \
    -cert "$(field client-certificate)" -key "$(field client-key)" "$@" >"$work/$out.out" 2>"$work/$out.err" &
  proxy_pid=$!
  for _ in $(seq 100); do grep -qs '^PORT ' "$work/$out.out" && break; sleep 0.1; done
  port=$(sed -n 's/^PORT //p' "$work/$out.out")
  [ -n "$port" ] || { echo "FAIL: faultproxy did not start"; cat "$work/$out.err"; exit 1; }
}
start_proxy proxy -every-429 5 -every-500 7 -every-503 11 -cut-watch-every 2 -gone-watch 3
printf '%s\n' "apiVersion: v1" "kind: Config" "current-context: proxy" \
  "clusters: [{name: proxy, cluster: {server: \"http://127.0.0.1:$port\"}}]" \
  "contexts: [{name: proxy, context: {cluster: proxy, user: none}}]" "users: [{name: none, user: {}}]" \
  >"$work/proxy.kubeconfig"
"$exe" run "$scen/nested.yaml" --backend k8s --emulate --kubeconfig "$work/proxy.kubeconfig" --run-id faults \
  --out "$work/faults" >"$work/faults.out" 2>&1 || { echo "FAIL: exit $? through the proxy"; cat "$work/faults.out"; exit 1; }
$check nested "$work/faults/trace.json"
python3 - "$work/nested/trace.json" "$work/faults/trace.json" "$(python3 -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1]).read().decode())' "http://127.0.0.1:$port/_stats")" <<'PY'
import json, sys
done = lambda f: sorted((a["task"], a["item"]) for a in json.load(open(f))["attempts"] if a["outcome"] == "succeeded")
if done(sys.argv[1]) != done(sys.argv[2]):
    sys.exit("FAIL: the tasks done through the proxy differ from those done without faults")
stats = json.loads(sys.argv[3])
for k in ("429", "500", "503", "watch-cut", "watch-410"):
    if stats["injected"].get(k, 0) < 1:
        sys.exit("FAIL: no %s injected: %s" % (k, stats))
print("ok through the fault proxy the same %d tasks succeeded; injected %s; %d requests (%d watches) "
      "at the proxy" % (len(done(sys.argv[2])), stats["injected"], stats["requests"], stats["watches"]))
PY
kill "$proxy_pid"
proxy_pid=
# g. the API server away in the middle of a run: after the run's first POST of a Job the proxy closes
#    every connection for 45 s (the watches cut, the next Job's POST refused past the client's ~13-25 s
#    of retries); the run says so, makes
#    that Job once the server is back, says that too, and finishes with the same tasks done.
start_proxy away-proxy -away-after-job-posts 1 -away-seconds 45
sed -i "s|http://127.0.0.1:[0-9]*|http://127.0.0.1:$port|" "$work/proxy.kubeconfig"
"$exe" run "$scen/nested.yaml" --backend k8s --emulate --kubeconfig "$work/proxy.kubeconfig" --run-id away \
  --out "$work/away" >"$work/away.out" 2>&1 || { echo "FAIL: exit $? with the server away"; cat "$work/away.out"; exit 1; }
grep -q "^k8s: the API server at http://127.0.0.1:$port does not answer (.*); the run waits for it and carries on when it is back" "$work/away.out" ||
  { echo "FAIL: the run did not say the server was away:"; cat "$work/away.out"; exit 1; }
grep -q "^k8s: the API server at http://127.0.0.1:$port answers again, after [0-9]* s without; the run carries on" "$work/away.out" ||
  { echo "FAIL: the run did not say the server was back:"; cat "$work/away.out"; exit 1; }
$check nested "$work/away/trace.json"
python3 - "$work/nested/trace.json" "$work/away/trace.json" "$(python3 -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1]).read().decode())' "http://127.0.0.1:$port/_stats")" <<'PY'
import json, sys
done = lambda f: sorted((a["task"], a["item"]) for a in json.load(open(f))["attempts"] if a["outcome"] == "succeeded")
if done(sys.argv[1]) != done(sys.argv[2]):
    sys.exit("FAIL: the tasks done with the server away for a while differ from those done without")
stats = json.loads(sys.argv[3])
if stats["injected"].get("away", 0) < 1:
    sys.exit("FAIL: no request found the proxy away: %s" % stats)
print("ok with the server away for 45 s the run said so, waited, and the same %d tasks succeeded (%d requests "
      "found it away)" % (len(done(sys.argv[2])), stats["injected"]["away"]))
PY
grep "^k8s: the API server" "$work/away.out"
kill "$proxy_pid"
proxy_pid=
for r in seed nested faults; do
  python3 - "$work/$r/run.json" "$work/$r/trace.json" "$r" <<'PY'
import json, sys
run, trace = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
tasks = len({a["task"] for a in trace["attempts"]})
print("ok requests %s: %d API requests for %d tasks (%.2f per task), %d re-lists" %
      (sys.argv[3], run["api_requests"], tasks, run["api_requests"] / tasks, run["relists"]))
PY
done

# d. Bad input against the real server: one line on stderr, exit 2, the token never printed.
bad() {  # bad WANT_TEXT ARGS...: the run must fail with exit 2 and one stderr line containing WANT_TEXT
  local want=$1; shift
  set +e
  "$exe" run "$@" --backend k8s --emulate --out "$work/bad" >"$work/bad.out" 2>"$work/bad.err"
  local rc=$?
  set -e
  [ $rc = 2 ] || { echo "FAIL: exit $rc for $*"; cat "$work/bad.out" "$work/bad.err"; exit 1; }
  grep -v "^k8s run " "$work/bad.err" >"$work/bad.lines" || true
  [ "$(wc -l <"$work/bad.lines")" = 1 ] && grep -qF "$want" "$work/bad.lines" ||
    { echo "FAIL: for $*, stderr:"; cat "$work/bad.err"; exit 1; }
  echo "ok $(cat "$work/bad.lines")"
}
bad "namespace nowhere does not exist" "$scen/nested.yaml" --kubeconfig "$kc" --namespace nowhere
bad "no node of the cluster with labels accel=a100 can hold it" "$scen/nested.yaml" --kubeconfig "$kc" \
  --set 'pipeline.steps[0].steps[0].resources={cpu: 64, memory: 1Gi}' \
  --set 'pipeline.steps[0].steps[0].node_selector={accel: a100}' --set 'cluster.node_pools[kwok].cpu=64'
token="wrong-T0KEN-$$-secret"
sed -e '/client-certificate/d' -e '/client-key/d' -e "s|^  user:|  user:\n    token: $token|" "$kc" >"$work/bad-token.kubeconfig"
bad "refused the credentials" "$scen/nested.yaml" --kubeconfig "$work/bad-token.kubeconfig"
if grep -rqF "$token" "$work"/*.out "$work"/*.err "$work"/bad 2>/dev/null; then
  echo "FAIL: the token was printed or written"; exit 1
fi
echo "ok the token appears in no output and no output file"
echo "PASS"
