"""What the workers' short handles (`e3`) cost the board: `engine/board.collect` against `engine/shown.collect_shown`
(the board with each row's handle, as `board --json` prints it) on a lead of N jobs in plans of 50 pieces.

    python bench/handles.py [--jobs 1000] [--rounds 7]

In a throwaway repository (a private HOME) it stores the plans and places their jobs as the engine does
(`plans.store.store`, `jobs.place`), then times each in this process, medians of R rounds in CPU time, each
round with the process's memory forgotten (`process.forget`, as a fresh command starts) and once more warm,
the two taken in turn.

Goal: the handles add at most 30% to the board's own reading, cold.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # run from a checkout without installing
sys.path.insert(0, str(HERE))

from sandbox import private_env  # noqa: E402

GOAL = 1.30


def build(root: Path, jobs: int) -> Path:
    """A lead on main with `jobs` jobs placed, in plans of 50 shell pieces."""
    from git_balanced import jobs as J
    from git_balanced.lead import open_lead
    from git_balanced.plans.store import store

    repo = root / "lead"
    (repo / ".magnum").mkdir(parents=True)
    (repo / ".magnum" / "settings.toml").write_text('[worktree]\ncheck = "true"\n[balanced]\nagent = "shell"\n')
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "init"]):
        subprocess.run(["git", *args], cwd=repo, check=True)
    os.chdir(repo)
    lead = open_lead(str(repo))
    for p in range(max(1, jobs // 50)):
        doc = {"task": f"plan {p}", "pieces": [{"id": f"p{i}", "task": "t", "agent": "shell", "run": "true"}
                                               for i in range(50)]}
        plan_id, _ = store(lead, json.dumps(doc), "bench", None)
        for i in range(50):
            J.place(lead.repo, {"plan": plan_id, "piece": f"p{i}", "task": "t", "lead": "main", "machine": "local",
                                "agent": "shell", "attempt": 1})
    return repo


def cpu_ms(fs: list[Callable[[Any], Any]], rounds: int, cold: bool) -> list[float]:
    """The median CPU ms of each of `fs`, their rounds taken in turn so that a busy machine sways them alike."""
    from git_balanced import process
    from git_balanced.lead import open_lead

    lead = open_lead(".")
    took: list[list[float]] = [[] for _ in fs]
    for _ in range(rounds):
        for f, into in zip(fs, took, strict=True):
            if cold:
                process.forget()
                lead = open_lead(".")
            else:
                f(lead)
            start = time.process_time()
            f(lead)
            into.append(time.process_time() - start)
    return [statistics.median(t) * 1000 for t in took]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="balanced-bench-handles-") as tmp:
        os.environ.update(private_env(Path(tmp)))
        build(Path(tmp), args.jobs)
        from git_balanced.engine.board import collect
        from git_balanced.engine.shown import collect_shown

        print(f"handles benchmark: {args.jobs} jobs, medians of {args.rounds} rounds (CPU), load "
              f"{os.getloadavg()[0]:.2f}")
        ratio = 0.0
        for cold in (True, False):
            plain, shown = cpu_ms([collect, collect_shown], args.rounds, cold)
            ratio = ratio or shown / plain
            print(f"  {'cold' if cold else 'warm'}: collect {plain:6.0f} ms   collect_shown {shown:6.0f} ms   "
                  f"{shown / plain:.2f}x")
    verdict = "PASS" if ratio <= GOAL else "MISS"
    print(f"{verdict}  the handles add {ratio - 1:.0%} to the board's reading, cold: {ratio:.2f}x, goal <= {GOAL}x")
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    raise SystemExit(main())
