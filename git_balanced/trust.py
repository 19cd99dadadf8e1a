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


def _write(repo: Repo, cmds: Commands, decision: str) -> None:
    path = _record_path(repo)
    record = {"repository": repo.identity, "setup": cmds.setup, "check": cmds.check,
              "fingerprint": fingerprint(repo, cmds), "decision": decision, "at": time.time()}
    write_json(path, record, indent=2)


def status(repo: Repo, cmds: Commands) -> str:
    """`allowed`, `denied`, `changed` (approved once, the commands differ now) or `unknown`."""
    rec = _read(repo)
    if not rec:
        return "unknown"
    if rec.get("fingerprint") != fingerprint(repo, cmds):
        return "changed"
    return "allowed" if rec.get("decision") == "allowed" else "denied"


def allow(repo: Repo, cmds: Commands) -> None:
    _write(repo, cmds, "allowed")


def deny(repo: Repo, cmds: Commands) -> None:
    _write(repo, cmds, "denied")


def interactive() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()


def ask(repo: Repo, cmds: Commands, prompt: str = "Allow these commands to run?") -> bool:
    """Show the commands and ask on the terminal; records the answer."""
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
    if interactive() and ask(repo, cmds):
        return
    what = "changed since you approved them" if state == "changed" else "not approved yet"
    raise TrustError(
        f"The setup and check commands in .magnum/settings.toml are {what}:\n" + "\n".join(cmds.lines()),
        hint="review them, then run `git balanced allow` (or `git balanced allow --yes` without a terminal).")
