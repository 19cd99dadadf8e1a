"""`git balanced mcp`: the stdio MCP server with the lead's tools (or, with --chief, the chief's), or one call of
one tool."""

from __future__ import annotations


def mcp_command(*, call: str | None = None, arguments: str = "", chief: bool = False) -> int:
    """Serve the lead's tools over stdio (an agent starts this; see `git balanced lead on`), or the chief's with
    `chief`; with `call`, make one tool call and print its result."""
    from git_balanced.kit import server
    from git_balanced.kit.verbs import VERBS

    verbs = VERBS
    if chief:
        from git_balanced.chief.verbs import CHIEF_VERBS

        verbs = CHIEF_VERBS
    if call is not None:
        return server.call(call, arguments, verbs)
    return server.serve(verbs)
