"""A fault suite: the engine killed at random points, a check that hangs, a disk that fills mid-landing, junk.

    python bench/faults.py [--kills N] [--junk N] [--seed S] [--quick] [--bound SECONDS] [--keep]

In throwaway repositories (a private HOME and XDG folders in /tmp), with the real engine and CLI processes:

  kills  a plan of shell pieces (random delays, one piece whose check fails, one that waits for another);
         `git balanced engine --until-idle` killed with SIGKILL after a random delay, or made to die at one of
         the crash points of git_balanced/faults.py (GIT_BALANCED_CRASH_AT), up to 3 times a plan; then the
         engine run again until idle, and the repository read: every piece landed exactly once or failed with a
         reason, every worker's finished commits still on a branch (and in the lead's when its piece landed),
         one inbox line per landing, and the lead's branch never at a commit whose tree has no passing check
         (its reflog, and its first-parent history through the landing notes);
  hang   a check that sleeps for a day, with `[worktree] check_timeout = 2`: the engine must return within 60s,
         else a hang is recorded; `board` must answer meanwhile;
  disk   (as root) a lead on a small tmpfs whose check fills it (leaving a few bytes to a few hundred KB) during a
         landing; the engine then run again with room: no traceback, no half-written checkout, no lock left;
  junk   malformed refs under refs/balanced/ (wrong types, huge numbers, deep nesting, non-JSON, lone
         surrogates, missing files, non-commit objects...), junk plan files and junk settings files, fed to
         `board`, `engine --once`, `doctor`, `doctor --fix --yes`, `plan`, `allow` and `sync`; a healthy plan
         beside the junk refs and plans must still land.

Every process runs under a timeout (a hang is recorded and its process group killed), with its address space
bounded (a command reading /dev/zero runs out of memory, not the machine). It prints what it tried and, per
category, what it found (tracebacks or exit 3, hangs, losses, red commits, stalls, debris), then one PASS or MISS
line per goal: every count zero, over at least --kills kills and --junk junk inputs (50 and 500 by default).
Exit 0 when every goal passed, 1 when one was missed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout without installing

from bench.sandbox import private_env  # noqa: E402

ME = [sys.executable, "-m", "git_balanced.cli"]
CHECK = "! grep -rq BAD src"
CRASH_POINTS = ("engine-after-start", "engine-before-land", "after-chain", "after-check", "after-notes",
                "after-move")
CATEGORIES = ("tracebacks", "hangs", "losses", "red commits", "stalls", "debris")
TRACEBACK = "Traceback (most recent call last)"
MEMORY = 1 << 30  # address space of each command: /dev/zero read whole fails here, not in the machine's RAM
MARK = "BALANCED_FAULTS_RUN"  # in every process's environment, so the ones left running can be found and ended
GOAL_KILLS, GOAL_JUNK = 50, 500
PARTS = ("kills", "hang", "disk", "junk")


class OutOfTime(Exception):
    """The script's overall bound is reached: no new step starts."""


@dataclass
class Ran:
    args: list[str]
    code: int | None  # None: it did not end within its timeout, and was killed
    out: str
    err: str
    seconds: float

    @property
    def hung(self) -> bool:
        return self.code is None

    @property
    def traceback(self) -> bool:
        return self.code == 3 or TRACEBACK in self.out or TRACEBACK in self.err

    def said(self, lines: int = 3) -> str:
        text = (self.err.strip() or self.out.strip()).splitlines()
        return " / ".join(x.strip() for x in text[-lines:])[:300]


@dataclass
class Finding:
    category: str
    section: str
    what: str
    repro: str


@dataclass
class Tally:
    deadline: float
    tried: Counter[str] = field(default_factory=Counter)
    findings: list[Finding] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    recoveries: list[float] = field(default_factory=list)  # seconds of each engine run after kills

    def find(self, category: str, section: str, what: str, repro: str) -> None:
        assert category in CATEGORIES
        self.findings.append(Finding(category, section, what, repro))
        print(f"    found ({category}): {what}", flush=True)

    def count(self, category: str, section: str | None = None) -> int:
        return sum(1 for f in self.findings if f.category == category and section in (None, f.section))

    def time_left(self) -> float:
        return self.deadline - time.monotonic()

    def step(self) -> None:
        if self.time_left() <= 0:
            raise OutOfTime


class Box:
    """A private HOME, XDG folders and git identity; every process of the run starts inside them."""

    def __init__(self, root: Path, token: str) -> None:
        self.root = root
        self.home = root / "home"
        env = private_env(root, "faults", ("GIT_", "BALANCED_"))
        env.update(PYTHONPATH=str(Path(__file__).resolve().parent.parent))
        env[MARK] = token
        self.env = env

    def run(self, args: list[str], cwd: Path, timeout: float, *, env: dict[str, str] | None = None,
            input: bytes | None = None) -> Ran:
        """Run `args` in a session of its own; past `timeout` seconds the whole session is killed."""
        t0 = time.monotonic()
        p = subprocess.Popen(args, cwd=cwd, env=env or self.env, stdin=subprocess.PIPE if input else subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                             preexec_fn=_bound_memory)
        try:
            out, err = p.communicate(input, timeout=timeout)
            code: int | None = p.returncode
        except subprocess.TimeoutExpired:
            _kill_group(p.pid)
            out, err = p.communicate()
            code = None
        return Ran(args, code, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"),
                   time.monotonic() - t0)

    def git(self, cwd: Path, *args: str, input: bytes | None = None, check: bool = True) -> str:
        r = self.run(["git", *args], cwd, 60, input=input)
        if check and r.code != 0:
            raise RuntimeError(f"git {' '.join(args)} failed in {cwd} (exit {r.code}): {r.said()}")
        return r.out.strip()

    def balanced(self, cwd: Path, *args: str, timeout: float = 60, env: dict[str, str] | None = None) -> Ran:
        return self.run([*ME, *args], cwd, timeout, env=env)


def _bound_memory() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def end_leftovers(token: str) -> int:
    """SIGKILL every process whose environment carries this run's mark (workers and checks left running); how many."""
    ended = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes()
        except OSError:
            continue
        if f"{MARK}={token}".encode() in environ.split(b"\0"):
            try:
                os.kill(int(entry), signal.SIGKILL)
                ended += 1
            except ProcessLookupError:
                pass
    return ended


