#!/usr/bin/env python3
"""Renders shardflow's reports in Debian's headless Chromium (CTest label `browser`).

  browser_test.py SHARDFLOW SOURCE_DIR ARTIFACT_DIR KIND

KIND is one of run, sweep, compare, prediction, timeline, large. Each makes its files with the built `shardflow`
in ARTIFACT_DIR/KIND, loads the page in `chromium --headless` (--dump-dom: the DOM after the page's
script ran; --enable-logging=stderr: its console), fails on any console message (the page logs
nothing; an uncaught exception is one), checks the charts' SVG element counts against the run's own files, and keeps a screenshot as
ARTIFACT_DIR/KIND.png. Only the standard library: no downloads at test time.
"""
import glob
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

SHARDFLOW, SOURCE, ARTIFACTS, KIND = os.path.abspath(sys.argv[1]), *sys.argv[2:5]
SEED = os.path.join(SOURCE, "scenarios", "shard-preprocess-train.yaml")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or "/usr/bin/chromium"
# chromium writes console messages as: [pid:tid:date:INFO:CONSOLE:12] "message", source: file:///... (12)
CONSOLE = re.compile(r":(?:INFO|WARNING|ERROR|FATAL):CONSOLE\b.*")
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def shardflow(*args):
    r = subprocess.run([SHARDFLOW, *args], cwd=SOURCE, capture_output=True, text=True)
    if r.returncode not in (0, 1):
        sys.exit(f"shardflow {' '.join(args)} exited {r.returncode}:\n{r.stdout}{r.stderr}")
    return r.stdout


def chromium(page, *flags):
    """Runs headless Chromium on a file; returns (stdout, console messages, seconds)."""
    with tempfile.TemporaryDirectory() as profile:
        cmd = [CHROMIUM, "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run", "--hide-scrollbars",
               "--disable-extensions", "--disable-background-networking", "--disable-component-update",
               f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0", *flags,
               "file://" + os.path.abspath(page)]
        t0 = time.monotonic()
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        seconds = time.monotonic() - t0
    console = [m.group(0) for m in CONSOLE.finditer(r.stderr)]
    if r.returncode != 0:
        sys.exit(f"chromium exited {r.returncode}:\n{r.stderr[-3000:]}")
    return r.stdout, console, seconds


def render(page, name, height=2400):
    """The DOM after scripts ran, with no console messages; a screenshot kept as an artifact."""
    dom, console, seconds = chromium(page, "--dump-dom", "--virtual-time-budget=5000")
    check(not console, f"{name}: no console messages (got {console[:3]})")
    check("</svg>" in dom, f"{name}: the page rendered ({len(dom)} bytes of DOM in {seconds:.1f} s)")
    shot = os.path.join(ARTIFACTS, name + ".png")
    if os.path.exists(shot):
        os.remove(shot)
    chromium(page, f"--screenshot={shot}", f"--window-size=1200,{height}")
    check(os.path.getsize(shot) > 10000 if os.path.exists(shot) else False, f"{name}: screenshot {shot}")
    return dom, seconds


def count(dom, pattern):
    return len(re.findall(pattern, dom))


def svg_attr(dom, cls, attr):
    m = re.search(r'<svg class="chart ' + cls + r'"[^>]*\b' + attr + r'="(\d+)"', dom)
    return int(m.group(1)) if m else -1


def bound_attempts(trace):
    return sum(1 for a in trace["attempts"] if a["node"] >= 0 and a["scheduled"] >= 0)


def console_self_test():
    """The console check catches what it should: a page that logs an error must be seen to."""
    page = os.path.join(ARTIFACTS, f"console-self-test-{KIND}.html")
    with open(page, "w") as f:
        f.write("<!DOCTYPE html><html><body><svg></svg><script>console.error('self-test')</script></body></html>")
    _, console, _ = chromium(page, "--dump-dom")
    check(any("self-test" in c for c in console), "the console check sees a console.error")


