"""Listing refs: read from git's files in-process (git.refs_from_files) against one `git for-each-ref`.

    python bench/listing.py [--counts 10,50,100,300,500,1000] [--runs 30]

For each count N, a throwaway repository gets N loose refs under refs/balanced/jobs/ (and a packed one), and
both ways list refs/balanced/ RUNS times. The figure is CPU time, this process's and its children's: the
machine is shared, and a listing that starts git pays for the process as much as for the reading. Prints the
median of each way and their ratio.
Goal: the in-process listing costs less than `git for-each-ref` at every count.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout without installing

from git_balanced import git as G  # noqa: E402
from git_balanced import proc  # noqa: E402


def cpu() -> float:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def make(where: Path, count: int) -> G.Repo:
    env = proc.no_git_env()
    env.update(HOME=str(where.parent), GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@localhost",
               GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@localhost", GIT_CONFIG_NOSYSTEM="1")
    for args in (["init", "-q", "-b", "main", str(where)],
                 ["-C", str(where), "commit", "-q", "--allow-empty", "-m", "initial"],
                 ["-C", str(where), "update-ref", "refs/balanced/jobs/packed", "HEAD"],
                 ["-C", str(where), "pack-refs", "--all"]):
        res = proc.run(["git", *args], env=env)
        if res.code != 0:
            sys.exit(f"git {' '.join(args)} failed: {res.err.strip()}")
    repo = G.Repo.discover(where)
    head = repo.rev_parse("HEAD") or ""
    folder = repo.common_dir / "refs" / "balanced" / "jobs"
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        (folder / f"j{i:05d}").write_text(head + "\n")
    return repo


def each(fn: object, runs: int) -> float:
    """The median CPU seconds of one call of `fn`."""
    times = []
    for _ in range(runs):
        start = cpu()
        fn()  # type: ignore[operator]
        times.append(cpu() - start)
    return statistics.median(times)


def measure(count: int, runs: int) -> tuple[float, float]:
    """The median CPU seconds of one listing of `count` loose refs: read from the files, and by git."""
    tmp = Path(tempfile.mkdtemp(prefix="balanced-bench-listing-"))
    try:
        repo = make(tmp / "r", count)
        packed = G.PackedRefs(repo.common_dir / "packed-refs")
        by_git: dict[str, str] = {}

        def files() -> None:
            assert G.refs_from_files(repo.common_dir, "refs/balanced/", packed) == by_git

        def git() -> None:
            out = G.git_out(["for-each-ref", "--format=%(objectname) %(refname)", "refs/balanced/"], cwd=repo.root)
            by_git.clear()
            by_git.update({name: sha for sha, _, name in (line.partition(" ") for line in out.splitlines())})

        git()
        return each(files, runs), each(git, runs)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--counts", default="10,50,100,300,500,1000")
    ap.add_argument("--runs", type=int, default=30)
    args = ap.parse_args(argv)
    print(f"listing refs/balanced/: in-process against `git for-each-ref`, CPU ms, median of {args.runs}")
    print(f"python {sys.version.split()[0]}, {proc.run(['git', '--version']).out.strip()}")
    print(f"{'loose refs':>10} {'files':>9} {'git':>9} {'git/files':>10}")
    slower = []
    for count in (int(c) for c in args.counts.split(",")):
        ours, theirs = measure(count, args.runs)
        print(f"{count:>10} {ours * 1000:>9.2f} {theirs * 1000:>9.2f} {theirs / ours:>9.1f}x")
        if ours >= theirs:
            slower.append(count)
    print()
    if slower:
        print(f"MISS  the in-process listing costs less than git's at every count: not at {slower}")
        return 1
    print("PASS  the in-process listing costs less than git's at every count")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("GIT_CONFIG_NOSYSTEM", "1")
    sys.exit(main())