def short(arg: str) -> str:
    """An argument as a finding shows it: a file of the run by its name alone."""
    return Path(arg).name if arg.startswith(tempfile.gettempdir() + "/balanced-bench-faults-") else arg


def judge(tally: Tally, section: str, r: Ran, repro: str) -> None:
    """A traceback (or exit 3) or a hang in one command's run is a finding."""
    cmd = " ".join(short(a) for a in (r.args[len(ME):] if r.args[:len(ME)] == ME else r.args))
    if r.hung:
        tally.find("hangs", section, f"`{cmd}` did not end within {r.seconds:.0f}s", repro)
    elif r.traceback:
        last = [x for x in (r.err + r.out).splitlines() if x.strip() and not x.startswith(" ")]
        why = next((x for x in reversed(last) if "Error" in x or "Exception" in x), r.said(1))
        frames = [x.strip() for x in (r.err + r.out).splitlines() if x.strip().startswith('File "')]
        where = ""
        if frames:  # the innermost frame of the package's own code, else the innermost of all
            ours = [f for f in frames if "git_balanced" in f] or frames
            where = " at " + ours[-1].split("git_balanced/", 1)[-1].replace('", line ', ":").replace('File "', "")
        tally.find("tracebacks", section, f"`{cmd}` exit {r.code}: {why[:200]}{where}", repro)


# -- a lead repository ---------------------------------------------------------------------------------------
def make_lead(box: Box, where: Path, settings: str) -> Path:
    """A lead on main: settings committed with src/, and its commands allowed."""
    box.git(box.root, "init", "-q", "-b", "main", str(where))
    (where / ".magnum").mkdir()
    (where / ".magnum" / "settings.toml").write_text(settings)
    (where / "src").mkdir()
    (where / "src" / "base.txt").write_text("base\n")
    box.git(where, "add", "-A")
    box.git(where, "commit", "-q", "-m", "A lead for the fault suite")
    r = box.balanced(where, "allow", "--yes")
    if r.code != 0:
        raise RuntimeError(f"allow failed in {where}: {r.said()}")
    return where


def shell_settings(check: str = CHECK, extra: str = "") -> str:
    return f"[worktree]\ncheck = {json.dumps(check)}\n{extra}\n[balanced]\nagent = \"shell\"\n"


def plan_yaml(task: str, pieces: list[dict[str, object]]) -> str:
    return json.dumps({"task": task, "pieces": pieces}, indent=1) + "\n"  # JSON is YAML


def piece(pid: str, run: str, after: list[str] | None = None) -> dict[str, object]:
    p: dict[str, object] = {"id": pid, "task": f"Do {pid}.", "agent": "shell", "run": run}
    if after:
        p["after"] = after
    return p


# -- reading what the repository says ------------------------------------------------------------------------
def job_events(box: Box, repo: Path) -> dict[str, list[dict]]:
    """Every job's events from event.json along its ref (any order); a job that cannot be read is left out."""
    out: dict[str, list[dict]] = {}
    for ref in box.git(repo, "for-each-ref", "--format=%(refname)", "refs/balanced/jobs/").split():
        shas = box.git(repo, "rev-list", ref).split()
        raw = box.git(repo, "cat-file", "--batch", input="".join(f"{s}:event.json\n" for s in shas).encode())
        events, pos, data = [], 0, raw.encode()
        for _ in shas:
            end = data.index(b"\n", pos)
            header = data[pos:end].split()
            if len(header) < 3 or header[1] != b"blob":
                pos = end + 1
                continue
            size = int(header[2])
            events.append(json.loads(data[end + 1:end + 1 + size]))
            pos = end + 1 + size + 1
        out[ref.rsplit("/", 1)[1]] = events
    return out


def passing_trees(box: Box, repo: Path, check: str) -> set[str]:
    """The trees with a passing result of `check` in refs/notes/balanced-checks."""
    listed = box.git(repo, "notes", "--ref=balanced-checks", "list", check=False).split()
    pairs = list(zip(listed[::2], listed[1::2], strict=True))
    if not pairs:
        return set()
    raw = box.git(repo, "cat-file", "--batch", input="".join(f"{b}\n" for b, _ in pairs).encode())
    passed, data, pos = set(), raw.encode(), 0
    for _, tree in pairs:
        end = data.index(b"\n", pos)
        size = int(data[pos:end].split()[2])
        for line in data[end + 1:end + 1 + size].decode("utf-8", "replace").splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if isinstance(rec, dict) and rec.get("result") == "pass" and rec.get("command") == check:
                passed.add(tree)
        pos = end + 1 + size + 1
    return passed


def landing_notes(box: Box, repo: Path, base: str) -> list[tuple[str, str, list[dict]]]:
    """(commit, tree, landing records) along the lead's first parents since `base`, newest first."""
    out = box.git(repo, "log", "--first-parent", "--notes=balanced", "--format=%H%x1f%T%x1f%N%x1e", f"{base}..main")
    rows = []
    for chunk in out.split("\x1e"):
        parts = chunk.strip("\n").split("\x1f")
        if len(parts) != 3:
            continue
        recs = []
        for line in parts[2].splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if isinstance(rec, dict):
                recs.append(rec)
        rows.append((parts[0], parts[1], recs))
    return rows


