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
cores are busy all along, the ratio of the times cannot be much above the ratio of the CPU.

With --rtt 0,20,50 (latency mode) ssh reaches both machines through bench/relay.py, a ProxyCommand that
delays every chunk by half the round-trip time each way, and the rounds run at each round-trip time in
turn; it prints what the engine sent a machine (runner messages, one-off commands, sessions opened, git
commands: each at least a round trip), then one PASS or MISS line per goal, and exits 1 on a miss. Run
from the repository root:
  .venv/bin/python bench/dispatch.py [-r 3] [-n 24] [--one-at-a-time] [--open-masters] [--sleep S]
                                     [--rtt MS,MS,...]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.relay import route  # noqa: E402
from bench.sandbox import cpu_busy  # noqa: E402
from git_balanced import process  # noqa: E402
from git_balanced.engine import workers  # noqa: E402
from git_balanced.engine.loop import Engine  # noqa: E402
from git_balanced.git import Repo  # noqa: E402
from git_balanced.jobs import all_jobs  # noqa: E402
from git_balanced.lead import Lead  # noqa: E402
from git_balanced.machines.reach import remote, sessions  # noqa: E402
from git_balanced.machines.reach.routes import Reach  # noqa: E402
from git_balanced.machines.reach.transport import Transport  # noqa: E402
from tests.support.sshd import Machines, sshd_machines  # noqa: E402

SETTINGS = '[worktree]\ncheck = "true"\n\n[balanced]\nagent = "shell"\ncap = {cap}\n'
STARTED = ("running", "finished", "checking", "landed")
CORES = os.cpu_count() or 1
SPEEDUP = 5.0  # latency mode: how many times faster than fresh connections the masters must be
# Latency mode: round trips a dispatch (or a landing) through the masters may add at most on a machine's way,
# whatever its pieces: opening the master (8: TCP's handshake, then SSH's banners and key exchange, new keys
# and service, and three steps of login), the push of the base (4: a channel, the refs, the pack and the
# report, the close) with the runner session opening meanwhile, and the one message of the starts.
FEW_ROUND_TRIPS = 13


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


# What the engine sent each SSH machine: every runner message through a session, one-off command, session
# opened and git command. Each costs at least one round trip; a master's own opening is not counted.
SENT: collections.Counter[str] = collections.Counter()
_SESSION_OF: dict[int, str] = {}  # a session's ssh pid: its machine


def count_sent() -> None:
    """Count in SENT, by machine, what the transport sends (wrapping its methods in this process)."""
    def wrap(cls: Any, name: str, machine: Callable[..., str | None]) -> None:
        original = getattr(cls, name)

        def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
            got = original(self, *args, **kwargs)
            where = machine(self, got)
            if where:
                SENT[where] += 1
            return got
        setattr(cls, name, counted)

    def opened(t: Transport, got: tuple[Any, int]) -> str:
        _SESSION_OF[got[0].pid] = t.name
        return t.name

    wrap(Transport, "_ssh", lambda t, _: t.name)
    wrap(Transport, "open_python", opened)
    wrap(sessions.Session, "call_many", lambda s, _: _SESSION_OF.get(s.process.pid))
    wrap(remote.RemoteHost, "_git", lambda h, _: h.alias)


def one_round(repo: Path, n: int, machines: Machines) -> Round:
    """Seconds from the engine's first pass until all n pieces run, and until all have landed; the
    CPU-seconds the whole computer spent until all ran; and what the engine sent a machine each way."""
    lead = Lead(Repo.discover(repo), "main")
    eng = Engine(lead)
    busy = cpu_busy()
    start = time.perf_counter()
    dispatched = None
    sent = sent_run = 0.0
    before = sum(m.accepted() for m in machines)

    def sent_now() -> float:
        return sum(SENT[m.name] for m in machines) / len(machines)

    SENT.clear()
    while True:
        eng.pass_once()
        states = [j.state for j in all_jobs(lead.repo).values()]
        now = time.perf_counter() - start
        if dispatched is None and len(states) == n and all(s in STARTED for s in states):
            dispatched, busy, sent_run = now, cpu_busy() - busy, sent_now()
        if len(states) == n and all(s == "landed" for s in states):
            process.part(Reach).settle()  # the cleanups of this pass, so that the next round starts clean
            sent = sent_now()
            if dispatched is None:
                dispatched, busy, sent_run = now, cpu_busy() - busy, sent
            return Round(dispatched, now, busy, sum(m.accepted() for m in machines) - before, sent_run,
                         sent - sent_run)
        if now > 600:
            raise SystemExit(f"not all landed after 600 s: {sorted(states)}")
        time.sleep(0.05)


