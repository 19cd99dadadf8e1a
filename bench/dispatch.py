"""Dispatch over SSH: 24 trivial pieces over local and two sshd machines, through the shared ControlMaster
against a fresh `ssh` per command.

Starts two sshd machines on 127.0.0.1 (tests/support/sshd.py; as root each is a throwaway user), builds a
fresh project per round (settings, allow, tick, `ready --yes`, and a plan of 24 shell pieces spread 8/8/8:
none of that is timed), then runs the engine's passes in this process and times until every piece runs
(dispatch) and until every piece has landed through the check. The fresh-connection rounds set
GIT_BALANCED_SSH_MULTIPLEX=0, which every SSH command of remote.py, git's included, obeys (and with it
the runner sessions, which ride the masters). Masters are closed before each round, so the master rounds
pay for opening them; with --open-masters they are left as `ready` opened them, as a running engine finds
them. Prints medians and ratios, and the CPU-seconds the whole computer spent until all ran: when the
cores are busy all along, the ratio of the times cannot be much above the ratio of the CPU. Run from the
repository root:
  .venv/bin/python bench/dispatch.py [-r 3] [-n 24] [--one-at-a-time] [--open-masters] [--sleep S]
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from git_balanced.engine import workers  # noqa: E402
from git_balanced.engine.loop import Engine  # noqa: E402
from git_balanced.git import Repo  # noqa: E402
from git_balanced.jobs import all_jobs  # noqa: E402
from git_balanced.lead import Lead  # noqa: E402
from git_balanced.machines import remote  # noqa: E402
from git_balanced.machines.transport import Transport  # noqa: E402
from tests.support.sshd import Machines, sshd_machines  # noqa: E402

SETTINGS = '[worktree]\ncheck = "true"\n\n[balanced]\nagent = "shell"\ncap = {cap}\n'
STARTED = ("running", "finished", "checking", "landed")
CORES = os.cpu_count() or 1


def cli(repo: Path, *args: str) -> str:
    cp = subprocess.run([sys.executable, "-m", "git_balanced.cli", *args], cwd=repo, capture_output=True,
                        text=True, stdin=subprocess.DEVNULL)
    if cp.returncode != 0:
        raise SystemExit(f"git balanced {' '.join(args)} failed:\n{cp.stdout}\n{cp.stderr}")
    return cp.stdout


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def project(top: Path, name: str, n: int, sleep: float = 0.0) -> Path:
    """A repository ready on local, alpha and beta, with a started plan of n pieces (not timed)."""
    repo = top / name
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "README.md").write_text("bench\n")
    (repo / ".magnum").mkdir()
    (repo / ".magnum" / "settings.toml").write_text(SETTINGS.format(cap=n))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "bench project")
    cli(repo, "allow", "--yes")
    cli(repo, "tick", "local", "alpha", "beta")
    cli(repo, "ready", "--yes")
    first = f"sleep {sleep:g}; " if sleep else ""
    pieces = [{"id": f"p{i}", "task": f"Write f{i}.txt", "agent": "shell", "run": f"{first}echo {i} > f{i}.txt"}
              for i in range(n)]
    (top / f"{name}.yaml").write_text(json.dumps({"task": "Dispatch", "pieces": pieces}))
    out = cli(repo, "plan", str(top / f"{name}.yaml"), "--start")
    spread = {m: out.count(f" {m}: ") for m in ("local", "alpha", "beta")}
    if sorted(spread.values()) != [n // 3, n // 3, n - 2 * (n // 3)]:
        raise SystemExit(f"the plan did not spread evenly: {spread}")
    return repo


def cpu_busy() -> float:
    """CPU-seconds this computer spent busy since it started, on every core and for every process: the
    lead, its ssh, and both machines' sshd and workers alike (they all run here)."""
    with open("/proc/stat") as f:
        ticks = [int(x) for x in f.readline().split()[1:8]]  # user nice system idle iowait irq softirq
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")


def one_round(repo: Path, n: int) -> tuple[float, float, float]:
    """Seconds from the engine's first pass until all n pieces run, and until all have landed; and the
    CPU-seconds the whole computer spent until all ran."""
    lead = Lead(Repo.discover(repo), "main")
    eng = Engine(lead)
    busy = cpu_busy()
    start = time.perf_counter()
    dispatched = None
    while True:
        eng.pass_once()
        states = [j.state for j in all_jobs(lead.repo).values()]
        now = time.perf_counter() - start
        if dispatched is None and len(states) == n and all(s in STARTED for s in states):
            dispatched, busy = now, cpu_busy() - busy
        if len(states) == n and all(s == "landed" for s in states):
            return (dispatched, now, busy) if dispatched is not None else (now, now, cpu_busy() - busy)
        if now > 600:
            raise SystemExit(f"not all landed after 600 s: {sorted(states)}")
        time.sleep(0.05)


