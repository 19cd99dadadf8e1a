"""What typing 10,000 folded jobs costs: `jobs.Job.of` on each, as the board and every engine pass do.

    python bench/typed_jobs.py [--jobs 10000] [--rounds 15] [--against PATH]

The folded states are built in memory, shaped like the board bench's jobs (placed, started, finished, landed;
some running, some with a field a newer version wrote). It prints the best of R rounds, in ms for all the jobs
and in µs per job, in CPU time (which a busy machine sways less than the clock). `--against PATH` times, in the
same rounds, a `views.py` of another version whose `JobView` reads the same states (the light view the board
read before `Job` was cheap enough for it): `git show 1e8a586:git_balanced/state/views.py > /tmp/views.py`.

Goal: `Job.of` costs no more than the light view did (with `--against`, 1.0x or less of it).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout without installing

from git_balanced.jobs import Job  # noqa: E402

PLACED = {"plan": "0plan000000001", "plan_task": "Add order history", "piece": "api", "task": "Write the API.",
          "title": "Write the API.", "agent": "claude", "model": "sonnet", "run": None, "paths": ["src/api/**"],
          "plan_first": False, "budget_usd": 2, "machine": "alpha", "why": "most room", "branch": "balanced/api",
          "base": "a" * 40, "lead": "main", "after": [], "attempt": 1, "job": "", "placed_at": 1_700_000_000.5,
          "run_no": 1}
STARTED = {"node": "n1", "claimed_at": 1_700_000_001.0, "pid": 4242, "worktree": "/w/api",
           "started_at": 1_700_000_002}
FINISHED = {"exit_code": 0, "head": "b" * 40, "commits": 2, "cost_usd": 1.25, "outcome": "success",
            "summary": "Wrote it.", "seconds": 310.5, "dirty": False, "tokens": {"input": 10, "output": 20},
            "windows": []}
LANDED = {"decided": True, "landed": "c" * 40, "landed_in": "main", "final": "Landed."}


def folded(n: int) -> dict[str, Any]:
    """The n-th job's folded state: most landed, some running, one in ten with a field from a newer version."""
    fields = {**PLACED, "job": f"j{n:014d}", "piece": f"piece-{n % 50}"}
    state = "running"
    if n % 7:
        fields |= STARTED | FINISHED | LANDED
        state = "landed"
    else:
        fields |= STARTED
    if n % 10 == 0:
        fields["from_a_newer_version"] = {"weight": n}
    return {"state": state, "fields": fields, "created": 1_700_000_000.0, "updated": 1_700_000_400.0}


def light_view(path: str) -> Callable[[str, dict[str, Any]], Any]:
    """The `JobView` of the `views.py` at `path`."""
    spec = importlib.util.spec_from_file_location("older_views", path)
    assert spec and spec.loader, path
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.JobView  # type: ignore[no-any-return]


def best(make: Callable[[str, dict[str, Any]], Any], states: list[tuple[str, dict[str, Any]]]) -> float:
    started = time.process_time()
    for name, st in states:
        make(name, st)
    return time.process_time() - started


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--against", help="a views.py whose JobView to time alongside")
    args = ap.parse_args()
    states = [(f"j{n:014d}", folded(n)) for n in range(args.jobs)]
    makers: dict[str, Callable[[str, dict[str, Any]], Any]] = {"Job.of": Job.of}
    if args.against:
        makers["JobView"] = light_view(args.against)
    times: dict[str, float] = dict.fromkeys(makers, float("inf"))
    for _ in range(args.rounds):  # in turns, so that the machine's load weighs on each alike
        for label, make in makers.items():
            times[label] = min(times[label], best(make, states))
    for label, took in times.items():
        print(f"{label:8} {took * 1000:8.1f} ms for {args.jobs:,} jobs, {took / args.jobs * 1e6:6.2f} µs each")
    if args.against:
        ratio = times["Job.of"] / times["JobView"]
        print(f"{'PASS' if ratio <= 1.0 else 'MISS'} Job.of at {ratio:.2f}x the light view (goal: 1.0x or less)")
        return 0 if ratio <= 1.0 else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
