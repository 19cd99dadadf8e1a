"""`git balanced mcp`: the stdio MCP server with the lead's tools (or, with --chief, the chief's), or one call of
one tool."""

from __future__ import annotations

TYPE_CHECKING = False  # typing itself is not imported for this: kit/stdio.py starts light
if TYPE_CHECKING:
    from git_balanced.kit.verbs import Verb


def mcp_command(*, call: str | None = None, arguments: str = "", chief: bool = False) -> int:
    """Serve the lead's tools over stdio (an agent starts this; see `git balanced lead on`), or the chief's with
    `chief`; with `call`, make one tool call and print its result."""
    if call is not None:
        from git_balanced.kit import server

        return server.call(call, arguments, _verbs(chief))
    from git_balanced.kit import stdio

    return stdio.serve("chief" if chief else "lead", lambda: _verbs(chief))


def _verbs(chief: bool) -> tuple[Verb, ...]:
    """The lead's verbs, or the chief's."""
    if chief:
        from git_balanced.chief.verbs import CHIEF_VERBS

        return CHIEF_VERBS
    from git_balanced.kit.verbs import VERBS

    return VERBS
