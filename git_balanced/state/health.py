"""What is wrong with the state in refs: malformed refs under `refs/balanced/`, and ref locks left by processes
that ended. A reader skips a malformed ref and names it once; `git balanced doctor` lists both and removes them."""

from __future__ import annotations

import re
from pathlib import Path
from weakref import WeakKeyDictionary, WeakSet

from git_balanced import process, ui
from git_balanced.git import STALE_LOCK_SECONDS, Repo, lock_age
from git_balanced.state.events import Event, Malformed
from git_balanced.state.refs import read_chain

TYPE_CHECKING = False  # typing is not imported for this: the board and the inbox start without it
if TYPE_CHECKING:
    from typing import NamedTuple
else:
    from git_balanced.typed import NamedTuple

# Jobs, plans and schedules are named by ids (`events.new_id`); a name of another form was not written by
# git balanced, and a reader that trusted it would place a job at a path it cannot name.
ID_KINDS = ("jobs", "plans", "schedules")
ID_FORM = re.compile(r"[0-9A-Za-z][0-9A-Za-z_-]*")

# What a malformed object raises on the way through dulwich and json: a blob has no parents, a tree no
# message, a missing object is a KeyError, a file that is not JSON a ValueError (`Malformed` is one).
UNREADABLE = (KeyError, AttributeError, ValueError, TypeError, IndexError, RecursionError)

# Where a malformed ref's old tip is kept once it is set aside: nothing is lost, `doctor` lists it there.
BROKEN = "refs/balanced/broken/"
GONE = "(removed)"  # what `set_aside` says of a ref to a missing object, removed outright

# What lives under refs/balanced/ and is not a chain of events: heartbeats (one commit rewritten in place), the
# lead's base as a machine's copy holds it, what was set aside, and the archive (state/archive.py). Everything else
# there is read as a chain.
NOT_CHAINS = ("nodes", "base", "bases", "broken", "archive")


class BrokenRef(NamedTuple):
    """A ref under `refs/balanced/` that is not a chain of events git balanced can read."""

    ref: str
    tip: str
    why: str
    kept: str = ""  # where it was set aside, when it was

    @property
    def fix(self) -> str:
        """The command that removes it (only while it still points where it did when it was found)."""
        ref = self.kept or self.ref
        return f"git update-ref -d {ref} {self.tip}" if self.tip else f"git update-ref -d {ref}"

    def words(self) -> str:
        where = ("removed, as there is nothing to keep" if self.kept == GONE
                 else f"set aside as {self.kept} ({self.tip[:12]})" if self.kept else "skipped")
        return (f"{self.ref} is malformed ({self.why}); it is {where}, and everything else goes on. "
                f"`git balanced doctor` lists it, `git balanced doctor --fix` removes it.")


class Met:
    """What the readers of each Repo object (one command, or one engine run) met (a part of process.py)."""

    def __init__(self) -> None:
        # The malformed refs found, by ref; and which (ref, tip) were named on stderr already: readers look
        # every pass.
        self.found: WeakKeyDictionary[Repo, dict[str, BrokenRef]] = WeakKeyDictionary()
        self.named: WeakKeyDictionary[Repo, set[tuple[str, str]]] = WeakKeyDictionary()
        # Repo objects whose readers only look (the doctor's, before `--fix`): what they meet stays where it is.
        self.looking: WeakSet[Repo] = WeakSet()


def look_only(repo: Repo) -> None:
    """Let the readers of `repo` name what is malformed without setting it aside: the doctor lists it in place."""
    process.part(Met).looking.add(repo)


def set_aside(repo: Repo, ref: str, tip: str) -> str | None:
    """Move the malformed `ref` (at `tip`) to `refs/balanced/broken/...`, compare-and-swap both ways, so no
    reader of this or any later command reads it again and no sync spreads it; where it went, or None when
    another writer moved it first (the next reader looks again)."""
    try:
        try:
            repo.store[tip.encode()]
        except KeyError:  # nothing to keep, and a ref to a missing object stops git's own listing of refs
            return GONE if repo.cas_ref_delete(ref, tip) else None
        kept = BROKEN + ref[len("refs/balanced/"):]
        held = repo.read_ref(kept)
        if held not in (None, tip):  # an older one set aside under that name: keep both
            kept = f"{kept}-{tip[:12]}"
            held = repo.read_ref(kept)
        if held != tip and not repo.cas_ref(kept, tip, held, message="balanced: set aside a malformed ref"):
            return None
        return kept if repo.cas_ref_delete(ref, tip) else None
    except OSError:  # no room under refs/balanced/broken/ (a ref named `refs/balanced/broken` holds the name)
        return None


