"""SSH refusing to log in (a key it does not accept, a host key that changed), told apart from a machine out of
reach, with the command that fixes it. A refusal holds the machine (inventory/held.py): its workers still run
there, only the way in is shut, and nothing is gained by running their pieces again elsewhere."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from git_balanced.errors import BalancedError
from git_balanced.machines.inventory.names import SshHost
from git_balanced.machines.reach.transport import ssh_settings

_KEY = re.compile(r"Permission denied \((publickey|[a-z,-]*publickey)")
_HOST_KEY = re.compile(r"REMOTE HOST IDENTIFICATION HAS CHANGED|Host key verification failed|"
                       r"host key for .* has changed|No [A-Z0-9-]+ host key is known for")


@dataclass(frozen=True)
class Refused:
    """Why SSH would not log in to a machine, and what fixes it: `kind` is "key" or "host key"."""

    kind: str
    detail: str  # what ssh said
    fix: str  # the command(s) that fix it, for a person to run

    @property
    def words(self) -> str:
        """`SSH refused its key (…): run `ssh-add …``, as the person reads it."""
        if self.kind == "key":
            return f"SSH refused its key ({self.detail}): run `{self.fix}`"
        return f"its host key changed ({self.detail}): if you know why, run `{self.fix}`"


def kind_of(said: str) -> str:
    """"key", "host key", or "" when what ssh said is not a refusal to log in."""
    if _HOST_KEY.search(said):
        return "host key"
    if _KEY.search(said):
        return "key"
    return ""


def refused(alias: str, said: str) -> Refused | None:
    """The refusal in what ssh said to `alias` (its stderr, or the last line of it), or None."""
    kind = kind_of(said)
    if not kind:
        return None
    detail = said.strip().splitlines()[-1].strip() if said.strip() else kind
    return Refused(kind, detail[:200], _fix(alias, kind))


def _fix(alias: str, kind: str) -> str:
    """The command for a person: `ssh-add KEY` or `ssh-keygen -R HOST [-f FILE]`, then `ssh ALIAS true`."""
    try:
        got = ssh_settings(SshHost.of(alias))
    except BalancedError:
        got = {}
    check = f"ssh {shlex.quote(alias)} true"
    if kind == "key":
        key = got.get("identityfile", "~/.ssh/id_ed25519")
        return f"ssh-add {key}; {check}"
    host, port = got.get("hostname", alias), got.get("port", "22")
    name = host if port == "22" else f"[{host}]:{port}"
    files = (got.get("userknownhostsfile") or "").split()
    own = files[0] if files else ""
    default = str(Path("~/.ssh/known_hosts").expanduser())
    where = f" -f {shlex.quote(own)}" if own and str(Path(own).expanduser()) != default else ""
    return f"ssh-keygen -R {shlex.quote(name)}{where}; {check}"
