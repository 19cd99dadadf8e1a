"""`git balanced mcp`: the stdio MCP server with the lead's tools, or one call of one tool."""

from __future__ import annotations


def mcp_command(*, call: str | None = None, arguments: str = "") -> int:
    """Serve the lead's tools over stdio (an agent starts this; see `git balanced lead on`); with `call`,
    make one tool call and print its result."""
    from git_balanced.kit import server

    if call is not None:
        return server.call(call, arguments)
    return server.serve()
