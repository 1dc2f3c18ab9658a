#!/usr/bin/env python3
"""Times `shardflow simulate instance.json --no-files -q` as whole processes (spawn, import, simulate,
metrics, exit) on every WfCommons instance, next to WRENCH's and DSLab's whole-process figures
(../shared/data/README.md, "Peer figures"), and prints the markdown tables of reports/wfcommons-speed.md.
Used by scripts/wfcommons-speed-report.

  wfcommons_speed.py SHARDFLOW PHASES_EXE DATA_DIR RUNS [BEFORE_SHARDFLOW BEFORE_LABEL]

With BEFORE_SHARDFLOW (another build, e.g. main's), every figure is also measured for it, its runs
alternating with this build's so that both see the same load, and the instructions each process
executes (callgrind, if valgrind is installed: a count that does not depend on the load) are shown."""
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

# Whole-process wall seconds measured on a 2-core machine (../shared/data/README.md): WRENCH 2.3,
# DSLab Simple, DSLab HEFT.
PEERS = {
    "helloworld-forkjoin-10-chameleon": (0.042, 0.0030, 0.0034),
    "srasearch-chameleon-10a-001": (0.047, 0.0033, 0.0047),
    "epigenomics-chameleon-hep-1seq-100k-001": (0.053, 0.0024, 0.0024),
    "blast-chameleon-small-001": (0.055, 0.0053, 0.0029),
    "1000genome-chameleon-2ch-100k-001": (0.065, 0.0026, 0.0026),
    "montage-chameleon-2mass-005d-001": (0.063, 0.0028, 0.0027),
    "seismology-chameleon-100p-001": (0.084, 0.0070, 0.0053),
    "seismology-chameleon-1000p-001": (0.664, 0.397, 0.082),
}


def timed(argvs, runs):
    """Median wall and CPU (user + sys) seconds of `runs` new processes of each argv, output to
    /dev/null; the argvs' runs alternate. A list of (wall, cpu), one per argv."""
    walls = [[] for _ in argvs]
    cpus = [[] for _ in argvs]
    devnull = os.open(os.devnull, os.O_WRONLY)
    for _ in range(runs):
        for k, argv in enumerate(argvs):
            t0 = time.perf_counter()
            pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 1)])
            _, status, usage = os.wait4(pid, 0)
            walls[k].append(time.perf_counter() - t0)
            cpus[k].append(usage.ru_utime + usage.ru_stime)
            if os.waitstatus_to_exitcode(status) != 0:
                sys.exit(f"{' '.join(argv)} failed")
    os.close(devnull)
    return [(statistics.median(w), statistics.median(c)) for w, c in zip(walls, cpus)]


def instructions(argv):
    """Instructions the whole process executes (user space, the dynamic loader included), by callgrind."""
    out = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"] + argv,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=True).stderr
    for line in out.splitlines():
        if "refs:" in line:
            return int(line.split("refs:")[1].replace(",", "").strip())
    sys.exit(f"no instruction count from callgrind for {' '.join(argv)}")


def ms(seconds):
    return f"{seconds * 1e3:.2f}"