def run_report():
    out = os.path.join(ARTIFACTS, "run")
    shardflow("simulate", SEED, "--out", out, "-q")
    trace = json.load(open(os.path.join(out, "trace.json")))
    dom, _ = render(os.path.join(out, "report.html"), "run")
    bars = bound_attempts(trace)
    check(count(dom, r'<rect class="bar ') == bars, f"run: one Gantt bar per bound attempt ({bars})")
    check(svg_attr(dom, "gantt", "data-bars") == bars, "run: the Gantt chart says how many bars")
    failed = sum(1 for a in trace["attempts"] if a["outcome"] != "succeeded" and a["node"] >= 0 and a["scheduled"] >= 0)
    gantt = re.search(r'<svg class="chart gantt".*?</svg>', dom, re.S).group(0)  # not the legend's swatches
    check(count(gantt, r'<path class="x"') == failed, f"run: a cross per attempt that did not succeed ({failed})")
    check(count(dom, r'<rect class="bar [^"]*crit') == 3, "run: the critical path: a shard, aggregate, a train")
    check(count(dom, r'<svg class="chart hist"') == len(trace["steps"]), "run: a histogram per step")
    check(count(dom, r'<path class="line"') == 4, "run: CPU, memory, GPU and pending-pod lines")
    check(count(dom, r"<tr>") >= 20 + len(trace["steps"]), "run: the step and slowest-attempt tables")
    interact(os.path.join(out, "report.html"), trace)
    # `shardflow report DIR` rebuilds the same page from the saved files.
    with open(os.path.join(out, "report.html")) as f:
        first = f.read()
    shardflow("report", out)
    with open(os.path.join(out, "report.html")) as f:
        check(f.read() == first, "run: `shardflow report DIR` rebuilds the same page")


def interact(page, trace):
    """The page's script: hovering a bar shows its tooltip; a click on a header sorts the table."""
    probe = page.replace(".html", "-probe.html")
    with open(page) as f:
        text = f.read()
    with open(probe, "w") as f:
        f.write(text.replace("</body>", """<script>
var bar = document.querySelector('rect.bar');
bar.dispatchEvent(new MouseEvent('mouseover', {bubbles: true}));
var tip = document.getElementById('tip');
document.body.setAttribute('data-tip', tip.style.display + '|' + tip.textContent.split('\\n')[0]);
var th = document.querySelectorAll('table.slowest th')[5];
var firstRun = function() { return document.querySelector('table.slowest tbody td:nth-child(6)').getAttribute('data-v'); };
th.click(); var up = firstRun(); th.click(); var down = firstRun();
document.body.setAttribute('data-sort', up + '|' + down + '|' + th.getAttribute('aria-sort'));
</script></body>"""))
    dom, console, _ = chromium(probe, "--dump-dom")
    check(not console, f"run: no console messages when hovering and sorting ({console[:2]})")
    # The first bar drawn: the first node's first bound attempt.
    first = min((a for a in trace["attempts"] if a["node"] >= 0 and a["scheduled"] >= 0), key=lambda a: a["node"])
    tip = re.search(r'<body[^>]*data-tip="([^"]*)"', dom)
    want = f'block|{trace["steps"][first["step"]]}[{first["item"]}] (task {first["task"]}), attempt {first["attempt"]}'
    check(tip is not None and html.unescape(tip.group(1)).startswith(want), f"run: hovering a bar shows its tooltip ({want})")
    sort = re.search(r'<body[^>]*data-sort="([^"]*)"', dom)
    up, down, state = sort.group(1).split("|") if sort else ("1", "0", "")
    check(float(up) < float(down) and state == "descending", f"run: a header click sorts up, a second down ({up}, {down})")