def verify(tally: Tally, section: str, box: Box, repo: Path, base: str, pieces: dict[str, bool],
           repro: str, check: str = CHECK) -> None:
    """The invariants after a run: nothing lost, no red commit, one inbox line per landing.
    `pieces` maps each piece of the plan to whether its work passes the check."""
    board = box.balanced(repo, "board", "--json", "--all")
    judge(tally, section, board, repro)
    if board.code != 0:
        tally.find("losses", section, f"`board --json --all` exit {board.code}: {board.said()}", repro)
        return
    jobs = json.loads(board.out)["jobs"]
    events = job_events(box, repo)
    rows = landing_notes(box, repo, base)
    noted = Counter(str(r.get("piece")) for _, _, recs in rows for r in recs if r.get("job"))
    inbox = box.git(repo, "log", "--format=%s", "refs/balanced/inbox/main", check=False).splitlines()
    for pid, good in pieces.items():
        mine = sorted((j for j in jobs if j["piece"] == pid), key=lambda j: j["attempt"])
        landed = [j for j in mine if j["state"] == "landed"]
        if not mine:
            tally.find("losses", section, f"piece {pid} has no job at all", repro)
            continue
        last = mine[-1]
        if len(landed) > 1:
            tally.find("losses", section, f"piece {pid} landed {len(landed)} times", repro)
        elif not landed and last["state"] not in ("failed", "stopped", "lost"):
            tally.find("losses", section, f"piece {pid} ended {last['state']} after the engine went idle", repro)
        elif not landed and not (last.get("reason") or "").strip():
            tally.find("losses", section, f"piece {pid} failed with no reason", repro)
        if landed and not good:
            tally.find("red commits", section, f"piece {pid}, whose check fails, landed", repro)
        if noted[pid] != len(landed):
            tally.find("losses", section, f"piece {pid}: {noted[pid]} landing notes on main for "
                                          f"{len(landed)} landed job(s)", repro)
        for j in landed:
            said = sum(1 for s in inbox if f"{j['branch']} landed in main as" in s)
            if said != 1:
                tally.find("losses", section, f"piece {pid}'s landing is in the inbox {said} times", repro)
        for j in mine:
            for ev in events.get(j["id"], []):
                head = (ev.get("data") or {}).get("head") if ev.get("event") == "finished" else None
                if not head:
                    continue
                holders = box.git(repo, "for-each-ref", "--contains", head, "--format=%(refname)", "refs/heads/",
                                  check=False).split()
                if not holders:
                    tally.find("losses", section, f"piece {pid}: attempt {j['attempt']}'s commit {head[:7]} is "
                                                  "on no branch", repro)
                elif landed and "refs/heads/main" not in holders:
                    tally.find("losses", section, f"piece {pid} landed but attempt {j['attempt']}'s commit "
                                                  f"{head[:7]} is not in main", repro)
    red(tally, section, box, repo, base, rows, repro, check)


def red(tally: Tally, section: str, box: Box, repo: Path, base: str, rows: list[tuple[str, str, list[dict]]],
        repro: str, check: str) -> None:
    """Every value main took since `base` (its reflog) has a tree with a passing check; every first-parent commit
    since `base` passed, or its landing note names a checked tree that passed."""
    passed = passing_trees(box, repo, check)
    before = set(box.git(repo, "rev-list", base).split())
    for sha in dict.fromkeys(box.git(repo, "reflog", "--format=%H", "main").split()):
        if sha in before:
            continue
        tree = box.git(repo, "rev-parse", f"{sha}^{{tree}}")
        if tree not in passed:
            tally.find("red commits", section, f"main pointed at {sha[:7]}, whose tree has no passing check", repro)
    for sha, tree, recs in rows:
        if tree in passed or any(r.get("checked_tree") in passed for r in recs):
            continue
        tally.find("red commits", section, f"{sha[:7]} on main's first parents: no passing check for its tree "
                                           "or for the tree its landing checked", repro)


# -- kills ---------------------------------------------------------------------------------------------------
def kills(tally: Tally, box: Box, wanted: int, rng: random.Random, per_run: int = 3) -> None:
    done = run = 0
    print(f"kills: SIGKILL or a crash point, up to {per_run} a plan, until {wanted} kills", flush=True)
    while done < wanted:
        tally.step()
        run += 1
        repo = make_lead(box, box.root / f"kill{run}", shell_settings())
        base = box.git(repo, "rev-parse", "main")
        n = rng.randint(3, 5)
        pieces = [piece(f"p{i}", f"sleep {rng.uniform(0, 1.2):.2f}; echo {i} > src/p{i}.txt") for i in range(1, n + 1)]
        pieces.append(piece("late", "echo late > src/late.txt", after=["p1"]))
        pieces.append(piece("bad", f"sleep {rng.uniform(0, 0.8):.2f}; echo BAD > src/bad.txt"))
        (box.root / f"kill{run}.plan").write_text(plan_yaml(f"Fault run {run}", pieces))
        r = box.balanced(repo, "plan", str(box.root / f"kill{run}.plan"), "--start")
        if r.code != 0:
            tally.find("tracebacks" if r.traceback else "losses", "kills", f"plan --start failed: {r.said()}", "")
            continue
        how = []
        for _ in range(per_run):
            if done >= wanted:
                break
            point = rng.choice((*CRASH_POINTS, None, None, None))
            delay = rng.uniform(0.05, 2.5)
            env = dict(box.env, **({"GIT_BALANCED_CRASH_AT": point} if point else {}))
            log = box.root / f"kill{run}-{len(how)}.log"
            with open(log, "wb") as out:
                p = subprocess.Popen([*ME, "engine", "--until-idle"], cwd=repo, env=env, stdin=subprocess.DEVNULL,
                                     stdout=out, stderr=subprocess.STDOUT, preexec_fn=_bound_memory)
            try:
                code = p.wait(delay)
            except subprocess.TimeoutExpired:
                p.kill()  # the engine alone, as `kill -9 PID` does: what it started goes on
                code = p.wait()
                how.append(f"SIGKILL at {delay:.2f}s" + (f" (before {point})" if point else ""))
                done += 1
            else:
                if code == 137 and point:
                    how.append(f"died at {point}")
                    done += 1
                else:
                    how.append(f"ended by itself (exit {code})")
            text = log.read_text("utf-8", "replace")
            if TRACEBACK in text or code == 3:
                tally.find("tracebacks", "kills", f"the engine killed in run {run}: {text.strip().splitlines()[-1]}",
                           f"kill run {run}")
            if not how[-1].startswith(("SIGKILL", "died")):
                break
        final = box.balanced(repo, "engine", "--until-idle", timeout=180)
        repro = f"run {run}: {'; '.join(how)}; then `engine --until-idle`"
        judge(tally, "kills", final, repro)
        tally.recoveries.append(final.seconds)
        tally.tried["kills"] = done
        tally.tried["kill runs"] = run
        print(f"  run {run}: {len(pieces)} pieces; {'; '.join(how)}; the engine again: exit {final.code} "
              f"in {final.seconds:.1f}s", flush=True)
        if not final.hung:
            verify(tally, "kills", box, repo, base, {p["id"]: p["id"] != "bad" for p in pieces}, repro)


