#!/usr/bin/env python3
"""Times `shardflow simulate instance.json --no-files -q` as whole processes (spawn, import, simulate,
metrics, exit) on every WfCommons instance, next to WRENCH's and DSLab's whole-process figures
(../shared/data/README.md, "Peer figures"), and prints the markdown tables of reports/wfcommons-speed.md.
Used by scripts/wfcommons-speed-report.

  wfcommons_speed.py SHARDFLOW PHASES_EXE DATA_DIR RUNS"""
import os
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


def timed(argv, runs):
    """Median wall and CPU (user + sys) seconds of `runs` new processes, output to /dev/null."""
    walls, cpus = [], []
    devnull = os.open(os.devnull, os.O_WRONLY)
    for _ in range(runs):
        t0 = time.perf_counter()
        pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 1)])
        _, status, usage = os.wait4(pid, 0)
        walls.append(time.perf_counter() - t0)
        cpus.append(usage.ru_utime + usage.ru_stime)
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"{' '.join(argv)} failed")
    os.close(devnull)
    return statistics.median(walls), statistics.median(cpus)


def main():
    exe, phases, data, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    files = sorted(f for f in os.listdir(data) if f.endswith(".json"))
    true_wall, true_cpu = timed(["/bin/true"], runs)
    start_wall, start_cpu = timed([exe, "--version"], runs)
    print(f"Process start alone, median of {runs}: `/bin/true` {true_wall * 1e3:.2f} ms wall ({true_cpu * 1e3:.2f} ms CPU); "
          f"`shardflow --version` {start_wall * 1e3:.2f} ms wall ({start_cpu * 1e3:.2f} ms CPU).\n")
    print("| instance | tasks | shardflow wall ms | shardflow CPU ms | WRENCH 2.3 wall ms | DSLab Simple wall ms | "
          "DSLab HEFT wall ms | faster than DSLab's best? |")
    print("|---|---|---|---|---|---|---|---|")
    total = total_cpu = 0.0
    rows = []
    seismology_1000 = None
    peers_total = [0.0, 0.0, 0.0]
    for f in files:
        name = f[:-5]
        wall, cpu = timed([exe, "simulate", os.path.join(data, f), "--no-files", "-q"], runs)
        total += wall
        total_cpu += cpu
        w, s, h = PEERS[name]
        for i, v in enumerate((w, s, h)):
            peers_total[i] += v
        tasks = sum(1 for _ in open(os.path.join(data, f)))  # placeholder replaced below
        out = subprocess.run([exe, "explain", os.path.join(data, f), "--json"], capture_output=True, text=True)
        import json
        tasks = json.loads(out.stdout)["tasks"]
        best = min(s, h)
        rows.append((name, wall < best, best / wall))
        if name == "seismology-chameleon-1000p-001":
            seismology_1000 = wall
        print(f"| {name} | {tasks} | {wall * 1e3:.2f} | {cpu * 1e3:.2f} | {w * 1e3:.0f} | {s * 1e3:.1f} | {h * 1e3:.1f} | "
              f"{'yes' if wall < best else 'no'} ({best / wall:.2f}x) |")
    rows.sort()
    print(f"| **sum of the 8** | | **{total * 1e3:.2f}** | {total_cpu * 1e3:.2f} | {peers_total[0] * 1e3:.0f} | "
          f"{peers_total[1] * 1e3:.1f} | {peers_total[2] * 1e3:.1f} | |")
    print()
    faster = [r for r in rows if r[1]]
    print("Targets, as measured in this run (wall time):\n")
    print(f"- faster than DSLab's best on every instance: **{'met' if len(faster) == len(rows) else 'not met'}**, "
          f"{len(faster)} of {len(rows)} (slower on: {', '.join(r[0] for r in rows if not r[1]) or 'none'})")
    if seismology_1000 is not None:
        print(f"- seismology-1000p under 10 ms: **{'met' if seismology_1000 < 0.010 else 'not met'}**, "
              f"{seismology_1000 * 1e3:.1f} ms")
    print(f"- the sum over the 8 under 30 ms: **{'met' if total < 0.030 else 'not met'}**, {total * 1e3:.1f} ms")
    print()
    print("Where the time goes, in one process (bench/wfcommons_phases.cpp, median CPU time of 21 runs of each phase, "
          "microseconds; the import is the JSON parse plus building and checking the scenario):\n")
    sys.stdout.flush()
    subprocess.run([phases, "--repeat", "21"] + [os.path.join(data, f) for f in files], check=True)


if __name__ == "__main__":
    main()
