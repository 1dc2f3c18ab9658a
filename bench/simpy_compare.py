#!/usr/bin/env python3
"""The shardflow benchmark workload written the way a Python user would, with SimPy.

A fan-out of N preprocess pods (1 CPU, 2 GiB, 60 s) -> one aggregate pod (4 CPU, 16 GiB, 60 s) -> 3 train
pods (8 CPU, 32 GiB, 600 s) on M nodes of 16 CPU / 64 GiB. One scheduler makes one decision per 1 ms
(FIFO, LeastAllocated score over all nodes as kube-scheduler computes it, ties broken at random, a pod
that fits nowhere waits until a pod ends), then a 10 ms bind, an image pull on first use per node
(5 s, serialized per node), a 1 s sandbox start, and the run.

This is the same model as bench/sim_bench.cpp's BM_SimpyWorkload, so both print the same makespan.
Usage: simpy_compare.py TASKS NODES  -> prints one JSON line: seconds (wall), cpu_seconds, makespan_s.
"""
import collections
import json
import random
import sys
import time

import simpy

CPU, MEM = 16000, 64 * 2**30
DECISION, BIND, PULL, SANDBOX = 0.001, 0.010, 5.0, 1.0


def least_allocated(req_cpu, req_mem, cap_cpu, cap_mem):
    # kube-scheduler NodeResourcesFit LeastAllocated, integer arithmetic, weights 1 and 1.
    cpu = (cap_cpu - req_cpu) * 100 // cap_cpu if req_cpu <= cap_cpu else 0
    mem = (cap_mem - req_mem) * 100 // cap_mem if req_mem <= cap_mem else 0
    return (cpu + mem) // 2


def run(tasks, nodes, seed=1):
    env = simpy.Environment()
    rng = random.Random(seed)
    used_cpu = [0] * nodes
    used_mem = [0] * nodes
    image_ready = [dict() for _ in range(nodes)]  # image -> time it is on the node
    pull_free = [0.0] * nodes
    pending = collections.deque()
    state = {"wake": env.event(), "blocked": False}

    def wake():
        if not state["wake"].triggered:
            state["wake"].succeed()

    def submit(pod):
        pending.append(pod)
        wake()

    def scheduler():
        while True:
            if not pending or state["blocked"]:
                state["wake"] = env.event()
                yield state["wake"]
                state["blocked"] = False
                continue
            yield env.timeout(DECISION)
            cpu, mem, image, seconds, done = pending[0]
            best, choice, ties = -1, None, 0
            for n in range(nodes):
                if used_cpu[n] + cpu > CPU or used_mem[n] + mem > MEM:
                    continue
                s = least_allocated(used_cpu[n] + cpu, used_mem[n] + mem, CPU, MEM)
                if s > best:
                    best, choice, ties = s, n, 1
                elif s == best:
                    ties += 1
                    if rng.randrange(ties) == 0:
                        choice = n
            if choice is None:
                state["blocked"] = True
                continue
            pending.popleft()
            used_cpu[choice] += cpu
            used_mem[choice] += mem
            env.process(pod(choice, cpu, mem, image, seconds, done))

    def pod(n, cpu, mem, image, seconds, done):
        yield env.timeout(BIND)
        ready = image_ready[n].get(image)
        if ready is None:
            start = max(env.now, pull_free[n])
            ready = image_ready[n][image] = pull_free[n] = start + PULL
        if ready > env.now:
            yield env.timeout(ready - env.now)
        yield env.timeout(SANDBOX)
        yield env.timeout(seconds)
        used_cpu[n] -= cpu
        used_mem[n] -= mem
        state["blocked"] = False
        wake()
        done.succeed()

    def pipeline():
        shards = [env.event() for _ in range(tasks)]
        for d in shards:
            submit((1000, 2 * 2**30, "preprocess:1", 60.0, d))
        yield simpy.AllOf(env, shards)
        agg = env.event()
        submit((4000, 16 * 2**30, "aggregate:1", 60.0, agg))
        yield agg
        trains = [env.event() for _ in range(3)]
        for d in trains:
            submit((8000, 32 * 2**30, "train:1", 600.0, d))
        yield simpy.AllOf(env, trains)
        state["end"] = env.now

    env.process(scheduler())
    env.process(pipeline())
    env.run()  # until no event is left (the scheduler then waits forever)
    return state["end"]


if __name__ == "__main__":
    tasks = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    nodes = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    t0, c0 = time.perf_counter(), time.process_time()
    makespan = run(tasks, nodes)
    t1, c1 = time.perf_counter(), time.process_time()
    print(json.dumps({"tasks": tasks, "nodes": nodes, "seconds": round(t1 - t0, 4), "cpu_seconds": round(c1 - c0, 4),
                      "makespan_s": round(makespan, 6)}))