# -- a check that hangs ---------------------------------------------------------------------------------------
def hang(tally: Tally, box: Box) -> None:
    tally.step()
    limit = 60.0
    print("hang: a check that sleeps for a day; [worktree] check_timeout = 2, the engine must return within 60s",
          flush=True)
    repo = make_lead(box, box.root / "hang", shell_settings("sleep 86400", "check_timeout = 2\n"))
    (box.root / "hang.plan").write_text(plan_yaml("A check that hangs", [piece("h1", "echo 1 > src/h1.txt")]))
    box.balanced(repo, "plan", str(box.root / "hang.plan"), "--start")
    log = box.root / "hang-engine.log"
    with open(log, "wb") as out:
        p = subprocess.Popen([*ME, "engine", "--until-idle"], cwd=repo, env=box.env, stdin=subprocess.DEVNULL,
                             stdout=out, stderr=subprocess.STDOUT, start_new_session=True, preexec_fn=_bound_memory)
    t0 = time.monotonic()
    time.sleep(min(3.0, limit / 2))
    board = box.balanced(repo, "board", timeout=20)  # while the check hangs, the board still answers
    judge(tally, "hang", board, "`board` while the engine waits on a check that sleeps")
    tally.tried["hang"] += 1
    try:
        code: int | None = p.wait(max(0.1, limit - (time.monotonic() - t0)))
    except subprocess.TimeoutExpired:
        _kill_group(p.pid)
        p.wait()
        code = None
        tally.find("hangs", "hang", f"`engine --until-idle` still waited on a check that sleeps after {limit:g}s",
                   "[worktree] check = \"sleep 86400\", check_timeout = 2, a plan of one shell piece, "
                   "`git balanced engine --until-idle`")
    text = log.read_text("utf-8", "replace")
    if TRACEBACK in text or code == 3:
        tally.find("tracebacks", "hang", f"the engine on a hanging check: {text.strip().splitlines()[-1]}", "")
    print(f"  engine: {'exit ' + str(code) if code is not None else 'killed'} after {time.monotonic() - t0:.1f}s; "
          f"board answered in {board.seconds:.1f}s (exit {board.code})", flush=True)


# -- a disk that fills mid-landing ------------------------------------------------------------------------------
def disk(tally: Tally, box: Box, runs: int, rng: random.Random, mounts: list[Path]) -> None:
    if runs <= 0:
        return
    if os.geteuid() != 0 or not shutil.which("mount"):
        tally.skipped.append("disk (needs root to mount a tmpfs)")
        print("disk: skipped, it needs root to mount a tmpfs", flush=True)
        return
    print(f"disk: a lead on a 8 MB tmpfs whose check fills it during a landing, {runs} run(s)", flush=True)
    for i in range(1, runs + 1):
        tally.step()
        where = box.root / f"disk{i}"
        where.mkdir()
        r = box.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(where)], box.root, 30)
        if r.code != 0:
            tally.skipped.append(f"disk (mount failed: {r.said()})")
            print(f"  mount failed: {r.said()}; skipped", flush=True)
            return
        mounts.append(where)
        leave = rng.choice((0, 4096, 65536, 300_000))
        fill = (f"test -e {where}/filled || {{ : > {where}/filled; dd if=/dev/zero of={where}/fill bs=64k "
                f"2>/dev/null; truncate -s -{leave} {where}/fill; }}; {CHECK}")
        repo = make_lead(box, where / "lead", shell_settings(fill))
        base = box.git(repo, "rev-parse", "main")
        pieces = [piece(f"d{k}", f"echo {k} > src/d{k}.txt") for k in range(1, 4)]
        (box.root / f"disk{i}.plan").write_text(plan_yaml("Pieces landing on a full disk", pieces))
        box.balanced(repo, "plan", str(box.root / f"disk{i}.plan"), "--start")
        repro = f"a lead on `mount -t tmpfs -o size=8m`, its check fills the disk leaving {leave} bytes"
        full = box.balanced(repo, "engine", "--until-idle", timeout=90)
        judge(tally, "disk", full, repro + ", `engine --until-idle`")
        (where / "fill").unlink(missing_ok=True)
        again = box.balanced(repo, "engine", "--until-idle", timeout=120)
        judge(tally, "disk", again, repro + "; room made again; `engine --until-idle`")
        tally.tried["disk"] += 1
        said = next((x for x in reversed((full.err + full.out).splitlines()) if x.startswith(("error:", "OSError"))),
                    full.said(1))
        print(f"  run {i}: {leave} bytes left; engine on the full disk: exit {full.code} ({said[:120]}); "
              f"with room again: exit {again.code}", flush=True)
        status = box.git(repo, "status", "--porcelain", check=False)
        if status:
            tally.find("debris", "disk", f"the lead's checkout differs from main after the landing: {status[:120]!r}",
                       repro)
        # git's own lock files (a ref's, the index's): made with O_EXCL, removed when done. The files under
        # .git/balanced/ are flock(2) files, there by design.
        locks = [str(p.relative_to(repo)) for p in (repo / ".git").rglob("*.lock")
                 if (repo / ".git" / "balanced") not in p.parents]
        if locks:
            tally.find("debris", "disk", f"lock files left: {', '.join(sorted(locks)[:5])}", repro)
        fsck = box.run(["git", "fsck", "--connectivity-only", "--no-progress"], repo, 60)
        if fsck.code != 0:
            tally.find("debris", "disk", f"git fsck: {fsck.said()}", repro)
        if not again.hung:
            verify(tally, "disk", box, repo, base, {p["id"]: True for p in pieces}, repro, fill)
        box.run(["umount", "-l", str(where)], box.root, 30)
        mounts.remove(where)


# -- junk ----------------------------------------------------------------------------------------------------
def deep(n: int) -> str:
    return "[" * n + "]" * n


