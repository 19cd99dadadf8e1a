"""`git balanced mcp`: the lead's tools over stdio, on the official MCP SDK. The only module that imports it,
so no other command pays for its import.

Each tool has a JSON schema (from its type hints) and a structured result (a JSON object). A tool that
refuses says exactly what the command would: `error: MESSAGE` and `hint: HINT`. There is no ship tool:
nothing is pushed unless the person says so.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from git_balanced import __version__
from git_balanced.errors import BalancedError, disk_full
from git_balanced.kit import tools
from git_balanced.kit.tools import Piece

NAME = "balanced"
INSTRUCTIONS = (
    "The tools of a git balanced lead: split a task into pieces (plan), start workers, read the board and "
    "the inbox, answer workers, land their branches, and put the work to the person (put_to_you). Nothing "
    "is ever pushed by these tools; shipping is the person's call.")

Job = Annotated[str, Field(description="A job id (or a unique prefix of one) or its branch, from the board.")]
Qid = Annotated[str, Field(description="The question's id, as the inbox or the board shows it.")]


def refusal(exc: BalancedError) -> str:
    """A BalancedError in the CLI's words: `error: MESSAGE`, then `hint: HINT`."""
    return f"error: {exc.message}" + (f"\nhint: {exc.hint}" if exc.hint else "")


