"""The driver of bench/local_prediction: runs, calibrates, predicts, compares, writes the report."""
import argparse
import datetime
import json
import os
import resource
import time
import shlex
import statistics
import subprocess
import sys

BIN = "build/release/shardflow"
OUT = "out/local-prediction"
CORES = 2
QUIET = 0.25  # background cores above which a run is left out of the calibration and the median

# The sweep's trainings, a 20-minute `spin` in the scenario, shortened to what --time-scale 0.001 made of
# them: a scaled run calibrates back to model time (20 min), which a prediction of a scaled run cannot use.
SHORT_TRAIN = "pipeline.steps[trial].steps[train].duration.base=1.2s"

# name, file, shape, A (calibration run) and B (predicted run): seed and --set changes; extra run options.
CASES = [
    {"name": "fanout", "shape": "wide fan-out: 48 shard_stats, all ready at once -> aggregate -> solve -> evaluate",
     "a": {"seed": 1, "sets": []}, "b": {"seed": 7, "sets": []}, "run": []},
    {"name": "loop", "shape": "parallelism-limited loops: 3 sleeps at a time, then shard_stats one at a time",
     "a": {"seed": 1, "sets": []},
     "b": {"seed": 1, "sets": ["pipeline.steps[download].parallel_for.count=24",
                               "pipeline.steps[parse].parallel_for.count=24"]}, "run": []},
    {"name": "nested", "shape": "nested groups: 12 regions 2 at a time, group parallelism 2 and 1 inside",
     "a": {"seed": 1, "sets": []}, "b": {"seed": 7, "sets": []}, "run": []},
    {"name": "sweep", "shape": "hyperparameter sweep: 12 shards -> aggregate -> 8 trials 3 at a time -> select",
     "a": {"seed": 1, "sets": [SHORT_TRAIN]}, "b": {"seed": 7, "sets": [SHORT_TRAIN]}, "run": []},
    {"name": "stragglers", "shape": "noise: 40 spins, sigma 0.3, 10% stragglers x4, 5% failures retried; 12 noisy sleeps",
     "a": {"seed": 1, "sets": []}, "b": {"seed": 7, "sets": []}, "run": []},
]


def sh(cmd):
    return " ".join(shlex.quote(c) for c in cmd)


def busy_ticks():
    f = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    return sum(f) - f[3] - f[4]  # all but idle and iowait


def run_measured(cmd):
    """Runs cmd; returns the cores other processes kept busy meanwhile (this machine's CPU time, less cmd's)."""
    hz = os.sysconf("SC_CLK_TCK")
    r0, b0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), busy_ticks(), time.monotonic()
    run(cmd)
    r1, b1, t1 = resource.getrusage(resource.RUSAGE_CHILDREN), busy_ticks(), time.monotonic()
    ours = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return max(0.0, ((b1 - b0) / hz - ours) / (t1 - t0))


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit(f"failed ({p.returncode}): {sh(cmd)}\n{p.stdout}{p.stderr}")
    return p.stdout


def setargs(sets):
    out = []
    for s in sets:
        out += ["--set", s]
    return out


def makespan(d):
    return json.load(open(os.path.join(d, "metrics.json")))["makespan_s"]


def step_means(d):
    """Mean finished - started (s) of every attempt that ran, per step; and the attempt counts."""
    t = json.load(open(os.path.join(d, "trace.json")))
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}.get(t.get("time_unit", "ns"), 1e-9)
    runs = {s: [] for s in t["steps"]}
    for a in t["attempts"]:
        if a["outcome"] in ("succeeded", "failed"):
            runs[t["steps"][a["step"]]].append((a["finished"] - a["started"] - a.get("output_write", 0)) * scale)
    return {s: (statistics.fmean(v) if v else 0.0, len(v)) for s, v in runs.items()}


def load():
    return open("/proc/loadavg").read().split()[0]


