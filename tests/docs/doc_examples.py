#!/usr/bin/env python3
"""Runs the shardflow commands that README.md and docs/*.md show, so that the documentation cannot drift
from the program.

    doc_examples.py SHARDFLOW REPO

Every fenced code block is read; each line that starts with `shardflow ` or `$ shardflow ` (with its
backslash continuations) is a command. It runs in a scratch directory that links the repository's
top-level entries (scenarios/, tests/, ...), with `shardflow` meaning the built binary; a line of a block
that only sets shell variables (`S=scenarios/x.yaml; V=...`) has them expanded in the block's commands:

- a `$ ` command is shown with its output: the lines after it, up to the next `$ ` or the end of the
  block, must appear in what it prints (stdout then stderr), in order; a line `...` stands for any lines;
- any other command must exit 0.

The commands run in the order the docs show them, in one directory: a command may read what an earlier
one wrote (run, then calibrate on its output). A command is skipped, and listed with the reason, when it
cannot run here: it names a file or directory that neither the repository, an earlier command nor
tests/data has (a placeholder such as S.yaml, or a file the reader makes
first, such as a compiled pipeline.yaml), it pipes into another program, it elides arguments (`...`), or
it needs a live cluster (`--backend k8s` without `--dry-run`, `shardflow k8s`). A bare file name that is
not at the top of the repository is looked up by name under tests/data/ (the WfCommons instances the docs
name). At least MIN_RUN commands must run, so that a change to this reader cannot make the test pass by
running nothing.
"""
import os
import pathlib
import re
import shlex
import subprocess
import sys
import tempfile

MIN_RUN = 20
FILE_SUFFIXES = (".yaml", ".yml", ".json")


ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def assignments(line):
    """The variables a line such as `S=scenarios/x.yaml; V='a=1,2'` sets, or None if it is not one."""
    parts = [p.strip() for p in line.split(";") if p.strip()]
    if not parts or not all(ASSIGNMENT.match(p) for p in parts):
        return None
    out = {}
    for p in parts:
        name, value = p.split("=", 1)
        words = shlex.split(value)
        out[name] = words[0] if words else ""
    return out


def expand(command, variables):
    """$NAME and ${NAME} replaced by the variable's value, as the shell would (the values hold no spaces)."""
    for name, value in variables.items():
        command = command.replace("${" + name + "}", value)
        command = re.sub(r"\$" + name + r"(?![A-Za-z0-9_])", lambda _: value, command)
    return command


def commands(path):
    """(line number, command, documented output lines or None) for each command in path's code blocks;
    the variables that lines of a block set before a command are expanded in it."""
    out = []
    lines = path.read_text(encoding="utf-8").splitlines()
    in_block = False
    variables = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith("```"):
            in_block = not in_block
            variables = {}
            i += 1
            continue
        stripped = line.strip()
        if in_block and (set_here := assignments(stripped)) is not None:
            variables.update(set_here)
            i += 1
            continue
        shown = stripped.startswith("$ shardflow ")
        if in_block and (stripped.startswith("shardflow ") or shown):
            start = i + 1
            cmd = stripped[2:] if shown else stripped
            while cmd.endswith("\\") and i + 1 < len(lines):
                i += 1
                cmd = cmd[:-1].rstrip() + " " + lines[i].strip()
            expected = None
            if shown:
                expected = []
                while i + 1 < len(lines):
                    nxt = lines[i + 1]
                    if nxt.lstrip().startswith("```") or nxt.strip().startswith("$ "):
                        break
                    expected.append(nxt.rstrip())
                    i += 1
            out.append((start, expand(cmd, variables), expected))
        i += 1
    return out


def find_data(repo, name):
    """A file of that name under tests/data/, if exactly one has it."""
    hits = [p for p in (repo / "tests" / "data").rglob(name) if p.is_file()]
    return hits[0] if len(hits) == 1 else None


