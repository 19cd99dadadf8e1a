"""Scale: a plan of 500 shell pieces over this machine and three sshd machines, in a lead that already holds
10,000 landed jobs, against the same plan in a fresh lead.

    python bench/scale.py [--pieces N] [--history JOBS] [--machines M] [--keep] [--memory] [--cpu]

Starts M sshd machines on 127.0.0.1 (tests/support/sshd.py; as root each is a throwaway user), then for each of
two leads, the fresh one first: commits the settings (check `true`, agent shell, a cap of N), allows them,
ticks `local` and the machines, writes JOBS landed jobs of history into the second
(bench/history.py, dated two months ago, each piece's branch merged into main as the landing queue merges it,
then folded into the archive by `git balanced gc`, which removes those merged branches, and packed by
`engine/upkeep.pack_if_loose`, as an idle engine does), runs `ready --yes` (so the machines' copies hold the
lead's branch with its history, as the machines of a lead that ran those jobs do), stores a plan of N pieces,
and runs `git balanced engine --until-idle` as a process, which waits for its last workers' cleanup
(GIT_BALANCED_SWEEP_WAIT=1) rather than leave it to a process of its own. It measures, for that engine process
and every process it waited for:

  - CPU seconds per piece (user + system, from wait4), and the whole computer's busy CPU per piece
    (/proc/stat: the machines' sshd and workers run here too);
  - the engine's peak resident memory (ru_maxrss of the engine process);
  - wall time.

With `--memory`, it also samples the engine's /proc/PID/smaps while it runs and prints, at its peak, its resident
memory by what is mapped (anonymous memory, the heap, each file: a pack's index mapped twice shows as 2 maps).

With `--cpu` (root, a C compiler), it also says where the CPU went, in both leads, a piece (bench/cpu_by.py): a
`git` shim first on PATH for the engine and for the machines' sessions logs each git command's CPU (with what it
waited for), summed by where it ran (the lead, a local worker's worktree, a machine) and its subcommand; and the
kernel's process accounting, on while each engine runs, sums every process that ended on the computer by its
user (a machine's, or the lead side's) and name. The two runs side by side, the largest differences first.

Then `git gc` in both leads, and the bytes of `.git` the history adds, a job (the lead with history less the fresh
one, which ran the same plan, over the jobs of history), with the largest parts of `.git`.

Goals (issue "speed at 10,000 jobs"): engine peak RSS under 100 MB with history; CPU per piece with history
within 1.2x of the fresh lead's; after `git gc`, under 2 KB of state per archived job. One PASS or MISS line
each; exit 1 on a miss. A whole run takes about 10 to 20 minutes on 2 quiet cores, over an hour on busy ones;
`--pieces 60 --history 1000` is a quick one.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

from bench import cpu_by  # noqa: E402
from bench.sandbox import cpu_busy, private_env  # noqa: E402
from tests.support.sshd import sshd_machines  # noqa: E402

HISTORY = ROOT / "bench" / "history.py"
HISTORY_DAYS = 60  # older than `[balanced] archive_after_days` (30): `git balanced gc` folds it
ME = [sys.executable, "-m", "git_balanced.cli"]
SETTINGS = '[worktree]\ncheck = "true"\n\n[balanced]\nagent = "shell"\ncap = {cap}\n'
GOAL_RSS_MB, GOAL_CPU_RATIO, GOAL_BYTES_PER_JOB = 100.0, 1.2, 2048
# After its fold, the idle engine packs what lies loose (engine/upkeep.Upkeep.idle): the history's branches and
# what `gc` wrote, as a lead that stayed idle has them.
IDLE_PACK = ("from git_balanced.engine.upkeep import pack_if_loose; from git_balanced.git import Repo; "
             "print(pack_if_loose(Repo.discover('.')) or 'Nothing lay loose to pack.')")


@dataclass
class Run:
    wall: float
    cpu: float  # the engine's and its waited-for processes' user + system seconds
    busy: float  # the whole computer's busy CPU seconds over the run
    rss_mb: float
    pieces: int

    def per_piece(self) -> float:
        return self.cpu / self.pieces

    def busy_per_piece(self) -> float:
        return self.busy / self.pieces


def run(args: list[str], cwd: Path, env: dict[str, str]) -> str:
    cp = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if cp.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed (exit {cp.returncode}) in {cwd}:\n{cp.stdout}{cp.stderr}")
    return cp.stdout


def lead(top: Path, name: str, env: dict[str, str], machines: list[str], pieces: int, history: int) -> Path:
    """A lead on main, its settings allowed, `local` and the machines ticked and ready, `history` landed jobs in
    it, and a stored plan of `pieces` shell pieces (none of it timed)."""
    repo = top / name
    run(["git", "init", "-q", "-b", "main", str(repo)], top, env)
    (repo / ".magnum").mkdir()
    (repo / ".magnum" / "settings.toml").write_text(SETTINGS.format(cap=pieces))
    (repo / "README.md").write_text("scale\n")
    run(["git", "add", "-A"], repo, env)
    run(["git", "commit", "-q", "-m", "A lead for the scale benchmark"], repo, env)
    run([*ME, "allow", "--yes"], repo, env)
    run([*ME, "tick", "local", *machines], repo, env)
    if history:  # two months old, and folded into the archive, as an idle engine would have by now
        run([sys.executable, str(HISTORY), str(repo), str(history), str(HISTORY_DAYS)], repo, env)
        print(f"history: {run([*ME, 'gc'], repo, env).splitlines()[0]}", flush=True)
        print(f"history: {run([sys.executable, '-c', IDLE_PACK], repo, env).strip()}", flush=True)
        heads = run(["git", "for-each-ref", "--format=%(refname)", "refs/heads/"], repo, env).split()
        merged = run(["git", "for-each-ref", "--merged=main", "--format=%(refname)", "refs/heads/balanced/"], repo,
                     env).split()
        print(f"history: {len(heads)} branches left in refs/heads/ ({len(merged)} of them under balanced/ and "
              f"merged into main)", flush=True)
    # Readied after the history, as the machines of a lead that ran for months were: their copies hold the
    # lead's branch as `ready` pushed it, and each run pushes only the new base (a copy readied before would get
    # the whole history with the run's first base push, inside the timed run).
    run([*ME, "ready", "--yes"], repo, env)
    plan = {"task": "Scale", "pieces": [{"id": f"s{i}", "task": f"Write s{i}.txt", "agent": "shell",
                                         "run": f"echo {i} > s{i}.txt"} for i in range(pieces)]}
    (top / f"{name}.json").write_text(json.dumps(plan))
    run([*ME, "plan", str(top / f"{name}.json"), "--start"], repo, env)
    return repo


class Peak:
    """The resident memory of a process by mapping, sampled from /proc/PID/smaps at its highest VmRSS."""

    def __init__(self, pid: int) -> None:
        self.pid, self.rss_kb = pid, 0
        self.maps: dict[str, list[int]] = {}  # path ("[anon]", "[heap]", a file) -> [resident kB, mappings]
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._done.wait(0.2):
            try:
                with open(f"/proc/{self.pid}/status") as fh:
                    rss = next(int(line.split()[1]) for line in fh if line.startswith("VmRSS:"))
                if rss > self.rss_kb + 256:
                    self.maps, self.rss_kb = self._smaps(), rss
            except (OSError, StopIteration, ValueError):
                return  # the process ended

    def _smaps(self) -> dict[str, list[int]]:
        maps: dict[str, list[int]] = {}
        now: list[int] = [0, 0]
        with open(f"/proc/{self.pid}/smaps") as fh:
            for line in fh:
                parts = line.split()
                if parts and not parts[0].endswith(":") and "-" in parts[0]:
                    now = maps.setdefault(parts[5] if len(parts) > 5 else "[anon]", [0, 0])
                    now[1] += 1
                elif parts and parts[0] == "Rss:":
                    now[0] += int(parts[1])
        return maps

    def report(self, most: int = 8) -> str:
        """The largest parts at the peak, a line each."""
        self._done.set()
        self._thread.join()
        rows = sorted(self.maps.items(), key=lambda kv: -kv[1][0])[:most]
        return "\n".join([f"  smaps at the peak ({self.rss_kb / 1024:.1f} MB resident), the largest parts:"] + [
            f"  {kb / 1024:6.1f} MB in {n} map{'s' if n > 1 else ''}  {path}" for path, (kb, n) in rows])


def engine(repo: Path, env: dict[str, str], pieces: int, memory: bool = False, acct: Path | None = None) -> Run:
    """`engine --until-idle` as a process, with what it and its waited-for processes used (and, with `memory`,
    its smaps at its peak, printed; with `acct`, the kernel's process accounting on into that file meanwhile)."""
    busy, t0 = cpu_busy(), time.perf_counter()
    accounted = cpu_by.accounting(acct) if acct is not None else contextlib.nullcontext()
    with accounted:
        p = subprocess.Popen([*ME, "engine", "--until-idle"], cwd=repo, env=env, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        use, out = _waited(p, memory)
    if acct is not None:
        cpu_by.cut(acct, p.pid)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise SystemExit(f"engine --until-idle exited {p.returncode} in {repo}:\n{out.decode(errors='replace')}")
    board = json.loads(run([*ME, "board", "--all", "--json"], repo, env))
    landed = sum(1 for j in board.get("jobs", []) if j.get("state") == "landed")
    if landed < pieces:
        raise SystemExit(f"only {landed} of {pieces} pieces landed in {repo}")
    return Run(wall, use.ru_utime + use.ru_stime, cpu_busy() - busy, use.ru_maxrss / 1024, pieces)


def _waited(p: subprocess.Popen[bytes], memory: bool) -> tuple[resource.struct_rusage, bytes]:
    """The engine's output and what it used, once it ended (with `memory`, its smaps at its peak printed)."""
    peak = Peak(p.pid) if memory else None
    assert p.stdout is not None
    out = p.stdout.read()
    _, status, use = os.wait4(p.pid, 0)
    if peak is not None:
        print(peak.report(), flush=True)
    p.returncode = os.waitstatus_to_exitcode(status)
    return use, out


def state_bytes(repo: Path, env: dict[str, str]) -> int:
    """The bytes of `.git` after `git gc` (objects packed, refs packed)."""
    run(["git", "gc", "-q", "--prune=now"], repo, env)
    return sum(f.stat().st_size for f in (repo / ".git").rglob("*") if f.is_file())


def parts(repo: Path) -> str:
    """The bytes of `.git` by its largest parts (objects/pack, logs, packed-refs, balanced/cache...)."""
    sizes: dict[str, int] = {}
    for f in (repo / ".git").rglob("*"):
        if f.is_file():
            rel = f.relative_to(repo / ".git").parts
            key = "/".join(rel[:2]) if len(rel) > 2 else rel[0]
            sizes[key] = sizes.get(key, 0) + f.stat().st_size
    return ", ".join(f"{k} {v:,}" for k, v in sorted(sizes.items(), key=lambda kv: -kv[1])[:6])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pieces", type=int, default=500, help="pieces in the plan (default 500)")
    ap.add_argument("--history", type=int, default=10_000, help="landed jobs of history (default 10000)")
    ap.add_argument("--machines", type=int, default=3, help="sshd machines besides local (default 3)")
    ap.add_argument("--keep", action="store_true", help="keep the repositories and print where they are")
    ap.add_argument("--memory", action="store_true", help="print the engine's smaps at its peak, by mapping")
    ap.add_argument("--cpu", action="store_true", help="say where the CPU went: git by command, and every process")
    args = ap.parse_args(argv)
    top = Path(tempfile.mkdtemp(prefix="bench-scale-"))
    env = private_env(top)
    # The engine waits for its landed workers' cleanup (GIT_BALANCED_SWEEP_WAIT=1) rather than hand it to a process
    # of its own, which no measure here would count: the CPU of the cleanup is the engine's in each run.
    env.update(GIT_BALANCED_SSH_CONFIG=str(top / "home" / ".ssh" / "config"), GIT_BALANCED_SWEEP_WAIT="1")
    os.environ["GIT_BALANCED_SSH_CONFIG"] = env["GIT_BALANCED_SSH_CONFIG"]  # where sshd_machines writes
    names = [f"m{i}" for i in range(1, args.machines + 1)]
    print(f"load {os.getloadavg()[0]:.2f}; {args.pieces} pieces over local and {len(names)} sshd machines; "
          f"history {args.history} jobs; in {top}", flush=True)
    shim = Path(tempfile.mkdtemp(prefix="bench-scale-cpu-")) if args.cpu else None
    session_env: dict[str, dict[str, str]] = {}
    if shim is not None:  # the machines' users run it and append to its log: a folder they can reach
        on_path = cpu_by.shim(shim)
        env["PATH"] = f"{on_path}{os.pathsep}{env['PATH']}"
        session_env = {n: {"PATH": f"{on_path}:/usr/local/bin:/usr/bin:/bin"} for n in names}
    with sshd_machines(top / "sshd", names, session_env) as machines:
        names = [m.name for m in machines]
        uids = {u for u in (cpu_by.uid_of(m.user) for m in machines) if u is not None}
        sshd = {m.pid for m in machines}
        fresh_repo = lead(top, "fresh", env, names, args.pieces, 0)
        fresh = engine(fresh_repo, env, args.pieces, args.memory, shim and cpu_by.start(shim, "fresh"))
        print(f"fresh:   {fresh.wall:7.1f} s wall, {fresh.per_piece() * 1000:6.0f} ms CPU a piece "
              f"({fresh.busy_per_piece() * 1000:.0f} ms the whole computer), peak RSS {fresh.rss_mb:.0f} MB, "
              f"load {os.getloadavg()[0]:.2f}", flush=True)
        old_repo = lead(top, "history", env, names, args.pieces, args.history)
        old = engine(old_repo, env, args.pieces, args.memory, shim and cpu_by.start(shim, "history"))
        print(f"history: {old.wall:7.1f} s wall, {old.per_piece() * 1000:6.0f} ms CPU a piece "
              f"({old.busy_per_piece() * 1000:.0f} ms the whole computer), peak RSS {old.rss_mb:.0f} MB, "
              f"load {os.getloadavg()[0]:.2f}", flush=True)
    if shim is not None:
        print(cpu_by.report(shim, {"fresh": fresh_repo, "history": old_repo}, uids, sshd, args.pieces), flush=True)
        if args.keep:
            print(f"kept: {shim} (each lead's git commands, <lead>.git.log; its processes, <lead>.acct)")
        else:
            subprocess.run(["rm", "-rf", str(shim)], check=False)
    jobs = args.history + args.pieces
    whole, bare = state_bytes(old_repo, env), state_bytes(fresh_repo, env)
    per_job = (whole - bare) / max(args.history, 1)  # what the history adds, the same plan run in both
    print(f"after git gc: .git {whole:,} bytes with history ({whole / jobs:,.0f} a job over all {jobs:,}), "
          f"{bare:,} without; by part, with history: {parts(old_repo)}", flush=True)
    ratio = old.per_piece() / fresh.per_piece()
    goals = [
        (old.rss_mb < GOAL_RSS_MB, f"engine peak RSS with {args.history} jobs of history: {old.rss_mb:.0f} MB "
                                   f"(goal < {GOAL_RSS_MB:.0f} MB; fresh {fresh.rss_mb:.0f} MB)"),
        (ratio <= GOAL_CPU_RATIO, f"CPU a piece with history / fresh: {ratio:.2f}x "
                                  f"({old.per_piece() * 1000:.0f} / {fresh.per_piece() * 1000:.0f} ms; goal <= "
                                  f"{GOAL_CPU_RATIO}x)"),
        (per_job < GOAL_BYTES_PER_JOB, f"state an archived job after git gc: {per_job:,.0f} bytes (goal < "
                                       f"{GOAL_BYTES_PER_JOB:,} bytes; .git with history less .git without, "
                                       f"over {args.history:,} jobs)"),
    ]
    for ok, words in goals:
        print(f"{'PASS' if ok else 'MISS'}  {words}")
    if args.keep:
        print(f"kept: {top}")
    else:
        subprocess.run(["rm", "-rf", str(top)], check=False)
    return 0 if all(ok for ok, _ in goals) else 1


if __name__ == "__main__":
    sys.exit(main())