def _said(fn: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    """The tool, with a BalancedError turned into a tool error in the CLI's words."""

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> dict[str, Any]:
        try:
            return fn(*args, **kwargs)
        except (BalancedError, OSError) as exc:
            said = disk_full(exc) or exc  # a full disk reads as it does on the command line
            if not isinstance(said, BalancedError):
                raise
            raise ToolError(refusal(said)) from None

    return call


def build() -> MCPServer:
    """The server with every tool of the lead."""
    server: MCPServer = MCPServer(NAME, instructions=INSTRUCTIONS, version=__version__,
                                    log_level="WARNING")

    def tool(name: str) -> Callable[[Callable[..., dict[str, Any]]], Callable[..., dict[str, Any]]]:
        def register(fn: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
            server.add_tool(_said(fn), name=name, description=fn.__doc__, structured_output=True)
            return fn
        return register

    @tool("plan")
    def plan(task: Annotated[str, Field(description="The whole task in a line.")],
             pieces: Annotated[list[Piece], Field(min_length=1, description="The pieces, each a worker's.")],
             budget: Annotated[float | None, Field(gt=0, description="USD for the plan, shared by size.")] = None,
             start: Annotated[bool, Field(description="Start it now and make sure an engine runs it.")] = True,
             ) -> dict[str, Any]:
        """Store a plan of pieces. Returns where each piece runs (machine) and why, its branch, what it waits
        for, and its budget share; with start (the default) the pieces start and an engine runs them."""
        return tools.plan(task, pieces, budget, start)

    @tool("start")
    def start(plan: Annotated[str | None, Field(description="The plan's id (default: the newest live plan).")]
              = None) -> dict[str, Any]:
        """Start a stored plan's ready pieces and make sure an engine runs them."""
        return tools.start(plan)

    @tool("worker")
    def worker(task: Annotated[str, Field(description="What the worker does.")],
               machine: Annotated[str | None, Field(description="An explicit machine (default: placed).")] = None,
               agent: Annotated[str | None, Field(description="claude, codex, pi or shell.")] = None,
               model: Annotated[str | None, Field(description="The agent's model.")] = None,
               budget: Annotated[float | None, Field(gt=0, description="USD for this worker.")] = None,
               run: Annotated[str | None, Field(description="For the shell agent: the command.")] = None,
               ) -> dict[str, Any]:
        """One worker for one piece on one machine, started at once."""
        return tools.worker(task, machine, agent, model, budget, run)

    @tool("board")
    def board() -> dict[str, Any]:
        """The board: now (what waits on the person), jobs (each worker: state, reason, machine, agent, cost),
        next (pieces waiting for others or for a start, and the next schedule)."""
        return tools.board()

    @tool("inbox")
    def inbox() -> dict[str, Any]:
        """What came for the lead since the last call (landings, failures, questions, schedules, the person's
        answers), oldest first."""
        return tools.inbox()

    @tool("answer")
    def answer(id: Qid, text: Annotated[str, Field(description="The answer the worker reads.")]
               ) -> dict[str, Any]:
        """Answer a worker's question in words (to a command it asked to run, words refuse it)."""
        return tools.answer(id, text)

    @tool("allow")
    def allow(id: Qid, reason: Annotated[str, Field(description="Optional words with the yes.")] = ""
              ) -> dict[str, Any]:
        """Let a worker run the command (or make the edit) it asked for."""
        return tools.allow(id, reason)

    @tool("deny")
    def deny(id: Qid, reason: Annotated[str, Field(description="Why not; the worker reads it.")]
             ) -> dict[str, Any]:
        """Refuse the command (or edit) a worker asked for."""
        return tools.deny(id, reason)

    @tool("pass")
    def pass_(id: Qid) -> dict[str, Any]:
        """Hand a worker's question to the person (what is not yours to decide): it shows under Now."""
        return tools.pass_(id)

    @tool("land")
    def land(names: Annotated[list[str] | None, Field(description="Job ids or branches to land.")] = None,
             all: Annotated[bool, Field(description="Every finished worker.")] = False) -> dict[str, Any]:
        """Check and land finished workers or local branches through the landing queue (the engine lands
        finished workers on its own; this is for a branch it holds or one you made)."""
        return tools.land(names, all)

    @tool("stop")
    def stop(job: Job) -> dict[str, Any]:
        """Stop a job; it is not tried again and its branch is kept."""
        return tools.stop(job)

    @tool("retry")
    def retry(job: Job) -> dict[str, Any]:
        """Try a failed or stopped job again, continuing from what it committed."""
        return tools.retry(job)

    @tool("machines")
    def machines() -> dict[str, Any]:
        """The machines: local, added ones and SSH hosts; ticked, ready (and why not), running, preference."""
        return tools.machines()

    @tool("schedule_add")
    def schedule_add(when: Annotated[str, Field(description="daily 09:00, weekdays 18:30, every 30 minutes, "
                                                            "every 2 hours or once 2026-11-12 09:00.")],
                     text: Annotated[str, Field(description="What the lead hears then.")]) -> dict[str, Any]:
        """Add a schedule (s1, s2, …): when due, the lead hears `[balanced] Scheduled (NAME, WHEN): TEXT`."""
        return tools.schedule_add(when, text)

    @tool("schedule_list")
    def schedule_list() -> dict[str, Any]:
        """Every schedule with its next time."""
        return tools.schedule_list()

    @tool("schedule_rm")
    def schedule_rm(name: Annotated[str, Field(description="The schedule's name, such as s1.")]) -> dict[str, Any]:
        """Remove a schedule."""
        return tools.schedule_rm(name)

    @tool("put_to_you")
    def put_to_you(summary: Annotated[str, Field(description="What you did and why, for the person.")],
                   attachments: Annotated[list[str] | None, Field(description="Files to show with it, such as "
                                                                              "screenshots.")] = None,
                   ) -> dict[str, Any]:
        """Put the work to the person: a row under Now with your summary, what would ship, the check run again
        on the branch, and the attachments. They ship it, correct it (you hear it) or say not now."""
        return tools.put_to_you(summary, attachments)

    @tool("idea")
    def idea(text: Annotated[str, Field(description="The idea, and why.")]) -> dict[str, Any]:
        """Put an idea to the person under Now; their go-ahead (or not) comes to your inbox."""
        return tools.idea(text)

    return server


def serve() -> int:
    """Serve the lead's tools over stdin and stdout until the client goes away."""
    build().run()
    return 0


def tool_specs() -> list[dict[str, Any]]:
    """Each tool's name, description and input schema, as the server lists them (for Pi's extension)."""
    import asyncio

    tools_listed = asyncio.run(build().list_tools())
    return [{"name": t.name, "description": t.description or "", "parameters": t.input_schema}
            for t in tools_listed]


def call(name: str, arguments: str) -> int:
    """One tool call through the server, in this process: its structured result as JSON on stdout, or its
    refusal on stderr and exit 1 (how Pi, which has no MCP, calls the same tools)."""
    import asyncio
    import json
    import sys

    from mcp import Client

    from git_balanced.errors import UsageError
    from git_balanced.ui import plain

    try:
        args = json.loads(arguments) if arguments.strip() else {}
    except ValueError as exc:
        raise UsageError(f"The arguments of {name} are not JSON: {exc}.",
                         hint=f"git balanced mcp --call {name} '{{\"key\": \"value\"}}'") from None
    if not isinstance(args, dict):
        raise UsageError(f"The arguments of {name} must be a JSON object.", hint="{} when it takes none.")

    async def one() -> Any:
        async with Client(build()) as client:
            return await client.call_tool(name, args)

    result = asyncio.run(one())
    if result.is_error:
        text = "\n".join(getattr(c, "text", "") for c in result.content)
        sys.stderr.write(plain(text.removeprefix(f"Error executing tool {name}: ")) + "\n")
        return 1
    sys.stdout.write(json.dumps(result.structured_content, ensure_ascii=False, default=str) + "\n")
    return 0
