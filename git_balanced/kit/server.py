"""`git balanced mcp`: the lead's tools over stdio, on the official MCP SDK. The only module that imports it,
so no other command pays for its import; kit/stdio.py starts the server and imports this module only when a
client asks more than the handshake and the list of tools (a tool call).

Each tool is a verb of kit/verbs.py: its name, title, hints and JSON schema come from the verb's declaration,
and it has a structured result (a JSON object). A tool that refuses says exactly what the command would:
`error: MESSAGE` and `hint: HINT`. There is no ship tool: nothing is pushed unless the person says so.
"""

from __future__ import annotations

import functools
import inspect
import io
import json
import re
import sys
from collections.abc import Callable
from typing import Annotated, Any, get_type_hints

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field, TypeAdapter, ValidationError

from git_balanced import __version__
from git_balanced.errors import BalancedError, disk_full
from git_balanced.kit import said, tools
from git_balanced.kit.results import RESULTS
from git_balanced.kit.spoken import for_tools
from git_balanced.kit.tools import Piece
from git_balanced.kit.verbs import VERBS, Arg, Verb
from git_balanced.models import COMMAND_MOST, NAME_MOST, TEXT_MOST, shown, text_problem

NAME = "balanced"
INSTRUCTIONS = (
    "The tools of a git balanced lead: split a task into pieces (plan), start workers, read the board and "
    "the inbox, answer workers, land their branches, and put the work to the person (put_to_you). Nothing "
    "is ever pushed by these tools; shipping is the person's call.")

def refusal(exc: BalancedError) -> str:
    """A BalancedError in the CLI's words, `error: MESSAGE` then `hint: HINT`, with each command a tool does
    named as that tool (`git balanced board` is `board` here)."""
    return for_tools(f"error: {exc.message}" + (f"\nhint: {exc.hint}" if exc.hint else ""))


# A mark the wire puts where the SDK's JSON reader would have refused the whole call unanswered (a lone
# surrogate, nesting past its limit): a noncharacter, never in real text, so the tool can refuse in words.
MARK = "\ufdd0"
WIRE_DEPTH_MOST = 64  # levels of JSON in one message; the SDK's reader gives up near 255
LIST_MOST = 1000  # items of a list argument
# How long each argument may be; a command goes to `sh -c` as one argument, a path names a file.
_MOST = {"run": (COMMAND_MOST, "bytes"), "attachments": (4096, "bytes"), "id": (NAME_MOST, "characters"),
         "machine": (NAME_MOST, "characters"), "agent": (NAME_MOST, "characters"),
         "model": (NAME_MOST, "characters"), "plan": (NAME_MOST, "characters"), "job": (NAME_MOST, "characters"),
         "name": (NAME_MOST, "characters"), "names": (NAME_MOST, "characters"),
         "paths": (NAME_MOST * 5, "characters"), "after": (NAME_MOST, "characters")}


def unfit(name: str, value: Any) -> str | None:
    """Why an argument (by its name) cannot be taken, in words naming it, or None: a marked lone surrogate
    or nesting, text with a NUL or control characters, text or a list longer than its bound."""
    if isinstance(value, tools.Piece):
        value = value.model_dump(exclude_none=True)
    if isinstance(value, dict):
        return next((w for k, v in value.items() if (w := unfit(f"{name}.{k}", v))), None)
    if isinstance(value, list | tuple):
        if len(value) > LIST_MOST:
            return f"`{name}` lists {len(value):,} items, more than {LIST_MOST:,}"
        return next((w for i, v in enumerate(value) if (w := unfit(f"{name}[{i}]", v))), None)
    if not isinstance(value, str):
        return None
    if MARK in value:
        at = value.index(MARK) + 1
        said = "is nested too deeply" if value[at:].startswith("nested") else \
            f"holds a lone surrogate ({value[at:at + 6]}), which is not a character"
        return f"`{name}` {said}"
    key = re.sub(r"\[\d+\]|^.*\.", "", name)
    most, unit = _MOST.get(key, (TEXT_MOST, "characters"))
    words = key in ("run", "task", "text", "reason", "summary")  # shown plain wherever they are shown
    wrong = text_problem(value, most=most, unit=unit, controls=words, lines=words)
    return f"`{name}` is {shown(value, 60)}: {wrong}" if wrong else None


