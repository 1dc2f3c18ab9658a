#!/usr/bin/env python3
"""Writes reports/k8s-prediction.md (to stdout) from scripts/k8s-prediction-report's output directory.
Usage: k8s_prediction_report.py OUT SRC COMMIT LOAD VERSIONS EXE"""
import json
import os
import statistics as st
import sys

out, src, commit, load, versions, exe = sys.argv[1:7]
rows = [json.loads(l) for l in open(os.path.join(out, "results.jsonl"))]
abl = {}
if os.path.exists(os.path.join(out, "ablation.jsonl")):
    for l in open(os.path.join(out, "ablation.jsonl")):
        a = json.loads(l)
        abl[(a["shape"], a["without"])] = a["predicted_s"]
shapes = []
for r in rows:
    if r["shape"] not in shapes:
        shapes.append(r["shape"])

DESC = {
    "seed-shape": "200-item loop, parallelism 20, lognormal run times (1.5 s, sigma 0.3); fan-in (2 s); 3-branch GPU sweep on `accel=a100` (3 s, a Job per item)",
    "nested": "a group looped 4 times, group parallelism 2; in each, a loop of 6 at most 2 at once (1 s), then a step (1 s); then a fan-in (1 s)",
    "many-jobs": "a group looped 20 times, 10 at once, one pod (1 s, sigma 0.2) in each: 20 one-pod Jobs, whose API calls outrun the Job controller's 20 a second; then a fan-in (1 s). Runs after the first on one cluster come later (the last run's cleanup takes the controller's tokens too)",
    "retries": "12 items at once (0.5 s), failure p 0.3, `retries.max` 2: the indexes sampled to fail fail 3 times (Job backoff 10 s, 20 s) and the run ends with exit 1; the dependent step never runs",
}


def step_name(t, s):
    x = t["steps"][s]
    return x["name"] if isinstance(x, dict) else x


def step_ends(trace):
    t = json.load(open(trace))
    ends = {}
    for a in t["attempts"]:
        n = step_name(t, a["step"])
        e = ends.setdefault(n, [1e30, 0.0])
        e[0] = min(e[0], a["submitted"] / 1e9)
        e[1] = max(e[1], a["finished"] / 1e9)
    return ends


p = print
p("# Prediction: `simulate` against `run --backend k8s --emulate` on the test cluster")
p()
p("Regenerate with `scripts/k8s-prediction-report` (about 5 minutes; `--runs N`, `--exe`). Commit %s; "
  "2 cores, load average %s at the end. Test cluster: `tools/k8s-testenv up --nodes 20 --cpu 16 --memory 64Gi "
  "--gpu 4 --label accel=a100` (a cluster `pred-<pid>`, taken down at the end); %s." % (commit, load, versions.strip()))
p()
p("Each shape (`tests/kube/scenarios/SHAPE.yaml`) runs several times with `shardflow run --backend k8s "
  "--emulate` (the release binary) and is simulated once with the same seed (so the same sampled run "
  "times) on the test cluster's shape with the `kwok-testenv` overheads preset "
  "(`--overlay tests/kube/prediction/kwok-testenv.yaml`: `overheads: {preset: kwok-testenv}`). Makespan: "
  "from the run's start (the controller's first request; the simulation's time 0) to its last pod's end, "
  "as `run` and `simulate` print it. Target: within 10%.")
p()
p("| shape | what | runs | measured (s): mean, min-max | spread | predicted (s) | error of the mean | worst run |")
p("|---|---|---|---|---|---|---|---|")
for s in shapes:
    rs = [r for r in rows if r["shape"] == s and r["measured_s"] is not None]
    m = [r["measured_s"] for r in rs]
    pred = rs[0]["predicted_s"]
    mean = st.mean(m)
    err = (pred - mean) / mean * 100
    worst = max(((pred - x) / x * 100 for x in m), key=abs)
    exits = sorted({r["exit"] for r in rs})
    p("| %s | %s | %d (exit %s) | %.2f, %.2f-%.2f | %.1f%% | %.2f | %+.1f%% | %+.1f%% |" % (
        s, DESC.get(s, ""), len(m), "/".join(map(str, exits)), mean, min(m), max(m),
        (max(m) - min(m)) / mean * 100, pred, err, worst))
