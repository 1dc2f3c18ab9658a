#!/usr/bin/env bash
# Builds the simulator benchmark (Release) and a SimPy venv, runs the same fan-out/fan-in workload in both
# and prints the times, the makespans (they must agree: same model) and the speed ratio.
#   bench/simpy_compare.sh                 # 20000 tasks on 100 nodes, then on 1000 nodes (about a minute)
#   bench/simpy_compare.sh TASKS NODES     # one size
# Exits non-zero if the two makespans differ.
set -euo pipefail
cd "$(dirname "$0")/.."
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
cpp_json=$($build/bench/sim_bench --benchmark_filter="BM_SimpyWorkload/$tasks/$nodes\$" --benchmark_format=json \
  --benchmark_min_time=1 2>/dev/null)
py_json=$($venv/bin/python bench/simpy_compare.py "$tasks" "$nodes")

python3 - "$cpp_json" "$py_json" <<'PY' || status=1
import json, sys
cpp = json.loads(sys.argv[1])["benchmarks"][0]
py = json.loads(sys.argv[2])
scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[cpp["time_unit"]]
c_wall, c_cpu = cpp["real_time"] * scale, cpp["cpu_time"] * scale
print(f"workload: {py['tasks']} tasks on {py['nodes']} nodes (fan-out -> aggregate -> 3 trainings)")
print(f"shardflow sim : {c_wall:.4f} s wall, {c_cpu:.4f} s CPU per run; makespan {cpp['makespan_s']:.3f} s")
print(f"SimPy 4.1.2   : {py['seconds']:.4f} s wall, {py['cpu_seconds']:.4f} s CPU;         makespan {py['makespan_s']:.3f} s")
same = abs(cpp["makespan_s"] - py["makespan_s"]) < 1e-3
print(f"same makespan : {'yes' if same else 'NO'}")
print(f"speed ratio   : {py['cpu_seconds'] / c_cpu:.0f}x in CPU time ({py['seconds'] / c_wall:.0f}x in wall time,"
      " which the machine's other load blurs)")
sys.exit(0 if same else 1)
PY
done
exit $status
