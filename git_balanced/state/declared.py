"""The declarations of the typed reads of folded jobs and plans: `Job`, `StoredPlan`, `StoredPiece` and the one
piece type, `PieceOptions`, readable without `dataclasses` (it imports `inspect`, `ast` and `dis`, and making a
dataclass of `Job`'s 80 fields compiles code at every start: together more than the board's own reading costs).

Each class is written as a dataclass (mypy checks it as one) and `state/views.py` makes it one, in place, when it
is imported: what builds, compares or copies jobs (the engine, `jobs.py`) imports it from there. Until then a
class here is a plain class whose defaults are its class attributes, which is all that `Job.of` (the board, the
inbox, the handles) needs; building one (`Job(...)`), comparing or showing it first makes the dataclasses.

A job is read by the thousand (the board, every engine pass), so `Job` is made without validation and without
its `__init__`: the fields its events set go in its instance's dict, and the rest read the class's defaults (a
slotted dataclass must set all 80 of its fields, which costs the board four times as much: bench/typed_jobs.py).
The types of its fields are checked once per event, as its chain is folded (`state/shapes.py` takes them from
these annotations), and a chain with a field of another type is set aside there. Nothing here imports pydantic,
whose import alone costs more than starting Python.

A piece's options (`PieceOptions`) are written once: the plan file reads them by their fields, the stored
plan's pieces and the jobs of a piece have them as fields (they inherit them), and each new attempt carries
them (`CARRIED`). Adding one is a field here, its rule and words in the plan file, and its use.
"""

from __future__ import annotations

from _thread import allocate_lock  # threading.Lock itself, without importing threading

from git_balanced import process
from git_balanced.vocab import JobState

TYPE_CHECKING = False  # typing is not imported for this: the board and the inbox read jobs without it
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from dataclasses import dataclass as declared
    from dataclasses import field
    from typing import Any, ClassVar, Self
else:  # ClassVar, which dataclasses looks for here, is bound by _make_each once typing is loaded
    def declared(**options: Any) -> Callable[[type], type]:
        """Keep a class as written, with what `state/views.py` needs to make it a dataclass later (`options`,
        and each `field(...)`'s arguments), its plain defaults as class attributes, and an `__init__`,
        `__eq__` and `__repr__` that make the dataclasses first (and a `__new__` that does, for a call that comes
        while another thread makes them: see `make_dataclasses`)."""

        def keep(cls: type) -> type:
            specs = {}
            for name, value in list(cls.__dict__.items()):
                if isinstance(value, _Spec):
                    specs[name] = value.kw
                    if "default" in value.kw:
                        setattr(cls, name, value.kw["default"])
                    else:
                        delattr(cls, name)
            cls.__field_specs__ = specs
            cls.__declared__ = options
            for name in MADE_FIRST:
                setattr(cls, name, _made_first(name))
            cls.__new__ = _new_made_first  # type: ignore[assignment]
            return cls

        return keep

    def field(**kw: Any) -> Any:
        """A field's arguments, kept for `dataclasses.field` (see `declared`)."""
        return _Spec(kw)


MADE_FIRST = ("__init__", "__eq__", "__repr__")  # what a declared class does only as a dataclass


class _Spec:
    """The arguments of one `field(...)`, until `state/views.py` passes them to `dataclasses.field`."""

    __slots__ = ("kw",)

    def __init__(self, kw: dict[str, Any]) -> None:
        self.kw = kw


def _made_first(name: str) -> Callable[..., Any]:
    """A stand-in for the dataclass's method `name`: it makes the dataclasses (`make_dataclasses`, which replaces
    it), then calls the real one."""

    def first(self: Any, *args: Any, **kwargs: Any) -> Any:
        make_dataclasses()
        return getattr(type(self), name)(self, *args, **kwargs)

    return first


def _new_made_first(cls: type, *args: Any, **kwargs: Any) -> Any:
    """The stand-in `__new__`: a call that comes while another thread makes the dataclasses (its class's
    `__init__` taken away, the dataclass's not there yet) waits for them here, then the dataclass's `__init__`
    runs on what it returns. Once they are made, `_plain_new` takes its place (a `__new__` once set cannot be
    taken away: `object.__new__` would refuse the arguments then). Without arguments (a copy, a pickle) and
    with none making them, it makes nothing: a plain class's instance is copied as it is."""
    if args or kwargs or process.part(_Making).lock.locked():
        make_dataclasses()
    return object.__new__(cls)


