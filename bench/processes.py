"""The processes a trivial piece starts: `strace -f` on `git balanced engine --until-idle`, each command grouped.

    python bench/processes.py [--pieces N] [--top K]

In a throwaway repository set up as bench/engine.py sets up its own (a real check, the shell agent), it stores a
plan of N (20) trivial pieces with `plan --start`, then runs `engine --until-idle` under `strace -f -z -e
trace=execve,clone,clone3,fork,vfork` (the calls that succeeded, and who started whom) and prints, per piece, the
processes started by the engine's process and by its runner session (and what they started), grouped by
command: git by its subcommand and options, anything else by its program and first words. A count, not a goal:
docs/performance.md ("Processes a piece") says what remains and why. Linux with strace only.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout without installing

from bench.engine import ME, Box, build, plan_text  # noqa: E402
from git_balanced import proc  # noqa: E402

STARTED = re.compile(r"(\d+)\s+(?:<\.\.\. )?(?:clone3?|vfork|fork)[( ].*=\s*(\d+)")
EXECVE = re.compile(r'(\d+)\s+execve\("[^"]*", \[(.*?)\](?:, 0x| \.\.\.|, \[)')
WORD = re.compile(r'"((?:[^"\\]|\\.)*)"')


def traced(n: int) -> tuple[Path, Path]:
    """Run the engine on N pieces under strace: (the trace, the box's folder)."""
    root = Path(tempfile.mkdtemp(prefix="balanced-bench-processes-"))
    box = Box(root)
    repo = build(box, root / "lead")
    (root / "plan.yaml").write_text(plan_text(n, 0.0))
    box.balanced(repo, "plan", str(root / "plan.yaml"), "--start")
    trace = root / "trace"
    res = proc.run(["strace", "-f", "-qq", "-z", "-s", "4000", "-e", "trace=execve,clone,clone3,fork,vfork",
                    "-e", "signal=none", "-o", str(trace), *ME, "engine", "--until-idle"], cwd=repo, env=box.env)
    if res.code != 0:
        sys.exit(f"engine --until-idle failed under strace (exit {res.code}):\n{res.err[-2000:]}")
    return trace, root


def key(argv: list[str]) -> str:
    """The group of a command line: git by its subcommand and options, others by their first words."""
    prog = os.path.basename(argv[0])
    if prog == "git":
        rest = argv[1:]
        while rest and rest[0] in ("-c", "-C"):
            rest = rest[2:]
        while rest and rest[0].startswith("--"):
            rest = rest[1:]
        sub = rest[:2] if rest[:1] == ["worktree"] else rest[:1]  # `worktree add`, `worktree prune`
        return " ".join(["git", *sub, *[x for x in rest[len(sub):4] if x.startswith("-")]])
    if prog in ("sh", "bash"):  # by the first word of its script
        script = argv[2].split() if len(argv) > 2 and argv[1] == "-c" and argv[2].split() else ["?"]
        return f"{prog} -c {script[0]}"
    return " ".join([prog, *[os.path.basename(x) for x in argv[1:3]]])[:60]


ENGINE_MODULES = ("git_balanced.front", "git_balanced.cli")  # how the engine's own command line names it


def grouped(trace: Path) -> collections.Counter[tuple[str, str]]:
    """(who started it, its group) -> how many, from the trace; who is the nearest Python ancestor: the engine
    (`git_balanced.front`, as bench/engine.py starts it, or `git_balanced.cli`) or the runner session (`runner.py`)."""
    parent: dict[int, int] = {}
    argv_of: dict[int, list[str]] = {}
    execs: list[tuple[int, list[str]]] = []
    for line in trace.read_text(errors="replace").splitlines():
        if m := STARTED.match(line):
            parent[int(m.group(2))] = int(m.group(1))
        elif m := EXECVE.match(line):
            argv = WORD.findall(m.group(2))
            argv_of[int(m.group(1))] = argv
            execs.append((int(m.group(1)), argv))

    def who(pid: int) -> str:
        p = parent.get(pid)
        while p is not None:
            head = " ".join(argv_of.get(p, [])[:3])
            if "runner.py" in head:
                return "runner"
            if any(m in head for m in ENGINE_MODULES):
                return "engine"
            p = parent.get(p)
        return "?"

    found: collections.Counter[tuple[str, str]] = collections.Counter()
    for pid, argv in execs:
        head = " ".join(argv[:3])
        if argv and not any(m in head for m in ENGINE_MODULES) and "runner.py" not in head:
            found[(who(pid), key(argv))] += 1
    return found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pieces", type=int, default=20, help="pieces in the plan (default 20)")
    ap.add_argument("--top", type=int, default=30, help="groups shown (default 30)")
    ap.add_argument("--keep", action="store_true", help="keep the repository and the trace")
    args = ap.parse_args(argv)
    if shutil.which("strace") is None:
        sys.exit("bench/processes.py needs strace (apt-get install strace)")
    trace, root = traced(args.pieces)
    found = grouped(trace)
    n = args.pieces
    total = sum(found.values())
    by: collections.Counter[str] = collections.Counter()
    for (who, _), count in found.items():
        by[who] += count
    print(f"{total} processes for {n} pieces: {total / n:.1f} a piece ("
          + ", ".join(f"{w} {c / n:.1f}" for w, c in by.most_common()) + f"); load {os.getloadavg()[0]:.2f}")
    for (who, group), count in found.most_common(args.top):
        print(f"  {who:7s} {count / n:5.2f}  {group}")
    if args.keep:
        print(f"kept in {root}")
    else:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