def do_case(c, runs):
    name, path = c["name"], f"scenarios/local/{c['name']}.yaml"
    base = os.path.join(OUT, name)
    os.makedirs(base, exist_ok=True)
    r = {"case": c, "path": path, "loads": [load()]}

    def local(which, i):
        s = c[which]
        d = os.path.join(base, f"{which}{i}")
        cmd = [BIN, "run", path, "--backend", "local", "--cores", str(CORES), "--seed", str(s["seed"]), "-q",
               "--out", d] + c["run"] + setargs(s["sets"])
        bg = run_measured(cmd)
        return cmd, d, bg

    a_dirs, b_dirs, r["a_bg"], r["b_bg"] = [], [], [], []
    for i in range(1, runs + 1):  # interleaved: A and B see the same load
        r["cmd_a"], d, bg = local("a", i)
        a_dirs.append(d)
        r["a_bg"].append(bg)
        r["cmd_b"], d, bg = local("b", i)
        b_dirs.append(d)
        r["b_bg"].append(bg)
        print(f"  {name}: run {i}: A {makespan(a_dirs[-1]):.3f} s (background {r['a_bg'][-1]:.2f} cores), "
              f"B {makespan(b_dirs[-1]):.3f} s (background {r['b_bg'][-1]:.2f} cores)", file=sys.stderr)
    r["loads"].append(load())
    # Runs during which other processes kept more than QUIET cores busy measure the machine, not the
    # pipeline: calibrate on, and compare with, the quiet runs (all of them when none was quiet).
    quiet_a = [d for d, bg in zip(a_dirs, r["a_bg"]) if bg <= QUIET] or a_dirs
    quiet_b = [k for k, bg in enumerate(r["b_bg"]) if bg <= QUIET] or list(range(len(b_dirs)))
    fitted = os.path.join(base, "fitted.yaml")
    r["cmd_cal"] = [BIN, "calibrate", path] + quiet_a + ["--out", fitted] + setargs(c["a"]["sets"])
    r["cal_out"] = run(r["cmd_cal"])
    r["fitted"] = open(fitted).read()
    pred = os.path.join(base, "predicted")
    r["cmd_sim"] = [BIN, "simulate", path, "--overlay", fitted, "--cluster", "local",
                    "--set", f"cluster.node_pools[local].cpu={CORES}", "--seed", str(c["b"]["seed"]), "-q",
                    "--out", pred] + setargs(c["b"]["sets"])
    run(r["cmd_sim"])
    r["a_ms"] = [makespan(d) for d in a_dirs]
    r["b_ms"] = [makespan(d) for d in b_dirs]
    r["predicted"] = makespan(pred)
    r["measured"] = statistics.median([r["b_ms"][k] for k in quiet_b])
    r["quiet"] = (len(quiet_a), len(quiet_b))
    order = sorted(quiet_b, key=lambda k: r["b_ms"][k])
    med = b_dirs[order[len(order) // 2]]
    r["median_dir"] = med
    r["steps_pred"] = step_means(pred)
    r["steps_meas"] = step_means(med)
    # every B run's per-step means, to show the run-to-run spread
    r["steps_all"] = [step_means(d) for d in b_dirs]
    r["err"] = (r["predicted"] - r["measured"]) / r["measured"] * 100
    # the same protocol per pair: calibrate on A_i alone, predict B, compare with B_i (run just after A_i)
    r["pairs"] = []
    for i, (a, b) in enumerate(zip(a_dirs, b_dirs), 1):
        fi = os.path.join(base, f"fitted{i}.yaml")
        run([BIN, "calibrate", path, a, "--out", fi, "-q"] + setargs(c["a"]["sets"]))
        pi = os.path.join(base, f"predicted{i}")
        run(r["cmd_sim"][:r["cmd_sim"].index("--overlay")] + ["--overlay", fi] +
            r["cmd_sim"][r["cmd_sim"].index("--overlay") + 2:r["cmd_sim"].index("--out")] + ["--out", pi] +
            setargs(c["b"]["sets"]))
        r["pairs"].append((makespan(pi), makespan(b)))
    return r


def pct(p, m):
    return (p - m) / m * 100 if m > 0 else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--machine", default="")
    ap.add_argument("--report", required=True)
    ap.add_argument("only", nargs="*")
    args = ap.parse_args()
    cases = [c for c in CASES if not args.only or c["name"] in args.only]
    start = datetime.datetime.now()
    results = []
    for c in cases:
        print(f"{c['name']}...", file=sys.stderr)
        results.append(do_case(c, args.runs))
    minutes = (datetime.datetime.now() - start).total_seconds() / 60
    with open(args.report, "w") as f:
        write_report(f, results, args, minutes)


def write_report(f, results, args, minutes):
    p = lambda *a: print(*a, file=f)
    p("# Local prediction: calibrate on one local run, predict another\n")
    p("Regenerate: `bench/local_prediction` (bash + python3, " + f"{minutes:.0f} minutes here). Built Release.")
    p(f"Measured {datetime.date.today()} on {args.machine}, shared with other builds (load average"
      " before/after each scenario in its section).\n")
    p("For each scenario of `scenarios/local/`: run it for real with settings A (`shardflow run S --backend local"
      f" --cores {CORES}`), fit every step's duration model and the dispatch overhead to those traces"
      " (`shardflow calibrate`), predict a run with settings B, a different seed or loop count, with the"
      " simulator on this machine's model (`shardflow simulate S --overlay fitted.yaml --cluster local --set"
      f" cluster.node_pools[local].cpu={CORES}`), then run B for real and compare. Each real run is made"
      f" {args.runs} times, A and B interleaved so that both see the same background load; the calibration"
      f" uses all {args.runs} A traces and the measured makespan is the median of the B runs. Per-step"
      " times are the mean of finished - started over the step's attempts, predicted (the simulated trace)"
      " against the median B run.\n")
    p(f"Runs during which other processes kept more than {QUIET} cores busy on average (measured from /proc/stat"
      " less the run's own CPU time) are shown but left out of the calibration and of the median, as long as"
      " one quiet run is left: they measure the other builds, not the pipeline.\n")
    p("Target: predicted makespan within 5% of the measured one.\n")
    p("| scenario | A -> B | predicted | measured (median) | error | within 5% | B runs | background cores, A / B runs | quiet runs used, A / B | pairwise errors |")
    p("|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        c = r["case"]
        ab = (f"seed {c['a']['seed']} -> {c['b']['seed']}" if c["a"]["seed"] != c["b"]["seed"]
              else "16 -> 24 items")
        p(f"| [{c['name']}](#{c['name']}) | {ab} | {r['predicted']:.3f} s | {r['measured']:.3f} s |"
          f" {r['err']:+.1f}% | {'yes' if abs(r['err']) <= 5 else '**no**'} |"
          f" {', '.join(f'{x:.2f}' for x in r['b_ms'])} |"
          f" {', '.join(f'{x:.1f}' for x in r['a_bg'])} / {', '.join(f'{x:.1f}' for x in r['b_bg'])} |"
          f" {r['quiet'][0]} / {r['quiet'][1]} |"
          f" {', '.join(f'{pct(pp, mm):+.1f}%' for pp, mm in r['pairs'])} |")
    p()
    p("*Background cores*: the CPU time this machine spent on other processes during each run, per second of"
      " the run (0 = the machine was ours; 1 = another build kept a whole core busy). *Pairwise errors*: the"
      " same protocol on each pair alone: calibrate on run A_i, predict B, compare with run B_i (made right"
      " after A_i, so under much the same load).\n")
    for r in results:
        c = r["case"]
        p(f"## {c['name']}\n")
        p(f"`{r['path']}`: {c['shape']}. Load average {r['loads'][0]} before, {r['loads'][1]} after.\n")
        p("```sh")
        p(sh(r["cmd_a"]).replace(r["cmd_a"][r["cmd_a"].index("--out") + 1], OUT + f"/{c['name']}/aN") + "   # A, x" + str(len(r["a_ms"])))
        p(sh(r["cmd_b"]).replace(r["cmd_b"][r["cmd_b"].index("--out") + 1], OUT + f"/{c['name']}/bN") + "   # B, x" + str(len(r["b_ms"])))
        p(sh(r["cmd_cal"]))
        p(sh(r["cmd_sim"]))
        p("```\n")
        p(f"Makespans: A {', '.join(f'{x:.3f}' for x in r['a_ms'])} s; B {', '.join(f'{x:.3f}' for x in r['b_ms'])} s"
          f" (background cores: A {', '.join(f'{x:.2f}' for x in r['a_bg'])}; B {', '.join(f'{x:.2f}' for x in r['b_bg'])})."
          f" **Predicted {r['predicted']:.3f} s, measured {r['measured']:.3f} s: {r['err']:+.1f}%.**\n")
        p("| step | attempts (pred / meas) | predicted mean run | measured mean run (median B run) | error | measured, every B run |")
        p("|---|---|---|---|---|---|")
        for s, (mp, np_) in r["steps_pred"].items():
            mm, nm = r["steps_meas"][s]
            every = ", ".join(f"{x[s][0]:.3f}" for x in r["steps_all"])
            p(f"| {s} | {np_} / {nm} | {mp:.3f} s | {mm:.3f} s | {pct(mp, mm):+.1f}% | {every} |")
        p()
        p("<details><summary>calibration (shardflow calibrate's table and the overlay)</summary>\n")
        p("```")
        p(r["cal_out"].rstrip())
        p("```")
        p("```yaml")
        p(r["fitted"].rstrip())
        p("```")
        p("</details>\n")
        note = NOTES.get(c["name"])
        if note:
            p(note.strip() + "\n")
    p(FINDINGS.strip())


NOTES = {
    "fanout": """
Almost all of the makespan is shard_stats, real CPU work, so this scenario measures the machine as much as the
model: the same run (same seed, same rows) has taken from 5.5 s to 10 s on this shared machine within a few
minutes, following the other builds (the background-cores column). The fit itself is sound (per_gib from
the lognormal input sizes; the sizes of seed 7 change the predicted per-shard times accordingly); where the
prediction misses, the per-step table shows it is the shard step's mean run time, i.e. how fast the cores
were for us during the B runs compared with the A runs. Two shards on two cores are each slower than one
alone would be (memory bandwidth, and the other builds); calibrating on a run with the same concurrency
pattern (all 48 ready, two at a time) keeps that fair.
""",
    "loop": """
B has 24 items in each loop where A had 16: calibrate reads A's traces against the 16-item scenario, and
the prediction and run B set 24 with `--set`. The downloads are `sleep` (3 at a time), exact
in time; their fitted base is the mean of A's 16 sampled durations, so it carries the sampling error of 16
draws of a lognormal of sigma 0.3 (about 7%), which the prediction inherits. The parse loop runs one
shard_stats at a time, so it is CPU work but with a core to itself plus whatever the background leaves.
""",
    "nested": """
Loop parallelism 2 over regions, group parallelism 2 over a region's children and 1 inside `features`: the
simulator and the backend share core's Execution, so the limits are honoured identically (the attempt
counts and the order agree). What remains is the fit: fetch, lint and audit are `sleep`/`spin` with
lognormal noise, fitted from 12 draws each (their base carries that sampling error, some 6-9%), and the
stats tasks are real CPU work.
""",
    "sweep": """
The trainings are `spin` with a 20-minute model, set to 1.2 s for these runs (`--set
pipeline.steps[trial].steps[train].duration.base=1.2s` for A, B and the prediction alike). They were
run with `--time-scale 0.001` before calibrate learned to convert a scaled run back to model time: it now
fits those traces at 20 minutes, which is right for the scenario but not for predicting another scaled
run (the simulator has no time scale). shard and evaluate are real CPU kernels (not scaled), which is where
run-to-run variation comes from. The trial loop (3 at a time, each with a solve and a train that each ask
for a core) keeps both cores busy, so the makespan is close to the total work divided by 2.
""",
    "stragglers": """
The `work` runs are `spin` (a busy loop that ends at its sampled wall time, so background load does not
change them) and `read` `sleep`: both are exact in time, and failures are the sampled ones (the same in
the simulator). **The first version of this comparison missed by +9.3%** (predicted 15.1 s, measured
13.8 s): `shardflow calibrate` folded the stragglers into the lognormal (sigma 0.50 for a true 0.3, base
0.55 s, `straggler: {p: 0}`), so the simulator stretched every task with seed 7's noise draws instead of
slowing the few stragglers. The calibrator now fits a step whose model has stragglers as a mixture (runs
far above the rest are the stragglers: p and factor; base and sigma from the others; tests in
tests/planner/calibrate_test.cpp), which gave base 0.43 s, sigma 0.31, p 0.12, factor 3.3 and a prediction
within 0.5% in the same setting. The work tasks ask for 900m so that two of them leave room for the 100m reads:
with a full core each the reads (first come, first served, as in kube-scheduler) could not start until every
work task had, in the simulator and the backend alike.
""",
}

FINDINGS = """
## What was found and fixed

- **The simulator's `--cluster local` preset kept kube-scheduler's backoff (fixed).** A pod that did not fit
  was retried only after `initial_backoff` (1 s, doubling to 10 s), while the local backend starts the
  oldest waiting task that fits as soon as a task ends. Newer pods then overtook older ones in the
  simulator only: in the sweep an evaluate started before an older train, and the prediction was +6.2%
  (nested +6.6%) with every step's mean run time within 0-3%. The preset now sets `initial_backoff: 0s`
  and `max_backoff: 0s` (as does run's ETA); the same fitted overlays then predicted 6.84 s (+2.1%) and
  7.42 s (+4.2%) against those runs (test: tests/sim/scenario_settings_test.cpp).

- **Stragglers (calibrator, fixed).** A step whose scenario model has stragglers was calibrated as one
  lognormal with `straggler: {p: 0}`: the right mean, but the wrong shape, and the prediction for another
  seed missed by 9% (stragglers scenario). The calibrator now fits the mixture (p, factor, then base and
  sigma from the other runs); see the stragglers section.
- **Dispatch overhead for the local backend (checked, no change).** `sandbox_start` is fitted as the 10th
  percentile of started - scheduled. In a local trace `scheduled` is when the backend reserved CPU and memory
  and `started` when the kernel began on a worker: tens of microseconds for CPU kernels, 0 for `sleep`. The
  fitted values (in each overlay) are that, so the simulator adds a realistic few microseconds per task; with
  under 100 tasks per run this is far below 0.1% of any makespan here.
- **`--time-scale` (checked).** It scales the sampled durations of `sleep` and `spin` in the backend; the
  trace records the scale and the steps it scaled, and `shardflow calibrate` divides their run times by it,
  back into the scenario's time (the real CPU kernels are not scaled and are fitted as measured). The
  sweep case therefore shortens its trainings with --set rather than with a scale.
- **CPU kernels on a shared machine (not fixable here).** shard_stats, aggregate, ridge_solve and evaluate do
  real work: their run times depend on how much of the two cores other processes leave us, which varied
  between 0 and more than one core during these measurements (the background-cores column; `nice` does not
  help: runs at nice -10 varied as much). A fit from runs A predicts runs B only as well as the machine's
  speed for us is the same during both. Interleaving A and B and taking medians reduces, but cannot remove,
  that; scenarios dominated by `sleep` and `spin` (exact in time) are predicted to within a few percent,
  scenarios dominated by CPU kernels to within the machine's own run-to-run spread, which the B runs column
  shows. On a quiet machine the same protocol would isolate the model's error.
- **Calibration sampling error (inherent).** For a step with lognormal noise, the fitted base is the mean of
  the A run's sampled durations; with n draws its relative error is about sigma / sqrt(n) (7% for 16 draws of
  sigma 0.3). Calibrating on more tasks (or several seeds) shrinks it; the prediction inherits it.
"""

if __name__ == "__main__":
    main()
