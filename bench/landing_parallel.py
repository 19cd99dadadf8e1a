"""The landing queue on four check slots, speculating, against the serial queue: wall time in check durations.

    python bench/landing.py --parallel-only [--rounds 3] [--check-seconds 2]

16 branches, a check of `sleep 2` (then the marker test of bench/landing.py), 0 and 1 failing (f5). For each,
in new leads, median of --rounds runs:

  speculative   `git balanced land f1 ... f16 --json` with `check_slots = 4`: the free slots of each round check
                the next chain's top for each possible culprit (git_balanced/landing/speculate.py);
  fixed cost    the same with a check that does not sleep: what the landing costs besides waiting for checks;
  serial queue  the same with `check_slots = 1`, where every check waits for the one before it.

Every lead sets `check_seats` to its slots: the check sleeps, so 4 of them fit on 2 cores, and with the
default seats (the cores) a 2-core machine would run 4 slots' checks 2 at a time.

The fixed cost is also given in CPU seconds (the landing and every process it waited for: its git commands and
checks), which a busy machine stretches far less than wall time.

Wall time in check durations: `raw` is wall / check; `net` is (wall - fixed cost) / check, the check durations
the landing waited. Goals: 1 failing in at most 3 (raw); 0 failing in one (net: raw cannot be 1, since one
check alone takes one duration and starting the command and merging take more). Also the extra check runs the
speculation spends against the serial queue, and against landing one at a time (16).
"""

from __future__ import annotations

import copy
import os
import statistics
from dataclasses import dataclass
from pathlib import Path

from bench.landing_repos import MARKER, Run, Sandbox, expect, fresh, label, queue, verdict
from git_balanced import proc

PLACED = ((), (5,))
GOALS = {0: 1.0, 1: 3.0}  # check durations: 0 failing judged on net, 1 failing on raw


def check_of(seconds: float) -> str:
    return f'sleep {seconds:g}; echo run >> "$HOME/check-runs"; ! grep -rq {MARKER} src'


@dataclass
class Row:
    bad: tuple[int, ...]
    fast: list[Run]
    fixed: list[Run]
    serial: list[Run]
    loads: list[float]
    code: str = ""  # whose landing code ran: "" for this checkout's, else the name given with --before

    def med(self, runs: list[Run], what: str = "seconds") -> float:
        return statistics.median(getattr(r, what) for r in runs)


def warmed(box: Sandbox, n: int, bad: tuple[int, ...], slots: int, check: str, races: list[str]) -> Path:
    """A new lead that landed 4 branches (w1 ... w4) once already, so its scratch worktrees are made: a lead
    makes them at its first landing, and uses them ever after; what is timed is a landing after that."""
    repo = fresh(box, n, bad, slots, check, seats=max(slots, 1))
    names = [f"w{i}" for i in range(1, 5)]
    for name in names:
        box.git(repo, "switch", "-q", "-c", name, "main")
        (repo / "src" / f"{name}.txt").write_text(f"warm-up {name}\n")
        box.git(repo, "add", "-A")
        box.git(repo, "commit", "-q", "-m", f"add {name}")
    box.git(repo, "switch", "-q", "main")
    for _ in range(3):  # the first parallel landing of a lead can trip on its own new worktrees (bench/landing.py)
        res = proc.run(["git", "balanced", "land", *names, "--json"], cwd=repo, env=box.env)
        if res.code == 0:
            return repo
        races.append(f"warm-up, {slots} slots: {(res.err.strip().splitlines() or ['?'])[-1]}")
    raise SystemExit(f"the warm-up landing failed 3 times in {repo}:\n{res.err}")


def with_code(box: Sandbox, source: Path | None) -> Sandbox:
    """`box`, or a copy of it whose `git balanced` imports the package from `source` (a folder holding another
    version's git_balanced/, for a before-and-after in the same run)."""
    if source is None:
        return box
    other = copy.copy(box)
    other.env = {**box.env, "PYTHONPATH": str(source)}
    return other


