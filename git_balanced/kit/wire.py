"""`git balanced mcp`'s wire: the first answers of a session in the standard library alone, the rest by the SDK.

An agent waits for its MCP server's answers to `initialize` and `tools/list` before it offers the model the
tools (Claude Code's `-p` 5 s at most unless told longer), and importing the MCP SDK takes most of a second
on an idle machine, many on a loaded one. So the server answers those at once from `listed.json` beside this
module: what the SDK's own server answered to each handshake version and each list request, recorded by
`python -m git_balanced.commands.mcp` and checked against the SDK by tests/test_mcp_start.py. The SDK starts
in a thread once the first line came; every other message goes to it, and the `initialize` it was handed too,
its answer dropped, so its session is the client's. A record older than the sources it was made from is not
used: then the SDK answers everything, as before.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import queue
import re
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

LISTED = Path(__file__).with_name("listed.json")
PACKAGE = Path(__file__).resolve().parents[1]
# What the answers are made from: the verbs, their results and functions, how the server turns them into tools.
SOURCES = ("kit/verbs.py", "kit/results.py", "kit/tools.py", "kit/server.py", "kit/spoken.py", "chief/verbs.py",
           "models.py", "__init__.py")
HANDSHAKES = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")  # versions the SDK agrees to as asked
LISTS = ("tools/list", "prompts/list", "resources/list", "resources/templates/list")

# A mark the wire puts where the SDK's JSON reader would have refused the whole call unanswered (a lone
# surrogate, nesting past its limit): a noncharacter, never in real text, so the tool can refuse in words.
MARK = "\ufdd0"
WIRE_DEPTH_MOST = 64  # levels of JSON in one message; the SDK's reader gives up near 255


def key() -> str:
    """What the record must have been made from: the SDK's and pydantic's versions and the sources' bytes."""
    h = hashlib.sha256(sdk_versions().encode())
    for name in SOURCES:
        h.update(name.encode() + b"\0" + (PACKAGE / name).read_bytes())
    return h.hexdigest()


def sdk_versions() -> str:
    """The installed versions of the MCP SDK and of pydantic, which make its schemas, from the names of their
    dist-info folders (importlib.metadata takes longer to import than the answers take to give)."""
    import importlib.util

    spec = importlib.util.find_spec("mcp")
    where = Path(spec.origin).parents[1] if spec and spec.origin else None
    if where is None:
        return "no SDK"
    return " ".join(sorted(p.name for glob in ("mcp-*", "mcp_types-*", "pydantic-*", "pydantic_core-*")
                           for p in where.glob(glob + ".dist-info")))


