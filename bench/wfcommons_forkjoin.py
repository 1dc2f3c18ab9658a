#!/usr/bin/env python3
"""Writes a synthetic WfCommons instance (schema 1.4, as the instances in ../shared/data/wfcommons): one
fork task, N - 2 parallel tasks, one join task, with run times 100 s + (i mod 97) * 0.5 s. For measuring
what a large import costs (reports/planner-sweep.md).

  bench/wfcommons_forkjoin.py N OUT.json
"""
import json
import sys


def main():
    if len(sys.argv) != 3 or not sys.argv[1].isdigit() or int(sys.argv[1]) < 3:
        sys.exit("usage: bench/wfcommons_forkjoin.py N OUT.json  (N >= 3 tasks)")
    n, out = int(sys.argv[1]), sys.argv[2]

    def tid(i):
        return "task_%08d" % i

    middle = [tid(i) for i in range(2, n)]
    spec, execution, files = [], [], []
    for i in range(1, n + 1):
        parents = [] if i == 1 else middle if i == n else [tid(1)]
        children = middle if i == 1 else [] if i == n else [tid(n)]
        spec.append({"name": tid(i), "id": tid(i), "parents": parents, "children": children,
                     "inputFiles": ["in_%d" % i], "outputFiles": ["out_%d" % i]})
        execution.append({"id": tid(i), "runtimeInSeconds": 100.0 + (i % 97) * 0.5,
                          "command": {"program": "work", "arguments": []}, "avgCPU": 100.0,
                          "memoryInBytes": 75016, "machines": ["node"]})
        files += [{"id": "in_%d" % i, "sizeInBytes": 1000}, {"id": "out_%d" % i, "sizeInBytes": 1000}]
    doc = {"name": "forkjoin-%d" % n, "description": "synthetic fork-join (bench/wfcommons_forkjoin.py)",
           "createdAt": "2026-12-04T00:00:00Z", "schemaVersion": "1.4",
           "author": {"name": "shardflow", "email": "none"},
           "workflow": {"specification": {"tasks": spec, "files": files},
                        "execution": {"makespanInSeconds": 0, "executedAt": "2026-12-04T00:00:00Z",
                                      "tasks": execution,
                                      "machines": [{"nodeName": "node", "cpu": {"coreCount": 64}}]}},
           "runtimeSystem": {"name": "none", "version": "0", "url": "none"}}
    with open(out, "w") as f:
        json.dump(doc, f)


if __name__ == "__main__":
    main()
