"""`git balanced mcp`: the stdio MCP server with the lead's tools."""

from __future__ import annotations


def mcp_command() -> int:
    """Serve the lead's tools over stdio (an agent starts this; see `git balanced lead on`)."""
    from git_balanced.kit.server import serve

    return serve()