def _plain_new(cls: type, *args: Any, **kwargs: Any) -> Any:
    """The declared classes' `__new__` once they are dataclasses: a new instance, for their `__init__`."""
    return object.__new__(cls)


class _Making:
    """Held while the declared classes are made dataclasses: two threads that meet a stand-in at once must not
    both make them (the second would set each field's class attribute back to its `dataclasses.field`)."""

    def __init__(self) -> None:
        self.lock = allocate_lock()
        self.done = False  # set once all are made, after the lock: the classes are read whole then


def make_dataclasses() -> None:
    """Make the declared classes the dataclasses they are written as, in place, bases first (a dataclass takes its
    bases' fields): once, by `state/views.py` as it is imported or by the first stand-in called, one thread at a
    time."""
    making = process.part(_Making)
    if making.done:
        return
    with making.lock:
        _make_each()
        making.done = True


def _make_each() -> None:
    import dataclasses
    import typing

    # dataclasses tells a class variable from a field by its annotation's name bound to typing.ClassVar in the
    # class's module, and get_type_hints reads the fields' names here: bound now, not at import (the board's)
    globals().update(Any=typing.Any, ClassVar=typing.ClassVar)

    for cls in (PieceOptions, Job, StoredPiece, StoredPlan):
        if "__dataclass_fields__" in cls.__dict__:
            continue
        for name in MADE_FIRST:  # the stand-ins: dataclasses does not replace what a class has of its own
            if name in cls.__dict__:
                delattr(cls, name)
        for name, kw in cls.__dict__["__field_specs__"].items():
            setattr(cls, name, dataclasses.field(**kw))
        dataclasses.dataclass(**cls.__dict__["__declared__"])(cls)
    for cls in (PieceOptions, Job, StoredPiece, StoredPlan):  # last: a call meanwhile waited in it
        cls.__new__ = _plain_new  # type: ignore[assignment]


def declared_fields(kind: type) -> dict[str, tuple[str, dict[str, Any], bool]]:
    """Each field of a declared class, bases' first, as `dataclasses.fields` orders them: its annotation (a
    string), the arguments of its `field(...)`, and whether it has a default; without making the dataclass."""
    out: dict[str, tuple[str, dict[str, Any], bool]] = {}
    for k in reversed(kind.__mro__):
        specs = k.__dict__.get("__field_specs__")
        if specs is None:
            continue
        for name, annotation in k.__dict__.get("__annotations__", {}).items():
            if str(annotation).startswith("ClassVar"):
                continue
            spec = specs.get(name, {})
            out[name] = (str(annotation), spec, name in k.__dict__ or "default" in spec or "default_factory" in spec)
    return out


@declared(frozen=True, kw_only=True)
class PieceOptions:
    """How a piece's worker runs: read from the plan file, stored with its plan, given to every job of the
    piece and carried to its next attempts. `doc` says what it does (the lead's plan tool shows it)."""

    agent: str = field(default="shell", metadata={"doc": "claude, codex, pi or shell; default: the settings' agent."})
    model: str | None = field(default=None, metadata={"doc": "The agent's model; default: the settings' model."})
    run: str | None = field(default=None, metadata={
        "doc": "For agent shell only: the command to run in the worktree."})
    paths: tuple[str, ...] = field(default=(), metadata={
        "doc": "Globs the worker may write; edits elsewhere are refused."})
    plan_first: bool = field(default=False, metadata={
        "doc": "For agent claude only: it starts in plan mode and shows you its plan, as a question, before it "
               "changes anything."})
    writes: str | None = field(default=None, metadata={
        "doc": "`none` for a piece that only reads (a review, an analysis): its worker runs in a shared read-only "
               "checkout of the base, anything it writes is refused, and its report is its result; nothing lands."})
    check: str | None = field(default=None, metadata={
        "doc": "The piece's own check (the tests of what it changes), run by its worker in one of its machine's "
               "check seats and reported; landing still runs the repository's check."})
    # The piece's share of its plan's budget in USD: worked out when the plan is stored, never read from a file.
    budget_usd: float | None = field(default=None, metadata={"from_file": False})

    def options(self) -> dict[str, Any]:
        """The options as an event stores them (lists for tuples): what placing a job of the piece copies."""
        return {name: list(v) if isinstance(v := getattr(self, name), tuple) else v for name in OPTIONS}


