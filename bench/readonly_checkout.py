"""What a piece that writes nothing (`writes: none`) costs to set up and clear away on this machine, against a
worker's worktree: K pieces on one base, each given (a) what a writing worker gets here, its branch's own worker
copy (a clone borrowing the lead's objects) and a worktree in it, removed after, or (b) the shared read-only
checkout of the base (shipped/readonly.py), made by the first and marked by the others, removed with the last.
Medians over the rounds, the ratio, and the load average.

    .venv/bin/python bench/readonly_checkout.py [--files N] [--pieces K] [--rounds R]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.sandbox import private_env  # noqa: E402
from git_balanced.git import Repo  # noqa: E402
from git_balanced.machines.reach import workcopy  # noqa: E402
from git_balanced.machines.reach.hosts import LocalHost  # noqa: E402
from git_balanced.shipped.readonly import readonly_acquire, readonly_path, readonly_release  # noqa: E402
from git_balanced.shipped.runfiles import _git  # noqa: E402
from git_balanced.shipped.worktrees import _worktree  # noqa: E402


def make_lead(root: Path, files: int) -> Path:
    """A repository of `files` files of about 2 KB in 50 folders, one commit."""
    repo = root / "lead"
    for i in range(files):
        path = repo / f"pkg{i % 50}" / f"mod{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# module {i}\n" + "x = 1  # some code here\n" * 80)
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "base"]):
        subprocess.run(["git", *args], cwd=repo, check=True)
    return repo


def worktrees(repo: Repo, base: str, pieces: int, n: int) -> tuple[float, float]:
    """(setting up, clearing away) `pieces` writing workers' copies and worktrees, as the engine does here."""
    host = LocalHost(repo)
    made = []
    start = time.perf_counter()
    for k in range(pieces):
        branch, wt = f"balanced/p{n}-{k}", host.worktree_path(f"job{n}-{k}")
        host.prepare_base(branch, base)
        copy = str(workcopy.for_branch(repo, branch))
        _worktree(copy, wt, branch, base)
        made.append((branch, copy, wt))
    setup = time.perf_counter() - start
    start = time.perf_counter()
    for branch, copy, wt in made:
        _git(["worktree", "remove", "--force", wt], copy)
        workcopy.forget(repo, branch)
    return setup, time.perf_counter() - start


def readers(repo: Repo, base: str, pieces: int, n: int, runs: Path) -> tuple[float, float]:
    """(setting up, clearing away) `pieces` readers of one base: one shared read-only checkout."""
    where = readonly_path(str(repo.worktrees_home()), base)
    jobs = [f"job{n}-r{k}" for k in range(pieces)]
    for job in jobs:
        (runs / job).mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    for job in jobs:
        readonly_acquire(str(repo.root), where, base, job)
    setup = time.perf_counter() - start
    start = time.perf_counter()
    for job in jobs:
        readonly_release(where, job, str(runs))
        (runs / job).rmdir()  # its cleanup removes its run folder too
    assert not os.path.exists(where), "the checkout went with its last job"
    return setup, time.perf_counter() - start


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--pieces", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=9)
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-readonly-"))
    try:
        env = private_env(root)
        os.environ.clear()
        os.environ.update(env)
        lead = make_lead(root, args.files)
        repo = Repo.discover(lead)
        base = subprocess.run(["git", "rev-parse", "HEAD"], cwd=lead, capture_output=True, text=True,
                              check=True).stdout.strip()
        load_before = os.getloadavg()[0]
        wt: list[tuple[float, float]] = []
        ro: list[tuple[float, float]] = []
        for n in range(args.rounds):  # in turn, so a busy moment falls on both
            wt.append(worktrees(repo, base, args.pieces, n))
            ro.append(readers(repo, base, args.pieces, n, root / "runs"))
        load_after = os.getloadavg()[0]
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"{args.pieces} pieces on one base of {args.files:,} files; medians of {args.rounds} rounds; "
          f"{os.cpu_count()} cores, load {load_before:.2f} before, {load_after:.2f} after")
    for name, got in (("worktrees (copy + worktree each)", wt), ("shared read-only checkout", ro)):
        s, c = statistics.median(x for x, _ in got), statistics.median(y for _, y in got)
        print(f"  {name:<34} set up {s * 1000:8.1f} ms   cleared {c * 1000:8.1f} ms   "
              f"per piece {(s + c) / args.pieces * 1000:7.1f} ms")
    w = statistics.median(x + y for x, y in wt)
    r = statistics.median(x + y for x, y in ro)
    print(f"  the readers cost {r / w:.2f}x of the worktrees ({w / r:.1f}x cheaper)")
    verdict = "PASS" if r < w else "MISS"
    print(f"{verdict}: readers of one base cost less than worktrees ({r * 1000:.0f} ms against {w * 1000:.0f} ms "
          f"for {args.pieces})")
    return 0 if r < w else 1


if __name__ == "__main__":
    sys.exit(main())
