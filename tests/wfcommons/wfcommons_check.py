#!/usr/bin/env python3
"""Checks shardflow's WfCommons import on every instance in a directory, against values computed here
independently from the JSON (plain Python, no shardflow code), and the zero-overhead makespans against
WRENCH's (../shared/data/README.md, "Peer figures": WRENCH 2.3 and DSLab agree on all of them).

  wfcommons_check.py SHARDFLOW DATA_DIR

For each instance: the file is valid against its WfFormat schema (DATA_DIR/schema/, jsonschema);
`shardflow explain FILE --json` gives the task count, the edge count (parents and children, each edge
once), the critical path (longest path by runtimeInSeconds) and the total work (sum of runtimes) computed
here; `shardflow simulate FILE --no-files` prints the makespan WRENCH computes, to 1e-3 s.
Exit 0 when every check holds; otherwise the failures, one a line, and exit 1."""
import json
import os
import re
import subprocess
import sys

# Zero-overhead makespans (s) of WRENCH 2.3 on these instances (../shared/data/README.md).
WRENCH = {
    "helloworld-forkjoin-10-chameleon": 307.360,
    "srasearch-chameleon-10a-001": 1005.858,
    "epigenomics-chameleon-hep-1seq-100k-001": 104.822,
    "blast-chameleon-small-001": 10.413,
    "1000genome-chameleon-2ch-100k-001": 204.686,
    "montage-chameleon-2mass-005d-001": 21.385,
    "seismology-chameleon-100p-001": 2.840,
    "seismology-chameleon-1000p-001": 5.878,
}


def independent(doc):
    """Task count, edges, critical path and total work, straight from the JSON."""
    w = doc["workflow"]
    if "specification" in w:
        spec = w["specification"]["tasks"]
        runtime = {t["id"]: float(t["runtimeInSeconds"]) for t in w["execution"]["tasks"]}
        ids = [t["id"] for t in spec]
        edges = set()
        for t in spec:
            for p in t.get("parents", []):
                edges.add((p, t["id"]))
            for c in t.get("children", []):
                edges.add((t["id"], c))
    else:
        tasks = w["tasks"]
        key = lambda t: t.get("id", t["name"])
        ids = [key(t) for t in tasks]
        runtime = {key(t): float(t["runtimeInSeconds"]) for t in tasks}
        edges = {(p, key(t)) for t in tasks for p in t.get("parents", [])}
        edges |= {(key(t), c) for t in tasks for c in t.get("children", [])}
    parents = {i: [] for i in ids}
    for a, b in edges:
        parents[b].append(a)
    finish = {}

    def end(i):  # longest path ending with task i (iterative DFS: no recursion limit)
        stack = [i]
        while stack:
            x = stack[-1]
            todo = [p for p in parents[x] if p not in finish]
            if todo:
                stack.extend(todo)
                continue
            stack.pop()
            finish[x] = runtime[x] + max((finish[p] for p in parents[x]), default=0.0)
        return finish[i]

    cp = max(end(i) for i in ids)
    return len(ids), len(edges), cp, sum(runtime.values())


def main():
    shardflow, data = sys.argv[1], sys.argv[2]
    failures = []
    files = sorted(f for f in os.listdir(data) if f.endswith(".json"))
    if len(files) < 1:
        failures.append(f"no instances in {data}")
    try:
        import jsonschema
    except ImportError:
        print("python3-jsonschema is missing (scripts/setup installs it)")
        return 1
    schemas = {v: json.load(open(os.path.join(data, "schema", f"wfcommons-schema-{v}.json"))) for v in ("1.4", "1.5")}
    for f in files:
        path = os.path.join(data, f)
        name = f[:-5]
        doc = json.load(open(path))
        schema = schemas[doc.get("schemaVersion", "1.5")]
        errors = list(jsonschema.Draft7Validator(schema).iter_errors(doc))
        if errors:
            failures.append(f"{f}: not valid WfFormat {doc.get('schemaVersion')}: {errors[0].message}")
        n, e, cp, work = independent(doc)
        out = subprocess.run([shardflow, "explain", path, "--json"], capture_output=True, text=True)
        if out.returncode != 0:
            failures.append(f"{f}: explain exited {out.returncode}: {out.stderr.strip()}")
            continue
        s = json.loads(out.stdout)
        got = (s["tasks"], s["edges"], s["critical_path_s"], s["total_work_s"])
        if got[0] != n or got[1] != e or abs(got[2] - cp) > 1e-6 or abs(got[3] - work) > 1e-6 * max(1, work):
            failures.append(f"{f}: explain says tasks {got[0]}, edges {got[1]}, critical path {got[2]}, work {got[3]}; "
                            f"the JSON says {n}, {e}, {cp}, {work}")
        out = subprocess.run([shardflow, "simulate", path, "--no-files"], capture_output=True, text=True)
        m = re.search(r"makespan .*\(([0-9.]+) s\)", out.stdout)
        if out.returncode != 0 or not m:
            failures.append(f"{f}: simulate exited {out.returncode}: {out.stderr.strip()} {out.stdout.strip()}")
            continue
        makespan = float(m.group(1))
        if name in WRENCH and abs(makespan - WRENCH[name]) > 1e-3:
            failures.append(f"{f}: simulated makespan {makespan:.3f} s, WRENCH {WRENCH[name]:.3f} s")
        print(f"{f}: {n} tasks, {e} edges, critical path {cp:.3f} s, work {work:.3f} s; "
              f"makespan {makespan:.3f} s (WRENCH {WRENCH.get(name, float('nan')):.3f} s)")
    for x in failures:
        print("FAIL", x)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