OPTIONS = tuple(declared_fields(PieceOptions))
# The options a plan file (and the lead's plan tool) sets; plans/planfile.py reads each by its type.
FILE_OPTIONS = tuple(name for name, (_, spec, _) in declared_fields(PieceOptions).items()
                     if (spec.get("metadata") or {}).get("from_file", True))

# What a new job of a piece takes from the one before it, when the engine or you try it again, or when it
# moves to another agent; each sets on top what its reason changes (the attempt, the base, the agent...).
CARRIED = ("plan", "piece", "task", "title", "plan_task", "machine", "why", "branch", "base", "lead", "after",
           "attempt", *OPTIONS)
# Names older versions stored, read as today's.
RENAMED = {"budget": "budget_usd"}


class Unreadable(ValueError):
    """Fields that do not make a job or a plan of this version (a type the fold does not check, as a piece's)."""


class _Reading:
    """How the dicts of a declared class's fields are read: which keys it names, and which of them a JSON number
    or list must become a float or a tuple (JSON cannot tell them apart)."""

    __slots__ = ("own", "floats", "tuples", "factories")

    def __init__(self, own: frozenset[str], floats: tuple[str, ...], tuples: tuple[str, ...],
                 factories: tuple[tuple[str, Callable[[], Any]], ...]) -> None:
        self.own = own
        self.floats = floats
        self.tuples = tuples
        self.factories = factories  # the fields whose default is made afresh

    @classmethod
    def of(cls, kind: type, skip: frozenset[str]) -> _Reading:
        named = {name: f for name, f in declared_fields(kind).items() if name not in skip}
        return cls(frozenset(named),
                   tuple(name for name, (t, _, _) in named.items() if t.startswith("float")),
                   tuple(name for name, (t, _, _) in named.items() if t.startswith("tuple")),
                   tuple((name, spec["default_factory"]) for name, (_, spec, _) in named.items()
                         if "default_factory" in spec))

    def split(self, name: str, raw: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """(the fields this version names, the others) of `raw`, named by `name`, each of its field's type; an
        old name reads as today's. Loops over the few fields that need it, not over the values: the board types
        every job."""
        own = self.own
        values = dict(raw)  # one copy, of the right size
        extra = {}
        if not raw.keys() <= own:  # written by another version, or named by an older one
            extra = {k: values.pop(k) for k in raw.keys() - own}
            for old in extra.keys() & RENAMED.keys():
                if RENAMED[old] in own and RENAMED[old] not in values:
                    values[RENAMED[old]] = extra.pop(old)
            if extra.get("id") == name:
                del extra["id"]
        get = values.get
        for k in self.tuples:
            v = get(k)
            if v is not None:
                values[k] = tuple(v)
        for k in self.floats:
            if type(get(k)) is int:
                values[k] = float(values[k])
        return values, extra


class _Folded:
    """A chain of events folded (`state/fold.py`), with named fields. What this version does not know by name
    (written by another version, shared through `sync`) stays in `extra`, so it is never lost on the way out.
    Mixed into each declared class below, which declares `id`, `state`, `created`, `updated`, `extra`, `set_`."""

    __slots__ = ()
    kind: ClassVar[str] = "thing"
    first_state: ClassVar[str] = ""
    _reading: ClassVar[_Reading]  # set once the class is declared, below

    @classmethod
    def _learn(cls) -> None:
        cls._reading = _Reading.of(cls, _FOLD_KEYS)

    @classmethod
    def of(cls, name: str, folded: Mapping[str, Any]) -> Self:
        """The typed view of one folded state; an `id` in the events is the ref's name. Made without `__init__`:
        what the events did not set reads the class's defaults, so a job costs what its set fields cost."""
        reading = cls._reading
        own, extra = reading.split(name, folded["fields"])
        own["set_"] = tuple(own)
        for key, factory in reading.factories:
            if key not in own:
                own[key] = factory()
        own["extra"] = extra
        own["id"] = name
        own["state"] = folded["state"] or cls.first_state
        own["created"] = float(folded["created"] or 0.0)
        own["updated"] = float(folded["updated"] or 0.0)
        made = object.__new__(cls)
        object.__setattr__(made, "__dict__", own)
        return made

    def as_fields(self) -> dict[str, Any]:
        """The fields as its events wrote them: the ones they set, and the ones this version does not know."""
        return {**{k: getattr(self, k) for k in self.set_}, **self.extra}  # type: ignore[attr-defined]


_FOLD_KEYS = frozenset(("id", "state", "created", "updated", "extra", "set_"))


@declared(frozen=True, kw_only=True)
class Job(PieceOptions, _Folded):
    """One attempt at one piece, as its events (`refs/balanced/jobs/<id>`) left it. `state` is a str; `set_`
    names the fields its events set."""

    kind: ClassVar[str] = "job"
    first_state: ClassVar[str] = JobState.QUEUED

    id: str = ""
    state: str = JobState.QUEUED
    created: float = 0.0
    updated: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)
    set_: tuple[str, ...] = field(default=(), repr=False, compare=False)  # what the events set
    # placed: the piece (its options are PieceOptions'), where it runs, and from what
    job: str = ""
    plan: str = ""
    plan_task: str = ""
    piece: str = ""
    task: str = ""
    title: str = ""
    machine: str = "local"
    why: str = ""
    branch: str = ""
    base: str | None = None
    attempt: int = 1
    lead: str = ""
    after: tuple[str, ...] = ()
    placed_at: float | None = None
    run_no: int = 1
    previous: str | None = None
    retry_reason: str = ""
    not_before: float = 0.0
    moved_from: str | None = None
    # claimed and started: the node (clone) whose engine owns it, and the nodes whose claim came second
    node: str = ""
    claimed_at: float | None = None
    lost_claims: tuple[str, ...] = ()
    taken_from: str = ""
    pid: int | None = None
    worktree: str = ""
    started_at: float | None = None
    # finished, or how it failed
    exit_code: int | None = None
    head: str | None = None
    commits: int = 0
    cost_usd: float | None = None
    outcome: str = ""
    summary: str = ""
    seconds: float | None = None
    dirty: bool = False
    tokens: dict[str, Any] = field(default_factory=dict)
    windows: tuple[dict[str, Any], ...] = ()
    failure: str = ""
    reason: str = ""
    budget_stopped: bool = False
    host_fetch: bool = False
    fetched_ref: str | None = None
    tail: str = ""
    checks: tuple[dict[str, Any], ...] = ()  # what its worker ran through `git balanced seat`, as its run ended
    check_tree: str = ""  # the tree whose check failed its landing (its whole log is kept by that tree)
    verdict_paths: tuple[str, ...] = ()  # what the landing queue named: conflicting or protected paths
    in_the_way: tuple[str, ...] = ()  # the lead's own files its landing would overwrite, while they are there
    in_the_way_why: str = ""
    # paused for a plan's usage limit, moved, carried on
    reset_at: float | None = None
    resume_at: float | None = None
    reset_known: bool = False
    resume_note: str = ""
    spent_before: float = 0.0
    moved_to: str | None = None
    # decided: tried again, given up, landed
    decided: bool = False
    next: str | None = None
    final: str = ""
    landed: str | None = None
    landed_in: str = ""
    # what the lead was told once, and questions
    told_no_check: bool = False
    told_dirty: bool = False
    told_waiting: bool = False
    told_reserve: str | None = None
    waits_for: str = ""
    waits_key: str = ""  # waits_for without its clock times: the lead hears again only when this changes
    asked: str | None = None
    asked_text: str = ""
    answered: str | None = None
    answered_by: str | None = None
    answered_decision: str | None = None  # allow or deny: its row says `allowed by its lead` while it runs on
    dismissed: bool = False

    @property
    def runner_key(self) -> str:
        return self.id if self.run_no == 1 else f"{self.id}-r{self.run_no}"

    @property
    def ever_asked(self) -> bool:
        """Whether its worker asked its lead anything: `asked` is cleared once a question is answered, but set."""
        return "asked" in self.set_

    def carried(self) -> dict[str, Any]:
        """The fields a new job of the same piece starts from (CARRIED), as this job has them."""
        return {k: v for k, v in self.as_fields().items() if k in CARRIED}


