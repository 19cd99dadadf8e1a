"""`git balanced doctor`: malformed state refs, stale ref locks and what workers left behind (worktrees, run
folders, and processes that outlived their worker, here and on every ticked SSH machine), listed with the command
that removes each; `--fix` removes and stops them (never a worktree that holds work nothing else keeps)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from git_balanced import fence, trust, ui
from git_balanced.errors import BalancedError
from git_balanced.git import Repo, remove_if_stale
from git_balanced.jobs import Job, all_jobs
from git_balanced.machines.inventory import records as inventory
from git_balanced.machines.inventory.boxes import BoxSpec
from git_balanced.machines.inventory.records import LOCAL, host_alias
from git_balanced.machines.prepare import boxready, left_there, leftovers
from git_balanced.machines.prepare.leftovers import Leftover, LeftProcess
from git_balanced.machines.reach import copies
from git_balanced.machines.reach.boxdoor import Found
from git_balanced.machines.reach.remote import transport_for
from git_balanced.machines.reach.transport import Transport
from git_balanced.state import health
from git_balanced.state.health import BrokenRef, StaleLock


@dataclass
class Findings:
    refs: list[BrokenRef]
    locks: list[StaleLock]
    left: list[Leftover]
    procs: list[tuple[str, LeftProcess]] = field(default_factory=list)  # (machine, process)
    unreached: list[str] = field(default_factory=list)  # machines that could not be looked at, and why
    removed: list[str] = field(default_factory=list)
    stopped: list[str] = field(default_factory=list)  # of `removed`, the processes
    failed: list[dict[str, str]] = field(default_factory=list)
    restore: dict[str, str] = field(default_factory=dict)  # a removed ref -> the command that brings it back

    @property
    def removable(self) -> int:
        return len(self.refs) + len(self.locks) + sum(1 for x in self.left if not x.kept) + len(self.procs)

    @property
    def kept(self) -> list[Leftover]:
        return [x for x in self.left if x.kept]

    def as_json(self) -> dict[str, Any]:
        return {"malformed_refs": [{"ref": b.kept or b.ref, "tip": b.tip, "why": _why(b), "fix": b.fix}
                                   for b in self.refs],
                "stale_locks": [{"path": str(lk.path), "ref": lk.ref, "age_seconds": round(lk.age), "fix": lk.fix}
                                for lk in self.locks],
                "leftovers": [x.as_json() for x in self.left],
                "processes": [{"machine": m, **p.as_json()} for m, p in self.procs],
                "not_looked_at": self.unreached, "removed": self.removed, "not_removed": self.failed,
                "fence": {"fenced": fence.available(), "why": fence.why_unavailable()},
                **({"restore": self.restore} if self.restore else {})}


def _machines(repo: Repo) -> list[tuple[str, Transport, dict[str, Any]]]:
    """The ticked SSH machines whose copy `ready` found to be this repository's, with their records."""
    ready = inventory.readiness(repo)
    try:
        mine = copies.identity(repo).id
    except BalancedError:
        return []
    out = []
    for name in sorted(inventory.ticked(repo) - {LOCAL}):
        record = ready.get(name, {})
        if record.get("repository") == mine and record.get("repo_path") and record.get("home"):
            out.append((name, transport_for(host_alias(name)), record))
    return out


def _look_there(repo: Repo, jobs: dict[str, Job], f: Findings) -> None:
    """Add what workers left on each ticked SSH machine; a machine that cannot be asked is named."""
    looked = _machines(repo)
    known = {name for name, _, _ in looked}
    boxes = _boxes(repo)
    for name in sorted(set(inventory.readiness(repo)) & inventory.ticked(repo) - known - {LOCAL} - set(boxes)):
        f.unreached.append(f"{name}: no copy there is known to be this repository's; `git balanced ready {name}` "
                           "finds it")
    for name, t, record in looked:
        try:
            f.left += left_there.find(name, t, record, repo.name, jobs)
            procs = leftovers.processes(t, stop=False)
        except (BalancedError, ValueError) as exc:
            f.unreached.append(f"{name}: {exc.message if isinstance(exc, BalancedError) else exc}")
            continue
        if procs is None:
            f.unreached.append(f"{name}: it did not say which processes its workers left running")
        f.procs += [(name, p) for p in procs or []]
    if boxes:
        left, unreached = boxready.as_leftovers(repo, list(boxes.items()))
        f.left += left
        f.unreached += unreached