def main():
    exe, phases, data, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    before = sys.argv[5] if len(sys.argv) > 5 else None
    before_label = sys.argv[6] if len(sys.argv) > 6 else "before"
    exes = [before, exe] if before else [exe]
    count = before is not None and shutil.which("valgrind") is not None
    files = sorted(f for f in os.listdir(data) if f.endswith(".json"))
    (true_wall, true_cpu), = timed([["/bin/true"]], runs)
    start = timed([[e, "--version"] for e in exes], runs)
    print(f"Process start alone, median of {runs}: `/bin/true` {ms(true_wall)} ms wall ({ms(true_cpu)} ms CPU); "
          + "; ".join(f"`shardflow --version`{' (' + before_label + ')' if before and e == before else ''} "
                      f"{ms(w)} ms wall ({ms(c)} ms CPU)" for e, (w, c) in zip(exes, start)) + ".\n")
    if before:
        print(f"Side by side: {before_label} and this build, their runs alternating (CPU = user + system time of "
              "the process; instructions: callgrind's count for one process, loader included"
              f"{'' if count else ' (valgrind not installed: not counted)'}).\n")
        print(f"| instance | tasks | {before_label} CPU ms | CPU ms | {before_label} wall ms | wall ms | "
              + (f"{before_label} M instructions | M instructions | " if count else "")
              + "WRENCH 2.3 wall ms | DSLab Simple wall ms | DSLab HEFT wall ms | faster than DSLab's best? |")
        print("|---|---|---|---|---|---|" + ("---|---|" if count else "") + "---|---|---|---|")
    else:
        print("| instance | tasks | shardflow wall ms | shardflow CPU ms | WRENCH 2.3 wall ms | DSLab Simple wall ms | "
              "DSLab HEFT wall ms | faster than DSLab's best? |")
        print("|---|---|---|---|---|---|---|---|")
    total = total_cpu = before_wall = before_cpu = 0.0
    insn = [0, 0]
    rows = []
    seismology_1000 = seismology_1000_cpu = None
    peers_total = [0.0, 0.0, 0.0]
    for f in files:
        name = f[:-5]
        path = os.path.join(data, f)
        argvs = [[e, "simulate", path, "--no-files", "-q"] for e in exes]
        measured = timed(argvs, runs)
        wall, cpu = measured[-1]
        total += wall
        total_cpu += cpu
        w, s, h = PEERS[name]
        for i, v in enumerate((w, s, h)):
            peers_total[i] += v
        out = subprocess.run([exe, "explain", path, "--json"], capture_output=True, text=True, check=True)
        tasks = json.loads(out.stdout)["tasks"]
        best = min(s, h)
        rows.append((name, wall < best, best / wall, cpu < best))
        if name == "seismology-chameleon-1000p-001":
            seismology_1000, seismology_1000_cpu = wall, cpu
        peers = (f"{w * 1e3:.0f} | {s * 1e3:.1f} | {h * 1e3:.1f} | {'yes' if wall < best else 'no'} "
                 f"({best / wall:.2f}x) |")
        if before:
            bw, bc = measured[0]
            before_wall += bw
            before_cpu += bc
            counts = ""
            if count:
                n = [instructions(a) for a in argvs]
                insn = [insn[0] + n[0], insn[1] + n[1]]
                counts = f"{n[0] / 1e6:.1f} | {n[1] / 1e6:.1f} | "
            print(f"| {name} | {tasks} | {ms(bc)} | {ms(cpu)} | {ms(bw)} | {ms(wall)} | {counts}{peers}")
        else:
            print(f"| {name} | {tasks} | {ms(wall)} | {ms(cpu)} | {peers}")
    rows.sort()
    peers = f"{peers_total[0] * 1e3:.0f} | {peers_total[1] * 1e3:.1f} | {peers_total[2] * 1e3:.1f} | |"
    if before:
        counts = f"{insn[0] / 1e6:.1f} | {insn[1] / 1e6:.1f} | " if count else ""
        print(f"| **sum of the 8** | | {ms(before_cpu)} | **{ms(total_cpu)}** | {ms(before_wall)} | **{ms(total)}** | "
              f"{counts}{peers}")
    else:
        print(f"| **sum of the 8** | | **{ms(total)}** | {ms(total_cpu)} | {peers}")
    print()
    faster = [r for r in rows if r[1]]
    print("Targets, as measured in this run (wall time, as the issue asks; CPU time too, the fairer figure on a "
          "loaded machine):\n")
    print(f"- faster than DSLab's best on every instance: **{'met' if len(faster) == len(rows) else 'not met'}**, "
          f"{len(faster)} of {len(rows)} (slower on: {', '.join(r[0] for r in rows if not r[1]) or 'none'}); "
          f"by CPU time {sum(1 for r in rows if r[3])} of {len(rows)}"
          f"{' (slower on: ' + ', '.join(r[0] for r in rows if not r[3]) + ')' if not all(r[3] for r in rows) else ''}")
    if seismology_1000 is not None:
        print(f"- seismology-1000p under 10 ms: **{'met' if seismology_1000 < 0.010 else 'not met'}**, "
              f"{seismology_1000 * 1e3:.1f} ms wall ({seismology_1000_cpu * 1e3:.1f} ms CPU)")
    print(f"- the sum over the 8 under 30 ms: **{'met' if total < 0.030 else 'not met'}**, {total * 1e3:.1f} ms wall "
          f"({total_cpu * 1e3:.1f} ms CPU)")
    print()
    print("Where the time goes, in one process (bench/wfcommons_phases.cpp, median CPU time of 21 runs of each phase, "
          "microseconds; the import is the JSON parse plus building and checking the scenario):\n")
    sys.stdout.flush()
    subprocess.run([phases, "--repeat", "21"] + [os.path.join(data, f) for f in files], check=True)


if __name__ == "__main__":
    main()