p()
p("Where the time goes, run 1 against the prediction (each step's first pod created and last pod ended, "
  "seconds from the run's start):")
p()
p("| shape | step | measured first created - last ended | predicted |")
p("|---|---|---|---|")
for s in shapes:
    try:
        me = step_ends(os.path.join(out, s + "-run1", "trace.json"))
        pe = step_ends(os.path.join(out, s + "-sim", "trace.json"))
    except OSError:
        continue
    for n in pe:
        a = me.get(n)
        b = pe[n]
        p("| %s | %s | %s | %.2f - %.2f |" % (s, n, "%.2f - %.2f" % tuple(a) if a else "-", b[0], b[1]))
p()
if abl:
    p("What the model had to learn, as the prediction without each part (the preset's predictions above; "
      "`without preset` is `overheads: {orchestrator: indexed-job}`, the defaults for a real cluster: "
      "1 s sandbox start, 1 GiB images at 100 MiB/s, a scheduler of 100 decisions/s and 20 ms binding):")
    p()
    p("| shape | with the preset | without follow_pods | without repeat_first_attempt | without api_qps | "
      "without the preset |")
    p("|---|---|---|---|---|---|")
    for s in shapes:
        pred = [r for r in rows if r["shape"] == s][0]["predicted_s"]
        p("| %s | %.2f | %s | %s | %s | %s |" % (s, pred, *("%.2f" % abl[(s, w)] if (s, w) in abl else "-"
                                                           for w in ("follow_pods", "repeat_first_attempt",
                                                                     "api_qps", "preset"))))
    p()