def sweep_report():
    out = os.path.join(ARTIFACTS, "sweep")
    shardflow("sweep", SEED, "--vary", "cluster.node_pools[cpu].count=5,10,20,40", "--vary",
              "pipeline.steps[preprocess].parallel_for.parallelism=25,50,100", "-r", "3", "--deadline", "2h",
              "--out", out, "-q")
    sweep = json.load(open(os.path.join(out, "sweep.json")))
    dom, _ = render(os.path.join(out, "report.html"), "sweep", 1400)
    n = len(sweep["configurations"])
    check(count(dom, r'<circle class="pt') == n, f"sweep: a point per configuration ({n})")
    check(count(dom, r'<circle class="pt[^"]*rec') == (1 if sweep["recommended"] is not None else 0),
          "sweep: the recommendation marked")
    check(count(dom, r'<line class="deadline"') == 1, "sweep: the deadline line")
    check(count(dom, r'<path class="front"') == 1, "sweep: the Pareto front")
    check(count(dom, r'<tr[ >]') == n + 1, "sweep: a table row per configuration")


def compare_report():
    """compare with --backend local (a tiny scenario): bars with intervals, paired differences, and the
    measured makespan next to the predicted one, counted against compare.json."""
    out = os.path.join(ARTIFACTS, "compare")
    shardflow("compare", os.path.join(SOURCE, "tests", "data", "compare", "tiny-local.yaml"), "-r", "5",
              "--backend", "local", "--cores", "2", "--variant", "base",
              "--variant", "serial:pipeline.steps[shard].parallel_for.parallelism=1",
              "--variant", "wide:pipeline.steps[shard].parallel_for.count=8", "--out", out, "-q")
    compare = json.load(open(os.path.join(out, "compare.json")))
    dom, _ = render(os.path.join(out, "report.html"), "compare", 1800)
    n = len(compare["variants"])
    check(count(dom, r'<rect class="cbar"') == 2 * n, f"compare: a makespan and a cost bar per variant ({2 * n})")
    check(count(dom, r'<path class="ci"') == 2 * n + 2 * (n - 1) + 3,
          "compare: an interval per bar and per difference (and three in the legends)")
    sig = sum(v[k]["significant"] for v in compare["variants"][1:] for k in ("diff_makespan_s", "diff_cost"))
    check(count(dom, r'<circle class="diff') == 2 * (n - 1), "compare: a point per paired difference")
    check(count(dom, r'<circle class="diff sig"') == sig, f"compare: the significant ones filled ({sig})")
    measured = sum(1 for v in compare["variants"] if "measured" in v)
    check(measured == n, "compare: every variant ran on the local backend")
    check(count(dom, r'<rect class="mbar measured"') == measured and count(dom, r'<rect class="mbar predicted"') == measured,
          f"compare: measured next to predicted for each of the {measured} variants")
    check(count(dom, r'<tr[ >]') == n + 1, "compare: a table row per variant")


def prediction_report():
    out = os.path.join(ARTIFACTS, "prediction")
    shardflow("simulate", SEED, "--out", os.path.join(out, "predicted"), "-q")
    shardflow("simulate", SEED, "--seed", "7", "--out", os.path.join(out, "measured"), "-q")
    page = os.path.join(out, "prediction.html")
    shardflow("report", "--predicted", os.path.join(out, "predicted"), "--measured", os.path.join(out, "measured"),
              "--out", page)
    dom, _ = render(page, "prediction")
    check(count(dom, r'<svg class="chart gantt"') == 2, "prediction: two Gantt charts")
    bars = sum(bound_attempts(json.load(open(os.path.join(out, d, "trace.json")))) for d in ("predicted", "measured"))
    check(count(dom, r'<rect class="bar ') == bars, f"prediction: a bar per bound attempt of both runs ({bars})")
    ends = re.findall(r'<svg class="chart gantt".*?</svg>', dom, re.S)
    last_ticks = [re.findall(r'text-anchor="middle">([^<]+)</text>', e)[-2] for e in ends]
    check(len(set(last_ticks)) == 1, f"prediction: one time axis for both ({last_ticks})")


