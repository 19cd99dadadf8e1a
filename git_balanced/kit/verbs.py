"""The lead's verbs, each declared once: its name, its words, its arguments, what it does, and how the command
line offers it. The MCP server (kit/server.py) makes its tools from these, and cli.py its commands, so a verb
is added here and both faces have it.

This module is light on purpose (no pydantic, no git): cli.py reads it to build its commands, and `--help`
must stay fast. A verb names what does it rather than importing it: `does`, a function of kit/tools.py (what
the tool returns, a JSON-ready dict), and `Face.runs`, a function of commands/ (what the command prints, and
its exit code), which only cli.py imports, as the layers want.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


class _Required:
    """The default of an argument that has none: it must be given."""

    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()


@dataclass(frozen=True, slots=True)
class Arg:
    """One argument of a verb, the same on both faces.

    `kind` is its type as the tool's schema shows it (`str | None`, `list[str] | None`, `bool`), or the name
    of a type of kit/tools.py that needs pydantic (`"list[Piece]"`). On the command line an argument with
    `flags` is an option (a `bool` one a flag), one without is positional (a list takes any number)."""

    name: str
    kind: Any
    help: str
    default: Any = REQUIRED
    flags: tuple[str, ...] = ()
    metavar: str | None = None
    key: str | None = None  # the keyword both functions take, when it is not `name` (`all` is `take_all`)
    above: float | None = None  # a number must be more than this
    least: int | None = None  # a list holds at least this many

    @property
    def keyword(self) -> str:
        return self.key or self.name

    @property
    def required(self) -> bool:
        return self.default is REQUIRED


@dataclass(frozen=True, slots=True)
class Face:
    """How the command line offers a verb: its command (`("schedule", "add")` under the `schedule` group), the
    function of commands/ that runs it (`"schedule:add_command"`, or the function itself), and options of its
    own that change how the result is shown, not what is done (`--json`, `--watch`). A `group` face runs when
    none of its subcommands is named (`machines`, and `machines add`)."""

    words: tuple[str, ...]
    runs: str | Callable[..., int]
    options: tuple[Arg, ...] = ()
    help: str = ""  # the long help, naming positional arguments as the usage line does (JOB, TEXT)
    group: bool = False


@dataclass(frozen=True, slots=True)
class Verb:
    """One thing the lead does. `name` is the MCP tool's name; `title` its short words (the command's line in
    `-h`); `doc` the tool's description. `does` names the function of kit/tools.py that does it (or is that
    function), and `returns` the type of what it returns. `cli` is None for a verb only a lead agent has (its
    command line takes another shape, or none). The hints tell a client what calling it risks (MCP's tool
    annotations); each is said, none left to a client's default."""

    name: str
    title: str
    doc: str
    does: str | Callable[..., Any]
    returns: str = ""  # the name of its result's type in kit/results.py (the tool's output schema)
    args: tuple[Arg, ...] = ()
    cli: Face | None = None
    said: tuple[str, ...] = ()  # for a verb with no face: the command that does the same (`answer --allow`)
    read_only: bool = False  # it changes nothing a person would call a change
    destructive: bool = False  # it undoes or ends something (a running worker, a schedule)
    idempotent: bool = False  # a second call with the same arguments does nothing more
    open_world: bool = False  # it reaches past this repository: machines over SSH, agents and their models


JSON = Arg("json", bool, "Print data as JSON on stdout.", default=False, flags=("--json",), key="as_json")
_JOB = Arg("job", str, "A job id (or a unique prefix of one), its handle (e3, e3@MACHINE) or its branch, from the "
                      "board.")
_QID = Arg("id", str, "The question's id, as the inbox or the board shows it.", metavar="ID")