REF_KINDS: dict[str, object] = {
    # kind: event.json's bytes, or a callable (rng) -> bytes; special kinds are handled in plant()
    "wrong-types": lambda g: json.dumps(g.choice([
        {"event": 5, "data": [], "state": {}, "lamport": "x", "node": 7, "time": "noon"},
        {"event": "placed", "data": "piece", "state": "queued", "lamport": 1, "node": "n", "time": 0},
        {"event": "placed", "data": {"piece": 5, "plan": [], "attempt": "two", "branch": None, "run": {}},
         "state": "queued", "lamport": 1, "node": "n", "time": 0},
        {"event": "finished", "data": {"head": 12, "commits": "x", "exit_code": []}, "state": "finished",
         "lamport": 2, "node": "n", "time": 0},
        [1, 2, 3], "a string", None, 42])).encode(),
    "huge-numbers": lambda g: json.dumps({"event": "placed", "state": "queued",
                                          "lamport": 10 ** g.choice((19, 400, 4000)),
                                          "node": "n", "time": g.choice((1e308, -1e308, 10 ** 30)),
                                          "data": {"attempt": 10 ** 50, "placed_at": 1e308, "budget_usd": 10 ** 400,
                                                   "piece": "p", "plan": "1m0000000000000"}}).encode(),
    "deep-nesting": lambda g: (b'{"event": "placed", "data": ' + deep(g.choice((1000, 100_000))).encode() + b"}"),
    "deep-data": lambda g: (b'{"event": "placed", "state": "queued", "lamport": 1, "node": "n", "time": 0, '
                            b'"data": {"piece": "p", "x": ' + deep(g.choice((3000, 200_000))).encode() + b"}}"),
    "not-json": lambda g: g.choice((b"", b"not json at all", b"\x00\x01\x02" * 50, b'{"event": "placed",',
                                    b"NaN", b"[1, 2", g.randbytes(200))),
    "lone-surrogate": lambda g: g.choice((
        b'{"event": "placed", "state": "queued", "lamport": 1, "node": "\\ud800", "time": 0, '
        b'"data": {"piece": "\\udfff", "title": "\\ud800x", "plan": "1m0000000000000"}}',
        b'{"event": "\xed\xa0\x80", "state": "queued", "lamport": 1, "node": "n", "time": 0, "data": {}}',
        b'{"event": "said", "data": {"text": "\\ud83d"}, "state": null, "lamport": 1, "node": "n", "time": 0}')),
    "huge-file": lambda g: json.dumps({"event": "placed", "state": "queued", "lamport": 1, "node": "n", "time": 0,
                                       "data": {"piece": "p", "title": "x" * g.choice((1 << 20, 8 << 20))}}).encode(),
    "nan-inf": lambda g: b'{"event": "placed", "state": "queued", "lamport": NaN, "node": "n", "time": Infinity, '
                         b'"data": {"attempt": -Infinity, "budget_usd": NaN}}',
    "missing-file": None, "event-dir": None, "blob-ref": None, "tree-ref": None, "tag-ref": None,
    "bad-trailers": None,
}
PLACES = ("jobs", "plans", "schedules", "nodes", "inbox")


def fake_id(rng: random.Random) -> str:
    return "1m" + "".join(rng.choice("0123456789abcdefghjkmnpqrstvwxyz") for _ in range(13))


def plant(box: Box, repo: Path, kind: str, place: str, rng: random.Random) -> str:
    """Write one junk ref of `kind` under refs/balanced/<place>/; its name."""
    name = {"jobs": fake_id(rng), "plans": fake_id(rng), "schedules": f"s{rng.randint(1, 9999)}",
            "nodes": f"{rng.getrandbits(32):08x}", "inbox": "main"}[place]
    ref = f"refs/balanced/{place}/{name}"
    msg = (f"junk: {kind}\n\nBalanced-Event: placed\nBalanced-State: queued\nBalanced-Lamport: 1\n"
           "Balanced-Node: junk\n")
    # On the inbox, junk goes on top of what is there, when that is a commit (junk before may have left a blob).
    parent = box.git(repo, "rev-parse", "-q", "--verify", f"{ref}^{{commit}}", check=False) if place == "inbox" \
        else ""
    maker = REF_KINDS[kind]
    if callable(maker):
        blob = box.git(repo, "hash-object", "-w", "--stdin", input=maker(rng))
        tree = box.git(repo, "mktree", input=f"100644 blob {blob}\tevent.json\n".encode())
    elif kind == "bad-trailers":
        blob = box.git(repo, "hash-object", "-w", "--stdin", input=b'{"event": "placed", "data": {}}')
        tree = box.git(repo, "mktree", input=f"100644 blob {blob}\tevent.json\n".encode())
        msg = ("\n\nBalanced-Event: \x7f\nBalanced-State: landed\nBalanced-Lamport: 1e999\nBalanced-Lamport: -5\n"
               "Balanced-Node: " + "n" * 5000 + "\n")
    else:
        blob = box.git(repo, "hash-object", "-w", "--stdin", input=b"something else\n")
        tree = box.git(repo, "mktree", input=f"100644 blob {blob}\tother.txt\n".encode())
        if kind == "event-dir":
            tree = box.git(repo, "mktree", input=f"040000 tree {tree}\tevent.json\n".encode())
    commit = box.git(repo, "commit-tree", tree, *(["-p", parent] if parent else []), input=msg.encode())
    target = {"blob-ref": blob, "tree-ref": tree}.get(kind, commit)
    if kind == "tag-ref":
        target = box.git(repo, "mktag", input=(f"object {commit}\ntype commit\ntag junk{rng.getrandbits(20)}\n"
                                               "tagger faults <f@l> 0 +0000\n\njunk\n").encode())
    box.git(repo, "update-ref", ref, target)
    return ref


