"""Running the check on a tree in a reusable scratch worktree, and its results kept as notes on the tree."""

from __future__ import annotations

import hashlib
import os
import shutil
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from git_balanced import fence, proc, process
from git_balanced.errors import BalancedError, NotARepository
from git_balanced.files import Flock, write_atomic, write_atomic_bytes
from git_balanced.git import Repo, config_text
from git_balanced.git.contains import holding
from git_balanced.landing.starts import Starts
from git_balanced.machines.reach import workcopy
from git_balanced.state import notes

TAIL_LINES = 30  # the end of a check's output kept in its note (and on a job whose check failed)
# The whole output is kept beside, in `.git/balanced/check-logs/`, not shared: its last LOG_BYTES, for the newest
# LOGS_KEPT checks (`git balanced show JOB` prints it).
LOG_BYTES = 256 * 1024
LOGS_KEPT = 200
# The checks' copy's own config as `git init` writes it; the lead's identity and `gc.auto = 0` are added.
COPY_CONFIG = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n"


def command_hash(command: str) -> str:
    return hashlib.sha256(command.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class CheckResult:
    tree: str
    command: str
    passed: bool
    code: int
    seconds: float
    tail: str
    at: float
    cached: bool = False

    def record(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("cached")
        d["command_hash"] = command_hash(self.command)
        d["result"] = "pass" if self.passed else "fail"
        return d


def cached(repo: Repo, tree: str, command: str) -> CheckResult | None:
    """The recorded result of `command` on `tree`, if it was ever checked (the latest record wins)."""
    want = command_hash(command)
    found = [r for r in notes.read_json(repo, notes.CHECKS, tree) if r.get("command_hash") == want]
    if not found:
        return None
    r = max(found, key=lambda x: x.get("at", 0))
    return CheckResult(tree=tree, command=command, passed=r.get("result") == "pass", code=int(r.get("code", 1)),
                       seconds=float(r.get("seconds", 0)), tail=r.get("tail", ""), at=float(r.get("at", 0)),
                       cached=True)


def for_landing(repo: Repo, tree: str, command: str) -> CheckResult | None:
    """The result a landing may count on. Where workers and checks are fenced, the recorded one (`cached`);
    without a fence, a note in the repository may be the checked code's own (it can compute the tree a landing
    will make and write a passing note for it), so only a check this process ran counts."""
    if fence.available():
        return cached(repo, tree, command)
    ours = process.part(Ours)
    with ours.lock:
        return ours.ran.get((repo.identity, tree, command_hash(command)))


class Scratch:
    """A scratch worktree outside `.git`, reused between checks; locked while in use. It belongs to the
    check's copy of the repository (machines/reach/workcopy.py), not to the lead's: the code the check runs (the
    branch's own tests) cannot move the lead's refs, notes or hooks through it."""

    def __init__(self, repo: Repo, name: str = "check") -> None:
        self.repo = repo
        self.name = name
        self.path = repo.worktrees_home() / f"scratch-{name}"
        self._lock = Flock(self.path.with_name(self.path.name + ".lock"))
        # There while a holder uses it: found at the start, the holder before was killed before its end.
        self._busy = self.path.with_name(self.path.name + ".busy")

    def __enter__(self) -> Scratch:
        # A crashed holder's lock dies with its process; a live one's check is bounded by its timeout. Asked
        # again and again rather than waited on, so that a stop is heard meanwhile.
        while not self._lock.take(wait=False):
            if proc.stop_asked():
                raise proc.Stopped
            time.sleep(0.1)
        # Its check's processes may outlive it, though: what a killed engine's check left running in this
        # folder is ended first, so no two checks ever share it. A holder that got to its end ended its runs'
        # processes itself (proc.shell), so only after one that did not are all processes looked through.
        left = proc.end_tree(None, self.mark_prefix) if self._busy.exists() else 0
        self._busy.touch()
        if left:
            from git_balanced import ui

            ui.note(f"[balanced] Ended {left} process(es) that an earlier check left running in {self.path} "
                    "(what ran that check was killed).")
        return self

    @property
    def mark_prefix(self) -> str:
        """What every check run in this folder carries in its environment (proc.MARK), before its own id."""
        return f"{self.path}#"

    def __exit__(self, *exc: object) -> None:
        self._busy.unlink(missing_ok=True)
        self._lock.release()

    def _admin(self, copy: Path) -> Path | None:
        """The scratch worktree's own folder in the copy (`.git/worktrees/<name>`), or None when the scratch
        worktree must be made again: missing, broken, a link, or (a check may rewrite its `.git` file) one that
        names another repository (one of the lead's own, from before the copies, included)."""
        if self.path.is_symlink() or not self.path.is_dir() or not (self.path / ".git").is_file():
            return None
        try:
            found = Repo.discover(self.path)
        except NotARepository:
            return None
        if found.common_dir.resolve() != workcopy.git_dir(copy).resolve() or \
                found.root.resolve() != self.path.resolve():
            return None
        return found.git_dir

    def checkout(self, rev: str, carried: dict[str, str] | None = None) -> Path:
        """Put the scratch worktree at `rev`, detached and clean; rebuilt if a crash left it broken. The copy's
        config and hooks, which the last check's code could write, are put back first (reset_copy); git runs
        there as in any folder a check could have written (untrusted.py). `carried`: the lead's
        `workcopy.carried_config`, when the caller read it already."""
        copy = workcopy.ensure(self.repo, workcopy.CHECKS, carried=carried)
        admin = self._admin(copy)
        reset_copy(self.repo, copy, admin, carried)
        if admin is None:
            # `worktree prune` would remove another slot's half-made worktree: one maker at a time.
            (workcopy.git_dir(copy) / "balanced").mkdir(exist_ok=True)
            with Flock(workcopy.git_dir(copy) / "balanced" / "worktrees.lock"):
                if self.path.is_symlink():
                    self.path.unlink()
                shutil.rmtree(self.path, ignore_errors=True)
                self.repo.prune_worktrees()  # a scratch worktree of the lead's, from before the copies
                workcopy.git_in(copy, "worktree", "prune")
                workcopy.git_in(copy, "worktree", "add", "--quiet", "--detach", "--force", str(self.path), rev)
        else:
            # The worktree's own folder named, not found through its `.git` file, which the check could rewrite.
            self.repo.put_worktree_at(admin, self.path, rev)
        return self.path

    def fenced(self, command: str) -> list[str] | None:
        """`sh -c command` with the lead's repository (its `.git` and checkout) read-only, where this machine
        allows it (fence.py): the code a check runs is the branch's, not the lead's."""
        return fence.prefix_for([self.repo.common_dir, self.repo.root], ["sh", "-c", command],
                                writable=[self.path, workcopy.path(self.repo, workcopy.CHECKS)])

    def marker(self) -> Path:
        return Repo.discover(self.path).git_dir / "balanced-setup"

    def ensure_setup(self, setup: str | None, timeout: float | None = None) -> proc.Result | None:
        """Run setup once per scratch worktree (again only when the command changes), within `timeout`
        (default: `[worktree] check_timeout`)."""
        if not setup:
            return None
        marker = self.marker()
        if marker.exists() and marker.read_text().strip() == command_hash(setup):
            return None
        timeout = timeout if timeout is not None else timeout_of(self.repo)
        res = proc.shell(setup, cwd=self.path, env=proc.no_git_env(), argv=self.fenced(setup), timeout=timeout,
                         mark=self.mark_prefix + _run_id())
        if res.code == 124 and res.out.endswith(f"timed out after {timeout} seconds"):
            res = proc.Result(124, _past(res.out, "setup", timeout), "")
        if res.code == 0:
            marker.write_text(command_hash(setup) + "\n")
        return res


def reset_copy(repo: Repo, copy: Path, admin: Path | None, carried: dict[str, str] | None = None) -> None:
    """Put back what the checks' copy holds that git would act on, as the copy was made (machines/reach/workcopy.py):
    its config (written anew), an empty hooks folder, no attributes or worktree config of its own. The checked
    code could have written any of them; nothing of it may reach the next check, or a git command of ours."""
    git_dir = workcopy.git_dir(copy)
    # Check slots put the copy back one at a time: two that both found the hooks folder missing once had the
    # second remove, as if a file, the folder the first had just made.
    (git_dir / "balanced").mkdir(exist_ok=True)
    with Flock(git_dir / "balanced" / "reset.lock"):
        carried = workcopy.carried_config(repo) if carried is None else carried
        _put_back_copy(git_dir, config_text(COPY_CONFIG, {**carried, "gc.auto": "0"}), admin)


def _put_back_copy(git_dir: Path, config: str, admin: Path | None) -> None:
    """reset_copy's work, under its lock."""
    write_atomic(git_dir / "config", config)  # replaces a link planted there, never writes through it
    hooks = git_dir / "hooks"
    if hooks.is_symlink() or not hooks.is_dir():
        hooks.unlink(missing_ok=True)
        hooks.mkdir(exist_ok=True)
    else:
        for entry in os.scandir(hooks):
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                Path(entry.path).unlink(missing_ok=True)
    for planted in (git_dir / "info" / "attributes", git_dir / "config.worktree",
                    *([admin / "config.worktree"] if admin else [])):
        if planted.is_dir() and not planted.is_symlink():
            shutil.rmtree(planted, ignore_errors=True)
        else:
            planted.unlink(missing_ok=True)


def run_in(scratch: Scratch, tree: str, command: str, setup: str | None, commit: str | None = None,
           timeout: float | None = None, seats: int | None = None) -> CheckResult:
    """Run setup (once) and the check in a scratch worktree already at the right commit (`commit`); record
    it. A branch or tag of the lead's that the check's code moved to what it checks is put back, and the
    check fails: the lead's branch moves only by the lead, after the check. Each of setup and check is
    stopped past `timeout` seconds (default: `[worktree] check_timeout` as committed at HEAD), and fails."""
    repo = scratch.repo
    limit = timeout if timeout is not None else timeout_of(repo)
    ours = process.part(Ours)
    token = ours.begin()  # before the branches and notes are read: what moves after is this check's to judge
    try:
        return _run_in(scratch, tree, command, setup, commit, limit, seats)
    finally:
        ours.end(token)


def _run_in(scratch: Scratch, tree: str, command: str, setup: str | None, commit: str | None, limit: float,
            seats: int | None) -> CheckResult:
    repo = scratch.repo
    start = time.time()
    before = _branches_and_tags(repo) if commit else {}
    notes_before = repo.read_ref(notes.CHECKS)
    try:
        res = scratch.ensure_setup(setup, limit)
        if res is not None and res.code != 0:
            out, code = "setup failed:\n" + res.out, res.code
        else:
            from git_balanced.landing.seat import landing_seat

            # one of this machine's check seats, shared with its workers' checks
            with landing_seat(repo, command, seats):
                r = proc.shell(command, cwd=scratch.path, env=proc.no_git_env(), argv=scratch.fenced(command),
                               timeout=limit, mark=scratch.mark_prefix + _run_id())
            out, code = r.out, r.code
            if code == 124 and out.endswith(f"timed out after {limit} seconds"):
                out = _past(out, "check", limit)
    except proc.Stopped:  # stopped, not failed: nothing is recorded, but what its code moved is put back
        if commit:
            _put_back(repo, commit, before)
        _undo_foreign_results(repo, notes_before)
        raise
    if commit and (put_back := _put_back(repo, commit, before)):
        out, code = f"{out.rstrip()}\nThe check's code moved the lead's {put_back}; put back.", code or 1
    if forged := _undo_foreign_results(repo, notes_before):
        out, code = (f"{out.rstrip()}\nThe check's code wrote {forged} check result(s) into the lead's "
                     f"{notes.CHECKS}; they were taken out, and do not count."), code or 1
    tail = "\n".join(out.rstrip().splitlines()[-TAIL_LINES:])
    keep_log(repo, tree, command, out)
    result = CheckResult(tree=tree, command=command, passed=code == 0, code=code,
                         seconds=round(time.time() - start, 3), tail=tail, at=time.time())
    _record(repo, tree, result.record())
    return result


def log_path(repo: Repo, tree: str, command: str) -> Path:
    """Where the whole output of `command` on `tree` is kept, once run here."""
    return repo.state_dir / "check-logs" / f"{tree}-{command_hash(command)}.log"


def keep_log(repo: Repo, tree: str, command: str, out: str) -> None:
    """Keep a check's whole output (its last LOG_BYTES), and only the newest LOGS_KEPT of them."""
    path = log_path(repo, tree, command)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = out.encode("utf-8", "replace")
    if len(data) > LOG_BYTES:
        data = b"[... the start is cut: only the last %d bytes are kept]\n" % LOG_BYTES + data[-LOG_BYTES:]
    write_atomic_bytes(path, data)
    others = sorted((p for p in path.parent.glob("*.log") if p != path), key=_mtime)
    for old in others[:max(0, len(others) - LOGS_KEPT + 1)]:  # the one just written is kept
        old.unlink(missing_ok=True)


def kept_log(repo: Repo, tree: str, command: str | None = None) -> str | None:
    """The whole output kept of a check on `tree` (of `command`, else of any command, the newest), or None."""
    folder = repo.state_dir / "check-logs"
    if command is not None:
        found = [log_path(repo, tree, command)]
    else:
        found = sorted(folder.glob(f"{tree}-*.log"), key=_mtime, reverse=True)
    for path in found:
        try:
            return path.read_text(errors="replace")
        except FileNotFoundError:
            continue
    return None


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except FileNotFoundError:  # another check's keep_log took it out meanwhile
        return 0.0


def mark_of(repo: Repo, scratch: str) -> str:
    """What every check run in the scratch folder `scratch` (check_rev's name for it) carries in its environment,
    first (Scratch.mark_prefix, without taking the folder)."""
    return f"{repo.worktrees_home() / f'scratch-{scratch}'}#"


def marks_of(repo: Repo) -> str:
    """What every check run in any of this repository's scratch folders carries in its environment, first."""
    return str(repo.worktrees_home() / "scratch-")


def timeout_of(repo: Repo) -> float:
    """`[worktree] check_timeout` as committed at HEAD (the lead's own), or as in the checkout before a commit."""
    from git_balanced.lead import settings_at

    return float(settings_at(repo, "HEAD" if repo.rev_parse("HEAD") else None).worktree.check_timeout)


def _run_id() -> str:
    """A new id for one run of setup or check: its processes, and only its, carry it."""
    return f"{os.getpid()}-{os.urandom(6).hex()}"


def _past(out: str, what: str, limit: float) -> str:
    """A run's output with why it ended in place of proc's words: it ran past its timeout."""
    body = out.rsplit("\ntimed out after", 1)[0].rstrip()
    return f"{body}\nthe {what} ran past its {limit:g} s timeout and was stopped".lstrip("\n")


RAN_KEPT = 2000  # the newest checks this process ran that a landing without a fence may count (Ours.ran)
MOVE_GRACE = 60.0  # seconds a landing's move is kept past the checks begun after it: it is said before it is made


class Ours:
    """The checks this process ran and recorded (a part of process.py). What a running check needs (`moves`,
    `written`) is kept while one that started before it runs, and dropped as the last such check ends; `ran`
    keeps the newest RAN_KEPT. So a long-running engine holds what its live checks need, not its history."""

    def __init__(self) -> None:
        # The check results this process wrote, by their notes commit, with when (time.monotonic()): a result in
        # the lead's notes that appeared while a check ran and is not one of these was written by the checked
        # code (where the fence is not available to stop it), or by another process of the lead's, whose result
        # is only a cache and is made again when needed.
        self.written: dict[str, tuple[str, dict[str, Any]]] = {}
        self.written_at: dict[str, float] = {}
        self.lock = threading.RLock()  # held while writing one, so a check that looks meanwhile never sees it half-done
        # The checks this process ran, by (repository, tree, command hash): without a fence, the only results a
        # landing counts.
        self.ran: dict[tuple[str, str, str], CheckResult] = {}
        # The moves of the lead's branch this process's landings made, by (repository, ref, commit), with when: a
        # check still running when its landing moved the branch (one a round did not wait for) does not take that
        # move for its code's, and put it back.
        self.moves: dict[tuple[str, str, str], float] = {}
        # The checks running now (a token each), with when each began.
        self.running: dict[int, float] = {}
        self._next = 0

    def begin(self) -> int:
        """A check begins: its token, for `end`."""
        with self.lock:
            self._next += 1
            self.running[self._next] = time.monotonic()
            return self._next

    def end(self, token: int, *, now: float | None = None) -> None:
        """A check ended: what only checks begun before the oldest still running could need is dropped (a
        landing's move MOVE_GRACE seconds after that, as it is said before it is made)."""
        with self.lock:
            self.running.pop(token, None)
            oldest = min(self.running.values(), default=time.monotonic() if now is None else now)
            for key in [k for k, at in self.moves.items() if at < oldest - MOVE_GRACE]:
                del self.moves[key]
            for commit in [c for c, at in self.written_at.items() if at < oldest]:
                del self.written_at[commit]
                self.written.pop(commit, None)

    def keep_ran(self, key: tuple[str, str, str], result: CheckResult) -> None:
        """Keep a result this process ran; the oldest beyond RAN_KEPT is dropped (a landing runs it again)."""
        with self.lock:
            self.ran.pop(key, None)
            self.ran[key] = result
            while len(self.ran) > RAN_KEPT:
                del self.ran[next(iter(self.ran))]


def running_here() -> bool:
    """Whether a check of this process runs now (from the moment it reads the lead's branches to its end)."""
    return bool(process.part(Ours).running)


def landing_moves(repo: Repo, ref: str, commit: str) -> None:
    """The landing of this process is about to move `ref` to `commit`: no check of this process puts that back."""
    ours = process.part(Ours)
    with ours.lock:
        ours.moves[(repo.identity, ref, commit)] = time.monotonic()


def _record(repo: Repo, tree: str, record: dict[str, Any]) -> None:
    ours = process.part(Ours)
    with ours.lock:
        commit = notes.add_json(repo, notes.CHECKS, tree, record)
        ours.written[commit] = (tree, record)
        ours.written_at[commit] = time.monotonic()
        ours.keep_ran((repo.identity, tree, str(record.get("command_hash"))), CheckResult(
            tree=tree, command=str(record.get("command")), passed=record.get("result") == "pass",
            code=int(record.get("code", 1)), seconds=float(record.get("seconds", 0)), tail=str(record.get("tail", "")),
            at=float(record.get("at", 0)), cached=True))


def _undo_foreign_results(repo: Repo, before: str | None) -> int:
    """Put the lead's check results back as they were before a check ran, keeping this process's own; how many
    results written by others were taken out (0 when none were)."""
    kept = process.part(Ours)
    with kept.lock:
        after = repo.read_ref(notes.CHECKS)
        if after == before or after is None:
            return 0
        span = repo.commits(after, before)
        foreign = [c for c in span if c not in kept.written]
        if not foreign:
            return 0
        ours = [kept.written[c] for c in reversed(span) if c in kept.written]
        if before is None:
            repo.cas_ref_delete(notes.CHECKS, after)
        else:
            repo.cas_ref(notes.CHECKS, before, after, message="balanced: take out results the checked code wrote")
        for tree, record in ours:
            _record(repo, tree, record)
        return len(foreign)


def _branches_and_tags(repo: Repo) -> dict[str, str]:
    """Every branch and tag with its id."""
    return {**repo.list_refs("refs/heads/"), **repo.list_refs("refs/tags/")}


def _put_back(repo: Repo, commit: str, before: dict[str, str]) -> str:
    """The lead's branches and tags that now point at `commit` or a commit on top of it, which only the
    checked code could have made (the lead moves its branch after the check; a move this process's landing made
    while the check ran is its own, `landing_moves`), put back as they were; their names in words, or ''."""
    after = _branches_and_tags(repo)
    ours = process.part(Ours)
    with ours.lock:
        landed = {(ref, sha) for who, ref, sha in ours.moves if who == repo.identity}
    changed = {ref for ref, sha in after.items() if sha != before.get(ref) and (ref, sha) not in landed}
    held = holding(repo, commit, changed)  # one git process for all of them
    if held is None:  # git did not answer for all at once: each asked alone, as a failing list must not hide one
        held = {ref for ref in changed if after[ref] == commit or repo.is_ancestor(commit, after[ref])}
    moved = [ref for ref in after if ref in held]
    for ref in moved:
        old = before.get(ref)
        if old:  # compare-and-swap both ways: a ref moved again meanwhile is left to whoever moved it
            repo.update_ref(ref, old, after[ref], message="balanced: put back what a check moved")
        else:
            repo.delete_ref(ref, after[ref])
    return ", ".join(r.removeprefix("refs/heads/") for r in moved)


def check_rev(repo: Repo, rev: str, command: str, setup: str | None, *, scratch: str = "check",
              use_cache: bool = True, timeout: float | None = None, seats: int | None = None,
              turn: tuple[Starts, bool] | None = None, carried: dict[str, str] | None = None) -> CheckResult:
    """The check's result on `rev`'s tree: from the note when that tree was checked, else run it (within
    `timeout`, default `[worktree] check_timeout` as committed at HEAD; on one of `seats` check seats, default
    `[balanced] check_seats` as committed there). `turn`: a landing round's start order and whether this is its
    top (starts.py), waited for before the checkout and told after it; `carried`: the lead's
    `workcopy.carried_config`, when the caller read it already."""
    starts, top = turn if turn is not None else (None, False)
    try:
        commit = repo.rev_parse(rev)
        if commit is None:
            raise BalancedError(f"{rev!r} names no commit here.", hint="name a branch, tag or commit id.")
        tree = repo.tree_of(commit)
        if use_cache and (hit := for_landing(repo, tree, command)) is not None:
            return hit
        with Scratch(repo, scratch) as s:
            if starts is not None:
                starts.wait(top)
            s.checkout(commit, carried)
            if starts is not None:
                starts.out(top)
                starts = None
            return run_in(s, tree, command, setup, commit, timeout, seats)
    finally:
        if starts is not None:  # no checkout came (a note answered, or it failed before): none waits for it
            starts.out(top)
