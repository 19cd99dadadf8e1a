"""The hosts an SSH config offers: aliases read from its `Host` lines, resolved by `ssh -G` itself.

Only the alias list is parsed here; what an alias means (HostName, User, Port after Include, Match and
ProxyJump) is left to ssh, so `git balanced` connects exactly where `ssh <alias>` would.
"""

from __future__ import annotations

import glob
import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from git_balanced.errors import BalancedError
from git_balanced.machines.inventory.names import SshHost
from git_balanced.machines.reach.transport import check_resolved, config_path, ssh_settings

MAX_INCLUDE_DEPTH = 16  # ssh's own limit
_KEYWORD = re.compile(r"^\s*([A-Za-z]+)\s*(?:=\s*|\s+)(.*)$")


@dataclass(frozen=True)
class SSHHost:
    """One alias of the SSH config and where ssh would take it."""

    alias: SshHost  # checked when resolved
    hostname: str
    user: str
    port: int
    proxyjump: str | None = None

    @property
    def address(self) -> str:
        return f"{self.user}@{self.hostname}:{self.port}"


def aliases(config: Path | None = None) -> list[str]:
    """Host aliases in the config and the files it includes, in order, without wildcard patterns."""
    path = config if config is not None else config_path()
    if path is None:
        return []
    found: list[str] = []
    _read(Path(path), found, stack=[], offered=True)
    return found


def resolve(alias: str, config: Path | None = None) -> SSHHost:
    """Where `ssh <alias>` connects, as `ssh -G` computes it; an alias ssh would misread is refused first."""
    checked = SshHost.of(alias)
    s = ssh_settings(checked, config)
    check_resolved(alias, s, config if config is not None else config_path())
    jump = s.get("proxyjump")
    try:
        port = int(s.get("port", "22"))
    except ValueError as exc:
        raise BalancedError(f"`ssh -G {alias}` gave the port {s.get('port')!r}.") from exc
    return SSHHost(
        alias=checked, hostname=s.get("hostname", alias), user=s.get("user", ""), port=port,
        proxyjump=None if not jump or jump == "none" else jump,
    )


def inventory(config: Path | None = None) -> list[SSHHost]:
    """Every alias of the config, resolved."""
    return [resolve(alias, config) for alias in aliases(config)]


def _read(path: Path, found: list[str], stack: list[Path], offered: bool) -> None:
    real = path.resolve()
    if real in stack:
        raise BalancedError(
            f"The SSH config {path} includes itself (through {' -> '.join(map(str, stack))}).",
            hint="Remove the Include that loops.",
        )
    if len(stack) >= MAX_INCLUDE_DEPTH:
        raise BalancedError(f"SSH config Includes nest deeper than {MAX_INCLUDE_DEPTH} at {path}.")
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        if not stack:
            raise BalancedError(
                f"Cannot read the SSH config {path}: {exc.strerror}.",
                hint="Set GIT_BALANCED_SSH_CONFIG to a readable SSH config, or create ~/.ssh/config.",
            ) from exc
        return  # ssh, too, skips an included file it cannot read
    # An Include inside a Host or Match block applies only where that block matches, so a `Host x` in
    # the included file is not a host of its own: ssh reaches it only for names matching both.
    unconditional = True
    for line in text.splitlines():
        m = _KEYWORD.match(line)
        if not m:
            continue
        keyword, args = m.group(1).lower(), _split(m.group(2))
        if keyword == "host":
            unconditional = args == ["*"]
            for pattern in args:
                if offered and _is_alias(pattern) and pattern not in found:
                    found.append(pattern)
        elif keyword == "match":
            unconditional = [a.lower() for a in args] == ["all"]
        elif keyword == "include":
            for target in args:
                for included in _expand(target):
                    _read(included, found, [*stack, real], offered and unconditional)


def _split(value: str) -> list[str]:
    try:
        return shlex.split(value, comments=True)
    except ValueError:
        return value.split()


def _is_alias(pattern: str) -> bool:
    if any(c in pattern for c in "*?") or pattern.startswith("!"):
        return False
    try:
        SshHost.of(pattern)
    except BalancedError:
        return False  # a name ssh would take as an option is never offered as a machine
    return True


def _expand(target: str) -> list[Path]:
    # As ssh reads a -F file as a user config: `~` is the home, a relative path is under ~/.ssh.
    target = os.path.expanduser(target)
    if not os.path.isabs(target):
        target = str(Path.home() / ".ssh" / target)
    return [Path(p) for p in sorted(glob.glob(target))]
