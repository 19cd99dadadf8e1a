"""The landing queue on 4 check slots, alone and with 1 or 2 idle sshd machines taking checks as hints: rounds,
the lead's own check runs, the machines' runs, and wall time.

    python bench/landing_machines.py [--rounds 3] [--check-seconds 2] [--branches 16] [--slots 4]

Starts two sshd machines on 127.0.0.1 (tests/support/sshd.py; as root each is a throwaway user). For 1 failing
branch (f5) and 2 (f5, f11), each way --rounds times, in a new lead each time (settings, allow, tick, `ready
--yes` and a warm-up landing of 4 branches, none of it timed): `git balanced land f1 ... f16 --json` with
`check_slots = 4` (or --slots) and a check of `sleep 2` then the marker test of bench/landing.py, and

  alone       no machine ticked: the speculative queue of bench/landing_parallel.py;
  + alpha     alpha ticked and ready: idle, it checks the prefixes the lead's round leaves out, and its answers
              choose what the lead checks next (git_balanced/landing/machine_checks.py);
  + both      alpha and beta.

Every run must land exactly the good branches, refuse exactly the bad ones and end on the same tree.

Goals, one PASS or MISS line each (exit 1 on a miss): for each placement and each way with machines, no more
rounds and no more of the lead's own check runs than alone (the medians: hints only steer, so they may save
rounds, never cost one), and the machines took checks (some hint ran, none was dropped). Without an OpenSSH
server here (scripts/ensure-sshd.sh installs one) it measures nothing and says MISS, with why.

What it cannot show: the machines are on this computer, so their checks share its cores with the lead's (a
`sleep` check hides that), and the SSH round trips are loopback ones. It measures what the hints save in
rounds, not what a real second machine's cores add.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout without installing

from bench.landing_parallel import check_of  # noqa: E402
from bench.landing_repos import Sandbox, build, label  # noqa: E402
from git_balanced import proc  # noqa: E402
from tests.support.sshd import sshd_available, sshd_machines  # noqa: E402

PLACED = ((5,), (5, 11))
WAYS = {"alone": [], "+ alpha": ["alpha"], "+ both": ["alpha", "beta"]}


@dataclass
class Run:
    seconds: float
    rounds: int
    own: int  # the lead's own check runs
    hints: int  # the machines' check runs
    dropped: int
    tree: str


def cli(box: Sandbox, repo: Path, *args: str) -> str:
    res = proc.run(["git", "balanced", *args], cwd=repo, env=box.env)
    if res.code != 0:
        raise SystemExit(f"git balanced {' '.join(args)} failed in {repo}:\n{res.out}\n{res.err}")
    return res.out


def lead(box: Sandbox, n: int, bad: tuple[int, ...], machines: list[str], check: str, slots: int) -> Path:
    """A new lead with `slots` slots and the shell agent, `machines` ticked and ready, that landed 4 branches
    once."""
    repo = build(box, Path(tempfile.mkdtemp(prefix="run-", dir=box.root)) / "lead", n, bad, slots, check, seats=4)
    settings = repo / ".magnum" / "settings.toml"
    settings.write_text(settings.read_text() + 'agent = "shell"\n')
    box.git(repo, "commit", "-qam", "the shell agent")
    cli(box, repo, "tick", "local", *machines)
    cli(box, repo, "ready", "--yes")
    names = [f"w{i}" for i in range(1, 5)]
    for name in names:  # the lead's scratch worktrees are made at its first landing: not what is timed
        box.git(repo, "switch", "-q", "-c", name, "main")
        (repo / "src" / f"{name}.txt").write_text(f"warm-up {name}\n")
        box.git(repo, "add", "-A")
        box.git(repo, "commit", "-q", "-m", f"add {name}")
    box.git(repo, "switch", "-q", "main")
    cli(box, repo, "land", *names, "--json")
    return repo


def land(box: Sandbox, repo: Path, n: int, bad: tuple[int, ...]) -> Run:
    start = time.perf_counter()
    res = proc.run(["git", "balanced", "land", *[f"f{i}" for i in range(1, n + 1)], "--json"], cwd=repo, env=box.env)
    seconds = time.perf_counter() - start
    data = json.loads(res.out)
    landed = {v["branch"] for v in data["verdicts"] if v["status"] == "landed"}
    refused = {v["branch"] for v in data["verdicts"] if v["status"] != "landed"}
    assert refused == {f"f{i}" for i in bad} and len(landed) == n - len(bad), data["verdicts"]
    return Run(seconds, data["rounds"], data["check_runs"], len(data.get("machine_checks", [])),
               len(data.get("machines_dropped", {})), box.git(repo, "rev-parse", "main:src"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3, help="runs of each way, for medians (default 3)")
    ap.add_argument("--check-seconds", type=float, default=2.0, help="the check's duration (default 2)")
    ap.add_argument("--branches", type=int, default=16, help="branches per landing (default 16)")
    ap.add_argument("--slots", type=int, default=4, help="the lead's check_slots (default 4)")
    args = ap.parse_args(argv)
    n, check = args.branches, check_of(args.check_seconds)
    if not sshd_available():
        print(f"MISS  landing with idle machines: not measured, this machine has no OpenSSH server (sshd, ssh, "
              f"ssh-keygen); scripts/ensure-sshd.sh installs one. Load {os.getloadavg()[0]:.2f}")
        return 1
    with tempfile.TemporaryDirectory(prefix="bench-landing-machines-") as tmp:
        top = Path(tmp)
        box = Sandbox(top)
        config = box.home / ".ssh" / "config"
        os.environ.update(GIT_BALANCED_SSH_CONFIG=str(config), HOME=box.env["HOME"])
        box.env["GIT_BALANCED_SSH_CONFIG"] = str(config)
        print(f"landing with idle machines: {n} branches, check_slots = {args.slots}, "
              f"a {args.check_seconds:g} s check, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}")
        with sshd_machines(top, ["alpha", "beta"]):
            for name in ("alpha", "beta"):
                cli(box, top, "machines", "add", name)
            found: dict[tuple[tuple[int, ...], str], list[Run]] = {}
            loads = []
            for bad in PLACED:
                for _ in range(args.rounds):
                    loads.append(os.getloadavg()[0])
                    for way, machines in WAYS.items():  # the ways side by side, in the same minute
                        repo = lead(box, n, bad, machines, check, args.slots)
                        found.setdefault((bad, way), []).append(land(box, repo, n, bad))
                    trees = {r.tree for way in WAYS for r in found[(bad, way)]}
                    assert len(trees) == 1, f"{label(bad)}: the ways ended on different trees"
                print(f"  {label(bad)}: done", flush=True)
    report(found, args.check_seconds, args.rounds, loads)
    return 0 if goals(found, statistics.median(loads)) else 1


def report(found: dict[tuple[tuple[int, ...], str], list[Run]], seconds: float, rounds: int,
           loads: list[float]) -> None:
    def med(runs: list[Run], what: str) -> float:
        return statistics.median(getattr(r, what) for r in runs)

    print()
    print(f"median of {rounds} runs; load average {statistics.median(loads):.2f} (from {min(loads):.2f} to "
          f"{max(loads):.2f})")
    print(f"{'':<28} {'wall':>6} {'in checks':>9} {'rounds':>6} {'own runs':>8} {'hints':>5} {'dropped':>7} "
          f"{'vs alone':>8}")
    for (bad, way), runs in found.items():
        alone = med(found[(bad, 'alone')], "seconds")
        wall = med(runs, "seconds")
        print(f"{label(bad) + ', ' + way:<28} {wall:>5.1f}s {wall / seconds:>9.2f} {med(runs, 'rounds'):>6g} "
              f"{med(runs, 'own'):>8g} {med(runs, 'hints'):>5g} {med(runs, 'dropped'):>7g} {alone / wall:>7.2f}x")



def goals(found: dict[tuple[tuple[int, ...], str], list[Run]], load: float) -> bool:
    """One PASS or MISS line per goal; True when every goal is met. Rounds and runs are medians over the rounds."""
    ok_all = True
    for bad in sorted({bad for bad, _ in found}):
        alone = found[(bad, "alone")]
        a_rounds, a_own = (statistics.median(getattr(r, w) for r in alone) for w in ("rounds", "own"))
        for way in WAYS:
            if way == "alone":
                continue
            runs = found[(bad, way)]
            rounds, own = (statistics.median(getattr(r, w) for r in runs) for w in ("rounds", "own"))
            ok = rounds <= a_rounds and own <= a_own
            ok_all &= ok
            print(f"{'PASS' if ok else 'MISS'}  {label(bad)}, {way}: no more rounds or own check runs than alone, "
                  f"{rounds:g} rounds and {own:g} runs against {a_rounds:g} and {a_own:g} (load {load:.2f})")
    with_machines = [r for (_, way), runs in found.items() if way != "alone" for r in runs]
    hints, dropped = sum(r.hints for r in with_machines), sum(r.dropped for r in with_machines)
    ok = hints > 0 and dropped == 0
    ok_all &= ok
    print(f"{'PASS' if ok else 'MISS'}  the idle machines took checks: {hints} hints in {len(with_machines)} "
          f"landings, {dropped} machines dropped (load {load:.2f})")
    return ok_all


if __name__ == "__main__":
    sys.exit(main())