def close_masters(machines: Machines) -> None:
    for m in machines:
        Transport(m.name).close()
    process.part(Reach).close()


def run_rounds(top: Path, machines: Machines, args: argparse.Namespace,
               rtts: list[float | None]) -> dict[float | None, dict[str, list[Round]]]:
    """args.rounds rounds each way at each round-trip time (None: directly, without the relay), the ways
    and the round-trip times interleaved (so a noisy moment hurts all alike), each on a new project;
    prints each round as it ends."""
    times: dict[float | None, dict[str, list[Round]]] = {rtt: {mode: [] for mode in args.ways} for rtt in rtts}
    for r in range(args.rounds):
        for rtt in rtts:
            if rtt is not None:
                close_masters(machines)  # a master keeps the link it was opened over
                route(str(machines.config), rtt)
            for mode in args.ways:
                times[rtt][mode].append(one_way(top, machines, args, r, rtt, mode))
    return times


def one_way(top: Path, machines: Machines, args: argparse.Namespace, r: int, rtt: float | None,
            mode: str) -> Round:
    """One round one way, on a new project."""
    tag = "" if rtt is None else f"{rtt:g} ms "
    os.environ["GIT_BALANCED_SSH_MULTIPLEX"] = "1" if mode == "master" else "0"
    repo = project(top, f"p-{tag.replace(' ', '')}{mode}-{r}", args.pieces, args.sleep)  # not timed
    if not args.open_masters or mode == "fresh":
        close_masters(machines)
    else:
        process.part(Reach).close()  # what this process knew: the engine finds the masters
    got = one_round(repo, args.pieces, machines)
    print(f"  {tag}round {r + 1} {mode:<6}  all run {got.ran:6.2f} s   all landed {got.landed:6.2f} s   "
          f"SSH connections {got.connections:3d}   CPU until all ran {got.busy:5.2f} s "
          f"({got.busy / (got.ran * CORES):.0%} of {CORES} cores)   sent a machine "
          f"{got.sent_run:g} + {got.sent_landing:g}", flush=True)
    return got


class Round(NamedTuple):
    ran: float  # seconds until every piece ran
    landed: float  # seconds until every piece landed
    busy: float  # CPU-seconds of the whole computer until every piece ran
    connections: int  # SSH connections the machines accepted
    sent_run: float  # what the engine sent a machine until every piece ran (SENT, mean of the machines)
    sent_landing: float  # and from then until every piece landed

    @property
    def landing(self) -> float:
        """Seconds from every piece running to every piece landed."""
        return self.landed - self.ran


def medians(rounds: list[Round]) -> Round:
    return Round(*(statistics.median(getattr(r, f) for r in rounds) for f in Round._fields))


def report(times: dict[str, list[Round]], args: argparse.Namespace) -> None:
    med = {mode: medians(ts) for mode, ts in times.items()}
    how = "one machine after the other" if args.one_at_a_time else "the machines at once"
    masters = "masters open from `ready`" if args.open_masters else "masters closed before each round"
    if args.sleep:
        masters += f"; each piece sleeps {args.sleep:g} s first"
    print(f"dispatch: {args.pieces} shell pieces over local and two sshd machines, {args.rounds} rounds each way, "
          f"{how}; {masters}")
    for mode, words in (("master", "through the ControlMaster"), ("fresh", "fresh ssh per command    ")):
        if mode in med:
            print(f"  {words}  all run {med[mode].ran:6.2f} s   all landed {med[mode].landed:6.2f} s   "
                  f"CPU until all ran {med[mode].busy:5.2f} s")
    if len(med) < 2:
        return
    print(f"  ratio (fresh / master)     dispatch {med['fresh'].ran / med['master'].ran:.1f}x   "
          f"landing {med['fresh'].landed / med['master'].landed:.1f}x   CPU until all ran "
          f"{med['fresh'].busy / med['master'].busy:.1f}x")


