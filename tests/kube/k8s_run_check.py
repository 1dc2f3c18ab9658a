#!/usr/bin/env python3
"""Checks a trace.json of `shardflow run --backend k8s` for tests/kube/k8s_run_test.sh.

    k8s_run_check.py seed-shape TRACE NODES_JSON   the 200-shard loop never ran more than 20 pods at once,
                                                   the fan-in began after the last shard ended, the
                                                   sweep ran on GPU-labelled nodes; every task once
    k8s_run_check.py nested TRACE                  at most 2 iterations of `shard` at once, at most 2
                                                   pods of each iteration's `prep` at once; order kept
                                                   (each attempt of kind first; trace.csv's kind
                                                   column agrees with trace.json)
    k8s_run_check.py retries TRACE FAIL_INDEXES    each failing index has 3 failed attempts (kinds first,
                                                   retry, retry) and no success, the others one success;
                                                   `after` never ran; metrics.json beside TRACE counts
                                                   2 retries per failing index, no backups or replacements
    k8s_run_check.py resume TRACE PODS_JSON        after a kill and --resume: each of the 60 shards succeeded
                                                   exactly once, in the trace and on the API server
Prints one "ok ..." line per check; exits 1 with "FAIL ..." on the first that does not hold.
"""
import csv
import json
import os
import sys


def fail(msg):
    print("FAIL " + msg)
    sys.exit(1)


def max_overlap(intervals):
    """The most intervals [start, end) that hold one instant."""
    events = sorted([(s, 1) for s, e in intervals] + [(e, -1) for s, e in intervals])
    n = best = 0
    for _, d in events:  # ends (-1) sort before starts (+1) at the same instant
        n += d
        best = max(best, n)
    return best


def load(path):
    t = json.load(open(path))
    for a in t["attempts"]:
        a["step_name"] = t["steps"][a["step"]]
    return t


def of(t, step):
    return [a for a in t["attempts"] if a["step_name"] == step]


def seed_shape(trace, nodes_json):
    t = load(trace)
    if t["backend"] != "k8s":
        fail("backend %s" % t["backend"])
    pre, agg, train = of(t, "preprocess"), of(t, "aggregate"), of(t, "train")
    for name, atts, n in (("preprocess", pre, 200), ("aggregate", agg, 1), ("train", train, 3)):
        ok = sorted(a["item"] for a in atts if a["outcome"] == "succeeded")
        if ok != list(range(n)) or len(atts) != n:
            fail("%s: %d attempts, succeeded items %s; want each of %d once" % (name, len(atts), ok[:10], n))
    print("ok every task ran once and succeeded: 200 preprocess, 1 aggregate, 3 train")
    kinds = sorted(set(a["kind"] for a in t["attempts"]))
    if kinds != ["first"]:
        fail("attempt kinds %s; want only first (every task ran once)" % kinds)
    rows = list(csv.DictReader(open(os.path.join(os.path.dirname(trace), "trace.csv"))))
    if [r["kind"] for r in rows] != [a["kind"] for a in t["attempts"]]:
        fail("trace.csv's kind column does not match trace.json's kinds")
    print("ok every attempt of kind first, in trace.json and trace.csv")
    running = max_overlap([(a["started"], a["finished"]) for a in pre])
    if running > 20:
        fail("preprocess ran %d pods at once (parallelism 20)" % running)
    if running < 15:
        fail("preprocess ran at most %d pods at once: the limit of 20 was not exercised" % running)
    print("ok preprocess: at most %d pods running at once (limit 20)" % running)
    last = max(a["finished"] for a in pre)
    if agg[0]["submitted"] < last:
        fail("aggregate's pod was created %.3f s before the last shard ended" % ((last - agg[0]["submitted"]) / 1e9))
    print("ok fan-in: aggregate's pod created %.3f s after the last shard ended" % ((agg[0]["submitted"] - last) / 1e9))
    if min(a["submitted"] for a in train) < agg[0]["finished"]:
        fail("train began before aggregate ended")
    real = {n["metadata"]["name"]: n["metadata"].get("labels", {}) for n in json.load(open(nodes_json))["items"]}
    names = [n["name"] for n in t["nodes"]]
    for a in t["attempts"]:
        if a["node"] < 0 or names[a["node"]] not in real:
            fail("attempt of task %d on node %r, not a node of the cluster" % (a["task"], a["node"]))
    for a in train:
        if real[names[a["node"]]].get("accel") != "a100":
            fail("train[%d] ran on %s, which has no accel=a100 label" % (a["item"], names[a["node"]]))
    print("ok every attempt on a real node; the sweep on accel=a100 nodes (%s)" %
          ", ".join(sorted({names[a["node"]] for a in train})))
    for a in t["attempts"]:
        if not (0 <= a["submitted"] <= a["scheduled"] <= a["started"] <= a["finished"]):
            fail("task %d: times out of order %s" % (a["task"], a))
    print("ok submitted <= scheduled <= started <= finished for every attempt")


