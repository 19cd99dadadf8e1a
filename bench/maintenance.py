"""git's automatic maintenance in a lead with history: a `git fetch` of one commit, git's way and ours.

    python bench/maintenance.py [--jobs N] [--loose N] [--rounds R]

A lead holding N landed jobs (10,000; bench/history.py writes them) and N loose objects more (7,000: what the
engine's passes leave between two packings, past git's gc.auto of 6,700), in a private HOME. Each round, in a
fresh copy of it, fetches one new commit from another repository twice over:

  git's way   `git fetch` as a user runs it: automatic maintenance on, so the fetch ends with a gc;
  ours        `Repo.fetch`, the door every git command of git balanced goes through (git/run.py), which turns
              it off: the objects stay loose until the idle engine packs them (engine/upkeep.py).

and then times the idle engine's packing of that copy (engine/upkeep.pack_if_loose). Medians of R rounds (3).
PASS when our fetch packs nothing and takes at most a third of git's way.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout without installing

from bench.engine import Box, build, with_history  # noqa: E402
from git_balanced import proc  # noqa: E402
from git_balanced.git import Repo, packing  # noqa: E402

GOAL = 3.0  # git's way / ours, at least


def loosen(repo: Path, count: int) -> None:
    """Write `count` loose blobs into the repository (unreachable, as a lost race's are, or reachable: gc counts
    both)."""
    lead = Repo.discover(repo)
    for k in range(count):
        lead.write_blob(f"a loose object of the benchmark, {k}\n".encode())


def fetch_git_way(box: Box, repo: Path, source: Path) -> float:
    """`git fetch` as a user runs it, maintenance on; its seconds. Its gc packs the refs before it lets the
    fetch end, and the objects after, in the background: that is waited for (gc.pid), not timed."""
    t0 = time.perf_counter()
    box.git(repo, "fetch", "-q", str(source), "main:refs/heads/fetched")
    spent = time.perf_counter() - t0
    deadline = time.monotonic() + 300
    while (repo / ".git" / "gc.pid").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    return spent


def fetch_ours(box: Box, repo: Path, source: Path) -> float:
    """The same fetch through git balanced's door (Repo.fetch); its seconds."""
    lead = Repo.discover(repo)
    t0 = time.perf_counter()
    res = lead.fetch(str(source), ["main:refs/heads/fetched"])
    spent = time.perf_counter() - t0
    if not res.ok:
        sys.exit(f"our fetch failed: {res.err}")
    return spent


def one_round(template: Box, source: Path, where: Path) -> dict:
    """Both fetches, each in a copy of the template of its own, and the idle packing after ours."""
    out: dict = {}
    for way in ("git", "ours"):
        shutil.copytree(template.root, where / way, symlinks=True)
        box = Box(where / way)
        repo = box.root / "lead"
        before = packing.loose(Repo.discover(repo))
        out[way] = (fetch_git_way if way == "git" else fetch_ours)(box, repo, source)
        after = packing.loose(Repo.discover(repo))
        out[f"{way}_packed"] = after.objects < before.objects or after.refs < before.refs
        if way == "ours":
            from git_balanced.engine.upkeep import pack_if_loose

            t0 = time.perf_counter()
            line = pack_if_loose(Repo.discover(repo))
            out["upkeep"], out["upkeep_line"] = time.perf_counter() - t0, line
        shutil.rmtree(where / way, ignore_errors=True)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=10000, help="landed jobs of history (10,000)")
    ap.add_argument("--loose", type=int, default=7000, help="loose objects besides (7,000)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds (3)")
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="balanced-bench-maintenance-"))
    try:
        print(f"git's automatic maintenance: a fetch of one commit into a lead of {args.jobs} jobs and "
              f"{args.loose} loose objects, {args.rounds} round(s)")
        print(f"{proc.run(['git', '--version']).out.strip()}, load {os.getloadavg()[0]:.2f}, "
              f"in {tmp}", flush=True)
        template = Box(tmp / "template")
        repo = with_history(template, build(template, template.root / "lead"), args.jobs)
        loosen(repo, args.loose)
        found = packing.loose(Repo.discover(repo))
        print(f"the lead: {found.refs} loose refs, {found.objects} loose objects, {found.packs} packs", flush=True)
        source = tmp / "source"
        template.git(tmp, "clone", "-q", str(repo), str(source))
        (source / "one.txt").write_text("one more commit\n")
        template.git(source, "add", "-A")
        template.git(source, "commit", "-q", "-m", "One more commit")
        rounds = []
        for r in range(1, args.rounds + 1):
            one = one_round(template, source, tmp / f"round{r}")
            rounds.append(one)
            print(f"  round {r}: git's way {one['git']:.2f} s (packed: {one['git_packed']}), ours {one['ours']:.2f} s "
                  f"(packed: {one['ours_packed']}); then idle: {one['upkeep_line']}; "
                  f"load {os.getloadavg()[0]:.2f}", flush=True)
        med = statistics.median
        git_way, ours = med(r["git"] for r in rounds), med(r["ours"] for r in rounds)
        ok = git_way >= GOAL * ours and not any(r["ours_packed"] for r in rounds)
        print(f"\n{'PASS' if ok else 'MISS'}  a fetch of one commit, {args.jobs} jobs and {args.loose} loose objects: "
              f"git's way {git_way:.2f} s, ours (maintenance off) {ours:.2f} s = {git_way / ours:.1f}x, medians of "
              f"{len(rounds)}; the idle engine packed it after in {med(r['upkeep'] for r in rounds):.2f} s "
              f"(goal: ours packs nothing and takes at most 1/{GOAL:g}); load "
              f"{os.getloadavg()[0]:.2f}")
        return 0 if ok else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
