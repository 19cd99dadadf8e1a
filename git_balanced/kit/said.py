"""What the MCP server (kit/server.py) answered to the questions each start of it is asked, kept in a file so
that the next start answers them without the SDK: its handshake and its list of tools, each for the very
request it answered (the protocol version, the client's name and capabilities).

The file is `mcp-lead-KEY.json` (or `mcp-chief-KEY.json`) in the package's `kit/__pycache__/`, or where that
cannot be written in `$XDG_CACHE_HOME/git-balanced/mcp/` (`GIT_BALANCED_MCP_CACHE` names another folder). KEY
changes with anything the answers are made from: this Python, each module of the package (its path, size and
time), and the installed SDK and pydantic; a file of another key is removed when one is written. What is kept is
only ever sent back as it was received, never run.
"""

from __future__ import annotations

import binascii
import json
import os
import sys

TYPE_CHECKING = False  # typing itself is not imported for this: the start-up is what this module is for
if TYPE_CHECKING:
    from typing import Any

FOLDER_ENV = "GIT_BALANCED_MCP_CACHE"
PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# What the answers are also made from, outside the package: their modules' files (their times change on upgrade).
MADE_WITH = ("mcp", "mcp_types", "pydantic", "pydantic_core")


# The requests answered from what was kept: the handshake (`initialize`; `server/discover` in the protocol
# without one), the list of tools, and the lists a client may ask at its start (none of them grows: the server
# has no resources nor prompts, and says so).
ASKED = ("initialize", "server/discover", "tools/list", "resources/list", "resources/templates/list", "prompts/list")
# The id the client's `initialize` is handed to the SDK's server again under (kit/stdio.py); its answer is dropped.
REPLAYED = "balanced-replayed-initialize"


class Said:
    """The answers kept for one server: question(request, the client's initialize) -> the result."""

    __slots__ = ("answers",)

    def __init__(self, answers: dict[str, Any]) -> None:
        self.answers = answers

    def answer(self, request: dict[str, Any], hello: dict[str, Any] | None) -> dict[str, Any] | None:
        """The result to answer `request` with, if kept."""
        return self.answers.get(question(request, hello))


def question(request: dict[str, Any], hello: dict[str, Any] | None) -> str:
    """What a result of ASKED may depend on: the method and its parameters (the protocol version, the client's
    name and capabilities, in `initialize` or in each request's `_meta`), and the protocol version the client's
    `initialize` asked for."""
    said = (hello or {}).get("params")
    version = said.get("protocolVersion") if isinstance(said, dict) else None
    return json.dumps([request.get("method"), request.get("params"), version], sort_keys=True, ensure_ascii=False)


def key() -> str:
    """The key of the answers this installation gives (see the module's words): a checksum of what they are
    made from (binascii's, as hashlib's import would be a good part of the start-up)."""
    made: list[str] = []
    _modules(PACKAGE, made)
    made.sort()
    made[:0] = [sys.version, PACKAGE]
    for module in MADE_WITH:
        found = next((os.path.join(p, module, "__init__.py") for p in sys.path
                      if os.path.isfile(os.path.join(p or ".", module, "__init__.py"))), "")
        size, time = (os.stat(found).st_size, os.stat(found).st_mtime_ns) if found else (0, 0)
        made.append(f"{module} {found} {size} {time}")
    text = "\n".join(made).encode()
    return f"{binascii.crc32(text):08x}{binascii.crc32(text[::-1]):08x}{len(made):04x}"


def _modules(folder: str, made: list[str]) -> None:
    """Add each module under `folder` to `made`: its path, size and time."""
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.name.endswith(".py"):
                st = entry.stat()
                made.append(f"{entry.path} {st.st_size} {st.st_mtime_ns}")
            elif entry.name != "__pycache__" and entry.is_dir():
                _modules(entry.path, made)


def folders() -> list[str]:
    """Where the answers are kept, the first that can be written first."""
    named = os.environ.get(FOLDER_ENV)
    if named:
        return [named]
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return [os.path.join(PACKAGE, "kit", "__pycache__"), os.path.join(cache, "git-balanced", "mcp")]


def load(which: str) -> Said | None:
    """The answers kept for this installation's `which` server, or None (none kept, or a file not as written)."""
    name = f"mcp-{which}-{key()}.json"
    for folder in folders():
        try:
            with open(os.path.join(folder, name), encoding="utf-8") as fh:
                data = json.load(fh)
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and isinstance(data.get("answers"), dict):
            return Said(data["answers"])
    return None


def store(which: str, said: Said) -> str | None:
    """Keep `said` (with what is kept already under the same key) in the first folder that can be written; the
    file's path, or None where none can."""
    name = f"mcp-{which}-{key()}.json"
    kept = load(which)
    data = {"answers": {**(kept.answers if kept else {}), **said.answers}}
    for folder in folders():
        path = os.path.join(folder, name)
        part = f"{path}.{os.getpid()}.part"
        try:
            os.makedirs(folder, exist_ok=True)
            with open(part, "w", encoding="utf-8") as fh:
                json.dump(data, fh, ensure_ascii=False)
            os.replace(part, path)
        except OSError:
            _remove(part)
            continue
        for other in os.listdir(folder):
            if other.startswith(f"mcp-{which}-") and other != name and not other.endswith(".part"):
                _remove(os.path.join(folder, other))
        return path
    return None


def _remove(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass
