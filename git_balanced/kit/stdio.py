"""`git balanced mcp` over stdin and stdout, started light: what an agent asks at each start of the server (its
`initialize`, then `tools/list`) is answered from what the MCP server (kit/server.py) said to the same question
before, kept in a file (kit/said.py); the SDK, its protocol types and our tools are imported only at the first
other request (a tool call), and that server is then handed the handshake again and serves the rest of the wire.

An agent CLI starts the server on each of its turns, and most of its start-up was the SDK's import (about 2 CPU
seconds here), whether or not the turn called a tool. Nothing here imports more than the standard library.
The lists of resources and prompts a client may ask at its start (none) are answered the same way (said.ASKED).
"""

from __future__ import annotations

import io
import json
import os

from git_balanced.kit import said as said_mod

TYPE_CHECKING = False  # typing itself is not imported for this: the start-up is what this module is for
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from git_balanced.kit.verbs import Verb


def serve(which: str, verbs: Callable[[], tuple[Verb, ...]]) -> int:
    """Serve the tools of `verbs` (called only when a client asks more than the handshake and the list), the
    lead's (`which` "lead") or the chief's ("chief"), over stdin and stdout until the client goes away."""
    wire: io.BufferedReader = io.BufferedReader(os.fdopen(os.dup(0), "rb", buffering=0))
    sink = os.fdopen(os.dup(1), "wb")
    # The server's children read nothing of the wire and write nothing on it, as the SDK arranges for its own.
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    kept = said_mod.load(which)
    first: list[bytes] = []
    if kept is not None:
        handed = answer_light(wire, sink, kept)
        if handed is None:
            return 0  # the client went away having asked nothing else
        first = handed
    from git_balanced.kit import server

    return server.serve_wire(verbs(), wire, sink, first, record=which, kept=kept)


def answer_light(wire: io.BufferedReader, sink: io.BufferedWriter, kept: said_mod.Said) -> list[bytes] | None:
    """Answer from `kept` what it holds the answer to, until the client asks anything else: then the lines to
    hand the SDK's server first (the handshake again, under said.REPLAYED, and that request), or None at the end of
    the wire."""
    hello: dict[str, Any] | None = None  # the client's `initialize`
    ready = False  # it said `notifications/initialized`
    while True:
        line = wire.readline()
        if not line:
            return None
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        if hello is not None and _initialized(message):
            ready = True
            continue
        result = _answer(message, hello, kept)
        if result is None:
            return _handover(hello, ready, line)
        if message["method"] == "initialize":
            hello = message
        _write(sink, {"jsonrpc": "2.0", "id": message["id"], "result": result})


def _initialized(message: Any) -> bool:
    """Whether `message` is the client's `notifications/initialized`, which is answered with nothing."""
    return isinstance(message, dict) and message.get("method") == "notifications/initialized" and "id" not in message


def _answer(message: Any, hello: dict[str, Any] | None, kept: said_mod.Said) -> dict[str, Any] | None:
    """The result to answer `message` with, or None to hand it over."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or "id" not in message:
        return None
    method, params = message.get("method"), message.get("params")
    if method == "ping" and not params:
        return {}
    if method not in said_mod.ASKED or (method == "initialize" and hello is not None):
        return None
    return kept.answer(message, hello)


def _handover(hello: dict[str, Any] | None, ready: bool, pending: bytes) -> list[bytes]:
    """The lines the SDK's server reads first: the client's handshake again (its answer dropped), then `pending`."""
    lines: list[bytes] = []
    if hello is not None:
        # Escaped as the client may have escaped it, so that `mend` finds a lone surrogate as it would have.
        lines.append(json.dumps({**hello, "id": said_mod.REPLAYED}).encode() + b"\n")
        if ready:
            lines.append(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    return [*lines, pending if pending.endswith(b"\n") else pending + b"\n"]


def _write(sink: io.BufferedWriter, message: dict[str, Any]) -> None:
    """Write one message on the wire, as the SDK writes one (compact, UTF-8)."""
    sink.write(json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass") + b"\n")
    sink.flush()

