"""`git balanced mcp`: the stdio MCP server with the lead's tools (or, with --chief, the chief's), or one call of
one tool."""

from __future__ import annotations

from typing import Any


def mcp_command(*, call: str | None = None, arguments: str = "", chief: bool = False) -> int:
    """Serve the lead's tools over stdio (an agent starts this; see `git balanced lead on`), or the chief's with
    `chief`; with `call`, make one tool call and print its result. Serving answers the handshake and the tool
    list before the MCP SDK is imported (kit/wire.py)."""
    if call is None:
        from git_balanced.kit import wire

        return wire.serve("chief" if chief else "lead", lambda lines, out: _run_sdk(chief, lines, out))
    from git_balanced.kit import server

    return server.call(call, arguments, _verbs(chief))


def _verbs(chief: bool) -> Any:
    from git_balanced.kit.verbs import VERBS

    if chief:
        from git_balanced.chief.verbs import CHIEF_VERBS

        return CHIEF_VERBS
    return VERBS


def _run_sdk(chief: bool, lines: Any, out: Any) -> None:
    """The SDK's server of the side's tools, fed the lines the wire did not answer itself."""
    from git_balanced.kit import server

    server.run_fed(_verbs(chief), lines, out)
