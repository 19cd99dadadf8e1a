"""`git balanced mcp` over stdin and stdout, started light: what an agent asks at each start of the server (its
`initialize`, then `tools/list`) is answered from what the MCP server (kit/server.py) said to the same question
before, kept in a file (kit/said.py); the SDK, its protocol types and our tools are imported only after the
answer to `tools/list` is written (in a thread of their own, while the client reads the list: an agent calls a
tool next), or at the first other request, which waits for that import; that server is then handed the
handshake again and serves the rest of the wire.

An agent CLI starts the server on each of its turns, and most of its start-up was the SDK's import (about 2 CPU
seconds here), whether or not the turn called a tool. Nothing here imports more than the standard library.
The lists of resources and prompts a client may ask at its start (none) are answered the same way (said.ASKED).
"""

from __future__ import annotations

import _thread
import io
import json
import os
import sys

from git_balanced.kit import said as said_mod

TYPE_CHECKING = False  # typing itself is not imported for this: the start-up is what this module is for
if TYPE_CHECKING:
    from collections.abc import Callable
    from types import ModuleType
    from typing import Any

    from mcp.server.mcpserver import MCPServer

    from git_balanced.kit.verbs import Verb

# How long the thread importing the SDK holds the interpreter before the wire's thread may answer (the default is
# 5 ms): while it imports, a request the start answers from what was kept waits for at most this much.
PRELOAD_SWITCH = 0.001
LOAD_FAILED = -32603  # JSON-RPC's "internal error": the answer to each request when the SDK's server cannot load


def serve(which: str, verbs: Callable[[], tuple[Verb, ...]], *, preload: bool = True) -> int:
    """Serve the tools of `verbs` (called only once the list is answered, or when a client asks more than the
    handshake and the list), the lead's (`which` "lead") or the chief's ("chief"), over stdin and stdout until
    the client goes away. With `preload` (the default), what serving a tool call takes is loaded once the list
    of tools is answered."""
    wire: io.BufferedReader = io.BufferedReader(os.fdopen(os.dup(0), "rb", buffering=0))
    sink = os.fdopen(os.dup(1), "wb")
    # The server's children read nothing of the wire and write nothing on it, as the SDK arranges for its own.
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    kept = said_mod.load(which)
    first: list[bytes] = []
    load = Load(verbs)
    if kept is not None:
        handed = answer_light(wire, sink, kept, load.start if preload else None)
        if handed is None:
            load.leave()
            return 0  # the client went away having asked nothing else
        first = handed
    loaded = load.wait()
    if isinstance(loaded, BaseException):
        return refuse_all(wire, sink, first, loaded)
    server, built, tools = loaded
    return int(server.serve_wire(tools, wire, sink, first, record=which, kept=kept, built=built))


class Load:
    """What serving a tool call takes (the SDK's server, its tools made), loaded once: in a thread of its own
    (`start`), or where it is first needed (`wait`, which waits for that thread when it runs)."""

    def __init__(self, verbs: Callable[[], tuple[Verb, ...]]) -> None:
        self.verbs = verbs
        self.done = _thread.allocate_lock()  # held while the thread loads
        self.started = False
        self.got: tuple[ModuleType, MCPServer, tuple[Verb, ...]] | BaseException | None = None

    def start(self) -> None:
        """Load in a thread of its own, the interpreter handed back to the wire's thread within PRELOAD_SWITCH."""
        if self.started:
            return
        self.started = True
        self.done.acquire()
        was = sys.getswitchinterval()
        sys.setswitchinterval(PRELOAD_SWITCH)
        _thread.start_new_thread(self._run, (was,))

    def _run(self, was: float) -> None:
        try:
            self._load()
        except BaseException as exc:  # noqa: BLE001 — an import's SystemExit, say: the thread ends, the client hears
            self.got = exc
        finally:
            sys.setswitchinterval(was)
            self.done.release()

    def _load(self) -> None:
        try:
            import anyio
            from mcp.server.stdio import stdio_server  # noqa: F401  what serve_wire runs the server with

            from git_balanced.kit import server

            tools = self.verbs()
            self.got = (server, server.build(tools), tools)
            anyio.run(_nothing)  # what its event loop loads at its first run, loaded here
        except Exception as exc:  # noqa: BLE001 — said to the client as the answer to its request
            self.got = exc

    def wait(self) -> tuple[ModuleType, MCPServer, tuple[Verb, ...]] | BaseException:
        """What was loaded (loading it here if no thread did), or why it could not be."""
        if self.started:
            with self.done:
                pass
        else:
            self._load()
        assert self.got is not None
        return self.got

    def leave(self) -> None:
        """The client went away: end the process now if the thread still loads (an import cannot be stopped, and
        the process would wait for it, or spend its exit handing the interpreter to it)."""
        if self.started and self.done.locked():
            for out in (sys.stdout, sys.stderr):
                out.flush()
            os._exit(0)


async def _nothing() -> None:
    """Nothing, run once to load what running the server's event loop loads."""


def refuse_all(wire: io.BufferedReader, sink: io.BufferedWriter, first: list[bytes], why: BaseException) -> int:
    """Answer each request, from the first lines handed on then the wire's, with the error `why` the SDK's server
    could not load for, said once on stderr too, until the client goes away; exit 1."""
    at = why.__traceback__
    while at is not None and at.tb_next is not None:
        at = at.tb_next
    where = f" (at {at.tb_frame.f_code.co_filename}:{at.tb_lineno})" if at is not None else ""
    words = (f"error: git balanced could not load its MCP server: {type(why).__name__}: {why}{where}.\n"
             "hint: reinstall git balanced (pip install --force-reinstall git-balanced), then start the server "
             "again; if that does not mend it, report these words")
    sys.stderr.write(words + "\n")
    sys.stderr.flush()
    lines = iter(first)
    while True:
        line = next(lines, None) or wire.readline()
        if not line:
            return 1
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if isinstance(message, dict) and "id" in message and message.get("id") != said_mod.REPLAYED:
            _write(sink, {"jsonrpc": "2.0", "id": message["id"], "error": {"code": LOAD_FAILED, "message": words}})


def answer_light(wire: io.BufferedReader, sink: io.BufferedWriter, kept: said_mod.Said,
                 listed: Callable[[], None] | None = None) -> list[bytes] | None:
    """Answer from `kept` what it holds the answer to, until the client asks anything else: then the lines to
    hand the SDK's server first (the handshake again, under said.REPLAYED, and that request), or None at the end of
    the wire. `listed` is called once each answer to `tools/list` is written."""
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
        if listed is not None and message["method"] == "tools/list":
            listed()


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

