"""What each of the lead's verbs returns, as a type: kit/tools.py's functions are annotated with these, each verb
of kit/verbs.py names its own (`Verb.returns`), and the MCP server makes the tool's `outputSchema` from it and
checks every result against it before the client sees it.

A result kit/tools.py builds takes no key its type does not name (`extra="forbid"`): a key added to a tool is
added here, and the schema a client reads stays true. The rows other parts build (a job of the board, a machine,
a schedule) are described in words and checked as objects, so those parts can grow a field without a line here.
"""

from __future__ import annotations

from typing import Annotated, Any, NotRequired

from pydantic import ConfigDict, Field, with_config
from typing_extensions import TypedDict

_CLOSED = ConfigDict(extra="forbid")
_OPEN = ConfigDict(extra="allow")  # a row built elsewhere: the keys named here are there, others may be

Row = dict[str, Any]
Id = Annotated[str, Field(description="An id, as the board shows it.")]
Engine = Annotated[str, Field(description="Which engine runs the started work: started now, or woken (its pid).")]
Usd = Annotated[float | None, Field(description="US dollars, or null when none is set.")]


@with_config(_CLOSED)
class Placed(TypedDict):
    """Where one piece of a plan runs, and why."""

    id: Annotated[str, Field(description="The piece's id.")]
    machine: Annotated[str | None, Field(description="The machine it was placed on.")]
    why: Annotated[str | None, Field(description="Why that machine, in words.")]
    agent: Annotated[str | None, Field(description="The agent that does it (claude, codex, pi or shell).")]
    branch: Annotated[str, Field(description="The worker's branch, balanced/<id>.")]
    after: Annotated[list[str], Field(description="Ids of pieces that land before it starts.")]
    waits: Annotated[str | None, Field(description="What it waits for, in words; null when nothing.")]
    budget_usd: Usd
    note: Annotated[str | None, Field(description="A word on its branch (one already there), or null.")]


@with_config(_CLOSED)
class PlanResult(TypedDict):
    """A stored plan: its pieces placed, and whether it started."""

    plan: Annotated[str, Field(description="The plan's id (start takes it).")]
    task: Annotated[str, Field(description="The whole task in a line.")]
    budget_usd: Usd
    started: Annotated[bool, Field(description="Whether its pieces were started.")]
    pieces: Annotated[list[Placed], Field(description="Each piece: where it runs and why, what it waits for.")]
    engine: Annotated[str | None, Field(description="Which engine runs it; null when not started.")]


@with_config(_CLOSED)
class StartResult(TypedDict):
    """A plan started."""

    plan: Annotated[str, Field(description="The plan started.")]
    engine: Engine


@with_config(_CLOSED)
class WorkerResult(Placed):
    """One worker started: its plan of one piece, placed."""

    plan: Annotated[str, Field(description="The worker's plan of one piece.")]
    engine: Engine


@with_config(_OPEN)
class BoardResult(TypedDict):
    """The board, as `git balanced board --json` prints it."""

    lead: Annotated[str, Field(description="The lead's branch.")]
    now: Annotated[list[Row], Field(description="What waits on the person: held or failed workers, questions "
                                                "passed on, work put to them, ideas (each with its id and words).")]
    jobs: Annotated[list[Row], Field(description="Each worker: id, piece, plan, state, reason, machine, agent, "
                                                 "model, branch, cost_usd, and a failed check's tail.")]
    next: Annotated[list[Row], Field(description="What comes: pieces waiting (plan, piece, after, words, "
                                                 "machine) and the next schedule.")]
    plans: Annotated[list[Row], Field(description="Each plan: id, task, state, budget_usd and what it spent.")]
    lead_agent: Annotated[Row | None, Field(description="The headless lead (agent, state, running, turns, "
                                                        "cost_usd), or null when none was started.")]
    lead_session: Annotated[Row | None, Field(description="The lead's agent session at the keyboard (agent, mode, "
                                                          "model, seen_s_ago, active), or null when none was "
                                                          "ever seen.")]
    fence: Annotated[Row, Field(description="Whether workers run fenced (fenced) and, if not, why.")]
    check_seats: Annotated[dict[str, Row], Field(description="Each machine's check seats: budget, in_use and "
                                                             "holders (who, command, since, pid); `local` read "
                                                             "now, the others as `machines` last asked them.")]


