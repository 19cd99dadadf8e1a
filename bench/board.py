"""The board, the inbox, the log and start-up, against the least git and Python do for the same answer.

    python bench/board.py [--sizes 10,1000,10000] [--rounds R] [--keep]

In a throwaway lead (a private HOME and XDG folders, `bench/engine.py`'s repository with its check allowed),
it writes jobs the way the engine does (`jobs.place`, then `started`, `finished` and `landed` events), their
plans, one inbox message and one landing commit with its note per job, growing the same repository to each
size in turn. At each size it times, through `git` as a user runs it, medians of R rounds after one warm-up:

  board               against python -c pass + git for-each-ref of the live jobs' and plans' refs
  board --json --all  against python -c pass + git for-each-ref refs/balanced/jobs/ refs/balanced/plans/
  inbox               against python -c pass + git log of the inbox's messages since its fold (its answer)
  log                 against python -c pass + the git log of the lead's branch with its notes

Each command is timed twice: as it runs again with nothing changed, when `board` and `inbox` print the answer they
kept (kit/boardsaid.py), and after a change, when they read the state in full and keep their answer anew (the
change: a variable of the GIT_ family set to another value before each run, which the kept answer's stamp names,
so that the stamp differs and nothing else does).
With --archive, `git balanced gc --older-than 0` folds every done plan and job into the archive first.
Goals: each within 3x of its floor at 1,000 jobs and at 10,000. Start-up (in the smallest repository):
`git balanced --version` against python -c pass + `git --version`, `board` and `inbox` against their floors,
each within 2x, with the package's modules byte-compiled and without (a copy of the package with no .pyc,
run with PYTHONDONTWRITEBYTECODE=1; the dependencies stay as pip compiled them).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # run from a checkout without installing
sys.path.insert(0, str(HERE))  # the other benchmarks' helpers

import engine as engine_bench  # noqa: E402
import state as state_bench  # noqa: E402

from git_balanced import jobs  # noqa: E402
from git_balanced.channel import inbox  # noqa: E402
from git_balanced.git import Repo  # noqa: E402
from git_balanced.state import notes, refs  # noqa: E402
from git_balanced.state.events import new_id  # noqa: E402

PIECES_PER_PLAN = 100
GOALS = {1000: 3.0, 10000: 3.0}  # the ratio to stay within, from that many jobs on
STARTUP_GOAL = 2.0
BOARD_REFS = ("refs/balanced/jobs/", "refs/balanced/plans/")


def archived(repo: Repo) -> int:
    """How many jobs `git balanced gc` folded into refs/balanced/archive/ (state/archived.py reads its layouts)."""
    from git_balanced.state.archived import count_jobs

    return count_jobs(repo)


class Lead:
    """The benchmark's lead: a repository on main, and how far its jobs have grown."""

    def __init__(self, box: engine_bench.Box, root: Path) -> None:
        self.box = box
        self.root = root
        self.repo = Repo.discover(root)
        self.jobs = len(self.repo.list_refs("refs/balanced/jobs/")) + archived(self.repo)
        self.tip = self.repo.rev_parse("main") or ""
        self.tree = self.repo.tree_of("main")
        self.plan_id = ""
        self.plan_first = self.jobs
        self.plan_pieces: list[dict[str, object]] = []

    def grow(self, total: int) -> float:
        """Add jobs until there are `total`; returns the seconds it took."""
        start = time.perf_counter()
        step = max((total - self.jobs) // 5, 1)
        while self.jobs < total:
            n = self.jobs
            if n - self.plan_first >= len(self.plan_pieces):
                self._plan(n, min(PIECES_PER_PLAN, total - n))
            self._job(n)
            self.jobs += 1
            if (self.jobs - n) and (total - self.jobs) % step == 0:
                print(f"  {self.jobs:>6} jobs written in {time.perf_counter() - start:6.1f}s", flush=True)
        self.repo.cas_ref("refs/heads/main", self.tip, self.repo.read_ref("refs/heads/main"))
        return time.perf_counter() - start

    def _plan(self, first: int, count: int) -> None:
        """A plan of the next `count` pieces, stored and started as `plans/store.py` does it."""
        self.plan_id, self.plan_first = new_id(), first
        ref = refs.ref_for("plans", self.plan_id)
        self.plan_pieces = [{"id": f"piece-{first + i}", "task": f"Write piece {first + i}", "size": 1.0,
                             "after": [], "machine": None, "agent": "shell", "model": None,
                             "run": f"echo {first + i} > p{first + i}.txt", "paths": [], "budget_usd": None,
                             "branch": f"balanced/piece-{first + i}", "placed": "local", "why": "the only machine",
                             "after_words": ""} for i in range(count)]
        refs.append(self.repo, ref, "created", f"Plan: pieces {first} to {first + count - 1}",
                    {"id": self.plan_id, "task": f"pieces {first} to {first + count - 1}", "budget_usd": None,
                     "lead": "main", "pieces": self.plan_pieces, "source": "plan.yaml"}, state="created")
        refs.append(self.repo, ref, "started", "Plan started", {"started_by": "lead"}, state="started")

    def _job(self, n: int) -> None:
        """One piece's job from placed to landed, its inbox message, and its landing commit with the note."""
        piece = self.plan_pieces[n - self.plan_first]
        jid = jobs.place(self.repo, {
            "plan": self.plan_id, "plan_task": "pieces", "piece": piece["id"], "task": piece["task"],
            "title": piece["task"], "agent": "shell", "model": None, "run": piece["run"], "paths": [],
            "budget_usd": None, "machine": "local", "why": "the only machine", "branch": piece["branch"],
            "base": self.tip, "attempt": 1, "lead": "main", "after": []})
        chain = refs.ref_for("jobs", jid)  # written as the engine stores them, without running it
        refs.append(self.repo, chain, "started", f"{piece['id']}: started", {
            "claimed_at": time.time(), "pid": 1000 + n, "worktree": f"/tmp/wt/{jid}", "started_at": time.time()},
            state="running")
        refs.append(self.repo, chain, "finished", f"{piece['id']}: finished", {
            "exit_code": 0, "head": self.tip, "commits": 1, "outcome": "done", "summary": "wrote its file",
            "seconds": 0.2}, state="finished")
        self.tip = self.repo.write_commit(self.tree, [self.tip], f"Merge {piece['branch']} ({piece['id']})\n")
        refs.append(self.repo, chain, "landed", f"{piece['id']}: landed", {"landed": self.tip, "landed_in": "main"},
                    state="landed")
        notes.add_json(self.repo, notes.LANDINGS, self.tip, {
            "branch": piece["branch"], "job": jid, "piece": piece["id"], "plan": self.plan_id, "attempt": 1,
            "machine": "local", "agent": "shell", "model": None, "cost_usd": None, "check": engine_bench.CHECK,
            "result": "pass", "seconds": 0.1, "tree": self.tree, "checked_tree": self.tree, "into": "main",
            "at": round(time.time(), 3)})
        inbox.post(self.repo, "main", f"Its check passed, so {piece['branch']} landed in main as {self.tip[:7]}",
                   kind="landed", job=jid, branch=piece["branch"])
        if n - self.plan_first == len(self.plan_pieces) - 1:  # its last piece landed: done, as the engine says
            words = f"{len(self.plan_pieces)} landed"
            refs.append(self.repo, refs.ref_for("plans", self.plan_id), "done", f"Plan done: {words}",
                        {"summary": words}, state="done")
            inbox.post(self.repo, "main", f"Plan 'pieces' is done: {words}", plan=self.plan_id)


class Took(NamedTuple):
    """Seconds on the clock, and CPU seconds of the command and every process it started."""

    wall: float
    cpu: float

    def __add__(self, other: object) -> Took:  # type: ignore[override]
        assert isinstance(other, Took)
        return Took(self.wall + other.wall, self.cpu + other.cpu)


def run(argv: list[str], cwd: Path, env: dict[str, str]) -> Took:
    """What one command takes, its output read as a terminal would; a failure stops the benchmark."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    res = subprocess.run(argv, cwd=cwd, env=env, capture_output=True)
    took = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if res.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed (exit {res.returncode}):\n{res.stdout.decode()}{res.stderr.decode()}")
    return Took(took, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)


def median_of(rounds: int, fn: Callable[[], Took]) -> Took:
    """The medians of `rounds` timings, after one run that warms the caches (the state cache, the disk's)."""
    fn()
    runs = [fn() for _ in range(rounds)]
    return Took(statistics.median(r.wall for r in runs), statistics.median(r.cpu for r in runs))


def live_refs(lead: Lead) -> list[str]:
    """The refs of the jobs and plans that are not done: what the board reads in full (a name that matches no
    ref when there are none, so that git lists nothing)."""
    from git_balanced.state import cache
    from git_balanced.vocab import DONE

    settled = {"jobs": DONE, "plans": {"done", "cancelled"}}
    found = [f"refs/balanced/{kind}/{name}" for kind in ("jobs", "plans")
             for name, st in cache.read_all(lead.repo, kind).items()
             if st["state"] not in settled[kind]]
    return found or ["refs/balanced/jobs/none-live"]


def inbox_range(lead: Lead) -> str:
    """The inbox's messages a reader reads: those after its fold (`git balanced gc`), or all of them."""
    ref = inbox.inbox_ref("main")
    mark = lead.repo.read_ref("refs/balanced/archive/inbox/" + ref.rsplit("/", 1)[1])  # state/archive.py's
    return f"{mark}..{ref}" if mark else ref


def floors(lead: Lead, rounds: int, env: dict[str, str]) -> dict[str, Took]:
    """The least Python and git do: start Python, and the git commands that give each answer: for the board, the
    live jobs' and plans' refs listed; for `--all`, every job's and plan's; for the inbox, its messages since
    its fold."""
    cwd = lead.root
    py = median_of(rounds, lambda: run([sys.executable, "-c", "pass"], cwd, env))
    live = live_refs(lead)
    return {
        "python": py,
        "version": py + median_of(rounds, lambda: run(["git", "--version"], cwd, env)),
        "board": py + median_of(rounds, lambda: run(["git", "for-each-ref", "--format=%(objectname) %(refname)",
                                                     *live], cwd, env)),
        "all": py + median_of(rounds, lambda: run(["git", "for-each-ref", "--format=%(objectname) %(refname)",
                                                   *BOARD_REFS], cwd, env)),
        "inbox": py + median_of(rounds, lambda: run(["git", "log", "--format=%H%x00%B", inbox_range(lead)], cwd,
                                                    env)),
        "log": py + median_of(rounds, lambda: run(["git", "log", "--first-parent", "--notes=balanced", "-n1000",
                                                   "--format=%H%x1f%s%x1f%N%x1e", "main"], cwd, env)),
    }


COMMANDS = {"board": ["board"], "board --json --all": ["board", "--json", "--all"], "inbox": ["inbox"],
            "log": ["log"]}


CHANGED = "GIT_BALANCED_BENCH_LOOK"  # set to another value before each run "after a change" (see the docstring)
LOOKS = iter(range(10**9))
SETTLE = 1.2  # kit/boardsaid.SETTLED and a little: no answer is kept while a file of its stamp is younger
SEEN = (" (nothing changed)", " (after a change)")


def changed(env: dict[str, str]) -> dict[str, str]:
    """`env` with the bench's own variable set to a value no run had: a kept answer's stamp no longer holds."""
    return {**env, CHANGED: str(next(LOOKS))}


def commands(lead: Lead, rounds: int, env: dict[str, str]) -> dict[str, Took]:
    """Each command's medians, with nothing changed since its last run and after a change."""
    got = {}
    for name, args in COMMANDS.items():
        run(["git", "balanced", *args], lead.root, env)
        time.sleep(SETTLE)  # a change under a second old is not trusted: the answer is kept after it
        got[name + SEEN[0]] = median_of(rounds, lambda args=args: run(["git", "balanced", *args], lead.root, env))  # type: ignore[misc]
        got[name + SEEN[1]] = median_of(rounds, lambda args=args: run(["git", "balanced", *args], lead.root,  # type: ignore[misc]
                                                                      changed(env)))
    return got


def floor_of(name: str) -> str:
    return "all" if "--all" in name else name.split()[0]


def startup(lead: Lead, rounds: int, env: dict[str, str], tmp: Path) -> list[tuple[str, str, Took, Took]]:
    """`--version`, `board` and `inbox` with the package byte-compiled, then with its .pyc files moved aside
    (and none written: PYTHONDONTWRITEBYTECODE=1), as an editable install runs in a folder it cannot write."""
    import git_balanced

    package = Path(git_balanced.__file__).parent
    aside = tmp / "pycache-aside"
    out = []
    for label in ("compiled", "not compiled"):
        e = env if label == "compiled" else {**env, "PYTHONDONTWRITEBYTECODE": "1"}
        fl = floors(lead, rounds, e)
        moved = []
        try:
            if label == "not compiled":
                for cache_dir in sorted(package.rglob("__pycache__")):
                    dest = aside / cache_dir.relative_to(package)
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    cache_dir.rename(dest)
                    moved.append((dest, cache_dir))
            for name, args in (("--version", ["--version"]), ("board", ["board"]), ("inbox", ["inbox"])):
                if name != "--version":
                    run(["git", "balanced", *args], lead.root, e)
                    time.sleep(SETTLE)
                took = median_of(rounds, lambda args=args, e=e: run(["git", "balanced", *args], lead.root, e))  # type: ignore[misc]
                out.append((label, name + (SEEN[0] if name != "--version" else ""), took,
                            fl["version" if name == "--version" else name]))
                if name != "--version":
                    took = median_of(rounds, lambda args=args, e=e: run(["git", "balanced", *args], lead.root,  # type: ignore[misc]
                                                                        changed(e)))
                    out.append((label, name + SEEN[1], took, fl[name]))
            if label == "not compiled":
                left = list(package.rglob("*.pyc"))
                assert not left, f"the package was compiled after all: {left[:3]}"
        finally:
            for dest, cache_dir in moved:
                if not cache_dir.exists():
                    dest.rename(cache_dir)
    return out


def ms(seconds: float) -> str:
    return f"{seconds * 1000:6.0f} ms"


def row(label: str, took: Took, floor: Took, by: str) -> tuple[str, float]:
    """A line of figures (the clock's and the CPU's, each against its floor), and the ratio the goal reads."""
    wall, cpu = took.wall / floor.wall, took.cpu / floor.cpu
    return (f"  {label:<42} {ms(took.wall)} {ms(floor.wall)} {wall:5.1f}x   {ms(took.cpu)} {ms(floor.cpu)} "
            f"{cpu:5.1f}x"), (wall if by == "wall" else cpu)


HEAD = " " * 46 + "wall  floor   ratio       cpu  floor   ratio"


def goal_for(jobs: int) -> float | None:
    """The ratio a command must stay within at this many jobs: 5x from 10,000, 3x from 1,000."""
    return next((g for n, g in sorted(GOALS.items(), reverse=True) if jobs >= n), None)


def compiled(env: dict[str, str]) -> dict[str, str]:
    """Byte-compile the package as `pip install .` does, and an environment that may read the .pyc files."""
    import compileall

    import git_balanced

    compileall.compile_dir(str(Path(git_balanced.__file__).parent), quiet=1)
    return {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}


def main(argv: list[str] | None = None) -> int:
    """Build the lead at each size, time the commands against their floors, print PASS or MISS per goal."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", help="job counts, growing (default 10,1000,10000; with --reuse, none more)")
    ap.add_argument("--rounds", type=int, default=5, help="timed rounds per command (default 5)")
    ap.add_argument("--pack", action="store_true",
                    help="`git gc` before measuring, as a repository is once git packs it (default: all loose)")
    ap.add_argument("--archive", action="store_true",
                    help="`git balanced gc --older-than 0` before measuring: every done job archived, as a history "
                         "older than `archive_after_days` is")
    ap.add_argument("--keep", action="store_true", help="keep the folder and print where it is")
    ap.add_argument("--by", choices=("wall", "cpu"), default="wall",
                    help="what the goals read: the clock (default), or CPU time, steadier on a busy machine")
    ap.add_argument("--reuse", metavar="DIR", type=Path,
                    help="a folder kept by --keep: measure its lead as it is, then grow it to the larger sizes")
    args = ap.parse_args(argv)
    tmp = args.reuse.resolve() if args.reuse else Path(tempfile.mkdtemp(prefix="balanced-bench-board-"))
    verdicts: list[tuple[bool, str]] = []
    try:
        box = engine_bench.Box(tmp)
        os.environ.update({k: v for k, v in box.env.items() if k.startswith("GIT_") or k == "HOME"})
        lead = Lead(box, tmp / "lead" if args.reuse else engine_bench.build(box, tmp / "lead"))
        wanted = args.sizes or ("" if args.reuse else "10,1000,10000")
        sizes = sorted(({lead.jobs} | {int(s) for s in wanted.split(",") if s and int(s) > lead.jobs}) - {0})
        env = compiled(box.env)
        version = subprocess.run(["git", "balanced", "--version"], env=env, capture_output=True, text=True)
        print(f"git balanced board benchmark: {version.stdout.strip()}, python {sys.version.split()[0]}, "
              f"{subprocess.run(['git', '--version'], capture_output=True, text=True).stdout.strip()}, "
              f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}; medians of {args.rounds} rounds")
        for size in sizes:
            if size > lead.jobs:
                print(f"\nwriting jobs up to {size}")
                lead.grow(size)
            if args.archive:
                start = time.perf_counter()
                folded = subprocess.run(["git", "balanced", "gc", "--older-than", "0"], cwd=lead.repo.root,
                                        env=env, check=True, capture_output=True, text=True)
                print(f"\n{folded.stdout.splitlines()[0]} ({time.perf_counter() - start:.1f} s)")
            if args.pack:
                subprocess.run(["git", "gc", "--quiet"], cwd=lead.repo.root, check=True)
            fl = floors(lead, args.rounds, env)
            got = commands(lead, args.rounds, env)
            goal = goal_for(size)
            how = (", archived" if args.archive else "") + (", packed" if args.pack else ", loose")
            print(f"\n{size} jobs{how}, load {os.getloadavg()[0]:.2f}\n{HEAD}")
            for name, took in got.items():
                line, ratio = row(name, took, fl[floor_of(name)], args.by)
                print(line)
                if goal is not None:
                    verdicts.append((ratio <= goal, f"{name} at {size} jobs within {goal:.0f}x of its floor "
                                                    f"({args.by}): {ratio:.1f}x"))
            if size == sizes[0] and size <= 100:
                print(f"\nstart-up, {size} jobs, load {os.getloadavg()[0]:.2f}\n{HEAD}")
                for label, name, took, floor in startup(lead, args.rounds, env, tmp):
                    line, ratio = row(f"{name} ({label})", took, floor, args.by)
                    print(line)
                    verdicts.append((ratio <= STARTUP_GOAL, f"start-up of {name} ({label}) within "
                                                            f"{STARTUP_GOAL:.0f}x of its floor ({args.by}): "
                                                            f"{ratio:.1f}x"))
        print()
        for ok, words in verdicts:
            print(f"{state_bench.verdict(ok)}  {words}")
        return 0 if all(ok for ok, _ in verdicts) else 1
    finally:
        if args.keep or args.reuse:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