def found(repo: Repo, ref: str, tip: str, why: str) -> BrokenRef:
    """Record a malformed ref that a reader met, set it aside, and name it on stderr once for this Repo object."""
    met = process.part(Met)
    kept = set_aside(repo, ref, tip) if tip and ref.startswith("refs/balanced/") \
        and not ref.startswith(BROKEN) and repo not in met.looking else None
    broken = BrokenRef(ref, tip, why, kept or "")
    met.found.setdefault(repo, {})[ref] = broken
    named = met.named.setdefault(repo, set())
    if (ref, tip) not in named:
        named.add((ref, tip))
        ui.note(f"[balanced] {broken.words()}")
    return broken


def mark_named(repo: Repo, broken: list[BrokenRef]) -> None:
    """Count these as named already: a caller that lists them needs no reader's line on stderr as well."""
    process.part(Met).named.setdefault(repo, set()).update((b.ref, b.tip) for b in broken)


def seen(repo: Repo) -> list[BrokenRef]:
    """The malformed refs the readers of this Repo object met, and those set aside before (by any command of any
    clone), whose `why` is left for `untold` to read: the lead hears of each, whoever set it aside."""
    out = {(b.ref, b.tip): b for b in process.part(Met).found.get(repo, {}).values()}
    for kept, tip in repo.list_refs(BROKEN).items():
        out.setdefault((_was(kept, tip), tip), BrokenRef(_was(kept, tip), tip, "", kept))
    return sorted(out.values(), key=lambda b: (b.ref, b.kept))


def _was(kept: str, tip: str) -> str:
    """The ref that `kept` (under refs/balanced/broken/) was set aside from."""
    return "refs/balanced/" + kept[len(BROKEN):].removesuffix(f"-{tip[:12]}")


def bad_name(kind: str, name: str) -> str | None:
    """Why `name` cannot be the name of a `kind` ref, or None."""
    if kind in ID_KINDS and not ID_FORM.fullmatch(name):
        return f"{name!r} is not an id"
    return None


def chain_of(repo: Repo, kind: str, name: str, tip: str) -> tuple[list[Event], str | None]:
    """The events of `refs/balanced/<kind>/<name>` at `tip`, or no events and why the ref is malformed."""
    why = bad_name(kind, name)
    if why:
        return [], why
    try:
        events = read_chain(repo, tip)
    except UNREADABLE as exc:
        return [], why_unreadable(repo, tip, exc)
    if not events:
        return [], "its commits hold no event.json"
    return events, wrong_shape(kind, events)


def wrong_shape(kind: str, events: list[Event]) -> str | None:
    """Why these well-formed events cannot be a `kind`'s (a field the fold or the board reads, of another type)."""
    from git_balanced.state.shapes import wrong_field  # here: a reader whose folds are all cached checks none

    for ev in events:
        why = wrong_field(kind, ev.data)
        if why:
            return f"{why} (commit {ev.sha[:12]})"
    return None


def chain_since(repo: Repo, kind: str, name: str, tip: str, known: str | None) -> str | None:
    """Why the events reachable from `tip` and not from `known` are malformed, or None: what a sync checks of
    what it fetched or would push, reading only what is new."""
    if kind in NOT_CHAINS:
        return None
    why = bad_name(kind, name)
    if why:
        return why
    try:
        events = read_chain(repo, tip, {known} if known else None)
    except UNREADABLE as exc:
        return why_unreadable(repo, tip, exc)
    if not events and not known:
        return "its commits hold no event.json"
    return wrong_shape(kind, events)