p("Side-by-side pages (`shardflow report --predicted SIM --measured RUN1`): `build/k8s-prediction/SHAPE-run1/prediction.html`.")
p()
p("""## What the simulator had to learn

The `kwok-testenv` preset (`overheads: {preset: kwok-testenv}`, docs/scenario-format.md "Overhead
presets", where each number's source is) is the `indexed-job` orchestrator plus what a run of
shardflow's own controller on KWOK's fake nodes adds. Nothing in it is fitted to these shapes:

- **The Job controller** (unchanged from the fidelity work, `reports/fidelity.md`): a Job's pods are
  created by its syncs, 1 s (`SyncJobBatchPeriod`) after the first pod event since the last sync, in
  slow-start batches (1, 2, 4, ... pods, 5 ms each); a refilled slot waits for the next sync (the
  loop's waves above: the real syncs come every 1.00-1.03 s, the model's every 1.00 s).
- **The controller's submission path** (new, `control_plane.follow_pods`): shardflow's controller
  watches the pods itself and tells Execution that a task is done when its pod's end arrives on the
  watch, so the Job of a step that depends on a loop is created 10-60 ms after the loop's last pod
  ended (the step table: `aggregate` starts right after `preprocess` ends), not at the Job
  controller's sync that marks the Job Complete about 1 s later, which is what the `indexed-job`
  preset models for a bare Job. Without it the model adds about 1 s per dependency edge (column
  "without follow_pods").
- **A Job per step instance** (new): the controller creates a Job for each iteration of a looped
  group, and a new Job is synced at once. The simulator's controller had one work-queue key per
  component step, shared by all iterations of the group, so an iteration's first pods waited for the
  shared key's next sync (up to 1 s). With scope `step` the key is now the step instance.
- **Retries** (new, part of `follow_pods`): the Job controller re-creates a failed index 10 s, then
  20 s after the failed pod's end (`DefaultJobPodFailureBackOff`, doubling); the step's own
  `retries.backoff` is not used by the k8s backend, and the model no longer takes the larger of the two.
- **The emulated pods** (new, `repeat_first_attempt`): `--emulate` puts attempt 0's sampled duration and
  outcome into the pod template, which all attempts share, so an index sampled to fail fails every
  attempt and the run ends with exit 1 after 3 attempts of each such index (10 s + 20 s of backoff).
  The simulator drew fresh outcomes for each retry: without this it predicts another run (for seed 11:
  4 failed attempts, every task succeeds in the end and `after` runs; measured and predicted with the
  preset: 9 failed attempts, `flaky[1]`, `flaky[9]` and `flaky[11]` exhausted, exit 1). Its makespan
  happens to be close (32.1 s) because one retry of each run waits the same 10 s + 20 s of backoff.
- **The Job controller's API rate limit** (new, `control_plane.api_qps` and `api_burst`, in the
  `indexed-job` preset: kube-controller-manager's 20 calls a second, 30 at once): each pod's create and
  event, each sync's status writes and finalizer patches take a token, and a pod is created when its
  create's token comes. It decides `many-jobs` (20 one-pod Jobs, 10 at once: about eight calls each),
  which without it was predicted some 40% short (column "without api_qps"; reports/fidelity.md "Many
  small Jobs" measures it against a cluster whose limit is lifted).
- **kube-scheduler and KWOK**: 500 decisions/s, bindings seen 10 ms later, Running 15 ms after the
  binding, no image pulls (issue 9's measurements on a quiet machine).

## What remains

Earlier rounds on the same model, written down by hand (same script, same binary), show how the
error moves with the machine's load: under load average 5.5-6.2 (a C++ build beside it) the seed
shape measured 28.73, 28.84 and 30.37 s (-5.1%, -5.4%, -10.2% against 27.27 s predicted: the one run
outside the target) and the nested shape 13.57, 13.42, 13.44 s (-3.1% to -2.2%); in a quiet spell
(load 2.3-3.0) the seed shape measured 27.78, 27.83 and 27.88 s (-1.8% to -2.2%) and the nested shape
13.47-13.54 s (-2.4% to -2.9%); rounds at load 2.2-4.3 measured the seed shape at 28.61-28.89 s
(-4.7% to -5.6%), the nested shape at 13.44-13.64 s and the retries shape at 30.39-31.39 s (+0.7% to
+4.0%). (Those rounds used a binary whose CLI objects had been compiled against the header before
this change, a build raced by the edit; its predictions are the same to the millisecond as a clean
build's, and the table above comes from a clean build.)

The retries shape comes out 2-4% shorter than predicted: the Job controller counts a failed index's
backoff from the pod's `finishedAt`, which has one-second resolution, so each real retry comes 0 to 1 s
earlier than the model's (as in reports/fidelity.md); there are two retries on its critical path.

The seed and nested shapes' measured runs are slower than predicted, by a few percent, always in that
direction, and more when the machine is busier (the load average of each run is in `build/k8s-prediction/results.jsonl`;
other engineers' builds and test clusters share the 2 cores). From the traces of the seed shape:

- the Job controller's syncs come every 1.005-1.03 s, not 1.000 s: the next sync is asked for by the
  event of the sync's own status write, which arrives after its pod creations and the write; over the
  loop's 21 syncs that is 0.1-0.6 s;
- the pods one sync creates are created over 50-450 ms (the model: slow-start batches 5 ms apart, 20 ms
  for 10 pods), and creation -> Running as the watch sees it takes 50-100 ms (the model: 27 ms), so
  pods end later than modelled and one that ends just after a sync waits a whole second for the next
  one: the real loop needed 22-23 syncs where the model needs 21. Setting `create_batch` to 20 ms moves
  the seed prediction by only 0.16 s: the cost is in the missed syncs, which depend on where each pod's
  end falls against the sync grid.

Modelling the requeue from the status write (next sync = the sync's creations + one API round trip +
1 s) is physically right and cheap, but it changes every exact test of the Job controller model and the
fidelity suite's predictions (which are 1-1.6% short too, reports/fidelity.md), so it is left for a
change of its own. The nested and retries shapes are dominated by whole seconds of syncs and backoff
and come out within a few percent.""")
