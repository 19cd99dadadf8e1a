"""Trust (DESIGN §10): setup and check commands run only once the user approved those exact commands.

The approval is a SHA-256 over the commands and the repository's identity, kept outside the repository
and outside `.git`, so a branch or a clone cannot approve itself.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from git_balanced import ui
from git_balanced.errors import TrustError
from git_balanced.files import write_json
from git_balanced.git import Repo
from git_balanced.models import COMMAND_MOST, text_problem
from git_balanced.shipped import pids


@dataclass(frozen=True)
class Commands:
    setup: str | None
    check: str | None

    def lines(self) -> list[str]:
        return [f"  setup: {self.setup or '(none)'}", f"  check: {self.check or '(none)'}"]


def _store() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    d = Path(base) / "git-balanced" / "trust"
    d.mkdir(parents=True, exist_ok=True)
    return d


def fingerprint(repo: Repo, cmds: Commands) -> str:
    """SHA-256 over the repository's identity and the exact commands."""
    body = json.dumps({"repository": repo.identity, "setup": cmds.setup, "check": cmds.check}, sort_keys=True)
    return hashlib.sha256(body.encode()).hexdigest()


def _record_path(repo: Repo) -> Path:
    return _store() / (hashlib.sha256(repo.identity.encode()).hexdigest()[:32] + ".json")


def _read(repo: Repo) -> dict[str, object]:
    try:
        data = json.loads(_record_path(repo).read_text())
        return data if isinstance(data, dict) else {}
    except (FileNotFoundError, ValueError):
        return {}


def _write(repo: Repo, cmds: Commands, decision: str, **more: object) -> None:
    path = _record_path(repo)
    record = {"repository": repo.identity, "setup": cmds.setup, "check": cmds.check,
              "fingerprint": fingerprint(repo, cmds), "decision": decision, "at": time.time(), **more}
    write_json(path, record, indent=2)


NOT_NOW = "not now"  # `deny --for-now`: refused for this run of the engine; asked again at the next one


def status(repo: Repo, cmds: Commands) -> str:
    """`allowed`, `denied`, `not now` (refused for this run of the engine), `changed` (approved once, the commands
    differ now) or `unknown`."""
    return _status_of(_read(repo), fingerprint(repo, cmds))


def _status_of(rec: dict[str, object], print_: str) -> str:
    if not rec:
        return "unknown"
    if rec.get("decision") == NOT_NOW:
        if _run_alive(rec) or rec.get("run_pid") is None:  # its run goes on, or has not begun
            return NOT_NOW if rec.get("fingerprint") == print_ else "changed"
        before = rec.get("before")  # its run is over: what stood before it stands again
        return _status_of(before if isinstance(before, dict) else {}, print_)
    if rec.get("fingerprint") != print_:
        return "changed"
    return "allowed" if rec.get("decision") == "allowed" else "denied"


def _run_alive(rec: dict[str, object]) -> bool:
    """Whether the engine run a `not now` is for still runs: its pid, started at the tick written beside it (a
    record from before ticks were kept has none), and this user's."""
    tick = rec.get("run_tick")
    return pids.alive(rec.get("run_pid"), tick if isinstance(tick, str) else "", mine=True)


def runnable(cmds: Commands) -> None:
    """Refuse commands that could never run (a NUL, or longer than one argument of `sh -c` may be), so no
    approval is ever recorded for them."""
    for name, cmd in (("setup", cmds.setup), ("check", cmds.check)):
        wrong = None if cmd is None else text_problem(cmd, most=COMMAND_MOST, unit="bytes", controls=True)
        if wrong:
            raise TrustError(f"The {name} command in .magnum/settings.toml can never run: {wrong}.",
                             hint=f"fix `{name}` in .magnum/settings.toml, then run `git balanced allow` again")


def allow(repo: Repo, cmds: Commands) -> None:
    runnable(cmds)
    _write(repo, cmds, "allowed")


def deny(repo: Repo, cmds: Commands) -> None:
    _write(repo, cmds, "denied")


def deny_for_now(repo: Repo, cmds: Commands, run_pid: int | None) -> None:
    """Refuse the commands for this run of the engine (`run_pid`, or the next run to start when none runs); once
    it ended, they stand as they stood before (asked again, or allowed, or denied)."""
    rec = _read(repo)
    before = rec.get("before") if rec.get("decision") == NOT_NOW else rec
    _write(repo, cmds, NOT_NOW, **_run(run_pid), before=before or None)


def bind_run(repo: Repo, pid: int) -> None:
    """An engine run begins (or goes on): a `not now` said while no engine ran is for this run."""
    rec = _read(repo)
    if rec.get("decision") == NOT_NOW and rec.get("run_pid") is None:
        write_json(_record_path(repo), {**rec, **_run(pid)}, indent=2)


def _run(pid: int | None) -> dict[str, object]:
    """An engine run as a `not now` keeps it: its pid and the pid's start tick (None and "" before it began)."""
    return {"run_pid": pid, "run_tick": pids.start_tick(pid) if pid else ""}


def interactive() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()


def ask(repo: Repo, cmds: Commands, prompt: str = "Allow these commands to run?") -> bool:
    """Show the commands and ask on the terminal; records the answer."""
    runnable(cmds)
    print(f"git balanced will run these commands from {repo.root}/.magnum/settings.toml:")
    print(ui.plain("\n".join(cmds.lines())))  # what is approved must be what is seen: no escape sequence hides it
    answer = input(f"{prompt} [y/N] ").strip().lower()
    if answer in ("y", "yes"):
        allow(repo, cmds)
        return True
    deny(repo, cmds)
    return False


def ensure_allowed(repo: Repo, cmds: Commands) -> None:
    """Return when the commands may run; ask on a terminal; otherwise refuse with what to run."""
    if not cmds.setup and not cmds.check:
        return
    state = status(repo, cmds)
    if state == "allowed":
        return
    if state == "denied":
        raise TrustError("You refused to run this repository's setup and check commands.",
                         hint="run `git balanced allow` to approve them after all.")
    if state == NOT_NOW:
        raise TrustError("You said not now to this repository's setup and check commands, for this run of the "
                         "engine.", hint="once that run has ended they stand as they stood before; "
                                         "`git balanced allow` approves them now.")
    if interactive() and ask(repo, cmds):
        return
    what = "changed since you approved them" if state == "changed" else "not approved yet"
    raise TrustError(
        f"The setup and check commands in .magnum/settings.toml are {what}:\n" + "\n".join(cmds.lines()),
        hint="review them, then run `git balanced allow` (or `git balanced allow --yes` without a terminal).")