def measure(box: Sandbox, n: int, rounds: int, seconds: float, races: list[str],
            before: Path | None = None) -> list[Row]:
    """Each placement, `rounds` times: the three landings, each in a new lead, checked for what landed. With
    `before`, the same with the landing code found there too, alternated with this checkout's round by round."""
    rows = []
    codes: list[tuple[str, Path | None]] = [("", None)] + ([(before.name or "before", before)] if before else [])
    for bad in (b for b in PLACED if not b or max(b) <= n):
        found = {name: Row(bad, [], [], [], [], name) for name, _ in codes}
        for k in range(rounds):
            for name, source in codes if k % 2 == 0 else codes[::-1]:
                row, where = found[name], with_code(box, source)
                row.loads.append(os.getloadavg()[0])
                for runs, slots, secs in ((row.fast, 4, seconds), (row.fixed, 4, 0), (row.serial, 1, seconds)):
                    run = queue(where, warmed(where, n, bad, slots, check_of(secs), races), n)
                    expect(run, n, bad, f"{slots} slot(s), {secs:g} s check, {label(bad)}")
                    runs.append(run)
        trees = {(name, kind, r.tree) for name, row in found.items()
                 for kind, runs in (("speculative", row.fast), ("fixed", row.fixed), ("serial", row.serial))
                 for r in runs}
        assert len({t for _, _, t in trees}) == 1, \
            f"{label(bad)}: the speculative and the serial queue ended on different trees: {sorted(trees)}"
        rows += [found[name] for name, _ in codes[::-1]]
        print(f"  parallel, {label(bad)}: done", flush=True)
    return rows


def report(rows: list[Row], n: int, seconds: float, rounds: int) -> bool:
    """The table, then one PASS/MISS line per goal; True when both are met."""
    print()
    print(f"parallel landing: {n} branches, a {seconds:g} s check, check_slots = 4, median of {rounds} runs")
    print(f"{'':<24} {'wall':>6} {'raw':>5} {'net':>5} {'runs':>5} {'rounds':>6}   {'fixed':>6}   "
          f"{'fixed cpu':>9}   {'serial: wall':>12} {'runs':>5}   {'extra runs':>10} {'vs 1 by 1':>9}   {'load':>5}")
    ok_all = True
    for row in rows:
        wall, fixed, slow = row.med(row.fast), row.med(row.fixed), row.med(row.serial)
        runs, serial_runs = row.med(row.fast, "checks"), row.med(row.serial, "checks")
        raw, net = wall / seconds, (wall - fixed) / seconds
        fixed_cpu = row.med(row.fixed, "cpu")
        name = label(row.bad) + (f" [{row.code}]" if row.code else "")
        print(f"{name:<24} {wall:>5.1f}s {raw:>5.2f} {net:>5.2f} {runs:>5g} {row.med(row.fast, 'rounds'):>6g}"
              f"   {fixed:>5.1f}s   {fixed_cpu:>8.2f}s   {slow:>11.1f}s {serial_runs:>5g}   {runs - serial_runs:>+10g} "
              f"{runs - n:>+9g}   {statistics.median(row.loads):>5.2f}")
        if row.code:  # the code it is compared with: figures, no goal
            continue
        goal = GOALS[len(row.bad)]
        if row.bad:
            ok, words = raw <= goal, f"{raw:.2f} check durations of wall time ({wall:.1f} s)"
        else:
            ok = round(net, 1) <= goal
            words = f"{net:.1f} check durations waited ({wall:.1f} s, of which {fixed:.1f} s the landing's own)"
        ok_all &= ok
        print(f"{verdict(ok)}  {label(row.bad)} of {n}, 4 slots: at most {goal:g} check duration"
              f"{'s' if goal > 1 else ''}, took {words}; the serial queue {slow / seconds:.2f} ({slow:.1f} s); "
              f"{runs - serial_runs:+g} check runs against it")
    return ok_all
