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
     "a": {"seed": 1, "sets": []}, "b": {"seed": 7, "sets": []}, "run": ["--time-scale", "0.001"]},
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
    fitted = os.path.join(base, "fitted.yaml")
    r["cmd_cal"] = [BIN, "calibrate", path] + a_dirs + ["--out", fitted] + setargs(c["a"]["sets"])
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
    r["measured"] = statistics.median(r["b_ms"])
    med = b_dirs[sorted(range(len(b_dirs)), key=lambda k: r["b_ms"][k])[len(b_dirs) // 2]]
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
    p("Target: predicted makespan within 5% of the measured one.\n")
    p("| scenario | A -> B | predicted | measured (median) | error | within 5% | B runs | background cores, A / B runs | pairwise errors |")
    p("|---|---|---|---|---|---|---|---|---|")
    for r in results:
        c = r["case"]
        ab = (f"seed {c['a']['seed']} -> {c['b']['seed']}" if c["a"]["seed"] != c["b"]["seed"]
              else "16 -> 24 items")
        p(f"| [{c['name']}](#{c['name']}) | {ab} | {r['predicted']:.3f} s | {r['measured']:.3f} s |"
          f" {r['err']:+.1f}% | {'yes' if abs(r['err']) <= 5 else '**no**'} |"
          f" {', '.join(f'{x:.2f}' for x in r['b_ms'])} |"
          f" {', '.join(f'{x:.1f}' for x in r['a_bg'])} / {', '.join(f'{x:.1f}' for x in r['b_bg'])} |"
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


NOTES = {}
FINDINGS = ""

if __name__ == "__main__":
    main()
