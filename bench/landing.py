"""The landing queue against landing one branch at a time: check runs, rounds and wall time.

    python bench/landing.py [--branches N] [--no-sweep] [--keep] [--parallel-only] [--rounds 3] [--check-seconds 2]
                            [--before DIR]

In throwaway repositories (a private HOME and XDG folders in /tmp), N branches (16) each add one file under
src/. The check takes about half a second: `sleep 0.5`, then it fails when any file under src/ holds the
marker that the breaking branches add. With 0, 1 and 2 breaking branches (at f5 and f11), it times

  the queue   `git balanced land f1 ... fN --json` (check runs and rounds from its JSON), and
  the naive way: in a scratch clone, for each branch `git merge --no-ff`, run the check, keep the merge
              when it passes and drop it when not (plain git and the check command, not this tool),

then the queue again with `[balanced] check_slots = 4`. Both ways must end on the same tree. The sweep then
runs the queue for more placements of the breaking branches, including the ones this search handles worst
(the first culprit early, the second a few places after it), and reports the worst.
Goals: 0 failing -> 1 check run; 1 failing -> at most 6; 2 failing -> at most 11; 4 slots -> fewer rounds.

Then bench/landing_parallel.py: with a 2 s check and 4 slots, the speculative queue's wall time in check
durations against the serial queue (goals: 0 failing in one, 1 failing in at most 3), and the extra check runs.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout without installing

from bench import landing_parallel as par  # noqa: E402
from bench.landing_repos import (  # noqa: E402
    CHECK,
    GOAL_CHECKS,
    PLACED,
    SWEEP,
    Run,
    Sandbox,
    expect,
    fresh,
    label,
    naive,
    queue,
    queue_fresh,
    verdict,
)
from git_balanced import proc  # noqa: E402


def queue_against_naive(box: Sandbox, n: int, sweeping: bool, races: list[str]) -> int:
    """The queue (one slot and four) against the naive way at the fixed placements, then the sweep; the report."""
    rows: list[tuple[tuple[int, ...], Run, Run, Run]] = []
    for bad in (b for b in PLACED if not b or max(b) <= n):
        repo = fresh(box, n, bad, 1)
        slow = naive(box, repo, n)
        expect(slow, n, bad, f"naive, {label(bad)}")
        q1 = queue(box, repo, n)
        expect(q1, n, bad, f"queue, {label(bad)}")
        assert q1.tree == slow.tree, f"{label(bad)}: queue and naive ended on different src/ trees"
        q4 = queue_fresh(box, n, bad, 4, races)
        expect(q4, n, bad, f"queue with 4 slots, {label(bad)}")
        assert q4.tree == slow.tree, f"{label(bad)}: 4 slots ended on a different src/ tree"
        rows.append((bad, slow, q1, q4))
        print(f"  {label(bad)}: done", flush=True)
    sweep: list[tuple[tuple[int, ...], Run, Run]] = []
    if sweeping:
        for bad in (b for b in SWEEP if max(b) <= n):
            q1 = queue_fresh(box, n, bad, 1, races)
            expect(q1, n, bad, f"sweep, {label(bad)}")
            q4 = queue_fresh(box, n, bad, 4, races)
            expect(q4, n, bad, f"sweep with 4 slots, {label(bad)}")
            sweep.append((bad, q1, q4))
        print("  sweep: done", flush=True)
    return report(rows, sweep, n, races)


def main(argv: list[str] | None = None) -> int:
    """Run every scenario, print the tables and PASS/MISS against the goals."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--branches", type=int, default=16, help="branches per run (default 16)")
    ap.add_argument("--no-sweep", action="store_true", help="skip the other placements of the culprits")
    ap.add_argument("--keep", action="store_true", help="keep the repositories and print where they are")
    ap.add_argument("--parallel-only", action="store_true",
                    help="only the speculative landing on 4 slots against the serial queue (bench/landing_parallel.py)")
    ap.add_argument("--rounds", type=int, default=3, help="runs of each parallel landing, for medians (default 3)")
    ap.add_argument("--check-seconds", type=float, default=2.0, help="the parallel part's check duration (default 2)")
    ap.add_argument("--before", type=Path, metavar="DIR",
                    help="also time the parallel part with the git_balanced package found in DIR (another version, "
                         "e.g. `git archive main git_balanced | tar -x -C DIR`), alternated with this one")
    args = ap.parse_args(argv)
    n = args.branches
    tmp = Path(tempfile.mkdtemp(prefix="balanced-bench-landing-"))
    try:
        box = Sandbox(tmp)
        print(f"git balanced landing benchmark: {n} branches, check `{CHECK}`")
        print(f"python {sys.version.split()[0]}, {proc.run(['git', '--version']).out.strip()}, "
              f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}, in {tmp}")
        races: list[str] = []
        code = 0
        if not args.parallel_only:
            code = queue_against_naive(box, n, not args.no_sweep, races)
        found = par.measure(box, n, args.rounds, args.check_seconds, races, args.before)
        if not par.report(found, n, args.check_seconds, args.rounds):
            code = 1
        return code
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def report(rows: list[tuple[tuple[int, ...], Run, Run, Run]],
           sweep: list[tuple[tuple[int, ...], Run, Run]], n: int, races: list[str]) -> int:
    """The tables, then one PASS/MISS line per goal; exit 0 only when every goal is met."""
    print()
    print(f"{'one slot':<20} {'queue checks':>12} {'rounds':>6} {'wall':>7}   {'naive checks':>12} "
          f"{'wall':>7}   {'checks saved':>12} {'faster':>7}")
    for bad, slow, q1, _ in rows:
        print(f"{label(bad):<20} {q1.checks:>12} {q1.rounds:>6} {q1.seconds:>6.1f}s   {slow.checks:>12} "
              f"{slow.seconds:>6.1f}s   {slow.checks / q1.checks:>11.1f}x {slow.seconds / q1.seconds:>6.1f}x")
    print()
    print(f"{'check_slots = 4':<20} {'queue checks':>12} {'rounds':>6} {'wall':>7}   {'1-slot rounds':>13} "
          f"{'wall':>7}   {'naive wall':>10}")
    for bad, slow, q1, q4 in rows:
        print(f"{label(bad):<20} {q4.checks:>12} {q4.rounds:>6} {q4.seconds:>6.1f}s   {q1.rounds:>13} "
              f"{q1.seconds:>6.1f}s   {slow.seconds:>9.1f}s")
    if sweep:
        print()
        print(f"{'other placements':<20} {'checks':>6} {'rounds':>6} {'wall':>7}   {'4 slots: checks':>15} "
              f"{'rounds':>6} {'wall':>7}")
        for bad, q1, q4 in sweep:
            print(f"{label(bad):<20} {q1.checks:>6} {q1.rounds:>6} {q1.seconds:>6.1f}s   {q4.checks:>15} "
                  f"{q4.rounds:>6} {q4.seconds:>6.1f}s")
    print()
    ok_all = True
    every = [(bad, q1, q4) for bad, _, q1, q4 in rows] + sweep
    for k, goal in GOAL_CHECKS.items():
        placed = [(bad, q1) for bad, _, q1, _ in rows if len(bad) == k]
        for bad, q1 in placed:
            ok = q1.checks <= goal
            ok_all &= ok
            print(f"{verdict(ok)}  {label(bad)} of {n}: at most {goal} check run{'s' if goal > 1 else ''}, "
                  f"took {q1.checks}")
        others = [(bad, q1) for bad, q1, _ in every if len(bad) == k]
        if k and len(others) > 1:
            worst_bad, worst = max(others, key=lambda x: x[1].checks)
            ok = worst.checks <= goal
            ok_all &= ok
            print(f"{verdict(ok)}  {k} failing, worst of {len(others)} placements: at most {goal}, took "
                  f"{worst.checks} with {', '.join(f'f{i}' for i in worst_bad)} failing")
    for bad, q1, q4 in every:
        if not bad:
            continue
        ok = q4.rounds < q1.rounds
        ok_all &= ok
        print(f"{verdict(ok)}  4 slots take fewer rounds, {label(bad)}: {q4.rounds} against {q1.rounds}")
    if races:
        ok_all = False
        print(f"MISS  {len(races)} landing run(s) failed creating their scratch worktrees at once "
              "(each tried again in a new lead):")
        for line in races:
            print(f"        {line}")
    return 0 if ok_all else 1


if __name__ == "__main__":
    sys.exit(main())