def _boxes(repo: Repo) -> dict[str, BoxSpec]:
    """The ticked box machines (containers, pods) and what each is; one the machines file no longer reads is
    left out."""
    out = {}
    for name in sorted(inventory.ticked(repo) - {LOCAL}):
        try:
            spec = inventory.box_of(name)
        except BalancedError:
            continue
        if spec is not None:
            out[name] = spec
    return out


def gather(repo: Repo) -> Findings:
    """Everything the doctor looks at, in this repository and in this machine's worker folders."""
    health.look_only(repo)  # listed where they are; `--fix` removes them from there
    scanned = health.scan(repo)
    health.mark_named(repo, scanned)  # listed below: no need for the readers' own line on stderr as well
    # A job this version cannot read stops the doctor as it stops the engine: without knowing which jobs run,
    # it cannot tell a leftover worktree from a live one.
    jobs = all_jobs(repo)
    by_ref = {(b.ref, b.tip): b for b in scanned}
    for b in health.seen(repo):  # a reader may have set one aside meanwhile: list it where it is now
        if b.why and (b.kept or (b.ref, b.tip) not in by_ref):
            by_ref[(b.ref, b.tip)] = b
    branch = repo.current_branch()
    locks = health.stale_locks(repo, f"refs/heads/{branch}" if branch else None)
    f = Findings(sorted(by_ref.values(), key=lambda b: (b.ref, b.kept)), locks, leftovers.find(repo, jobs))
    f.procs = [(LOCAL, p) for p in leftovers.processes(None, stop=False) or []]
    _look_there(repo, jobs, f)
    return f


def _age(seconds: float) -> str:
    return f"{int(seconds // 60)} minutes" if seconds >= 120 else f"{int(seconds)} seconds"


def _section(title: str, rows: list[tuple[str, str]], verb: str = "remove") -> None:
    """A heading, then each finding and, under it, the command that removes it (or that looks at it)."""
    if not rows:
        return
    ui.say(title)
    for what, command in rows:
        ui.say(f"  {what}")
        ui.say(f"      {verb}: {command}")


def show(f: Findings) -> None:
    """The findings in words, each with the command that removes it (or, when kept, the one to look at it)."""
    _section("Malformed refs (every reader skips them):", [_malformed_row(b) for b in f.refs])
    _section("Stale locks (left by a git process that ended; no writer holds one that long):",
             [(f"{lk.path}: the lock of {lk.ref}, {_age(lk.age)} old", lk.fix) for lk in f.locks])
    _section("Left running by workers that are done (nobody watches them):",
             [(f"{m}: {p.words()}", f"kill {p.pid}" if m == LOCAL else f"ssh {host_alias(m)} kill {p.pid}")
              for m, p in f.procs], verb="stop")
    _section("Left behind by workers whose jobs are done:",
             [(f"{x.where}: {x.what}", x.fix) for x in f.left if not x.kept])
    _section("Kept, as they hold work (look, and remove them yourself if you do not need it):",
             [(f"{x.where}: {x.what}; {x.kept}", x.fix) for x in f.kept], verb="look")
    for why in f.unreached:
        ui.say(f"Not looked at: {why}")


def fix(repo: Repo, f: Findings) -> None:
    """Remove what was found and may be removed; record what was and what could not be."""
    _fix_refs(repo, f)
    for lk in f.locks:
        gone = remove_if_stale(lk.path, repo.state_dir / "locks.lock", say=False) is not None or not lk.path.exists()
        _done(f, str(lk.path), None if gone else "it is no longer stale: a live git process holds it now")
    for machine in sorted({m for m, _ in f.procs}):
        t = None if machine == LOCAL else transport_for(host_alias(machine))
        for p in leftovers.processes(t, stop=True) or []:
            _done(f, f"{machine}: {p.words()}", None if p.stopped else "it still runs")
            f.stopped += [f"{machine}: {p.words()}"] if p.stopped else []
    for x in f.left:
        if not x.kept and x.machine == LOCAL:
            _done(f, x.path, leftovers.remove(repo, x))
    boxes = _boxes(repo)
    for x in f.left:
        if not x.kept and x.kind == "box" and x.machine in boxes:
            try:
                boxready.remove(x.machine, boxes[x.machine], [Found(x.path, False, {})])
                _done(f, x.where, None)
            except BalancedError as exc:
                _done(f, x.where, exc.message)
    jobs = all_jobs(repo)
    for name, t, record in _machines(repo):
        there = [x for x in f.left if x.machine == name and not x.kept]
        if there:
            removed, failed = left_there.remove(t, record, repo.name, jobs, there)
            f.removed += [f"{name}:{p}" for p in removed]
            f.failed += [{"what": f"{name}:{b['what']}", "why": b["why"]} for b in failed]


