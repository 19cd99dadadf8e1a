"""Dispatch over SSH: 24 trivial pieces over local and two sshd machines, through the shared ControlMaster
against a fresh `ssh` per command.

Starts two sshd machines on 127.0.0.1 (tests/support/sshd.py; as root each is a throwaway user), builds a
fresh project per round (settings, allow, tick, `ready --yes`, and a plan of 24 shell pieces spread 8/8/8:
none of that is timed), then runs the engine's passes in this process and times until every piece runs
(dispatch) and until every piece has landed through the check. The fresh-connection rounds set
GIT_BALANCED_SSH_MULTIPLEX=0, which every SSH command of remote.py, git's included, obeys. Masters are
closed before each round, so the master rounds pay for opening them. Prints medians and ratios. Run from
the repository root:  .venv/bin/python bench/dispatch.py [-r 3] [-n 24] [--one-at-a-time]
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

from git_balanced import workers  # noqa: E402
from git_balanced.engine import Engine  # noqa: E402
from git_balanced.git import Repo  # noqa: E402
from git_balanced.jobs import all_jobs  # noqa: E402
from git_balanced.lead import Lead  # noqa: E402
from git_balanced.machines import remote  # noqa: E402
from git_balanced.machines.transport import Transport  # noqa: E402
from tests.support.sshd import Machines, sshd_machines  # noqa: E402

SETTINGS = '[worktree]\ncheck = "true"\n\n[balanced]\nagent = "shell"\ncap = {cap}\n'
STARTED = ("running", "finished", "checking", "landed")


def cli(repo: Path, *args: str) -> str:
    cp = subprocess.run([sys.executable, "-m", "git_balanced.cli", *args], cwd=repo, capture_output=True,
                        text=True, stdin=subprocess.DEVNULL)
    if cp.returncode != 0:
        raise SystemExit(f"git balanced {' '.join(args)} failed:\n{cp.stdout}\n{cp.stderr}")
    return cp.stdout


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def project(top: Path, name: str, n: int) -> Path:
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
    pieces = [{"id": f"p{i}", "task": f"Write f{i}.txt", "agent": "shell", "run": f"echo {i} > f{i}.txt"}
              for i in range(n)]
    (top / f"{name}.yaml").write_text(json.dumps({"task": "Dispatch", "pieces": pieces}))
    out = cli(repo, "plan", str(top / f"{name}.yaml"), "--start")
    spread = {m: out.count(f" {m}: ") for m in ("local", "alpha", "beta")}
    if sorted(spread.values()) != [n // 3, n // 3, n - 2 * (n // 3)]:
        raise SystemExit(f"the plan did not spread evenly: {spread}")
    return repo


def one_round(repo: Path, n: int) -> tuple[float, float]:
    """Seconds from the engine's first pass until all n pieces run, and until all have landed."""
    lead = Lead(Repo.discover(repo), "main")
    eng = Engine(lead)
    start = time.perf_counter()
    dispatched = None
    while True:
        eng.pass_once()
        states = [j.state for j in all_jobs(lead.repo).values()]
        now = time.perf_counter() - start
        if dispatched is None and len(states) == n and all(s in STARTED for s in states):
            dispatched = now
        if len(states) == n and all(s == "landed" for s in states):
            return dispatched if dispatched is not None else now, now
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
                        help="the engine starts one worker after the other instead of a pass's all at once")
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
        times: dict[str, list[tuple[float, float]]] = {"master": [], "fresh": []}
        with sshd_machines(top, ["alpha", "beta"]) as machines:
            for r in range(args.rounds):
                for mode in ("master", "fresh"):  # interleaved, so a noisy moment hurts both alike
                    repo = project(top, f"p-{mode}-{r}", args.pieces)
                    close_masters(machines)
                    os.environ["GIT_BALANCED_SSH_MULTIPLEX"] = "1" if mode == "master" else "0"
                    before = sum(m.accepted() for m in machines)
                    times[mode].append(one_round(repo, args.pieces))
                    after = sum(m.accepted() for m in machines)
                    print(f"  round {r + 1} {mode:<6}  all run {times[mode][-1][0]:6.2f} s   all landed "
                          f"{times[mode][-1][1]:6.2f} s   SSH connections {after - before}", flush=True)
            close_masters(machines)
    med = {mode: (statistics.median(t[0] for t in ts), statistics.median(t[1] for t in ts))
           for mode, ts in times.items()}
    how = "one start after the other" if args.one_at_a_time else f"up to {workers.PARALLEL_STARTS} starts at once"
    print(f"dispatch: {args.pieces} shell pieces over local and two sshd machines, {args.rounds} rounds each way, "
          f"{how}; masters closed before each round")
    print(f"  through the ControlMaster  all run {med['master'][0]:6.2f} s   all landed {med['master'][1]:6.2f} s")
    print(f"  fresh ssh per command      all run {med['fresh'][0]:6.2f} s   all landed {med['fresh'][1]:6.2f} s")
    print(f"  ratio (fresh / master)     dispatch {med['fresh'][0] / med['master'][0]:.1f}x   "
          f"landing {med['fresh'][1] / med['master'][1]:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