JUNK_PLANS: dict[str, object] = {
    "deep-nesting": lambda g: ("task: t\npieces: " + deep(g.choice((500, 50_000))) + "\n").encode(),
    "deep-mapping": lambda g: ("task: t\npieces:\n  - id: a\n    task: " + "{a: " * 20_000 + "1" + "}" * 20_000
                               + "\n").encode(),
    "huge": lambda g: b"task: " + b"x" * g.choice((1 << 20, 20 << 20)) + b"\npieces:\n  - id: a\n    task: b\n",
    "many-pieces": lambda g: b"task: t\npieces:\n" + b"".join(
        f"  - id: p{i}\n    task: t\n    after: [p{i + 1}]\n".encode() for i in range(3000)),
    "nul": lambda g: b"task: t\x00\npieces:\n  - id: a\x00b\n    task: \x00\n",
    "lone-surrogate-escape": lambda g: b'task: "\\ud800"\npieces:\n  - id: a\n    task: "\\udfff x"\n',
    "lone-surrogate-bytes": lambda g: b"task: \xed\xa0\x80\npieces:\n  - id: a\n    task: b\n",
    "absurd-numbers": lambda g: g.choice((
        b"task: t\nbudget: 1e999\npieces:\n  - id: a\n    task: b\n    size: 1e999\n",
        b"task: t\nbudget: .nan\npieces:\n  - id: a\n    task: b\n    size: .inf\n",
        b"task: t\nbudget: -5\npieces:\n  - id: a\n    task: b\n    size: -1\n",
        b"task: t\nbudget: " + b"9" * 5000 + b"\npieces:\n  - id: a\n    task: b\n    size: " + b"9" * 5000 + b"\n",
        b"task: t\npieces:\n  - id: a\n    task: b\n    size: 0x7fffffffffffffffffff\n")),
    "alias-bomb": lambda g: b"a: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
                            b"c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
                            b"e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
                            b"task: t\npieces: [*f,*f,*f,*f,*f,*f,*f,*f,*f,*f]\n",
    "wrong-types": lambda g: g.choice((b"- a\n- b\n", b"42\n", b"task: [1]\npieces: {a: b}\n",
                                       b"task: t\npieces:\n  - id: [a]\n    task: {x: 1}\n    after: 5\n",
                                       b"task: t\npieces:\n  - id: a\n    task: b\n    after: [a]\n",
                                       b"task: t\npieces:\n  - id: a\n    task: b\n    after: [c]\n  - id: c\n    "
                                       b"task: d\n    after: [a]\n", b"!!python/object/apply:os.system ['true']\n")),
    "dev-zero": None, "fifo": None, "directory": None,
}

JUNK_SETTINGS: dict[str, object] = {
    "deep-nesting": lambda g: ("[worktree]\ncheck = " + deep(g.choice((500, 100_000))) + "\n").encode(),
    "deep-tables": lambda g: ("[" + ".".join(["a"] * g.choice((500, 20_000))) + "]\nx = 1\n").encode(),
    "deep-inline": lambda g: ("x = " + "{a = " * 5000 + "1" + "}" * 5000 + "\n").encode(),
    "huge": lambda g: b"[worktree]\ncheck = \"" + b"x" * g.choice((1 << 20, 30 << 20)) + b"\"\n",
    "nul": lambda g: b"[worktree]\ncheck = \"true\x00\"\n[balanced]\nagent = \"shell\x00\"\n",
    "lone-surrogate-escape": lambda g: b'[worktree]\ncheck = "\\ud800"\n',
    "lone-surrogate-bytes": lambda g: b'[worktree]\ncheck = "\xed\xa0\x80"\n[balanced]\nagent = "shell"\n',
    "absurd-numbers": lambda g: ("[worktree]\ncheck = \"true\"\n[balanced]\nagent = \"shell\"\n" + g.choice((
        "attempts = 9223372036854775807\n", "cap = 99999999999999999999\n", "check_slots = 100000000\n",
        "lost_after = 9223372036854775807\n", "ask_timeout = 9223372036854775807\n",
        "takeover_after = 9223372036854775807\n", "[landing]\nmax_file_mb = inf\n", "[landing]\nmax_file_mb = nan\n",
        "[landing]\nmax_change_mb = 1e308\n", "reserve = -9223372036854775808\n"))).encode(),
    "wrong-types": lambda g: g.choice((b"worktree = 5\n", b"[worktree]\ncheck = 5\n", b"[balanced]\nagent = [1]\n",
                                       b"[agents.claude]\nmodels = []\n", b"[[worktree]]\ncheck = \"true\"\n",
                                       b"[balanced]\nattach_from = [\"/\", \"../../..\"]\n")),
    "dev-zero": None,
}


def junk(tally: Tally, box: Box, total: int, rng: random.Random, mixed: bool) -> None:
    n_refs = total * 6 // 10
    n_plans = total * 2 // 10
    n_settings = total - n_refs - n_plans
    junk_refs(tally, box, n_refs, rng, mixed)
    junk_plans(tally, box, n_plans, rng)
    junk_settings(tally, box, n_settings, rng)


def _healthy(box: Box, repo: Path, name: str) -> Path:
    (box.root / f"{name}-plan").mkdir(exist_ok=True)
    path = box.root / f"{name}-plan" / "healthy.plan"
    path.write_text(plan_yaml(f"A healthy plan beside the junk ({name})",
                              [piece("healthy", f"echo {name} > src/healthy-{name}.txt")]))
    return path


def feed_refs(tally: Tally, box: Box, name: str, items: list[tuple[str, str]], rng: random.Random,
              record: bool) -> list[Finding]:
    """Plant `items` (kind, place) in a new lead with a remote, then run the commands that read refs. The
    findings, recorded in `tally` when `record`."""
    repo = make_lead(box, box.root / name, shell_settings())
    remote = box.root / f"{name}-remote.git"
    box.git(box.root, "init", "-q", "--bare", str(remote))
    box.git(repo, "remote", "add", "origin", str(remote))
    box.git(repo, "push", "-q", "origin", "main")
    refs = [plant(box, repo, kind, place, rng) for kind, place in items]
    kinds = sorted({k for k, _ in items})
    repro = f"junk refs of kind{'s' if len(kinds) > 1 else ''} {', '.join(kinds)} (e.g. {refs[0]}), then "
    local = Tally(tally.deadline)
    for args in (("board",), ("board", "--json", "--all"), ("engine", "--once"), ("doctor",), ("sync",)):
        judge(local, "junk refs", box.balanced(repo, *args, timeout=60), repro + f"`git balanced {' '.join(args)}`")
    healthy = box.balanced(repo, "plan", str(_healthy(box, repo, name)), "--start")
    judge(local, "junk refs", healthy, repro + "`git balanced plan HEALTHY --start`")
    eng = box.balanced(repo, "engine", "--until-idle", timeout=90)
    judge(local, "junk refs", eng, repro + "a healthy plan, `git balanced engine --until-idle`")
    if not eng.hung and not (repo / "src" / f"healthy-{name}.txt").exists() and \
            f"healthy-{name}" not in box.git(repo, "ls-tree", "-r", "--name-only", "main", "src"):
        local.find("stalls", "junk refs", f"a healthy plan beside junk ({', '.join(kinds)}) did not land: "
                                          f"engine exit {eng.code}: {eng.said(2)}", repro + "a healthy plan")
    for args in (("doctor", "--fix", "--yes"), ("board",), ("sync",)):
        judge(local, "junk refs", box.balanced(repo, *args, timeout=60), repro + f"`git balanced {' '.join(args)}`")
    if record:
        tally.findings.extend(local.findings)
    return local.findings