def _said(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The tool, its arguments checked first, with a BalancedError turned into a tool error in the CLI's
    words (an error's text is made safe to write: the reply must reach the client)."""

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        wrong = next((w for k, v in kwargs.items() if (w := unfit(k, v))), None)
        if wrong:
            raise ToolError(f"error: the argument {wrong}.\nhint: call {fn.__name__.rstrip('_')} again "
                            "without it; docs/safety/inputs.md lists what each argument takes")
        try:
            return fn(*args, **kwargs)
        except (BalancedError, OSError) as exc:
            said = disk_full(exc) or exc  # a full disk reads as it does on the command line
            if not isinstance(said, BalancedError):
                raise
            raise ToolError(refusal(said).encode("utf-8", "backslashreplace").decode("utf-8")) from None

    return call


_NAMED: dict[str, Any] = {"list[Piece]": list[Piece]}  # the types kit/verbs.py names, as it imports no pydantic


def _schema_type(arg: Arg) -> Any:
    """The argument's type with its words and bounds, as the SDK reads a parameter to make the tool's schema."""
    kind = _NAMED[arg.kind] if isinstance(arg.kind, str) else arg.kind
    bounds: dict[str, Any] = {}
    if arg.above is not None:
        bounds["gt"] = arg.above
    if arg.least is not None:
        bounds["min_length"] = arg.least
    return Annotated[kind, Field(description=clean(arg.help), **bounds)]


def clean(text: str) -> str:
    """Words as a client shows them: a docstring's indentation and blank edges taken off."""
    return inspect.cleandoc(text)


def result_type(verb: Verb) -> Any:
    """The type of what the verb returns (kit/results.py), from which the SDK makes the tool's output schema
    and against which it checks each result; a verb that names none returns what its function is annotated
    with."""
    if verb.returns:
        return RESULTS[verb.returns]
    does = getattr(tools, verb.does) if isinstance(verb.does, str) else verb.does
    return get_type_hints(does).get("return", dict[str, Any])


def tool_of(verb: Verb) -> Callable[..., Any]:
    """The verb as a function the SDK can offer: a signature made of its declared arguments (the tool's input
    schema) and its result's type (the output schema), each argument handed to the function of kit/tools.py
    under the keyword it takes."""
    does = getattr(tools, verb.does) if isinstance(verb.does, str) else verb.does
    returns = TypeAdapter(result_type(verb))

    def call(**given: Any) -> Any:
        out = does(**{a.keyword: given[a.name] for a in verb.args if a.name in given})
        try:
            returns.validate_python(out)
        except ValidationError as exc:
            wrong = "; ".join(f"`{'.'.join(map(str, e['loc'])) or 'it'}` {e['msg'].lower()}" for e in exc.errors())
            raise ToolError(f"error: the {verb.name} tool made a result its output schema does not describe: "
                            f"{wrong}.\nhint: this is a bug of git balanced; report it with these words.") from None
        return out

    call.__name__ = call.__qualname__ = verb.name
    call.__doc__ = clean(verb.doc)
    params = [inspect.Parameter(a.name, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=_schema_type(a),
                                default=inspect.Parameter.empty if a.required else a.default) for a in verb.args]
    call.__signature__ = inspect.Signature(params, return_annotation=result_type(verb))  # type: ignore[attr-defined]
    return call


def hints(verb: Verb) -> ToolAnnotations:
    """What calling the verb risks, as MCP tells a client: all four hints said, as a client assumes the worst
    (destructive, open world) of one left out."""
    return ToolAnnotations(title=verb.title, read_only_hint=verb.read_only, destructive_hint=verb.destructive,
                           idempotent_hint=verb.idempotent, open_world_hint=verb.open_world)


CHIEF_INSTRUCTIONS = (
    "The tools of the chief, over every project's lead: read the projects, start a lead, tell a lead a line, "
    "answer or pass on what a lead passed on to you, note a row of Now. None allows, lands, ships or starts a worker.")


def build(verbs: tuple[Verb, ...] = VERBS) -> MCPServer:
    """The server with a tool for every verb given: the lead's (kit/verbs.py), or the chief's."""
    said = INSTRUCTIONS if verbs is VERBS else CHIEF_INSTRUCTIONS
    server: MCPServer = MCPServer(NAME, instructions=said, version=__version__, log_level="WARNING")
    for v in verbs:
        server.add_tool(_said(tool_of(v)), name=v.name, title=v.title, description=clean(v.doc), annotations=hints(v),
                        structured_output=True)
    return server


def serve_wire(verbs: tuple[Verb, ...], wire: io.BufferedReader, sink: io.BufferedWriter, first: list[bytes],
               record: str | None = None, kept: said.Said | None = None, built: MCPServer | None = None) -> int:
    """Serve the verbs' tools on the wire (kit/stdio.py holds its ends, and has pointed stdin and stdout away from
    it) until the client goes away: `first` is read before the wire (the handshake kit/stdio.py answered, handed
    on again: its answer is not sent twice). With `record` ("lead" or "chief"), what the server answers to the
    client's handshake and `tools/list`, and `kept` does not hold, is kept under that name (kit/said.py) for the
    next start. `built` is the server of these verbs, made already (kit/stdio.py makes it while the client reads
    the list of tools)."""
    import anyio
    from mcp.server.stdio import stdio_server

    heard = _Heard(record, kept) if record else None
    server = built or build(verbs)
    reader = io.TextIOWrapper(io.BufferedReader(_Mended(wire, first, heard)), encoding="utf-8", errors="replace")
    writer = io.TextIOWrapper(io.BufferedWriter(_Answers(sink, heard)), encoding="utf-8")

    async def run() -> None:  # what MCPServer.run_stdio_async does, on these ends of the wire
        async with stdio_server(anyio.wrap_file(reader), anyio.wrap_file(writer)) as (read, write):
            low = server._lowlevel_server
            await low.run(read, write, low.create_initialization_options())

    anyio.run(run)
    return 0


def _id(message: Any) -> str | None:
    """A JSON-RPC message's id as text (ids are numbers or strings), or None."""
    return json.dumps(message["id"]) if isinstance(message, dict) and "id" in message else None


class _Heard:
    """What the server is asked and answers: each answer to a question of said.ASKED not kept yet is kept."""

    def __init__(self, which: str, kept: said.Said | None) -> None:
        self.which, self.kept = which, kept or said.Said({})
        self.hello: dict[str, Any] | None = None  # the client's initialize
        self.asked: dict[str, str] = {}  # the id of each question heard and not answered yet -> the question

    def asked_line(self, line: bytes) -> None:
        if not any(m.encode() in line for m in said.ASKED):
            return
        message = _json(line)
        if (asked := _id(message)) is None or message.get("method") not in said.ASKED:
            return
        question = said.question(message, self.hello)
        if message["method"] == "initialize":
            self.hello = self.hello or message
        if question not in self.kept.answers:
            self.asked[asked] = question

    def answered_line(self, line: bytes) -> None:
        if not self.asked:
            return
        message = _json(line)
        question = self.asked.pop(_id(message) or "", None)
        if question is not None and isinstance(message.get("result"), dict):
            self.kept.answers[question] = message["result"]
            said.store(self.which, said.Said({question: message["result"]}))


class _Answers(io.RawIOBase):
    """The wire's writing end, a line at a time: the answer to the handshake handed on again is dropped (the
    client had it), and each other line written on, and heard."""

    def __init__(self, sink: io.BufferedWriter, heard: _Heard | None) -> None:
        super().__init__()
        self._sink, self._heard, self._part = sink, heard, b""

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        self._part += bytes(data)
        while b"\n" in self._part:
            line, self._part = self._part.split(b"\n", 1)
            if said.REPLAYED.encode() in line and _id(_json(line)) == json.dumps(said.REPLAYED):
                continue
            self._sink.write(line + b"\n")
            self._sink.flush()
            if self._heard:
                self._heard.answered_line(line)
        return len(data)


def _json(line: bytes) -> Any:
    try:
        return json.loads(line)
    except ValueError:
        return None


class _Mended(io.RawIOBase):
    """The wire, a line at a time after the lines `first`, each mended by `mend` before the SDK reads it."""

    def __init__(self, wire: io.BufferedReader, first: list[bytes], heard: _Heard | None) -> None:
        super().__init__()
        self._wire, self._first, self._heard, self._left = wire, list(first), heard, b""

    def readable(self) -> bool:
        return True

    def readinto(self, into: Any) -> int:
        if not self._left:
            line = self._first.pop(0) if self._first else self._wire.readline()
            if self._heard:
                self._heard.asked_line(line)
            self._left = mend(line)
        n = min(len(into), len(self._left))
        into[:n], self._left = self._left[:n], self._left[n:]
        return n


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


def tool_specs(verbs: tuple[Verb, ...] = VERBS) -> list[dict[str, Any]]:
    """Each tool's name, description and input schema, as the server lists them (for Pi's extension)."""
    import asyncio

    tools_listed = asyncio.run(build(verbs).list_tools())
    return [{"name": t.name, "description": t.description or "", "parameters": t.input_schema}
            for t in tools_listed]


def call(name: str, arguments: str, verbs: tuple[Verb, ...] = VERBS) -> int:
    """One tool call through the server, in this process: its structured result as JSON on stdout, or its
    refusal on stderr and exit 1 (how Pi, which has no MCP, calls the same tools)."""
    import asyncio

    from mcp import Client

    from git_balanced.errors import UsageError
    from git_balanced.ui import plain

    wrong = text_problem(name, most=NAME_MOST, lines=False)
    if wrong:
        raise UsageError(f"--call {shown(name, 60)} names no tool: {wrong}.", hint="git balanced mcp --call board")
    try:
        args = json.loads(mend(arguments.encode("utf-8", "surrogatepass"))) if arguments.strip() else {}
    except (ValueError, RecursionError) as exc:
        said = "nested too deeply" if isinstance(exc, RecursionError) else f"not JSON: {exc}"
        raise UsageError(f"The arguments of {name} are {said}.",
                         hint=f"git balanced mcp --call {name} '{{\"key\": \"value\"}}'") from None
    if not isinstance(args, dict):
        raise UsageError(f"The arguments of {name} must be a JSON object.", hint="{} when it takes none.")

    async def one() -> Any:
        async with Client(build(verbs)) as client:
            return await client.call_tool(name, args)

    result = asyncio.run(one())
    if result.is_error:
        text = "\n".join(getattr(c, "text", "") for c in result.content)
        sys.stderr.write(plain(text.removeprefix(f"Error executing tool {name}: ")) + "\n")
        return 1
    sys.stdout.write(json.dumps(result.structured_content, ensure_ascii=False, default=str) + "\n")
    return 0
