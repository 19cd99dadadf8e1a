"""`git balanced mcp`: the stdio MCP server with the lead's tools (or, with --chief, the chief's), or one call of
one tool."""

from __future__ import annotations

import json
import sys
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


def recording(side: str) -> dict[str, Any]:
    """The SDK's own answers for the side (`lead` or `chief`), asked in this process; the lists kept once, under
    `*`, when every version has the same."""
    from git_balanced.kit import server

    record = server.recorded(_verbs(side == "chief"))
    if len({json.dumps(lists, sort_keys=True) for lists in record["lists"].values()}) == 1:
        record["lists"] = {"*": next(iter(record["lists"].values()))}
    return record


def main() -> int:
    """Write kit/listed.json (run after changing a verb, its result or how the server makes its tools)."""
    from git_balanced.kit import wire

    listed: dict[str, Any] = {"key": wire.key(), "lead": recording("lead"), "chief": recording("chief")}
    wire.LISTED.write_text(json.dumps(listed, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")
    tools = [len(next(iter(listed[s]["lists"].values()))["tools/list"]["tools"]) for s in ("lead", "chief")]
    print(f"wrote git_balanced/kit/listed.json: {tools[0]} tools of the lead, {tools[1]} of the chief")
    return 0


if __name__ == "__main__":
    sys.exit(main())
