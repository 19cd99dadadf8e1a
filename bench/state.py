"""State in refs: how fast 10,000 jobs are written and read back, against `git for-each-ref` as the floor.

    python bench/state.py [--jobs N] [--events E] [--sample S] [--keep] [--profile]

Builds a throwaway repository with N jobs of E events each through `state.refs.append`, then times a
separate sample of appends (to fresh refs and to one existing ref) and the three ways of reading every job:
the ref listing alone (the floor), a fold of every chain, and the cache in `.git/balanced/` cold and warm.
Goals: a warm read within 10x of the floor, and an append under 5 ms (medians).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout without installing

from git_balanced import proc, process  # noqa: E402
from git_balanced.git import Repo  # noqa: E402
from git_balanced.state import cache, refs  # noqa: E402
from git_balanced.state.events import new_id  # noqa: E402

# A job's usual life, one event each: the fold has to carry real fields and a real state order.
LIFE = (("placed", "queued"), ("started", "running"), ("finished", "finished"), ("checked", "checking"),
        ("landed", "landed"))
GOAL_RATIO = 10.0
GOAL_APPEND_MS = 5.0
WARM_RUNS = 5


def make_repo(where: Path) -> Repo:
    """A fresh repository with one commit, by a fixed identity so the figures never depend on the user's."""
    env = proc.no_git_env()
    env.update(GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@localhost", GIT_COMMITTER_NAME="bench",
               GIT_COMMITTER_EMAIL="bench@localhost", GIT_CONFIG_NOSYSTEM="1")
    os.environ.update({k: v for k, v in env.items() if k.startswith("GIT_")})
    for args in (["init", "-q", "-b", "main", str(where)], ["-C", str(where), "commit", "-q", "--allow-empty",
                                                            "-m", "initial"]):
        res = proc.run(["git", *args], env=env)
        if res.code != 0:
            sys.exit(f"git {' '.join(args)} failed: {res.err.strip()}")
    return Repo.discover(where)


def append_job(repo: Repo, ref: str, piece: str, events: int) -> None:
    for i in range(events):
        event, state = LIFE[i % len(LIFE)]
        refs.append(repo, ref, event, f"{piece}: {event}", {"piece": piece, f"{event}_at": i}, state=state)


def build(repo: Repo, jobs: int, events: int) -> float:
    """Write `jobs` jobs of `events` events each; returns the seconds it took."""
    start = time.perf_counter()
    step = max(jobs // 10, 1)
    for n in range(jobs):
        append_job(repo, refs.ref_for("jobs", new_id()), f"piece-{n}", events)
        if (n + 1) % step == 0 or n + 1 == jobs:
            took = time.perf_counter() - start
            print(f"  built {n + 1:>6} jobs ({(n + 1) * events} events) in {took:6.1f}s", flush=True)
    return time.perf_counter() - start


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def sample_appends(repo: Repo, count: int) -> tuple[list[float], list[float]]:
    """Seconds per append: `count` to fresh refs (a job's first event), then `count` to one existing ref."""
    fresh = []
    for n in range(count):
        ref = refs.ref_for("jobs", new_id())
        start = time.perf_counter()
        refs.append(repo, ref, "placed", f"sample-{n}: placed", {"piece": f"sample-{n}"}, state="queued")
        fresh.append(time.perf_counter() - start)
    one = refs.ref_for("jobs", new_id())
    refs.append(repo, one, "placed", "long: placed", {"piece": "long"}, state="queued")
    existing = []
    for n in range(count):
        start = time.perf_counter()
        refs.append(repo, one, "progress", f"long: step {n}", {"step": n}, state="running")
        existing.append(time.perf_counter() - start)
    return fresh, existing


def floor(repo: Repo) -> float:
    """`git for-each-ref` over refs/balanced/jobs: the least any reader of every job has to do."""
    argv = ["git", "-C", str(repo.root), "for-each-ref", "--format=%(objectname) %(refname)",
            "refs/balanced/jobs/"]
    runs = []
    for _ in range(WARM_RUNS):
        took, res = timed(lambda: proc.run(argv))
        if res.code != 0:
            sys.exit(f"for-each-ref failed: {res.err.strip()}")
        runs.append(took)
    return statistics.median(runs)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:9.1f} ms"


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def profiled(label: str, fn: Callable[[], Any], on: bool) -> Any:
    """Run `fn`, and with --profile print where its time went (the 12 heaviest functions by own time)."""
    if not on:
        return fn()
    prof = cProfile.Profile()
    out = prof.runcall(fn)
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(12)
    print(f"\n--- profile: {label} ---\n" + buf.getvalue().split("\n\n", 1)[-1].rstrip() + "\n")
    return out