def close_masters(machines: Machines) -> None:
    for m in machines:
        Transport(m.name).close()
    remote.forget_transports()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-r", "--rounds", type=int, default=3, help="rounds each way (default 3)")
    parser.add_argument("-n", "--pieces", type=int, default=24, help="pieces per round (default 24)")
    parser.add_argument("--one-at-a-time", action="store_true",
                        help="the engine starts one machine's workers after another's, instead of the machines "
                             "at once (each machine's starts go in one message either way)")
    parser.add_argument("--sleep", type=float, default=0.0, metavar="S",
                        help="each piece sleeps S seconds before it writes its file, so that the workers' "
                             "commits do not fall while the others start (their worktrees still do)")
    parser.add_argument("--open-masters", action="store_true",
                        help="leave the masters `ready` opened, as a running engine finds them, instead of "
                             "closing them before each round")
    args = parser.parse_args()
    if args.one_at_a_time:
        workers.PARALLEL_STARTS = 1
    with tempfile.TemporaryDirectory(prefix="bench-dispatch-") as tmp:
        top = Path(tmp)
        home = top / "home"
        home.mkdir()
        # A private HOME, config and identity: the benchmark neither reads nor writes the user's own setup.
        os.environ.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
                          XDG_STATE_HOME=str(home / ".local/state"), XDG_CACHE_HOME=str(home / ".cache"),
                          GIT_BALANCED_SSH_CONFIG=str(home / ".ssh" / "config"), GIT_CONFIG_NOSYSTEM="1",
                          GIT_AUTHOR_NAME="Bench", GIT_AUTHOR_EMAIL="bench@example.com",
                          GIT_COMMITTER_NAME="Bench", GIT_COMMITTER_EMAIL="bench@example.com")
        os.environ.pop("XDG_RUNTIME_DIR", None)
        times: dict[str, list[tuple[float, float, float]]] = {"master": [], "fresh": []}
        with sshd_machines(top, ["alpha", "beta"]) as machines:
            for r in range(args.rounds):
                for mode in ("master", "fresh"):  # interleaved, so a noisy moment hurts both alike
                    os.environ["GIT_BALANCED_SSH_MULTIPLEX"] = "1" if mode == "master" else "0"
                    repo = project(top, f"p-{mode}-{r}", args.pieces, args.sleep)  # `ready` too: not timed
                    if not args.open_masters or mode == "fresh":
                        close_masters(machines)
                    else:
                        remote.forget_transports()  # what this process knew: the engine finds the masters
                    before = sum(m.accepted() for m in machines)
                    times[mode].append(one_round(repo, args.pieces))
                    after = sum(m.accepted() for m in machines)
                    ran, landed, busy = times[mode][-1]
                    print(f"  round {r + 1} {mode:<6}  all run {ran:6.2f} s   all landed {landed:6.2f} s   "
                          f"SSH connections {after - before:3d}   CPU until all ran {busy:5.2f} s "
                          f"({busy / (ran * CORES):.0%} of {CORES} cores)", flush=True)
            close_masters(machines)
    med = {mode: tuple(statistics.median(t[i] for t in ts) for i in range(3)) for mode, ts in times.items()}
    how = "one machine after the other" if args.one_at_a_time else "the machines at once"
    masters = "masters open from `ready`" if args.open_masters else "masters closed before each round"
    if args.sleep:
        masters += f"; each piece sleeps {args.sleep:g} s first"
    print(f"dispatch: {args.pieces} shell pieces over local and two sshd machines, {args.rounds} rounds each way, "
          f"{how}; {masters}")
    for mode, words in (("master", "through the ControlMaster"), ("fresh", "fresh ssh per command    ")):
        print(f"  {words}  all run {med[mode][0]:6.2f} s   all landed {med[mode][1]:6.2f} s   "
              f"CPU until all ran {med[mode][2]:5.2f} s")
    print(f"  ratio (fresh / master)     dispatch {med['fresh'][0] / med['master'][0]:.1f}x   "
          f"landing {med['fresh'][1] / med['master'][1]:.1f}x   CPU until all ran "
          f"{med['fresh'][2] / med['master'][2]:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