def timeline():
    """timeline.json: the trace-event format, and JSON.parse in the browser."""
    out = os.path.join(ARTIFACTS, "timeline")
    shardflow("simulate", SEED, "--out", out, "-q")
    path = os.path.join(out, "timeline.json")
    text = open(path).read()
    doc = json.loads(text)
    events = doc["traceEvents"]
    bad = [e for e in events if not {"ph", "pid", "name"} <= e.keys() or
           (e["ph"] != "M" and not {"ts", "tid"} <= e.keys()) or (e["ph"] == "X" and "dur" not in e)]
    check(not bad, f"timeline: every event has ph, ts, pid, tid, name; X events a dur ({bad[:2]})")
    tracks = {}
    for e in events:
        if e["ph"] == "X":
            tracks.setdefault((e["pid"], e["tid"]), []).append((e["ts"], -e["dur"], e["ts"] + e["dur"]))
    overlaps = 0
    for slices in tracks.values():
        stack = []  # open slices' ends: a slice must end before the next starts, or contain it
        for ts, neg_dur, end in sorted(slices):
            while stack and stack[-1] <= ts + 1e-6:
                stack.pop()
            if stack and end > stack[-1] + 1e-6:
                overlaps += 1
            stack.append(end)
    check(overlaps == 0, f"timeline: no overlapping slices on one track ({len(tracks)} tracks)")
    page = os.path.join(out, "parse.html")
    with open(page, "w") as f:
        f.write("<!DOCTYPE html><html><body><p id=r></p><script>\n"
                "var text = " + json.dumps(text).replace("</", "<\\/") + ";\n"
                "var j = JSON.parse(text); document.getElementById('r').textContent = 'events ' + j.traceEvents.length;\n"
                "</script></body></html>\n")
    dom, console, _ = chromium(page, "--dump-dom")
    check(not console, f"timeline: no console messages ({console[:2]})")
    check(f"events {len(events)}" in dom, f"timeline: JSON.parse in the browser reads {len(events)} events")


def large():
    """A 100,000-task run: the report stays under 10 MB and renders in a few seconds."""
    out = os.path.join(ARTIFACTS, "large")
    shardflow("simulate", SEED, "--set", "pipeline.steps[preprocess].parallel_for.count=100000", "--set",
              "pipeline.steps[preprocess].parallel_for.parallelism=1000", "--out", out, "-q")
    page = os.path.join(out, "report.html")
    size = os.path.getsize(page)
    check(size < 10_000_000, f"large: report.html is {size / 1e6:.1f} MB (< 10 MB)")
    dom, seconds = render(page, "large")
    check(seconds < 30, f"large: rendered in {seconds:.1f} s")
    check(svg_attr(dom, "gantt", "data-aggregated-nodes") > 0, "large: the nodes with too many pods are aggregated")
    check("too many pods to draw one bar each" in dom, "large: and the chart says so")
    check(count(dom, r'<rect class="bar ') == svg_attr(dom, "gantt", "data-bars"), "large: bars as counted")
    # The most bars a page draws: 11,000 pods on 100 nodes, none aggregated.
    out = os.path.join(ARTIFACTS, "large-drawn")
    shardflow("simulate", SEED, "--set", "pipeline.steps[preprocess].parallel_for.count=11000", "--set",
              "cluster.node_pools[cpu].count=100", "--out", out, "-q")
    page = os.path.join(out, "report.html")
    size = os.path.getsize(page)
    dom, seconds = render(page, "large-drawn")
    bars = bound_attempts(json.load(open(os.path.join(out, "trace.json"))))
    check(count(dom, r'<rect class="bar ') == bars and svg_attr(dom, "gantt", "data-aggregated-nodes") == 0,
          f"large-drawn: {bars} bars, no node aggregated; {size / 1e6:.1f} MB, rendered in {seconds:.1f} s")
    check(seconds < 30, f"large-drawn: rendered in {seconds:.1f} s")


os.makedirs(ARTIFACTS, exist_ok=True)
if not os.path.exists(CHROMIUM):
    sys.exit("no chromium: scripts/setup --browser installs it (make test runs it)")
console_self_test()
{"run": run_report, "sweep": sweep_report, "compare": compare_report, "prediction": prediction_report, "timeline": timeline,
 "large": large}[KIND]()
if failures:
    sys.exit(f"{len(failures)} check(s) failed")
