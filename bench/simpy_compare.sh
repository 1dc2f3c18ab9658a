#!/usr/bin/env bash
# The simulator against SimPy on the same fan-out/fan-in workload, the SimPy side written as its best users
# write it: ../shared/peers/simpy_strong.py (node choice without a scan, one timeout per pod) and its
# `--lean` style (callbacks instead of processes). Not part of this repository (a peer's code): set
# SIMPY_STRONG=/path/to/simpy_strong.py if it is elsewhere.
#   bench/simpy_compare.sh                        # 20000 tasks on 100 nodes, then on 1000 nodes (~3 min)
#   bench/simpy_compare.sh TASKS NODES [ROUNDS]   # one size
# Every round runs, one after the other so that all see the same moments of this shared machine's load:
#   - shardflow cold: a new process (`sim_cold TASKS NODES`, bench/sim_cold.cpp: the simulator linked
#     statically, libc included) that builds the workload, unrolls and simulates it once and prints one
#     JSON line; its whole CPU time (exec and start-up included), from the OS (getrusage of the child);
#   - shardflow cold, summary: the same with `--summary`: the run keeps no attempt records
#     (SimOptions::records false), as a sweep runs each configuration; the SimPy model keeps none either;
#   - shardflow warm: Google Benchmark's CPU time per run in one process (BM_SimpyWorkload);
#   - the floor, cold: bench/floor_model.cpp, the same model in plain C++ with nothing else (no scenario,
#     plan, trace or pod classes; one hard-coded pipeline), linked the same way: the ratio against SimPy
#     that any C++ program of this model could give on this machine today, printed beside shardflow's;
#   - simpy_strong.py and simpy_strong.py --lean, each a new `python3` process: cold = the whole process's
#     CPU time from the OS (interpreter start-up and `import simpy` included), warm = the CPU time the
#     script measures around its own simulation.
# The SimPy model scores nodes with LeastAllocated alone, as the simulator did before it took
# kube-scheduler's default profile: the workload (bench/sim_bench.cpp simpy_workload) turns
# BalancedAllocation and ImageLocality off with score_weights, which gives the old single-policy trace.
# Ratios are SimPy's CPU time over shardflow's, cold against cold and warm against warm; the median round is
# the figure, the lowest is printed beside it. Exits non-zero if the makespans or decision counts differ.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${3:-5}
if [ $# -ge 2 ]; then sizes=("$1 $2"); else sizes=("20000 100" "20000 1000"); fi
build=build/sim-bench
venv=build/simpy-venv
peer=${SIMPY_STRONG:-../shared/peers/simpy_strong.py}
[ -f "$peer" ] || { echo "bench/simpy_compare.sh: $peer not found (set SIMPY_STRONG to simpy_strong.py)" >&2; exit 2; }

[ -f $build/build.ninja ] ||
  cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=Release -DSHARDFLOW_SANITIZE=OFF -DSHARDFLOW_BUILD_TESTS=OFF >/dev/null
cmake --build $build --target sim_bench sim_cold floor_model -j 2 >/dev/null  # a no-op when up to date
if [ ! -x $venv/bin/python ] || ! $venv/bin/python -c 'import simpy' 2>/dev/null; then
  python3 -m venv $venv
  $venv/bin/pip install -q 'simpy==4.1.2'
fi

status=0
for size in "${sizes[@]}"; do
  read -r tasks nodes <<<"$size"
  python3 - "$build/bench/sim_bench" "$build/bench/sim_cold" "$build/bench/floor_model" "$venv/bin/python" "$peer" "$tasks" "$nodes" "$rounds" <<'PY' || status=1
import json, resource, statistics, subprocess, sys
bench, cold_bench, floor, python, peer, tasks, nodes, rounds = sys.argv[1:8] + [int(sys.argv[8])]

def child_cpu(cmd):
    """Runs cmd; returns (its stdout, the CPU seconds the OS charged to it and its children)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return out, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)

print(f"workload: {tasks} tasks on {nodes} nodes (fan-out -> aggregate -> 3 trainings), {rounds} rounds")
rows = []
for r in range(rounds):
    out, c_cold = child_cpu([cold_bench, tasks, nodes])
    cold = json.loads(out)
    out, cs_cold = child_cpu([cold_bench, tasks, nodes, "--summary"])
    summary = json.loads(out)
    out, f_cold = child_cpu([floor, tasks, nodes])
    fl = json.loads(out)
    out = subprocess.run([bench, f"--benchmark_filter=BM_SimpyWorkload/{tasks}/{nodes}$", "--benchmark_format=json",
                          "--benchmark_min_time=0.5"], check=True, capture_output=True, text=True).stdout
    cpp = json.loads(out)["benchmarks"][0]
    c_warm = cpp["cpu_time"] * {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[cpp["time_unit"]]
    out, s_cold = child_cpu([python, peer, tasks, nodes])
    strong = json.loads(out)
    out, l_cold = child_cpu([python, peer, tasks, nodes, "--lean"])
    lean = json.loads(out)
    rows.append(dict(c_cold=c_cold, cs_cold=cs_cold, f_cold=f_cold, c_warm=c_warm, s_cold=s_cold, s_warm=strong["cpu_seconds"], l_cold=l_cold,
                     l_warm=lean["cpu_seconds"], makespans=(cold["makespan_s"], cpp["makespan_s"], strong["makespan_s"],
                     lean["makespan_s"], fl["makespan_s"], summary["makespan_s"]), decisions=(cold["decisions"], strong["decisions"],
                     lean["decisions"], fl["decisions"], summary["decisions"])))
    x = rows[-1]
    print(f"  round {r + 1}: shardflow cold {c_cold * 1e3:.1f} ms, summary {cs_cold * 1e3:.1f} ms, warm {c_warm * 1e3:.2f} ms; floor cold {f_cold * 1e3:.1f} ms; simpy_strong cold "
          f"{s_cold:.3f} s, warm {x['s_warm']:.3f} s; --lean cold {l_cold:.3f} s, warm {x['l_warm']:.3f} s")
m = rows[0]["makespans"]
same = all(abs(v - m[0]) < 1e-3 for x in rows for v in x["makespans"])
same_d = all(len(set(x["decisions"])) == 1 for x in rows)
print(f"makespan      : shardflow {m[0]:.3f} s, simpy_strong {m[2]:.3f} s, --lean {m[3]:.3f} s, floor {m[4]:.3f} s: "
      f"{'the same' if same else 'DIFFERENT'}; decisions {rows[0]['decisions'][0]} {'the same' if same_d else 'DIFFERENT'}")
def ratio(num, den, label, digits=0):
    rs = sorted(x[num] / x[den] for x in rows)
    print(f"{label}: {statistics.median(rs):.{digits}f}x in CPU time, median of {rounds} rounds (lowest "
          f"{rs[0]:.{digits}f}x, highest {rs[-1]:.{digits}f}x)")
ratio("s_cold", "c_cold", "vs simpy_strong, cold")
ratio("l_cold", "c_cold", "vs --lean, cold       ")
ratio("s_cold", "cs_cold", "summary run vs simpy_strong, cold")
ratio("l_cold", "cs_cold", "summary run vs --lean, cold       ")
ratio("s_cold", "f_cold", "floor vs simpy_strong, cold")
ratio("l_cold", "f_cold", "floor vs --lean, cold       ")
ratio("c_cold", "f_cold", "shardflow over the floor, cold", 2)
ratio("cs_cold", "f_cold", "summary run over the floor, cold", 2)
ratio("s_warm", "c_warm", "vs simpy_strong, warm")
ratio("l_warm", "c_warm", "vs --lean, warm       ")
sys.exit(0 if same and same_d else 1)
PY
done
exit $status