def nested(trace):
    t = load(trace)
    prep, post, report = of(t, "shard/prep"), of(t, "shard/post"), of(t, "report")
    if len(prep) != 24 or len(post) != 4 or len(report) != 1:
        fail("%d prep, %d post, %d report attempts; want 24, 4, 1" % (len(prep), len(post), len(report)))
    if any(a["outcome"] != "succeeded" for a in t["attempts"]):
        fail("an attempt did not succeed")
    # A task's group iteration: post's item is its iteration; prep's pods are named ...-shard-<k>-<i>-xxxxx.
    def iteration(a):
        if a["step_name"] == "shard/post":
            return a["item"]
        return int(a["pod"].rsplit("-shard-", 1)[1].split("-")[0])
    spans = {}
    for a in prep + post:
        k = iteration(a)
        s, e = spans.get(k, (a["submitted"], a["finished"]))
        spans[k] = (min(s, a["submitted"]), max(e, a["finished"]))
    if sorted(spans) != [0, 1, 2, 3]:
        fail("iterations %s" % sorted(spans))
    active = max_overlap(list(spans.values()))
    if active > 2:
        fail("%d iterations of shard at once (parallelism 2)" % active)
    print("ok shard: at most %d iterations at once (limit 2)" % active)
    for k in range(4):
        mine = [a for a in prep if iteration(a) == k]
        n = max_overlap([(a["started"], a["finished"]) for a in mine])
        if n > 2:
            fail("iteration %d ran %d prep pods at once (parallelism 2)" % (k, n))
        p = [a for a in post if a["item"] == k][0]
        if p["submitted"] < max(a["finished"] for a in mine):
            fail("iteration %d: post began before its prep ended" % k)
    print("ok prep: at most 2 pods at once in each iteration; post after its iteration's prep")
    if report[0]["submitted"] < max(a["finished"] for a in prep + post):
        fail("report began before every iteration ended")
    print("ok report after every iteration")


def retries(trace, fail_indexes):
    t = load(trace)
    want = sorted(int(x) for x in fail_indexes.split(",") if x)
    flaky = of(t, "flaky")
    for i in range(12):
        mine = sorted((a for a in flaky if a["item"] == i), key=lambda a: a["attempt"])
        outcomes = [a["outcome"] for a in mine]
        expect = ["failed"] * 3 if i in want else ["succeeded"]
        if outcomes != expect:
            fail("flaky[%d]: attempts %s, want %s" % (i, outcomes, expect))
        if [a["attempt"] for a in mine] != list(range(len(mine))):
            fail("flaky[%d]: attempt numbers %s" % (i, [a["attempt"] for a in mine]))
        kinds = [a["kind"] for a in mine]
        if kinds != ["first"] + ["retry"] * (len(mine) - 1):
            fail("flaky[%d]: attempt kinds %s, want first then retries" % (i, kinds))
    print("ok flaky: indexes %s failed 3 times each (2 retries), the others succeeded at once" % want)
    if of(t, "after"):
        fail("`after` ran although flaky failed")
    if t["tasks_failed"] != len(want):
        fail("tasks_failed %d, want %d" % (t["tasks_failed"], len(want)))
    print("ok after never ran; tasks_failed = %d" % len(want))
    m = json.load(open(os.path.join(os.path.dirname(trace), "metrics.json")))
    got = {k: m[k] for k in ("retries", "backups", "backups_won", "replacements", "failed_attempts",
                             "cancelled_attempts")}
    expect = {"retries": 2 * len(want), "backups": 0, "backups_won": 0, "replacements": 0,
              "failed_attempts": 3 * len(want), "cancelled_attempts": 0}
    if got != expect:
        fail("metrics.json: %s, want %s" % (got, expect))
    print("ok metrics.json: %d retries, %d failed attempts, no backups, replacements or cancelled attempts"
          % (2 * len(want), 3 * len(want)))


def resume(trace, pods_json, journal=None, killed_done=None):
    t = load(trace)
    shards, merge = of(t, "shards"), of(t, "merge")
    ok = sorted(a["item"] for a in shards if a["outcome"] == "succeeded")
    if ok != list(range(60)) or len(shards) != 60:
        fail("shards: %d attempts, succeeded items %s; want each of 60 exactly once" % (len(shards), ok))
    if len(merge) != 1 or merge[0]["outcome"] != "succeeded":
        fail("merge: %s" % merge)
    if merge[0]["submitted"] < max(a["finished"] for a in shards):
        fail("merge began before the last shard ended")
    if any(a["kind"] != "first" for a in shards + merge):
        fail("an attempt of kind other than first: %s" % sorted(set(a["kind"] for a in shards + merge)))
    print("ok trace: each of the 60 shards succeeded exactly once (kind first), then merge")
    done = {}
    for p in json.load(open(pods_json))["items"]:
        ann = p["metadata"].get("annotations", {})
        if p["status"].get("phase") == "Succeeded" and "batch.kubernetes.io/job-completion-index" in ann:
            i = int(ann["batch.kubernetes.io/job-completion-index"])
            done[i] = done.get(i, 0) + 1
    if sorted(done) != list(range(60)) or any(n != 1 for n in done.values()):
        fail("API server: succeeded pods per index %s" % done)
    print("ok API server: one succeeded pod per index, 60 indexes")
    if journal is None:
        return
    # The killed run's journal (pods.jsonl, copied before the resume): every pod end it stamped from its
    # clock is in the resumed trace to the nanosecond (the API's timestamps count whole seconds).
    ended = {}
    for line in open(journal):
        j = json.loads(line)
        if j["field"] == "finished":
            ended[j["uid"]] = j["ns"]
    name = {p["metadata"]["uid"]: p["metadata"]["name"] for p in json.load(open(pods_json))["items"]}
    finished = {a["pod"]: a["finished"] for a in t["attempts"]}
    if len(ended) < int(killed_done):
        fail("the killed run's journal has %d pod ends, want at least the %s shards done" % (len(ended), killed_done))
    wrong = [(name.get(u), ns, finished.get(name.get(u))) for u, ns in ended.items() if finished.get(name.get(u)) != ns]
    if wrong:
        fail("pod ends the killed run saw, not kept by the resumed trace (pod, journal, trace): %s" % wrong[:5])
    print("ok the resumed trace keeps the killed run's %d pod ends to the nanosecond (from its journal)" % len(ended))


if __name__ == "__main__":
    {"seed-shape": seed_shape, "nested": nested, "retries": retries, "resume": resume}[sys.argv[1]](*sys.argv[2:])