def junk_refs(tally: Tally, box: Box, n: int, rng: random.Random, mixed: bool) -> None:
    """`n` junk refs, each kind in turn and each place in turn. A lead holds refs of one kind (up to 10), so a
    finding names its kind; `mixed` (the quick run) puts every kind in one lead, fewer leads, vaguer findings."""
    if n <= 0:
        return
    kinds = list(REF_KINDS)
    items = [(kinds[i % len(kinds)], PLACES[(i // len(kinds)) % len(PLACES)]) for i in range(n)]
    if mixed:
        batches = [items[i:i + len(kinds)] for i in range(0, len(items), len(kinds))]
    else:
        batches = []
        for k in kinds:
            mine = [it for it in items if it[0] == k]
            batches += [mine[i:i + 10] for i in range(0, len(mine), 10)]
    print(f"junk refs: {n} refs of {len(kinds)} kinds under refs/balanced/{{{','.join(PLACES)}}}, in {len(batches)} "
          f"lead(s){' (every kind in each)' if mixed else ' (one kind each)'}; each: board, board --json --all, "
          "engine --once, doctor, sync, a healthy plan and engine --until-idle, doctor --fix --yes, board, sync",
          flush=True)
    for b, batch in enumerate(batches, 1):
        tally.step()
        feed_refs(tally, box, f"refs{b}", batch, rng, record=True)
        tally.tried["junk refs"] += len(batch)
        print(f"  lead {b}: {len(batch)} junk refs ({', '.join(sorted({k for k, _ in batch}))}) done", flush=True)


def junk_plans(tally: Tally, box: Box, n: int, rng: random.Random) -> None:
    if n <= 0:
        return
    kinds = list(JUNK_PLANS)
    print(f"junk plans: {n} plan files of {len(kinds)} kinds, each to `plan FILE` (then `plan - ` for a few), "
          "and a healthy plan after them must land", flush=True)
    repo = make_lead(box, box.root / "plans", shell_settings())
    for i in range(n):
        tally.step()
        kind = kinds[i % len(kinds)]
        maker = JUNK_PLANS[kind]
        path = box.root / f"junk-plan-{kind}.yaml"  # named by its kind, so findings of one kind read as one
        if path.is_dir() and not path.is_symlink():
            path.rmdir()
        elif path.exists() or path.is_symlink():
            path.unlink()
        if kind == "dev-zero":
            path = Path("/dev/zero")
        elif kind == "fifo":
            os.mkfifo(path)
        elif kind == "directory":
            path.mkdir()
        else:
            assert callable(maker)
            path.write_bytes(maker(rng))
        args = ("plan", str(path)) if i % 4 else ("plan", str(path), "--start")
        r = box.balanced(repo, *args, timeout=30)
        judge(tally, "junk plans", r, f"a junk plan ({kind}): `git balanced {' '.join(short(a) for a in args)}`")
        tally.tried["junk plans"] += 1
        if kind not in ("dev-zero", "fifo", "directory") and i % 5 == 0:
            r = box.run([*ME, "plan", "-"], repo, 30, input=path.read_bytes())
            judge(tally, "junk plans", r, f"a junk plan ({kind}) on stdin: `git balanced plan -`")
    healthy = box.balanced(repo, "plan", str(_healthy(box, repo, "plans")), "--start")
    judge(tally, "junk plans", healthy, "`plan HEALTHY --start` after junk plans")
    eng = box.balanced(repo, "engine", "--until-idle", timeout=120)
    judge(tally, "junk plans", eng, "`engine --until-idle` after junk plans")
    if not eng.hung and "healthy-plans" not in box.git(repo, "ls-tree", "-r", "--name-only", "main", "src"):
        tally.find("stalls", "junk plans", f"a healthy plan after {n} junk plans did not land: engine exit "
                                           f"{eng.code}: {eng.said(2)}", "junk plans, then a healthy plan")
    print(f"  {n} junk plans done; the healthy plan after them: engine exit {eng.code}", flush=True)


def junk_settings(tally: Tally, box: Box, n: int, rng: random.Random) -> None:
    if n <= 0:
        return
    kinds = list(JUNK_SETTINGS)
    print(f"junk settings: {n} settings files of {len(kinds)} kinds, committed; each to allow --yes, board, "
          "engine --once and plan", flush=True)
    repo = make_lead(box, box.root / "settings", shell_settings())
    healthy = _healthy(box, repo, "settings")
    settings = repo / ".magnum" / "settings.toml"
    for i in range(n):
        tally.step()
        kind = kinds[i % len(kinds)]
        maker = JUNK_SETTINGS[kind]
        if settings.is_symlink() or settings.exists():
            settings.unlink()
        if kind == "dev-zero":
            settings.symlink_to("/dev/zero")
        else:
            assert callable(maker)
            settings.write_bytes(maker(rng))
        box.git(repo, "add", "-A")
        box.git(repo, "commit", "-q", "--allow-empty", "-m", f"junk settings: {kind}")
        for args in (("allow", "--yes"), ("board",), ("engine", "--once"), ("plan", str(healthy))):
            r = box.balanced(repo, *args, timeout=30)
            judge(tally, "junk settings", r,
                  f"junk settings ({kind}) committed: `git balanced {' '.join(short(a) for a in args)}`")
        tally.tried["junk settings"] += 1
    print(f"  {n} junk settings done", flush=True)


# -- the run -------------------------------------------------------------------------------------------------
def report(tally: Tally, args: argparse.Namespace, seconds: float, stopped: str) -> bool:
    junk_done = tally.tried["junk refs"] + tally.tried["junk plans"] + tally.tried["junk settings"]
    print(f"\nTried, in {seconds:.0f}s: {tally.tried['kills']} kills in {tally.tried['kill runs']} plans, "
          f"{tally.tried['hang']} hanging check(s), {tally.tried['disk']} full disk(s), {junk_done} junk inputs "
          f"({tally.tried['junk refs']} refs, {tally.tried['junk plans']} plans, {tally.tried['junk settings']} "
          f"settings files)" + (f"; skipped: {'; '.join(tally.skipped)}" if tally.skipped else "") + stopped)
    if tally.recoveries:
        rec = sorted(tally.recoveries)
        print(f"The engine run again after kills, until idle: median {rec[len(rec) // 2]:.1f}s, max {rec[-1]:.1f}s")
    sections = ("kills", "hang", "disk", "junk refs", "junk plans", "junk settings")
    print(f"\n{'found':<12}" + "".join(f"{s:>15}" for s in sections) + f"{'total':>8}")
    for c in CATEGORIES:
        print(f"{c:<12}" + "".join(f"{tally.count(c, s):>15}" for s in sections) + f"{tally.count(c):>8}")
    if tally.findings:
        print("\nFindings (the same finding once, with how many times it was seen):")
        seen = Counter((f.category, f.section, f.what) for f in tally.findings)
        first = {(f.category, f.section, f.what): f.repro for f in reversed(tally.findings)}
        for (cat, sec, what), times in seen.items():
            print(f"  [{cat}, {sec}] {what}" + (f" (x{times})" if times > 1 else ""))
            if first[(cat, sec, what)]:
                print(f"      how: {first[(cat, sec, what)]}")
    lines = [(tally.count(c) == 0, f"{c}: {tally.count(c)} (goal 0)") for c in CATEGORIES]
    scale = "" if args.kills >= GOAL_KILLS and args.junk >= GOAL_JUNK else \
        f"; a smaller run than the goal's {GOAL_KILLS} kills and {GOAL_JUNK} junk inputs"
    lines.append((tally.tried["kills"] >= args.kills and junk_done >= args.junk and not stopped,
                  f"tried: {tally.tried['kills']} kills of {args.kills} asked, {junk_done} junk inputs of "
                  f"{args.junk} asked{scale}"))
    print()
    for ok, words in lines:
        print(f"{'PASS' if ok else 'MISS'} {words}")
    return all(ok for ok, _ in lines)


def main(argv: list[str] | None = None) -> int:
    """Run every part, print what was tried and found, one PASS or MISS line per goal; 0 when all passed."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kills", type=int, default=GOAL_KILLS, help=f"engine kills (default {GOAL_KILLS})")
    ap.add_argument("--junk", type=int, default=GOAL_JUNK,
                    help=f"junk inputs: refs, plans, settings (default {GOAL_JUNK})")
    ap.add_argument("--seed", type=int, default=None, help="seed of the random choices (default: a new one)")
    ap.add_argument("--disk", type=int, default=4, help="runs on a full disk (default 4; needs root)")
    ap.add_argument("--quick", action="store_true",
                    help="a light run: 4 kills, 36 junk inputs, 1 full disk")
    ap.add_argument("--bound", type=float, default=None,
                    help="overall bound in seconds: no new step starts past it (default 1800, --quick 240)")
    ap.add_argument("--parts", default=",".join(PARTS),
                    help=f"which parts to run, comma-separated (default {','.join(PARTS)})")
    ap.add_argument("--keep", action="store_true", help="keep the repositories and print where they are")
    args = ap.parse_args(argv)
    if args.quick:
        args.kills = min(args.kills, 4) if "--kills" not in (argv or sys.argv) else args.kills
        args.junk = min(args.junk, 36) if "--junk" not in (argv or sys.argv) else args.junk
        args.disk = 1
    chosen = [x.strip() for x in args.parts.split(",") if x.strip()]
    if set(chosen) - set(PARTS):
        ap.error(f"--parts takes {', '.join(PARTS)}")
    if "kills" not in chosen:
        args.kills = 0
    if "junk" not in chosen:
        args.junk = 0
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    bound = args.bound or (240.0 if args.quick else 1800.0)
    t0 = time.monotonic()
    tally = Tally(t0 + bound)
    tmp = Path(tempfile.mkdtemp(prefix="balanced-bench-faults-"))
    token = f"{os.getpid()}-{rng.getrandbits(32):08x}"
    box = Box(tmp, token)
    mounts: list[Path] = []
    stopped = ""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so the cleanup below runs
    git_version = box.run(["git", "--version"], tmp, 10).out.strip()
    print(f"git balanced fault suite: seed {seed}, {args.kills} kills, {args.junk} junk inputs, bound {bound:.0f}s")
    print(f"python {sys.version.split()[0]}, {git_version}, {os.cpu_count()} cores, load "
          f"{os.getloadavg()[0]:.2f}, in {tmp}\n", flush=True)
    try:
        parts = {"kills": lambda: kills(tally, box, args.kills, rng),
                 "hang": lambda: hang(tally, box),
                 "disk": lambda: disk(tally, box, args.disk, rng, mounts),
                 "junk": lambda: junk(tally, box, args.junk, rng, args.quick)}
        for name, part in parts.items():
            if name not in chosen:
                continue
            try:
                part()
            except OutOfTime:
                stopped = f"; stopped at the overall bound of {bound:.0f}s"
                break
            except Exception as exc:  # noqa: BLE001 - the suite's own failure: said, the other parts still run
                import traceback

                traceback.print_exc()
                stopped += f"; the suite itself failed in {name}: {type(exc).__name__}: {str(exc)[:200]}"
    finally:
        left = end_leftovers(token)
        for m in mounts:
            subprocess.run(["umount", "-l", str(m)], capture_output=True, timeout=30)
        if left:
            print(f"(ended {left} process(es) the run left running)")
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    ok = report(tally, args, time.monotonic() - t0, stopped)
    print(f"load {os.getloadavg()[0]:.2f}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