def _why(b: BrokenRef) -> str:
    return f"set aside from {b.ref}: {b.why}" if b.kept else b.why


def _malformed_row(b: BrokenRef) -> tuple[str, str]:
    """One malformed ref as `show` lists it: where it is, why, and the command that removes it."""
    return f"{b.kept or b.ref}: {_why(b)}", b.fix


def _fix_refs(repo: Repo, f: Findings) -> None:
    """Remove each malformed ref (or what was set aside of it), compare-and-swap on the tip that was found, and
    say how to bring it back: its objects stay until git's gc drops them."""
    for b in f.refs:
        ref = b.kept or b.ref
        tip = b.tip or repo.read_ref(ref) or ""
        # git's own compare-and-swap delete: it copes with a reflog folder a half-done set-aside left
        gone = repo.delete_ref(ref, tip or None)
        if gone:
            f.removed.append(ref)
            if tip:
                f.restore[ref] = f"git update-ref {ref} {tip}"
        else:
            _done(f, ref, "it moved since it was found: run `git balanced doctor` again")


def _done(f: Findings, what: str, error: str | None) -> None:
    if error is None:
        f.removed.append(what)
    else:
        f.failed.append({"what": what, "why": error})


def doctor_command(*, do_fix: bool, yes: bool, as_json: bool) -> int:
    """List (and with `do_fix`, remove) what is stale or broken; 0 when nothing is left to see to."""
    repo = Repo.discover()
    f = gather(repo)
    unfenced = fence.unfenced_words()
    if unfenced and not as_json:  # not a thing to remove, but the first thing to know about this machine
        ui.say(f"{unfenced}\n  ({fence.UNFENCED_HINT})")
    if not do_fix:
        if as_json:
            ui.emit_json(f.as_json())
        elif not (f.removable or f.kept):
            ui.say("Nothing to repair: no malformed refs, no stale locks, nothing left behind by workers.")
            for why in f.unreached:
                ui.say(f"Not looked at: {why}")
        else:
            show(f)
            if f.removable:
                ui.say(f"`git balanced doctor --fix` removes the {f.removable} listed to remove.")
        return 1 if f.removable or f.kept else 0
    if f.removable and not yes:
        if not as_json:
            show(f)
        if not trust.interactive():
            raise BalancedError(f"Nothing was removed: there is no terminal to ask on, and --yes was not given "
                                f"({f.removable} to remove).",
                                hint="run `git balanced doctor --fix --yes` to remove them, or the commands listed "
                                     "by `git balanced doctor` one by one.")
        if input(f"Remove these {f.removable}? [y/N] ").strip().lower() not in ("y", "yes"):
            ui.say("Nothing was removed.")
            return 1
    fix(repo, f)
    if as_json:
        ui.emit_json(f.as_json())
    else:
        for what in f.removed:
            ui.say(f"{'stopped' if what in f.stopped else 'removed'}  {what}")
            if what in f.restore:  # its objects stay until git's gc prunes them
                ui.say(f"         (to bring it back: {f.restore[what]})")
        for bad in f.failed:
            ui.say(f"kept     {bad['what']}: {bad['why']}")
        for x in f.kept:
            ui.say(f"kept     {x.where}: {x.kept} (look: {x.fix})")
        if not (f.removed or f.failed or f.kept):
            ui.say("Nothing to repair: no malformed refs, no stale locks, nothing left behind by workers.")
        elif f.removed:
            ui.say(f"Removed {len(f.removed)}.")
    return 1 if f.failed or f.kept else 0
