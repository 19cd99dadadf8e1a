"""Named crash points, so tests can kill a landing or the engine between any two of its steps.

`GIT_BALANCED_CRASH_AT=after-notes` makes the process die at once (as a SIGKILL would) when it reaches
that point. Unset, it costs one dictionary lookup.
"""

from __future__ import annotations

import os


def crashpoint(name: str) -> None:
    """Die here, without cleanup, when the environment asks for it."""
    if os.environ.get("GIT_BALANCED_CRASH_AT") == name:
        os._exit(137)
