"""Readers that follow one thing: what the narrator, `logs --follow` and the cache cost at a large history.

    python bench/readers.py [--jobs 10000] [--live 20] [--rounds 15]

A throwaway lead gets JOBS landed jobs of history (bench/history.py) and LIVE running ones. Then, each a median
of ROUNDS, in CPU seconds of this process and every process it started (the machine is shared):

- the foreground engine's narrator, after each live job moved by one event: reading what moved in-process
  against a `git log` of each moved job (what it ran before; the listing of the tips that finds them is the
  same); and, once the refs rest, its look
  (their folder's and packed-refs' stat) against listing every job, which it did four times a second;
- a second of `logs --follow` / the app's worker pane: reading the followed job again (`jobs.again`: its tip,
  and its fold from the cache) against resolving its name through every job (`reach.job_named`, what they did
  each second);
- when nothing moved, the merged view of the live and settled entries kept, against made again on each read (what
  `cache.read_all` did before), and the whole read around it both ways;
- a running job's new event read and saved: the cache files written (the live part's journal only; before, the
  journals of all three parts, live, done and brief).

Goals: the narrator at least 3x cheaper than a git log per moved job, and 10x cheaper than a listing when
nothing moved; a follow step at least 10x cheaper than a resolve through every job; the merged view kept at least
10x cheaper than made again; one file written per save.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout without installing

import history  # noqa: E402

from git_balanced import jobs, proc, process  # noqa: E402
from git_balanced.engine import reach  # noqa: E402
from git_balanced.engine.narrate import PREFIX, Narrator  # noqa: E402
from git_balanced.git import Repo  # noqa: E402
from git_balanced.lead import Lead  # noqa: E402
from git_balanced.state import cache, refs  # noqa: E402
from git_balanced.state.cachefile import Kept  # noqa: E402

LOG_FORMAT = "%ct%x09%(trailers:key=Balanced-State,valueonly,separator=)%x09%s"  # what the narrator ran


def cpu() -> float:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def timed(fn: Callable[[], object]) -> float:
    start = cpu()
    fn()
    return cpu() - start


def make_lead(where: Path, count: int, live: int) -> tuple[Repo, list[str]]:
    """A lead on main with `count` landed jobs of history and `live` running ones (their ids)."""
    os.environ.update(HOME=str(where), GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@localhost",
                      GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@localhost", GIT_CONFIG_NOSYSTEM="1")
    root = where / "lead"
    for args in (["init", "-q", "-b", "main", str(root)],
                 ["-C", str(root), "commit", "-q", "--allow-empty", "-m", "a"]):
        res = proc.run(["git", *args])
        if res.code != 0:
            sys.exit(f"git {' '.join(args)} failed: {res.err.strip()}")
    repo = Repo.discover(root)
    history.write(repo, count)
    running = []
    for k in range(live):
        jid = jobs.place(repo, {"plan": "live", "piece": f"live{k}", "task": "t", "agent": "shell", "run": "true",
                                "machine": "local", "branch": f"balanced/live{k}", "lead": "main"})
        refs.append(repo, refs.ref_for("jobs", jid), "started", f"live{k}: started", {"started_at": time.time()},
                    state="running")
        running.append(jid)
    cache.read_all(repo, "jobs")
    return repo, running


def narrator(repo: Repo, live: list[str], rounds: int) -> tuple[float, float, float, float]:
    """Medians: reading what moved, each live job moved by one event a round (a `git log` per moved job, against
    the narrator's in-process read); then, once the refs rest (a second after the last write), a look when nothing
    moved (listing every job, against Narrator.look). The listing after a move is the same for both ways."""
    told = Narrator(repo, out=open(os.devnull, "w"), status=open(os.devnull, "w"))  # noqa: SIM115
    told._checks_looked = float("inf")  # only what the refs say
    naive, ours = [], []
    for r in range(rounds):
        old = dict(told.tips)
        for jid in live:
            refs.append(repo, refs.ref_for("jobs", jid), "noted", f"round {r}", {"round": r})
        moved = {ref: tip for ref, tip in repo.list_refs(PREFIX).items() if old.get(ref) != tip}
        naive.append(timed(lambda old=old, moved=moved: by_git(repo, old, moved)))
        ours.append(timed(lambda old=old, moved=moved: [told._moved(repo, ref[len(PREFIX):], tip, old.get(ref))
                                                        for ref, tip in moved.items()]))
        told.tips = {**old, **moved}
    told.look(repo)
    time.sleep(1.1)
    listing = [timed(lambda: repo.list_refs(PREFIX)) for _ in range(rounds)]
    resting = [timed(lambda: told.look(repo)) for _ in range(rounds)]
    return statistics.median(naive), statistics.median(ours), statistics.median(listing), statistics.median(resting)


def by_git(repo: Repo, old: dict[str, str], moved: dict[str, str]) -> None:
    """What reading the moved jobs cost before: a `git log` of each."""
    for ref, tip in moved.items():
        repo.first_parent_log(f"{old[ref]}..{tip}" if ref in old else tip, LOG_FORMAT, oldest_first=True)


def follow(repo: Repo, jid: str, rounds: int) -> tuple[float, float]:
    """Medians: (resolving the name through every job, reading that one job again), as a follower does each
    second while the job has not moved."""
    lead = Lead(repo, "main")
    reach.job_named(lead, jid)  # warm, as a follower is after its first second
    every = [timed(lambda: reach.job_named(lead, jid)) for _ in range(rounds)]
    one = [timed(lambda: jobs.again(repo, jid)) for _ in range(rounds)]
    return statistics.median(every), statistics.median(one)


def unchanged_read(repo: Repo, rounds: int) -> tuple[float, float, float, float]:
    """Medians when nothing moved: the merged view of the live and settled entries (made again, against kept),
    and the whole `cache.read_all` of the jobs around it (merging again, against the merge kept)."""
    kept = process.part(Kept)
    path = cache._path(repo, "jobs")
    cache.read_all(repo, "jobs")

    def merged_again() -> None:
        kept.merged.clear()  # as before: the live and done entries merged again on this read
        cache._cached(path, "jobs")

    def read_merging() -> None:
        kept.merged.clear()
        cache.read_all(repo, "jobs")

    view_again = [timed(merged_again) for _ in range(rounds)]
    view_kept = [timed(lambda: cache._cached(path, "jobs")) for _ in range(rounds)]
    read_again = [timed(read_merging) for _ in range(rounds)]
    read_kept = [timed(lambda: cache.read_all(repo, "jobs")) for _ in range(rounds)]
    return tuple(statistics.median(x) for x in (view_again, view_kept, read_again, read_kept))  # type: ignore[return-value]


def files_written(repo: Repo, jid: str) -> list[str]:
    """The cache files a running job's new event, read and saved, writes."""
    folder = repo.state_dir / "cache"

    def stamps() -> dict[str, tuple[int, int, int]]:
        return {p.name: (p.stat().st_ino, p.stat().st_size, p.stat().st_mtime_ns) for p in folder.glob("jobs*")}

    cache.read_all(repo, "jobs")
    before = stamps()
    refs.append(repo, refs.ref_for("jobs", jid), "noted", "one more", {})
    cache.read_all(repo, "jobs")
    after = stamps()
    return sorted(n for n in after if after[n] != before.get(n))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=10000, help="landed jobs of history (default 10000)")
    ap.add_argument("--live", type=int, default=20, help="running jobs (default 20)")
    ap.add_argument("--rounds", type=int, default=15, help="rounds of each measure (default 15)")
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="balanced-bench-readers-"))
    try:
        print(f"load {os.getloadavg()[0]:.2f}; building {args.jobs:,} jobs of history and {args.live} live", flush=True)
        repo, live = make_lead(tmp, args.jobs, args.live)
        print(f"load {os.getloadavg()[0]:.2f}; {args.rounds} rounds each, CPU medians", flush=True)
        n_git, n_ours, n_list, n_rest = narrator(repo, live, args.rounds)
        f_all, f_one = follow(repo, live[0], args.rounds)
        v_again, v_kept, r_again, r_once = unchanged_read(repo, args.rounds)
        written = files_written(repo, live[1])
        load = os.getloadavg()[0]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"narrator, reading {args.live} jobs that moved: a git log each {n_git * 1000:.1f} ms, in-process "
          f"{n_ours * 1000:.1f} ms ({n_git / max(n_ours, 1e-9):.1f}x cheaper)")
    print(f"narrator, nothing moved: listing every job {n_list * 1000:.1f} ms, in-process {n_rest * 1000:.2f} ms "
          f"({n_list / max(n_rest, 1e-9):.0f}x cheaper)")
    print(f"follow step at {args.jobs:,} jobs: through every job {f_all * 1000:.1f} ms, that job {f_one * 1000:.2f} ms "
          f"({f_all / max(f_one, 1e-9):.0f}x cheaper)")
    print(f"the merged view of every job, nothing moved: made again {v_again * 1000:.2f} ms, kept "
          f"{v_kept * 1000:.3f} ms; the whole read around it {r_again * 1000:.1f} ms and {r_once * 1000:.1f} ms")
    print(f"a running job's event saved: wrote {', '.join(written) or 'nothing'} (before: jobs.log, jobs.done.log, "
          f"jobs.brief.log)")
    print(f"load {load:.2f}")
    goals = [(n_git >= 3 * n_ours, f"narrator reads what moved {n_git / max(n_ours, 1e-9):.1f}x cheaper than a git "
                                   "log per moved job (goal >= 3x)"),
             (n_list >= 10 * n_rest, f"narrator's look when nothing moved {n_list / max(n_rest, 1e-9):.0f}x "
                                     "cheaper than listing every job (goal >= 10x)"),
             (f_all >= 10 * f_one, f"follow step {f_all / max(f_one, 1e-9):.0f}x cheaper than a resolve through "
                                   "every job (goal >= 10x)"),
             (v_kept * 10 <= v_again, f"the merged view kept {v_kept * 1000:.3f} ms against made again "
                                      f"{v_again * 1000:.2f} ms on each read (goal: 10x cheaper)"),
             (len([n for n in written if n.endswith(".log") or n.endswith(".json")]) == 1
              and written[0].startswith("jobs."), f"one cache file written per save of a running job: "
                                                  f"{len(written)} (goal 1)")]
    for ok, words in goals:
        print(f"{'PASS' if ok else 'MISS'}  {words}")
    return 0 if all(ok for ok, _ in goals) else 1


if __name__ == "__main__":
    sys.exit(main())