def main(argv: list[str] | None = None) -> int:
    """Build the repository, time writes and reads, print the figures and PASS/MISS against the goals."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=10_000, help="jobs to build (default 10000)")
    ap.add_argument("--events", type=int, default=5, help="events per job (default 5)")
    ap.add_argument("--sample", type=int, default=500, help="timed appends of each kind (default 500)")
    ap.add_argument("--keep", action="store_true", help="keep the repository and print where it is")
    ap.add_argument("--profile", action="store_true", help="profile the build and the cold fold")
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="balanced-bench-state-"))
    try:
        repo = make_repo(tmp / "repo")
        print(f"git balanced state benchmark: {args.jobs} jobs x {args.events} events, in {repo.root}")
        print(f"python {sys.version.split()[0]}, {proc.run(['git', '--version']).out.strip()}, "
              f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}")
        build_s = profiled("build", lambda: build(repo, args.jobs, args.events), args.profile)
        fresh, existing = sample_appends(repo, args.sample)
        total = args.jobs + args.sample + 1

        floor_s = floor(repo)
        cold_s, cold = profiled(
            "cold fold", lambda: timed(lambda: cache.read_all(repo, "jobs", use_cache=False)), args.profile)
        (repo.state_dir / "cache" / "jobs.json").unlink(missing_ok=True)
        first_s, first = timed(lambda: cache.read_all(repo, "jobs"))
        warm_runs = []
        for _ in range(WARM_RUNS):
            process.forget()  # as a new `git balanced` process finds it: the cache file still to parse
            took, warm = timed(lambda: cache.read_all(Repo.discover(repo.root), "jobs"))
            warm_runs.append(took)
        memo_runs = []
        for _ in range(WARM_RUNS):  # as a long-lived engine finds it, pass after pass
            took, _same = timed(lambda: cache.read_all(repo, "jobs"))
            memo_runs.append(took)
        memo_s = statistics.median(memo_runs)
        warm_s = statistics.median(warm_runs)
        # The figures mean nothing if the reads disagree: every way must see every job in the same state.
        assert len(cold) == total, f"cold fold saw {len(cold)} jobs, expected {total}"
        assert cold == first == warm, "cold, first and warm reads disagree"
        landed = sum(1 for s in cold.values() if s["state"] == "landed")

        append_fresh, append_existing = statistics.median(fresh), statistics.median(existing)
        ratio = warm_s / floor_s
        cache_mb = (repo.state_dir / "cache" / "jobs.json").stat().st_size / 1e6
        print()
        print(f"build ({args.jobs * args.events} appends)        {build_s:9.1f} s  "
              f"({build_s / (args.jobs * args.events) * 1000:.2f} ms per append, all told)")
        print(f"append to a fresh ref, median     {ms(append_fresh)}  (p90 {ms(_p90(fresh)).strip()})")
        print(f"append to an existing ref, median {ms(append_existing)}  (p90 {ms(_p90(existing)).strip()})")
        print(f"for-each-ref (floor), median of {WARM_RUNS} {ms(floor_s)}")
        print(f"cold fold, no cache               {ms(cold_s)}  ({cold_s / floor_s:.0f}x floor)")
        print(f"first cached read (fills cache)   {ms(first_s)}  ({first_s / floor_s:.0f}x floor)")
        print(f"warm read in a running engine     {ms(memo_s)}  ({memo_s / floor_s:.1f}x floor)")
        print(f"warm cached read, median of {WARM_RUNS}    {ms(warm_s)}  ({ratio:.1f}x floor)")
        print(f"jobs read {len(warm)} ({landed} landed), cache file {cache_mb:.1f} MB")
        print()
        ok_read = ratio <= GOAL_RATIO
        ok_append = max(append_fresh, append_existing) * 1000 < GOAL_APPEND_MS
        print(f"{verdict(ok_read)}  warm read within {GOAL_RATIO:.0f}x of the floor: {ratio:.1f}x")
        print(f"{verdict(ok_append)}  append under {GOAL_APPEND_MS:.0f} ms median: fresh "
              f"{append_fresh * 1000:.2f} ms, existing {append_existing * 1000:.2f} ms")
        return 0 if ok_read and ok_append else 1
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def _p90(values: list[float]) -> float:
    return statistics.quantiles(values, n=10)[-1] if len(values) > 1 else values[0]


if __name__ == "__main__":
    sys.exit(main())