def record_for(side: str) -> dict[str, Any] | None:
    """The recorded answers of the lead's (`lead`) or the chief's (`chief`) server, or None when there is no
    record or it was made from other sources."""
    try:
        listed = json.loads(LISTED.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if listed.get("key") != key():
        return None
    return listed.get(side)


def answer(message: Any, record: dict[str, Any], version: str | None) -> dict[str, Any] | None:
    """The recorded answer to a request, or None when the SDK must answer it; `version` is the protocol
    version this side agreed to (None before the handshake, or when the SDK made it)."""
    if not isinstance(message, dict) or "id" not in message or message.get("jsonrpc") != "2.0":
        return None
    method, params = message.get("method"), message.get("params") or {}
    if not isinstance(params, dict):
        return None
    if method == "initialize" and version is None:
        result = record["initialize"].get(params.get("protocolVersion"))
    elif method in LISTS and set(params) <= {"_meta"} and version is not None:
        lists = record["lists"]
        result = (lists.get(version) or lists.get("*") or {}).get(method)
    else:
        return None
    return None if result is None else {"jsonrpc": "2.0", "id": message["id"], "result": result}


class Out(io.RawIOBase):
    """The wire out, a whole line at a time under a lock, shared by this module's answers and the SDK's; the
    SDK's answer to an `initialize` already answered here is dropped."""

    def __init__(self, sink: Callable[[bytes], None]) -> None:
        super().__init__()
        self._sink, self._lock, self._part, self.drop = sink, threading.Lock(), b"", set[Any]()
        self.shaken = threading.Event()  # the SDK answered the handshake it was handed

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        data = bytes(data)
        self._part += data
        *lines, self._part = self._part.split(b"\n")
        for line in lines:
            if self.drop and self._dropped(line):
                continue
            self.send(line + b"\n")
        return len(data)

    def _dropped(self, line: bytes) -> bool:
        try:
            said = json.loads(line)
        except ValueError:
            return False
        if isinstance(said, dict) and "method" not in said and said.get("id") in self.drop:
            self.drop.discard(said["id"])
            self.shaken.set()
            return True
        return False

    def send(self, line: bytes) -> None:
        with self._lock:
            self._sink(line)


def to_fd(fd: int) -> Callable[[bytes], None]:
    """A sink writing every byte it is given to the descriptor."""
    def sink(line: bytes) -> None:
        view = memoryview(line)
        while view:
            view = view[os.write(fd, view):]
    return sink


class Fed(io.RawIOBase):
    """What the SDK reads: the lines handed to it, in order; None ends it. With `gate`, the lines after the
    first (the handshake answered here) wait until the SDK answered it too, as a client waits: the SDK takes
    a call that comes before its handshake is done for one of a session without any."""

    def __init__(self, lines: queue.Queue[bytes | None], gate: threading.Event | None = None) -> None:
        super().__init__()
        self._lines, self._left, self._gate, self._given = lines, b"", gate, 0

    def readable(self) -> bool:
        return True

    def readinto(self, into: Any) -> int:
        if not self._left:
            if self._given and self._gate is not None:
                self._gate.wait()
            self._left = self._lines.get() or b""
            self._given += 1
        n = min(len(into), len(self._left))
        into[:n], self._left = self._left[:n], self._left[n:]
        return n


def serve(side: str, run_sdk: Callable[[Fed, Out], None]) -> int:
    """Serve over stdin and stdout until the client goes away: the recorded answers here, the rest by
    `run_sdk(lines_in, wire_out)` (the SDK's server), started in a thread when the first line came."""
    wire = io.BufferedReader(os.fdopen(os.dup(0), "rb", buffering=0))
    out = Out(to_fd(os.dup(1)))
    # The server's children read nothing of the wire and write nothing on it, as the SDK arranges for its own.
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    record, version = record_for(side), None
    lines: queue.Queue[bytes | None] = queue.Queue()
    sdk: threading.Thread | None = None
    asked = False
    for line in iter(wire.readline, b""):
        line = mend(line)
        said = _answered(line, record, version)
        if said is not None:
            out.send(json.dumps(said, ensure_ascii=False).encode() + b"\n")
            if "protocolVersion" not in said["result"]:
                continue  # a list: the SDK need not hear of it
            version = said["result"]["protocolVersion"]
            out.drop.add(said["id"])  # the handshake: the SDK's session must have it too
        else:
            if record is not None and version is None and b'"initialize"' in line:
                record = None  # a handshake the record has no answer to: the SDK answers everything
            asked = asked or b'"id"' in line  # a request the SDK owes an answer to (not a notification)
        lines.put(line)
        if sdk is None:
            gate = out.shaken if out.drop else None
            sdk = threading.Thread(target=_running, args=(run_sdk, Fed(lines, gate), out), daemon=True)
            sdk.start()
    lines.put(None)
    if sdk is not None and asked:
        sdk.join()  # its answers are owed
    return 0


def _answered(line: bytes, record: dict[str, Any] | None, version: str | None) -> dict[str, Any] | None:
    if record is None or not line.lstrip().startswith(b"{"):
        return None
    try:
        return answer(json.loads(line), record, version)
    except ValueError:
        return None


def _running(run_sdk: Callable[[Fed, Out], None], lines: Fed, out: Out) -> None:
    """The SDK's server to its end; if it cannot run, the whole server ends, so the client is not left waiting."""
    try:
        run_sdk(lines, out)
    except BaseException:  # noqa: BLE001 - anything that stops the SDK stops the server
        import traceback

        traceback.print_exc()
        sys.stderr.flush()
        os._exit(1)


_JSON_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]')
_LONE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def mend(line: bytes) -> bytes:
    """One line of JSON-RPC as the SDK can read it. Its reader refuses a lone surrogate (`\\ud800`) and
    nesting past about 255 levels, and then never answers the call: a value nested past WIRE_DEPTH_MOST
    becomes the text `MARK nested`, and a lone surrogate `MARK \\ud800`, which the tools refuse in words."""
    if line.count(b"[") + line.count(b"{") > WIRE_DEPTH_MOST:
        cuts, depth, start = [], 0, 0
        for token in _JSON_TOKENS.finditer(line):
            t = token.group()
            if t in (b"[", b"{"):
                depth += 1
                if depth == WIRE_DEPTH_MOST + 1:
                    start = token.start()
            elif t in (b"]", b"}"):
                depth -= 1
                if depth == WIRE_DEPTH_MOST:
                    cuts.append((start, token.end()))
        for a, b in reversed(cuts):
            line = line[:a] + json.dumps(MARK + "nested").encode() + line[b:]
    if not _LONE.search(line):
        return line
    try:
        message = json.loads(line)
    except ValueError:
        return line  # not JSON at all: the SDK says so
    return json.dumps(_marked(message), ensure_ascii=False).encode("utf-8", "surrogatepass") + b"\n"


def _marked(value: Any) -> Any:
    """`value` with each lone surrogate written out after MARK."""
    if isinstance(value, str):
        return re.sub("[\ud800-\udfff]", lambda m: f"{MARK}\\u{ord(m.group()):04x}", value)
    if isinstance(value, list):
        return [_marked(v) for v in value]
    if isinstance(value, dict):
        return {_marked(k): _marked(v) for k, v in value.items()}
    return value
