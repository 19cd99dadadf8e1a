"""The throwaway leads the landing benchmarks time the queue in (bench/landing.py and bench/landing_parallel.py): a
private HOME, N branches that each add one file under src/, the marker that makes the check fail, and one run of
the queue (`git balanced land ... --json`) or of the naive way."""

from __future__ import annotations

import json
import resource
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout without installing

from bench.sandbox import private_env  # noqa: E402
from git_balanced import proc  # noqa: E402

MARKER = "BREAKS-THE-CHECK"
CHECK = f'sleep 0.5; echo run >> "$HOME/check-runs"; ! grep -rq {MARKER} src'
PLACED = ((), (5,), (5, 11))
# More placements for the sweep; (1, 3), (2, 7) and (4, 7) are among the worst for two culprits in 16.
SWEEP = ((1,), (8,), (16,), (1, 3), (2, 7), (4, 7), (15, 16))
GOAL_CHECKS = {0: 1, 1: 6, 2: 11}


class Sandbox:
    """A private HOME, XDG folders and git identity, and `git` / `git balanced` run inside them."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = root / "home"
        # None of the caller's git settings or identity: the figures must not depend on whose machine it is.
        self.env = private_env(root)

    def git(self, cwd: Path, *args: str) -> str:
        res = proc.run(["git", *args], cwd=cwd, env=self.env)
        if res.code != 0:
            sys.exit(f"git {' '.join(args)} failed in {cwd}: {res.err.strip() or res.out.strip()}")
        return res.out.strip()

    def checks_counted(self) -> int:
        """Every run of the check appends a line to $HOME/check-runs: the count no report can round off."""
        p = self.home / "check-runs"
        return len(p.read_text().splitlines()) if p.exists() else 0


def build(box: Sandbox, where: Path, n: int, bad: tuple[int, ...], slots: int, check: str = CHECK,
          seats: int = 0) -> Path:
    """A lead on main with the check committed and allowed, and branches f1..fn each adding src/fi.txt. Its
    `check_slots` is written always (the default is the machine's cores); `check_seats` when `seats` is set."""
    box.git(box.root, "init", "-q", "-b", "main", str(where))
    settings = f"[worktree]\ncheck = {json.dumps(check)}\n\n[balanced]\ncheck_slots = {slots}\n"
    if seats:
        settings += f"check_seats = {seats}\n"
    (where / ".magnum").mkdir()
    (where / ".magnum" / "settings.toml").write_text(settings)
    (where / "src").mkdir()
    (where / "src" / "base.txt").write_text("base\n")
    box.git(where, "add", "-A")
    box.git(where, "commit", "-q", "-m", "initial")
    allowed = proc.run(["git", "balanced", "allow", "--yes"], cwd=where, env=box.env)
    if allowed.code != 0:
        sys.exit(f"git balanced allow --yes failed: {allowed.err.strip()}")
    for i in range(1, n + 1):
        box.git(where, "switch", "-q", "-c", f"f{i}", "main")
        (where / "src" / f"f{i}.txt").write_text(f"{MARKER}\n" if i in bad else f"feature {i}\n")
        box.git(where, "add", "-A")
        box.git(where, "commit", "-q", "-m", f"add f{i}")
    box.git(where, "switch", "-q", "main")
    return where


@dataclass
class Run:
    checks: int
    rounds: int
    seconds: float
    landed: set[str]
    refused: set[str]
    tree: str  # of src/ at the end: the settings differ between 1 and 4 slots, the work must not
    cpu: float = 0.0  # CPU seconds of the landing and every process it waited for (its git, its checks)


class ScratchRace(Exception):
    """Parallel checks creating their scratch worktrees at once tripped over each other (see queue_fresh)."""


def queue(box: Sandbox, repo: Path, n: int) -> Run:
    """`git balanced land f1 ... fn --json`, timed; its report cross-checked against the counted runs."""
    before = box.checks_counted()
    used = _children_cpu()
    start = time.perf_counter()
    res = proc.run(["git", "balanced", "land", *[f"f{i}" for i in range(1, n + 1)], "--json"], cwd=repo,
                   env=box.env)
    seconds = time.perf_counter() - start
    cpu = _children_cpu() - used
    try:
        data = json.loads(res.out)
    except json.JSONDecodeError:
        if "worktree add" in res.err:
            raise ScratchRace(res.err.strip()) from None
        sys.exit(f"git balanced land failed (exit {res.code}) in {repo}:\n{res.err}")
    counted = box.checks_counted() - before
    # The figures mean nothing if the report disagrees with what ran: the runs it counts, and between them and
    # those it stopped once their round's top passed (a stopped one may have got as far as counting itself).
    runs, stopped = data["check_runs"], data.get("checks_stopped", 0)
    assert runs <= counted <= runs + stopped, f"land reported {runs} check runs and {stopped} stopped, {counted} ran"
    verdicts = data["verdicts"]
    return Run(checks=counted, rounds=data["rounds"], seconds=seconds, cpu=cpu,
               landed={v["branch"] for v in verdicts if v["status"] == "landed"},
               refused={v["branch"] for v in verdicts if v["status"] != "landed"},
               tree=box.git(repo, "rev-parse", "main:src"))


def _children_cpu() -> float:
    """CPU seconds (user and system) of this process's children that ended and were waited for, so far."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def naive(box: Sandbox, repo: Path, n: int) -> Run:
    """One at a time in a scratch clone: merge, check, keep it or drop it. Plain git and the check."""
    clone = repo.parent / "naive"
    before = box.checks_counted()
    start = time.perf_counter()
    box.git(repo.parent, "clone", "-q", str(repo), str(clone))
    landed, refused = set(), set()
    for i in range(1, n + 1):
        name = f"f{i}"
        box.git(clone, "merge", "--no-ff", "-q", "-m", f"Land {name}", f"origin/{name}")
        if proc.shell(CHECK, cwd=clone, env=box.env).code == 0:
            landed.add(name)
        else:
            # a scratch clone of its own: dropping the failed merge is how the naive way says no
            box.git(clone, "reset", "-q", "--hard", "HEAD~1")
            refused.add(name)
    seconds = time.perf_counter() - start
    return Run(checks=box.checks_counted() - before, rounds=n, seconds=seconds, landed=landed,
               refused=refused, tree=box.git(clone, "rev-parse", "HEAD:src"))


def queue_fresh(box: Sandbox, n: int, bad: tuple[int, ...], slots: int, races: list[str], check: str = CHECK) -> Run:
    """The queue in a new lead. The first parallel landing in a repository creates its scratch worktrees
    at once, and one's `git worktree prune` can remove another's half-made entry: such a run is counted,
    and tried again in another new lead (a retry in the same one would be answered from its check notes)."""
    for _ in range(5):
        try:
            return queue(box, fresh(box, n, bad, slots, check), n)
        except ScratchRace as exc:
            races.append(f"{label(bad)}, {slots} slots: {exc.args[0].splitlines()[-1].strip()}")
    sys.exit("git balanced land failed 5 times creating its scratch worktrees:\n" + "\n".join(races[-5:]))


def expect(run: Run, n: int, bad: tuple[int, ...], what: str) -> None:
    """Exactly the good branches landed and exactly the breaking ones were refused."""
    good = {f"f{i}" for i in range(1, n + 1) if i not in bad}
    assert run.landed == good, f"{what}: landed {sorted(run.landed)}, expected {sorted(good)}"
    assert run.refused == {f"f{i}" for i in bad}, f"{what}: refused {sorted(run.refused)}"


def fresh(box: Sandbox, n: int, bad: tuple[int, ...], slots: int, check: str = CHECK, seats: int = 0) -> Path:
    """A new lead in a folder of its own (its naive clone goes next to it)."""
    return build(box, Path(tempfile.mkdtemp(prefix="run-", dir=box.root)) / "lead", n, bad, slots, check, seats)


def label(bad: tuple[int, ...]) -> str:
    return f"{len(bad)} failing" + (f" ({', '.join(f'f{i}' for i in bad)})" if bad else "")


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"