def report_latency(by_rtt: dict[float, dict[str, list[Round]]], args: argparse.Namespace) -> bool:
    """The figures at each round-trip time and one PASS or MISS line per goal; True when all passed."""
    masters = "masters open from `ready`" if args.open_masters else "masters closed before each round"
    print(f"dispatch over round trips: {args.pieces} shell pieces over local and two sshd machines reached "
          f"through bench/relay.py, {args.rounds} rounds each way; {masters}")
    print("   RTT  mode     all run  landing  all landed  CPU until all ran  SSH connections  sent a machine")
    med = {rtt: {mode: medians(ts) for mode, ts in times.items()} for rtt, times in by_rtt.items()}
    for rtt, m in med.items():
        for mode in args.ways:
            x = m[mode]
            print(f"  {rtt:3g} ms {mode:<6} {x.ran:7.2f} s {x.landing:6.2f} s {x.landed:8.2f} s {x.busy:12.2f} s "
                  f"{x.connections:13g}    {x.sent_run:6g} + {x.sent_landing:g}")
        if len(args.ways) == 2:
            f, w = m["fresh"], m["master"]
            print(f"         ratio  {f.ran / w.ran:6.1f}x {f.landing / w.landing:6.1f}x {f.landed / w.landed:8.1f}x")
    ok = True

    def goal(passed: bool, words: str) -> None:
        nonlocal ok
        ok = ok and passed
        print(f"{'PASS' if passed else 'MISS'}  {words}")

    base = min(med)
    for rtt, m in med.items():
        if rtt <= 0 or len(args.ways) < 2:
            continue
        for what, field in (("dispatch", "ran"), ("landing", "landing")):
            ratio = getattr(m["fresh"], field) / getattr(m["master"], field)
            goal(ratio >= SPEEDUP, f"{what} at {rtt:g} ms through the masters {ratio:.1f}x faster than fresh "
                                   f"(goal >= {SPEEDUP:g}x)")
    for rtt in med:
        if rtt <= base or "master" not in args.ways:
            continue
        for what, field in (("dispatch", "ran"), ("landing", "landing")):
            # Round against round: the rounds of all round-trip times ran one after the other, so a busier
            # moment of the computer weighs on both sides of a difference alike.
            counts = [(getattr(a, field) - getattr(b, field)) / (rtt - base) * 1000
                      for a, b in zip(by_rtt[rtt]["master"], by_rtt[base]["master"], strict=True)]
            count = statistics.median(counts)
            goal(count <= FEW_ROUND_TRIPS,
                 f"{what} through the masters at {rtt:g} ms: {count:.1f} round trips more than at {base:g} ms on "
                 f"each machine's way, the machines at once (goal <= {FEW_ROUND_TRIPS}, against "
                 f"{args.pieces // 3} pieces a machine; round by round {', '.join(f'{c:.0f}' for c in counts)})")
    return ok


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
    parser.add_argument("--rtt", metavar="MS,MS,...", type=lambda text: [float(x) for x in text.split(",")],
                        help="latency mode: reach the machines through bench/relay.py at each of these round-trip "
                             "times in milliseconds (e.g. 0,20,50), and check the goals")
    parser.add_argument("--ways", type=lambda text: text.split(","), default=["master", "fresh"],
                        metavar="master,fresh", help="which ways to run (default both; the goals need both, "
                                                     "the round-trip count only master)")
    args = parser.parse_args()
    if not args.ways or not set(args.ways) <= {"master", "fresh"}:
        parser.error("--ways takes master, fresh or both")
    count_sent()
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
        with sshd_machines(top, ["alpha", "beta"]) as machines:
            by_rtt = run_rounds(top, machines, args, args.rtt or [None])
            close_masters(machines)
    if not args.rtt:
        report(by_rtt[None], args)
        return 0
    return 0 if report_latency({float(rtt or 0): t for rtt, t in by_rtt.items()}, args) else 1


if __name__ == "__main__":
    sys.exit(main())
