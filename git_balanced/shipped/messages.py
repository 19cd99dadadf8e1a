"""The runner's messages as types: what the engine asks of it (`start`) and what a run ends with (result.json),
with the reason code that says how it ended. Stdlib only, Python 3.9+: the runner's source carries this file to
other machines, and the engine builds and reads the same classes here.

Each message checks itself both ways: `from_json` refuses a missing, mistyped or unknown field and names it, so
a misspelt key fails at once, where it is sent, not silently on a machine. A field's kind is read from its
annotation: `str`, `int`, `float`, `bool`, `list[...]` or `dict[...]`, optional with `| None`.
"""

from __future__ import annotations

import dataclasses
import re
import sys
import types
from typing import Any, TypeVar

# Run as part of one script that a caller exec's under a name of its own (machines/prepare/leftovers.py), the classes'
# module is in no sys.modules, where dataclasses looks up their string annotations: an empty one does for that.
if __name__ not in sys.modules:
    sys.modules[__name__] = types.ModuleType(__name__)

M = TypeVar("M", bound="Message")
JOB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


class Reason:
    """How a run ended, as its runner or its agent's adapter knows it: a fixed set of codes, the same strings as
    the job's failure kinds. The runner sets the ones it sees itself; `EXITED` leaves it to the adapter, which
    reads the agent's log and says one of `OUTCOMES`."""

    EXITED = "exited"  # the agent ran to its end: its adapter's outcome says how
    CRASHED = "crashed"  # the runner could not do its part (a worktree, a file), or the agent died unannounced
    NOT_INSTALLED = "not_installed"  # the agent's program is not on that machine
    SETUP_FAILED = "setup_failed"
    STOPPED = "stopped"  # someone stopped it
    BUDGET = "budget"  # the meter stopped it at its budget
    GUARD = "guard"  # the guard refused the commit of what it left
    FAILED = "failed"  # the commit of what it left failed otherwise; or the agent said it failed
    # What an adapter reads from the agent's log (agents/base.py Outcome.kind).
    SUCCESS = "success"
    TURNS = "turns"
    USAGE_LIMIT = "usage_limit"
    SIGNIN = "signin"
    TRANSIENT = "transient"

    RUNNER = (EXITED, CRASHED, NOT_INSTALLED, SETUP_FAILED, STOPPED, BUDGET, GUARD, FAILED)
    OUTCOMES = (SUCCESS, FAILED, BUDGET, TURNS, USAGE_LIMIT, SIGNIN, TRANSIENT, CRASHED)


class RunState:
    """Where a run is, as `status` tells it (not a job's state: the engine makes that of it)."""

    RUNNING = "running"
    FINISHED = "finished"  # its result.json is written
    DEAD = "dead"  # its runner is gone without a result
    MISSING = "missing"  # no run folder
    STOPPING = "stopping"  # `stop` asked it to end; it still winds down
    UNREACHABLE = "unreachable"  # not the runner's word: the engine's, for a machine that did not answer


class MessageError(ValueError):
    """A message the other side cannot act on; the text names the field."""


_KINDS: dict[str, type] = {"str": str, "int": int, "float": float, "bool": bool, "list": list, "dict": dict}


def _checked(what: str, key: str, value: Any, annotation: str) -> Any:
    """`value` when it is of the field's kind (an int does for a float), else a MessageError naming the field."""
    optional = annotation.endswith(" | None")
    kind = _KINDS[(annotation[: -len(" | None")] if optional else annotation).split("[", 1)[0]]
    if value is None:
        if optional:
            return None
        raise MessageError(f"the {what} has no {key!r}")
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        raise MessageError(f"the {what}'s {key!r} must be a {kind.__name__}, not {type(value).__name__}")
    return value


class Message:
    """A dataclass that goes over the wire as one JSON object of its fields."""

    WHAT = "message"  # what its errors call it

    def to_json(self) -> dict[str, Any]:
        """Its fields as a JSON object, checked first: what is sent is what the other side accepts."""
        out = dataclasses.asdict(self)  # type: ignore[call-overload]
        type(self).from_json(out)
        return out

    @classmethod
    def from_json(cls: type[M], data: Any) -> M:
        """The message in `data`; a MessageError names a field that is missing, mistyped or unknown. A null
        field takes its default, as a missing one does."""
        if not isinstance(data, dict):
            raise MessageError(f"the {cls.WHAT} must be a JSON object, not {type(data).__name__}")
        fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        unknown = sorted(set(data) - set(fields))
        if unknown:
            raise MessageError(f"the {cls.WHAT} has fields this runner does not know: {', '.join(unknown)} "
                               f"(it knows {', '.join(fields)})")
        values = {}
        for name, f in fields.items():
            required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
            if data.get(name) is None and not required:
                continue
            values[name] = _checked(cls.WHAT, name, data.get(name), str(f.type))
        made = cls(**values)
        made.check()
        return made

    def check(self) -> None:
        """What the field kinds cannot say; raises MessageError."""