@declared(frozen=True, kw_only=True)
class StoredPiece(PieceOptions):
    """A piece as its plan was stored: the plan file's piece, with its branch and where it was placed."""

    id: str
    task: str
    size: float = 1.0
    after: tuple[str, ...] = ()
    machine: str | None = None  # the machine the plan names, if it names one
    branch: str
    placed: str  # where placement put it when the plan was stored
    why: str = ""
    after_words: str = ""
    extra: dict[str, Any] = field(default_factory=dict)  # what this version does not know (a branch's note...)

    @classmethod
    def of(cls, raw: Mapping[str, Any]) -> StoredPiece:
        """A stored piece from its dict in the plan's events."""
        values, extra = _PIECE.split("", raw)
        try:
            return cls(extra=extra, **values)
        except TypeError as exc:  # a piece without `id`, `task`, `branch` or `placed`
            raise Unreadable(f"pieces: {exc}") from None


@declared(frozen=True, kw_only=True)
class StoredPlan(_Folded):
    """A plan, as its events (`refs/balanced/plans/<id>`) left it."""

    kind: ClassVar[str] = "plan"
    first_state: ClassVar[str] = "created"

    id: str = ""
    state: str = "created"
    created: float = 0.0
    updated: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)
    set_: tuple[str, ...] = field(default=(), repr=False, compare=False)  # what the events set
    task: str = ""
    budget_usd: float | None = None
    lead: str = ""
    pieces: tuple[StoredPiece, ...] = ()
    source: str = ""
    started_by: str | None = None
    node: str = ""  # the clone whose engine places its pieces
    moves: dict[str, str] = field(default_factory=dict)  # piece -> why it moved to another agent
    summary: str = ""

    @classmethod
    def of(cls, name: str, folded: Mapping[str, Any]) -> Self:
        """The typed view of one folded plan, its pieces typed too."""
        values, extra = cls._reading.split(name, folded["fields"])
        set_ = tuple(values)
        values["pieces"] = tuple(StoredPiece.of(p) for p in values.get("pieces", ()))
        return cls(id=name, state=folded["state"] or cls.first_state, created=float(folded["created"] or 0.0),
                   updated=float(folded["updated"] or 0.0), extra=extra, set_=set_, **values)

    def piece(self, piece_id: str) -> StoredPiece | None:
        return next((p for p in self.pieces if p.id == piece_id), None)