VERBS: tuple[Verb, ...] = (
    Verb("plan", "Store a plan and start its pieces.",
         "Store a plan of pieces. Returns where each piece runs (machine) and why, its branch, what it waits for, "
         "and its budget share; with start (the default) the pieces start and an engine runs them.",
         does="plan", returns="PlanResult", open_world=True,
         args=(Arg("task", str, "The whole task in a line."),
               Arg("pieces", "list[Piece]", "The pieces, each a worker's.", least=1),
               Arg("budget", float | None, "USD for the plan, shared by size.", default=None, above=0),
               Arg("start", bool, "Start it now and make sure an engine runs it.", default=True))),
    Verb("start", "Start a plan's ready pieces (default: the newest plan).",
         "Start a stored plan's ready pieces and make sure an engine runs them.",
         does="start", returns="StartResult", idempotent=True, open_world=True,
         args=(Arg("plan", str | None, "The plan's id (default: the newest live plan).", default=None,
                   metavar="[PLAN]"),),
         cli=Face(("start",), "plan:start_command",
                  help="Mark the plan started; the engine then starts each piece whose `after` have landed.")),
    Verb("worker", "One worker for one piece.",
         "One worker for one piece on one machine, started at once.",
         does="worker", returns="WorkerResult", open_world=True,
         args=(Arg("task", str, "What the worker does."),
               Arg("machine", str | None, "Where it runs (default: placement decides).", default=None,
                   flags=("--machine",), metavar="M"),
               Arg("agent", str | None, "claude, codex, pi or shell.", default=None, flags=("--agent",),
                   metavar="A"),
               Arg("model", str | None, "The agent's model.", default=None, flags=("--model",), metavar="M"),
               Arg("budget", float | None, "Its budget in US dollars.", default=None, flags=("--budget",),
                   metavar="USD", above=0),
               Arg("run", str | None, "For the shell agent: the command to run.", default=None, flags=("--run",),
                   metavar="CMD")),
         cli=Face(("worker",), "plan:worker_command",
                  help="Hand TASK to one worker (a plan of one piece, started at once).")),
    Verb("board", "Workers and what waits on you (Now), what runs, what comes (Next).",
         "The board: now (what waits on the person), jobs (each worker: state, reason, machine, agent, cost), "
         "next (pieces waiting for others or for a start, and the next schedule).",
         does="board", returns="BoardResult", read_only=True, idempotent=True,
         cli=Face(("board",), "board:board_command",
                  options=(JSON,
                           Arg("all", bool, "Every done worker, not folded into one line.", default=False,
                               flags=("--all",), key="show_all"),
                           Arg("watch", bool, "Redraw as things change.", default=False, flags=("--watch",)),
                           Arg("live", bool, "The board as a live terminal app: keys, marks, a worker's log.",
                               default=False, flags=("--live",)),
                           Arg("all_projects", bool, "Every project the chief knows (`git balanced projects`): "
                               "what waits on you in one list, and what runs in each.", default=False,
                               flags=("--all-projects",))),
                  help="The board: Now (what waits on you), Running (a dot per worker), Next (what comes).")),
    Verb("inbox", "What the lead hears.",
         "What came for the lead since the last call (landings, failures, questions, schedules, the person's "
         "answers), oldest first.",
         does="inbox", returns="InboxResult", read_only=True,
         cli=Face(("inbox",), "inbox:inbox_command",
                  options=(JSON, Arg("follow", bool, "Keep printing as more comes.", default=False,
                                     flags=("--follow",))),
                  help="One line per thing the lead hears, in words.")),
    Verb("answer", "Answer a worker's question in words.",
         "Answer a worker's question in words (to a command it asked to run, words refuse it).",
         does="answer", returns="Answered", idempotent=True, said=("answer",),
         args=(_QID, Arg("text", str, "The answer the worker reads."))),
    Verb("allow", "Let a worker run what it asked for.",
         "Let a worker run the command (or make the edit) it asked for.",
         does="allow", returns="Answered", idempotent=True, said=("answer", "--allow"),
         args=(_QID, Arg("reason", str, "Optional words with the yes.", default=""))),
    Verb("deny", "Refuse what a worker asked for.",
         "Refuse the command (or edit) a worker asked for.",
         does="deny", returns="Answered", idempotent=True, said=("answer", "--deny"),
         args=(_QID, Arg("reason", str, "Why not; the worker reads it."))),
    Verb("pass", "Pass a worker's question on to you.",
         "Hand a worker's question to the person (what is not yours to decide): it shows under Now.",
         does="pass_", returns="Passed", args=(_QID,), idempotent=True,
         cli=Face(("pass",), "ask:pass_command",
                  help="Hand question ID to you: it shows under Now on the board.")),
    Verb("land", "Check and land finished workers or branches through the landing queue.",
         "Check and land finished workers or local branches through the landing queue (the engine lands "
         "finished workers on its own; this is for a branch it holds or one you made).",
         does="land", returns="LandResult", idempotent=True,
         args=(Arg("names", list[str] | None, "Job ids or branches to land.", default=None,
                   metavar="[JOB|BRANCH]..."),
               Arg("all", bool, "Every finished worker.", default=False, flags=("--all",), key="take_all")),
         cli=Face(("land",), "land:land_command",
                  options=(Arg("yes", bool, "Land the named branches even when they change protected paths (you "
                                            "looked at them).", default=False, flags=("--yes", "--include-protected"),
                               key="include_protected"), JSON),
                  help="Merge the named branches onto the lead's branch, check the result once, and move the "
                       "lead's branch only to a commit whose exact tree passed. A failing batch is bisected to land "
                       "what passes.")),
    Verb("stop", "Stop a job (it is not tried again).",
         "Stop a job; it is not tried again and its branch is kept.",
         does="stop", returns="Stopped", args=(_JOB,), destructive=True, idempotent=True, open_world=True,
         cli=Face(("stop",), "jobs:stop_command", help="Stop JOB's worker; its branch is kept.")),
    Verb("retry", "Try a failed or stopped job again.",
         "Try a failed or stopped job again, continuing from what it committed.",
         does="retry", returns="Retried", args=(_JOB,), open_world=True,
         cli=Face(("retry",), "jobs:retry_command",
                  help="A new attempt at JOB's piece, continuing from what it committed.")),
    Verb("show", "One job in full: what it did, its events, the check's whole output.",
         "One job in full: its piece, what its worker did, where its branch is, each event on its chain, and the "
         "whole output of the check that failed on it (the board shows only its end).",
         does="show", returns="ShowResult", args=(_JOB,), read_only=True, idempotent=True,
         cli=Face(("show",), "show:show_command", options=(JSON,),
                  help="JOB in full: its piece, what its worker did, where its branch is, its events, and the "
                       "whole output of the check that failed on it.")),
    Verb("logs", "A worker's log as turns, tool calls and results.",
         "A worker's log as a person reads it: the agent's turns, tool calls and their results (a shell worker's "
         "output as it is), read on its machine, local or over SSH; its newest lines when it is long.",
         does="logs", returns="LogsResult", args=(_JOB,), read_only=True, idempotent=True, open_world=True,
         cli=Face(("logs",), "logs:logs_command",
                  options=(Arg("follow", bool, "Keep printing as it grows, until the worker ends.", default=False,
                               flags=("--follow", "-f")),
                           Arg("raw", bool, "The log as the agent wrote it (JSON lines).", default=False,
                               flags=("--raw",))),
                  help="JOB's log, read where it runs: the agent's turns, tool calls and results.")),
    Verb("tell", "Tell a running agent worker a line; it reads it at its next step.",
         "Tell a running agent worker a line (a correction, a hint): its agent reads it at its next tool call. A "
         "shell worker cannot hear; a worker that is not running is refused.",
         does="tell", returns="Told", open_world=True,
         args=(_JOB, Arg("text", str, "The line the worker reads.")),
         cli=Face(("tell",), "logs:tell_command", options=(JSON,),
                  help="Leave TEXT for JOB's agent, which reads it at its next tool call.")),
    Verb("gc", "Fold plans done long ago, with their jobs, into the archive.",
         "Fold every plan done more than DAYS ago (default: the setting [balanced] archive_after_days, 30), with "
         "its jobs, into one commit per plan under refs/balanced/archive/, and remove their refs: `log` still lists "
         "their landings and `show` still finds their jobs. The engine does it when idle.",
         does="gc", returns="GcResult", idempotent=True,
         args=(Arg("older_than", float | None, "Days since a plan was done (default: the setting).", default=None,
                   flags=("--older-than",), metavar="DAYS"),),
         cli=Face(("gc",), "gc:gc_command", options=(JSON,),
                  help="Fold plans done more than DAYS ago, with their jobs, into refs/balanced/archive/ and remove "
                       "their refs.")),
    Verb("machines", "The machines: local, added ones, and SSH hosts not added yet.",
         "The machines: local, added ones and SSH hosts; ticked, ready (and why not), running, preference.",
         does="machines", returns="MachinesResult", read_only=True, idempotent=True,
         cli=Face(("machines",), "machines:list_command", options=(JSON,), group=True,
                  help="List `local`, the machines you added and the hosts of your SSH config not added yet: "
                       "ticked, ready, running workers, preference.")),
    Verb("schedule_add", "Add a schedule.",
         "Add a schedule (s1, s2, …): when due, the lead hears `[balanced] Scheduled (NAME, WHEN): TEXT`.",
         does="schedule_add", returns="ScheduleAdded",
         args=(Arg("when", str, "daily 09:00, weekdays 18:30, every 30 minutes, every 2 hours or once 2026-11-12 "
                                "09:00."),
               Arg("text", str, "What the lead hears then.")),
         cli=Face(("schedule", "add"), "schedule:add_command",
                  help="WHEN is `daily HH:MM`, `weekdays HH:MM`, `every N minutes`, `every N hours` or `once "
                       "YYYY-MM-DD HH:MM`, in this machine's local time.")),
    Verb("schedule_list", "List schedules.", "Every schedule with its next time.",
         does="schedule_list", returns="Schedules", read_only=True, idempotent=True,
         cli=Face(("schedule", "list"), "schedule:list_command", options=(JSON,))),
    Verb("schedule_rm", "Remove a schedule.", "Remove a schedule.",
         does="schedule_rm", returns="ScheduleRemoved", destructive=True, idempotent=True,
         args=(Arg("name", str, "The schedule's name, such as s1."),),
         cli=Face(("schedule", "rm"), "schedule:rm_command", help="Remove schedule NAME (s1, s2, ...).")),
    Verb("put_to_you", "Put the work to the person.",
         "Put the work to the person: a row under Now with your summary, what would ship, the check run again on "
         "the branch, and the attachments. They ship it, correct it (you hear it) or say not now.",
         does="put_to_you", returns="NowRow",
         args=(Arg("summary", str, "What you did and why, for the person."),
               Arg("attachments", list[str] | None, "Files to show with it, such as screenshots.", default=None))),
    Verb("idea", "Put an idea to the person.",
         "Put an idea to the person under Now; their go-ahead (or not) comes to your inbox.",
         does="idea", returns="NowRow", args=(Arg("text", str, "The idea, and why."),)),
)


def verb(name: str) -> Verb:
    """The verb of that name (the MCP tool's name)."""
    found = next((v for v in VERBS if v.name == name), None)
    if found is None:
        raise KeyError(f"no verb {name!r}; the verbs are {', '.join(v.name for v in VERBS)}")
    return found