@with_config(_CLOSED)
class Message(TypedDict, total=False):
    """One thing the lead hears."""

    id: Annotated[str, Field(description="The message's id.")]
    time: Annotated[float, Field(description="When it came, in seconds since the epoch.")]
    kind: Annotated[str, Field(description="What it is: landed, failed, question, schedule, answer, ...")]
    text: Annotated[str, Field(description="It, in words.")]
    job: Annotated[str | None, Field(description="The job it is about.")]
    handle: Annotated[str | None, Field(description="The job's short handle (e3, e3@MACHINE), which stop, retry, "
                                                 "show and land take as they take its id.")]
    qid: Annotated[str | None, Field(description="The question's id (answer, allow, deny and pass take it).")]
    plan: Annotated[str | None, Field(description="The plan it is about.")]
    row: Annotated[str | None, Field(description="The row under Now it is about.")]
    answer: Annotated[Any, Field(description="The person's answer to a row.")]


@with_config(_CLOSED)
class InboxResult(TypedDict):
    """What came for the lead since the last call."""

    lead: Annotated[str, Field(description="The lead's branch.")]
    count: Annotated[int, Field(description="How many messages.")]
    messages: Annotated[list[Message], Field(description="The messages, oldest first.")]


@with_config(_CLOSED)
class Answered(TypedDict):
    """A worker's question, answered."""

    question: Annotated[str, Field(description="The question's id.")]
    piece: Annotated[str | None, Field(description="The piece whose worker asked.")]
    job: Annotated[str | None, Field(description="The worker's job.")]
    decision: Annotated[str | None, Field(description="allow or deny for a command it asked to run, else null.")]
    answer: Annotated[str | None, Field(description="The answer as the worker reads it.")]


@with_config(_CLOSED)
class Passed(TypedDict):
    """A question handed to the person."""

    question: Annotated[str, Field(description="The question's id.")]
    piece: Annotated[str | None, Field(description="The piece whose worker asked.")]
    state: Annotated[str, Field(description="passed: it shows under Now on the board; to the chief: a chief runs, "
                                            "and it answers it or hands it to the person.")]


@with_config(_CLOSED)
class LandResult(TypedDict):
    """What the landing queue did with each branch."""

    verdicts: Annotated[list[Row], Field(description="Each branch: branch, status (landed, failed, held, ...), "
                                                     "job, commit, reason, the check's output tail, paths.")]
    check_runs: Annotated[int, Field(description="How many times the check ran.")]
    checks_stopped: NotRequired[Annotated[int, Field(
        description="Checks stopped before their end once their round's top passed (not among check_runs).")]]
    rounds: Annotated[int, Field(description="How many rounds the queue took (a failing batch is bisected).")]
    words: Annotated[str | None, Field(description="Why nothing was landed, when nothing was named.")]
    machine_checks: NotRequired[Annotated[list[Row], Field(
        description="Checks idle machines ran for this landing: machine, tree, result, code, seconds; each a hint "
                    "that only chose what this machine checked, never what landed.")]]
    machines_dropped: NotRequired[Annotated[dict[str, str], Field(
        description="Machines dropped from this landing (no answer, or a hint this machine's check contradicted), "
                    "and why.")]]


@with_config(_CLOSED)
class Stopped(TypedDict):
    """A job stopped."""

    job: Annotated[str, Field(description="The job's id.")]
    piece: Annotated[str, Field(description="Its piece.")]
    state: Annotated[str, Field(description="stopped.")]
    branch_kept: Annotated[Any, Field(description="Whether (or which) branch was kept.")]


@with_config(_CLOSED)
class Retried(TypedDict):
    """A new attempt at a job's piece."""

    job: Annotated[str, Field(description="The job tried again.")]
    piece: Annotated[str, Field(description="Its piece.")]
    new_job: Annotated[str, Field(description="The new attempt's job id.")]
    attempt: Annotated[int, Field(description="The new attempt's number.")]
    engine: Engine


@with_config(_CLOSED)
class LogsResult(TypedDict):
    """A worker's log, readable."""

    job: Annotated[str, Field(description="The job's id.")]
    piece: Annotated[str, Field(description="Its piece.")]
    state: Annotated[str, Field(description="Where it is: running, finished, landed, failed, ...")]
    found: Annotated[bool, Field(description="Whether its run folder (and so its log) is there.")]
    lines: Annotated[list[str], Field(description="The log's newest lines: turns, tool calls, results.")]
    cut: Annotated[int, Field(description="How many older lines were left out.")]


@with_config(_CLOSED)
class Told(TypedDict):
    """A line left for a running worker."""

    job: Annotated[str, Field(description="The job's id.")]
    piece: Annotated[str, Field(description="Its piece.")]
    told: Annotated[str, Field(description="What it reads at its next tool call.")]