Job._learn()
StoredPlan._learn()
_PIECE = _Reading.of(StoredPiece, frozenset(("extra",)))
# What a stored piece cannot be without (state/shapes.py checks them as a plan's chain folds).
PIECE_NEEDS = tuple(name for name, (_, _, has_default) in declared_fields(StoredPiece).items() if not has_default)


class PieceView:
    """A stored plan's piece as the board reads it."""

    __slots__ = ("id", "after", "after_words", "placed")

    def __init__(self, fields: Mapping[str, Any]) -> None:
        self.id: str = fields["id"]
        self.after: tuple[str, ...] = tuple(fields.get("after", ()))
        self.after_words: str = fields.get("after_words", "")
        self.placed: str = fields["placed"]


class PlanView:
    """One plan's fields as the board reads them; its pieces only when asked for (a plan that is done has
    nothing for the board's Next)."""

    __slots__ = ("id", "state", "task", "lead", "budget_usd", "_fields")

    def __init__(self, name: str, folded: Mapping[str, Any]) -> None:
        self._fields = folded["fields"]
        self.id: str = name
        self.state: str = folded["state"] or "created"
        self.task: str = self._fields.get("task", "")
        self.lead: str = self._fields.get("lead", "")
        budget = self._fields.get("budget_usd")
        self.budget_usd: float | None = None if budget is None else float(budget)

    @property
    def pieces(self) -> tuple[PieceView, ...]:
        return tuple(PieceView(p) for p in self._fields.get("pieces", ()))


def latest_by_piece(jobs: Mapping[str, Job]) -> dict[tuple[str, str], Job]:
    """The newest attempt of each (plan, piece)."""
    out: dict[tuple[str, str], Job] = {}
    for j in jobs.values():
        key = (j.plan, j.piece)
        cur = out.get(key)
        if cur is None or (j.attempt, j.created, j.id) > (cur.attempt, cur.created, cur.id):
            out[key] = j
    return out