def _strings(what: str, key: str, values: list[Any]) -> None:
    if not all(isinstance(x, str) for x in values):
        raise MessageError(f"the {what}'s {key!r} must hold strings only")


@dataclasses.dataclass(frozen=True)
class StartRequest(Message):
    """What the runner needs to start one worker: where, on which branch, which command, and its fences."""

    WHAT = "request"

    job: str  # the run folder's name (the job's runner key)
    repo: str  # the repository its worktree belongs to there (with `own_copy`, the machine's shared copy)
    worktree: str
    branch: str
    base: str
    argv: list[str]  # the agent's command; "{run_dir}" and "{worktree}" in it are filled in
    runs_dir: str | None = None
    env: dict[str, str] | None = None
    files: dict[str, str] | None = None  # path in the run folder -> content, written before the agent starts
    meter: dict[str, Any] | None = None  # meter.py's spec: the budget it watches
    setup: str | None = None  # a shell command run first in the worktree
    commit_message: str | None = None
    commit_leftovers: bool | None = None  # commit what the agent left uncommitted
    guard: dict[str, Any] | None = None  # {"script", "spec"}: the worktree's pre-commit hook
    ask: bool | None = None  # write the run's own `git balanced` (asks the lead through the run folder)
    ask_timeout: float | None = None
    hook: dict[str, Any] | None = None  # the rules its PreToolUse hook judges by (bin/hook.json)
    worker: dict[str, Any] | None = None  # {"agent", "env", "fence"}: its environment and its pen
    start_at: str | None = None  # where a new worktree's branch starts, from the lead's own record
    own_copy: bool | None = None  # make the branch's own copy of `repo` first (branchcopy.py)
    grace: float | None = None  # seconds between SIGTERM and SIGKILL
    # It writes nothing (`writes: none`): `worktree` is the shared read-only checkout of `base` (readonly.py),
    # made from `repo` when it is not there; no branch, no guard, no setup, no commit.
    readonly: bool | None = None

    def check(self) -> None:
        _plain_job(self.job)
        if any(not name.strip() or name.startswith("-") for name in (self.branch, self.base)):
            raise MessageError(f"the request's branch {self.branch!r} or base {self.base!r} is not a name")
        if not self.argv:
            raise MessageError("the request's 'argv' must be a non-empty list of strings")
        _strings(self.WHAT, "argv", self.argv)
        for key, mapping in (("env", self.env), ("files", self.files)):
            _strings(self.WHAT, key, [x for kv in (mapping or {}).items() for x in kv])


def _plain_job(job: str) -> None:
    if not JOB_ID.match(job):
        raise MessageError(f"the job id {job!r} is not a plain name ([A-Za-z0-9._-], no leading dot)")


@dataclasses.dataclass(frozen=True)
class StatusRequest(Message):
    """`status`: the state of each named job, or of every job under `runs_dir` when `jobs` is null."""

    WHAT = "request"

    jobs: list[str] | None = None  # a name that is not a job id gets an answer that says so, not a refusal
    runs_dir: str | None = None


@dataclasses.dataclass(frozen=True)
class StopRequest(Message):
    """`stop`: end a job's run, waiting up to `wait` seconds for it to end."""

    WHAT = "request"

    job: str
    runs_dir: str | None = None
    wait: float | None = None
    grace: float | None = None  # seconds between SIGTERM and SIGKILL

    def check(self) -> None:
        _plain_job(self.job)


@dataclasses.dataclass(frozen=True)
class LogRequest(Message):
    """`log`: a job's log from `offset`, at most `limit` bytes."""

    WHAT = "request"

    job: str
    runs_dir: str | None = None
    offset: int | None = None
    limit: int | None = None

    def check(self) -> None:
        _plain_job(self.job)


