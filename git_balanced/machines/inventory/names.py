"""The one check of what ssh is given as a host, made where a host comes in (machines add, tick, the machines
file, an SSH config alias) and trusted from then on: a value of type SshHost was checked.

A machine's own name is a MachineName (models.py): a narrower rule, so a MachineName is an SshHost as it is.
"""

from __future__ import annotations

from typing import Any

from git_balanced.errors import BalancedError
from git_balanced.models import MachineName

_HINT = "Use the alias from a `Host` line of your SSH config."


class SshHost(str):
    """A host as ssh is given it: an alias of the SSH config, a host name, or user@host. Never one ssh would
    read as an option (`-oProxyCommand=...`: refused as git and dulwich refuse it), nor one with blanks or
    control characters."""

    @classmethod
    def of(cls, value: Any, *, what: str = "the machine name", where: str = "", hint: str = _HINT) -> SshHost:
        """`value` as an SshHost, or a BalancedError saying why not ("Refusing `what` 'value'`where`: ...", with
        `hint`); a checked value is taken as it is."""
        if isinstance(value, SshHost):
            return value
        if isinstance(value, MachineName):
            return cls(value)
        if not isinstance(value, str) or not value:
            raise BalancedError("An empty machine name was given.", hint="Name a host from your SSH config.")
        if value.startswith("-"):
            raise BalancedError(f"Refusing {what} {value!r}{where}: it starts with '-'.", hint=hint)
        if any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in value):
            raise BalancedError(f"Refusing {what} {value!r}{where}: it holds whitespace or control characters.",
                                hint=hint)
        return cls(value)
