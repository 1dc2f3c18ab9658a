#!/usr/bin/env bash
# Builds the simulator benchmark (Release) and a SimPy venv, runs the same fan-out/fan-in workload in both
# and prints the times, the makespans (they must agree: same model) and the speed ratio.
#   bench/simpy_compare.sh                        # 20000 tasks on 100 nodes, then on 1000 nodes (~2 min)
#   bench/simpy_compare.sh TASKS NODES [ROUNDS]   # one size
# The two run side by side in ROUNDS rounds (default 5), each a C++ measurement (Google Benchmark, mean
# of as many runs as fit in 0.5 s) then one SimPy run, so that both see the same moments of this shared
# machine's load; a round's ratio is SimPy's CPU time over the C++ one. The median round is the figure,
# and the lowest is printed beside it.
# Exits non-zero if the two makespans differ.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${3:-5}
if [ $# -ge 2 ]; then sizes=("$1 $2"); else sizes=("20000 100" "20000 1000"); fi
build=build/sim-bench
venv=build/simpy-venv

if [ ! -x $build/bench/sim_bench ] || [ -n "$(find sim include/shardflow bench/sim_bench.cpp -newer $build/bench/sim_bench 2>/dev/null | head -1)" ]; then
  cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=Release -DSHARDFLOW_SANITIZE=OFF -DSHARDFLOW_BUILD_TESTS=OFF \
    -DSHARDFLOW_K8S_TESTS=OFF >/dev/null
  cmake --build $build --target sim_bench -j 2 >/dev/null
fi
if [ ! -x $venv/bin/python ] || ! $venv/bin/python -c 'import simpy' 2>/dev/null; then
  python3 -m venv $venv
  $venv/bin/pip install -q 'simpy==4.1.2'
fi

status=0
for size in "${sizes[@]}"; do
  read -r tasks nodes <<<"$size"
  python3 - "$build/bench/sim_bench" "$venv/bin/python" "$tasks" "$nodes" "$rounds" <<'PY' || status=1
import json, statistics, subprocess, sys
bench, python, tasks, nodes, rounds = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
print(f"workload: {tasks} tasks on {nodes} nodes (fan-out -> aggregate -> 3 trainings), {rounds} rounds")
rows = []
for r in range(rounds):
    out = subprocess.run([bench, f"--benchmark_filter=BM_SimpyWorkload/{tasks}/{nodes}$", "--benchmark_format=json",
                          "--benchmark_min_time=0.5"], check=True, capture_output=True, text=True).stdout
    cpp = json.loads(out)["benchmarks"][0]
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[cpp["time_unit"]]
    py = json.loads(subprocess.run([python, "bench/simpy_compare.py", tasks, nodes], check=True,
                                   capture_output=True, text=True).stdout)
    c_cpu = cpp["cpu_time"] * scale
    rows.append((py["cpu_seconds"] / c_cpu, c_cpu, py["cpu_seconds"], cpp["makespan_s"], py["makespan_s"]))
    print(f"  round {r + 1}: shardflow {c_cpu * 1e3:.2f} ms CPU per run, SimPy 4.1.2 {py['cpu_seconds']:.3f} s CPU:"
          f" {rows[-1][0]:.0f}x")
same = all(abs(c - p) < 1e-3 for _, _, _, c, p in rows)
print(f"makespan      : shardflow {rows[0][3]:.3f} s, SimPy {rows[0][4]:.3f} s: {'the same' if same else 'DIFFERENT'}")
ratios = sorted(x[0] for x in rows)
print(f"speed ratio   : {statistics.median(ratios):.0f}x in CPU time, median of {rounds} rounds"
      f" (lowest {ratios[0]:.0f}x, highest {ratios[-1]:.0f}x)")
sys.exit(0 if same else 1)
PY
done
exit $status