@dataclasses.dataclass(frozen=True)
class CleanupRequest(Message):
    """`cleanup`: remove a job's worktree and run folder, and with `own_copy` its branch's own copy."""

    WHAT = "request"

    job: str
    repo: str
    worktree: str
    runs_dir: str | None = None
    prune: bool = True  # `git worktree prune` after; one after a batch of cleanups does
    own_copy: bool | None = None
    branch: str | None = None  # whose own copy goes, with `own_copy`
    grace: float | None = None
    readonly: bool | None = None  # `worktree` is a shared read-only checkout: the job's mark on it goes
    copy_goes: bool | None = None  # `repo` is the branch's own copy, which the caller removes next: the
    # worktree's folder goes without git (its registration goes with the copy)

    def check(self) -> None:
        _plain_job(self.job)
        if self.own_copy and not self.branch:
            raise MessageError("the request's 'branch' is needed with 'own_copy': its copy is the branch's")


@dataclasses.dataclass(frozen=True)
class ForwardedRequest(Message):
    """`forwarded`: the job's questions `ns` reached the lead."""

    WHAT = "request"

    job: str
    ns: list[int]
    runs_dir: str | None = None

    def check(self) -> None:
        _plain_job(self.job)


@dataclasses.dataclass(frozen=True)
class TellRequest(Message):
    """`tell`: a line from the lead for the job's agent, which reads it at its next tool call."""

    WHAT = "request"

    job: str
    text: str
    runs_dir: str | None = None

    def check(self) -> None:
        _plain_job(self.job)
        if not self.text.strip():
            raise MessageError("the request's 'text' is empty: there is nothing to tell")


@dataclasses.dataclass(frozen=True)
class AnswerRequest(Message):
    """`answer`: the lead's answer to the job's question `n` (`qid` its id at the lead)."""

    WHAT = "request"

    job: str
    n: int
    runs_dir: str | None = None
    text: str | None = None
    decision: str | None = None  # allow or deny, for a command the worker asked to run
    qid: str | None = None

    def check(self) -> None:
        _plain_job(self.job)
        if self.decision not in (None, "allow", "deny"):
            raise MessageError(f"the request's 'decision' must be allow, deny or null, not {self.decision!r}")


@dataclasses.dataclass
class Result(Message):
    """How one run ended (result.json in its run folder), filled in by the runner as the run goes."""

    WHAT = "result"

    job: str
    started: float
    base: str
    reason: str = Reason.EXITED  # one of Reason.RUNNER: how it ended, as the runner saw it
    exit_code: int | None = None  # the agent's, when it exited
    signal: int | None = None  # what killed the agent (or its setup)
    ended: float | None = None
    seconds: float | None = None
    head: str | None = None  # the branch's commit at the end
    commits: int = 0  # on the branch since its base
    dirty: bool = False  # the worktree still held uncommitted changes
    stopped_by_budget: bool = False
    stopped: bool = False
    cost_usd: float | None = None  # what the meter counted
    commit_error: str | None = None  # why the commit of what it left failed
    setup_failed: bool = False
    setup_exit_code: int | None = None
    error: str | None = None  # why the runner could not do its part
    fenced: bool = False  # the worker ran in its pen
    ended_left_running: int | None = None  # processes it left running, ended by the runner
    checks: list[dict[str, Any]] | None = None  # the checks it ran through `git balanced seat` (seats.py)

    def check(self) -> None:
        if self.reason not in Reason.RUNNER:
            raise MessageError(f"the result's 'reason' must be one of {', '.join(Reason.RUNNER)}, "
                               f"not {self.reason!r}")

    @classmethod
    def read(cls, data: Any) -> Result:
        """A result.json as any runner wrote it: one from before the reason code (a worker started by an
        older version, still running when this one came) gets its reason from the fields it has."""
        if isinstance(data, dict) and "reason" not in data:
            data = {**data, "reason": _reason_of_old(data)}
        return cls.from_json(data)


def _reason_of_old(data: dict[str, Any]) -> str:
    """The reason code of a result written before there was one, from the fields and words it has."""
    error, refused = str(data.get("error") or ""), str(data.get("commit_error") or "")
    if data.get("setup_failed"):
        return Reason.SETUP_FAILED
    if error:
        missing = error.startswith("could not start") and "No such file" in error
        return Reason.NOT_INSTALLED if missing else Reason.CRASHED
    if data.get("stopped_by_budget"):
        return Reason.BUDGET
    if data.get("stopped"):
        return Reason.STOPPED
    if refused:
        return Reason.GUARD if "guard" in refused.lower() else Reason.FAILED
    return Reason.EXITED