def why_unreadable(repo: Repo, tip: str, exc: Exception) -> str:
    """Why the chain at `tip` cannot be read, in words."""
    try:
        kind = repo.store[tip.encode()].type_name.decode()
    except KeyError:
        return f"it points at {tip[:12]}, which is not in the repository"
    if kind != "commit":
        return f"it points at a {kind}, not a commit"
    if isinstance(exc, Malformed):
        return exc.why
    if isinstance(exc, RecursionError):
        return "its chain cannot be read: nested too deeply"
    text = str(exc).strip() or type(exc).__name__
    return f"an event.json in its chain cannot be read: {text[:120]}"


def scan(repo: Repo) -> list[BrokenRef]:
    """Every malformed ref under `refs/balanced/`, read in full (the doctor's look, not a reader's), and every
    one set aside before, with why it was."""
    out = []
    for ref, tip in repo.list_refs("refs/balanced/").items():
        parts = ref.split("/", 3)
        if len(parts) < 4:
            out.append(BrokenRef(ref, tip, "it names no kind of state (refs/balanced/<kind>/<name>)"))
            continue
        if parts[2] == "broken":
            out.append(_kept(repo, ref, tip))
            continue
        if parts[2] in NOT_CHAINS:
            continue
        _events, why = chain_of(repo, parts[2], parts[3], tip)
        if why:
            out.append(BrokenRef(ref, tip, why))
    return out


def _kept(repo: Repo, ref: str, tip: str) -> BrokenRef:
    """A ref set aside under `refs/balanced/broken/<kind>/<name>`, with why, read again from what it holds."""
    was = _was(ref, tip)
    parts = was.split("/", 3)
    why = chain_of(repo, parts[2], parts[3], tip)[1] if len(parts) == 4 else None
    return BrokenRef(was, tip, why or "a reader could not take its fields", ref)


def untold(repo: Repo, broken: list[BrokenRef]) -> list[BrokenRef]:
    """The ones of `broken` never told to this clone's lead, marked as told now: the inbox hears of each once."""
    path = repo.state_dir / "told-broken"
    try:
        told = set(path.read_text().split("\n"))
    except FileNotFoundError:
        told = set()
    new = [b if b.why else _kept(repo, b.kept, b.tip) for b in broken if f"{b.ref} {b.tip}" not in told]
    if new:
        with open(path, "a", encoding="utf-8") as f:
            f.writelines(f"{b.ref} {b.tip}\n" for b in new)
    return new


class StaleLock(NamedTuple):
    """A ref's `.lock` file older than any writer holds one."""

    path: Path
    ref: str
    age: float

    @property
    def fix(self) -> str:
        return f"rm {self.path}"


def lock_refs(repo: Repo, lead_ref: str | None) -> list[tuple[Path, str]]:
    """Every lock file next to a ref git balanced writes: state refs, its notes, worker branches, the lead's
    branch. Other locks (`index.lock`, `packed-refs.lock`, the user's other branches) belong to the user's git."""
    refs_dir = repo.common_dir / "refs"
    found_locks: list[tuple[Path, str]] = []
    places = [refs_dir / "balanced", refs_dir / "heads" / "balanced"]
    for place in places:
        if place.is_dir():
            found_locks += [(p, _ref_of(repo, p)) for p in place.rglob("*.lock")]
    notes = refs_dir / "notes"
    if notes.is_dir():
        found_locks += [(p, _ref_of(repo, p)) for p in notes.glob("balanced*.lock")]
    if lead_ref:
        lock = repo.ref_lock(lead_ref)
        if lock.exists() and all(lock != p for p, _ in found_locks):
            found_locks.append((lock, lead_ref))
    return sorted(found_locks)


def _ref_of(repo: Repo, lock: Path) -> str:
    return str(lock.relative_to(repo.common_dir)).removesuffix(".lock")


def stale_locks(repo: Repo, lead_ref: str | None) -> list[StaleLock]:
    """The locks of `lock_refs` older than STALE_LOCK_SECONDS."""
    out = []
    for path, ref in lock_refs(repo, lead_ref):
        age = lock_age(path)
        if age is not None and age >= STALE_LOCK_SECONDS:
            out.append(StaleLock(path, ref, age))
    return out