def why_skipped(words, repo, work):
    """The reason the command cannot run here, or None; links the data files it names into work."""
    if "|" in words or any(w in ("...", "…") for w in words):
        return "pipes into another program or elides arguments"
    if len(words) > 1 and words[1] == "k8s":
        return "needs a live cluster (shardflow k8s)"
    backend = words[words.index("--backend") + 1 :][:1] if "--backend" in words else []
    if backend == ["k8s"] and "--dry-run" not in words:
        return "needs a live cluster (--backend k8s)"
    for k, w in enumerate(words[2:], start=2):
        if w.startswith("-") or "=" in w or words[k - 1] in ("--out", "--run-id", "--namespace"):
            continue
        slice_or_ratio = re.fullmatch(r"[0-9]+/[0-9]+", w) is not None  # --shard 0/3
        looks_like_path = w.endswith(FILE_SUFFIXES) or ("/" in w and not slice_or_ratio) or any(c in w for c in "*?")
        placeholder = re.fullmatch(r"[A-Z][A-Z0-9_]*", w) is not None  # S, DIR, FILE
        if not (looks_like_path or placeholder):
            continue
        if (work / w).exists():  # the repository's, or made by a command the docs show before it
            continue
        if "/" not in w and (hit := find_data(repo, w)) is not None:
            (work / w).symlink_to(hit)  # not there (above): a later command finds it
            continue
        return f"names {w}, which neither the repository nor an earlier command has"
    return None


def shown_output_matches(expected, printed):
    """Whether the documented lines appear in the printed lines in order (`...` matches any lines)."""
    want = [e for e in expected if e.strip() not in ("", "...", "…")]
    at = 0
    for line in printed:
        if at < len(want) and line.rstrip() == want[at]:
            at += 1
    return at == len(want), want[at] if at < len(want) else None


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    exe = pathlib.Path(sys.argv[1]).resolve()
    repo = pathlib.Path(sys.argv[2]).resolve()
    docs = [repo / "README.md"] + sorted((repo / "docs").glob("*.md"))
    failures, skipped, ran = [], [], 0
    with tempfile.TemporaryDirectory(prefix="shardflow-doc-examples-") as tmp:
        work = pathlib.Path(tmp)
        for entry in repo.iterdir():
            if entry.name not in (".git", "build", "out"):
                (work / entry.name).symlink_to(entry)
        env = dict(os.environ, PATH=f"{exe.parent}{os.pathsep}{os.environ.get('PATH', '')}")
        env.pop("KUBECONFIG", None)
        for doc in docs:
            for line_no, cmd, expected in commands(doc):
                where = f"{doc.relative_to(repo)}:{line_no}"
                command = cmd.split(" #", 1)[0].strip()  # a trailing comment explains the command
                try:
                    words = shlex.split(command)
                except ValueError as e:
                    failures.append(f"{where}: `{command}`: not a valid shell command ({e})")
                    continue
                reason = why_skipped(words, repo, work)
                if reason:
                    skipped.append(f"{where}: {reason}")
                    continue
                words[0] = str(exe)
                r = subprocess.run(words, cwd=work, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                                   text=True, timeout=300)
                ran += 1
                if expected is None:
                    if r.returncode != 0:
                        failures.append(f"{where}: `{command}` exited {r.returncode}:\n{r.stderr.strip()}")
                else:
                    ok, missing = shown_output_matches(expected, (r.stdout + r.stderr).splitlines())
                    if not ok:
                        failures.append(f"{where}: `{command}` did not print the documented line\n  {missing}\n"
                                        f"it printed:\n{(r.stdout + r.stderr).strip()}")
    for s in skipped:
        print(f"skipped {s}")
    print(f"{ran} documented commands run, {len(skipped)} skipped, {len(failures)} failed")
    for f in failures:
        print(f"FAILED {f}", file=sys.stderr)
    if ran < MIN_RUN:
        print(f"only {ran} commands ran (at least {MIN_RUN} expected): did the reader of the docs break?",
              file=sys.stderr)
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