@with_config(_CLOSED)
class MachinesResult(TypedDict):
    """The machines."""

    machines: Annotated[list[Row], Field(description="Each machine: name, host, ticked, ready (and why not), "
                                                     "running workers, preference.")]


@with_config(_CLOSED)
class ScheduleAdded(TypedDict):
    """A schedule added."""

    name: Annotated[str, Field(description="Its name (s1, s2, ...); schedule_rm takes it.")]
    when: Annotated[str, Field(description="When it is due, as given.")]
    text: Annotated[str, Field(description="What the lead hears then.")]
    first: Annotated[str | None, Field(description="Its first time (ISO 8601), or null.")]
    first_words: Annotated[str | None, Field(description="Its first time in words, or null.")]


@with_config(_CLOSED)
class Schedules(TypedDict):
    """Every schedule."""

    schedules: Annotated[list[Row], Field(description="Each schedule: name, when, text and its next time.")]


@with_config(_CLOSED)
class ScheduleRemoved(TypedDict):
    """A schedule removed."""

    name: Annotated[str, Field(description="Its name.")]
    when: Annotated[str, Field(description="When it was due.")]
    text: Annotated[str, Field(description="What the lead would have heard.")]
    state: Annotated[str, Field(description="removed.")]


@with_config(_OPEN)
class ShowResult(TypedDict):
    """One job in full: the board's row of it, and more (its events, what its worker did, the check's output)."""

    id: Annotated[str, Field(description="The job's id.")]
    piece: Annotated[str, Field(description="Its piece.")]
    state: Annotated[str, Field(description="Where it is: queued, running, finished, landed, failed, ...")]
    task: Annotated[str, Field(description="What its worker was asked.")]
    did: Annotated[Row, Field(description="What its worker did: exit code, outcome, summary, commits, head, cost.")]
    branch_at: Annotated[Row, Field(description="Where its branch is here, and whether it is in the lead's branch.")]
    events: Annotated[list[Row], Field(description="Each event on its chain, oldest first: time, name, state, line.")]
    check_output: Annotated[Row | None, Field(description="The output of the check that failed on it (whole, "
                                                          "where this clone kept it, else its end), or null.")]
    archived: NotRequired[Annotated[str, Field(description="For a job folded away by gc: the archive ref that "
                                                           "holds it.")]]
    branches_removed: NotRequired[Annotated[list[Row], Field(
        description="For an archived job: each ref of its branch the archive removed (ref, sha, here: whether it "
                    "is back, restore: the command that brings it back).")]]


@with_config(_OPEN)
class NowRow(TypedDict):
    """A row under Now: work put to the person, or an idea."""

    id: Annotated[str, Field(description="The row's id (r...).")]
    kind: Annotated[str, Field(description="review or idea.")]
    state: Annotated[str, Field(description="waiting until the person answers.")]
    summary: Annotated[str, Field(description="The words put to the person.")]
    attachments: Annotated[list[Row], Field(description="Each attachment: name, size, where it is kept.")]
    check: Annotated[Row | None, Field(description="The check run again on the branch (its state), or null.")]


@with_config(_CLOSED)
class GcResult(TypedDict):
    """What `gc` folded into the archive: plans done long enough ago, with their jobs, and each inbox's old part."""

    older_than_days: Annotated[float, Field(description="What was done more than this many days ago was folded.")]
    jobs: Annotated[int, Field(description="How many jobs were archived.")]
    refs_removed: Annotated[int, Field(description="How many refs (jobs' and plans') were removed.")]
    plans: Annotated[list[Row], Field(description="Each plan archived: its id, its archive ref, its jobs' ids, "
                                                     "the branches removed with it.")]
    kept: Annotated[list[str], Field(description="Refs that moved while archiving, left for the next run.")]
    left: Annotated[int, Field(description="Plans to fold that a bounded run left for the next (0 for gc).")]
    inbox: Annotated[list[Row], Field(description="Each inbox folded: its name, the newest message folded away.")]
    branches_removed: Annotated[int, Field(description="How many branches of landed jobs, merged into the lead, "
                                                   "were removed (each recorded in its plan's archive).")]
    branches_kept: Annotated[list[Row], Field(description="Branches of landed jobs left: branch, job, why.")]


RESULTS: dict[str, type] = {t.__name__: t for t in (
    PlanResult, StartResult, WorkerResult, BoardResult, InboxResult, Answered, Passed, LandResult, Stopped,
    Retried, ShowResult, MachinesResult, ScheduleAdded, Schedules, ScheduleRemoved, NowRow, LogsResult, Told, GcResult)}
