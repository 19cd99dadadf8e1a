"""What is wrong with the state in refs: malformed refs under `refs/balanced/`, and ref locks left by processes
that ended. A reader skips a malformed ref and names it once; `git balanced doctor` lists both and removes them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from weakref import WeakKeyDictionary

from git_balanced import ui
from git_balanced.git import STALE_LOCK_SECONDS, Repo, lock_age
from git_balanced.state.events import Event
from git_balanced.state.refs import KINDS, read_chain

# Jobs, plans and schedules are named by ids (`events.new_id`); a name of another form was not written by
# git balanced, and a reader that trusted it would place a job at a path it cannot name.
ID_KINDS = ("jobs", "plans", "schedules")
ID_FORM = re.compile(r"[0-9A-Za-z][0-9A-Za-z_-]*")

# What a malformed object raises on the way through dulwich and json: a blob has no parents, a tree no
# message, a missing object is a KeyError, a file that is not JSON a ValueError.
UNREADABLE = (KeyError, AttributeError, ValueError, TypeError, IndexError)


@dataclass(frozen=True)
class BrokenRef:
    """A ref under `refs/balanced/` that is not a chain of events git balanced can read."""

    ref: str
    tip: str
    why: str

    @property
    def fix(self) -> str:
        """The command that removes it (only while it still points where it did when it was found)."""
        return f"git update-ref -d {self.ref} {self.tip}" if self.tip else f"git update-ref -d {self.ref}"

    def words(self) -> str:
        return (f"{self.ref} is malformed ({self.why}); it is skipped, and everything else goes on. "
                f"`git balanced doctor` lists it, `git balanced doctor --fix` removes it.")


# What the readers of one Repo object (one command, or one engine run) found, by ref; and which (ref, tip)
# they named on stderr already: readers look every pass.
_FOUND: WeakKeyDictionary[Repo, dict[str, BrokenRef]] = WeakKeyDictionary()
_NAMED: WeakKeyDictionary[Repo, set[tuple[str, str]]] = WeakKeyDictionary()


def found(repo: Repo, ref: str, tip: str, why: str) -> BrokenRef:
    """Record a malformed ref that a reader skipped, and name it on stderr once for this Repo object."""
    broken = BrokenRef(ref, tip, why)
    _FOUND.setdefault(repo, {})[ref] = broken
    named = _NAMED.setdefault(repo, set())
    if (ref, tip) not in named:
        named.add((ref, tip))
        ui.note(f"[balanced] {broken.words()}")
    return broken


def mark_named(repo: Repo, broken: list[BrokenRef]) -> None:
    """Count these as named already: a caller that lists them needs no reader's line on stderr as well."""
    _NAMED.setdefault(repo, set()).update((b.ref, b.tip) for b in broken)


def seen(repo: Repo) -> list[BrokenRef]:
    """The malformed refs the readers of this Repo object skipped."""
    return sorted(_FOUND.get(repo, {}).values(), key=lambda b: b.ref)


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
    return events, None


def why_unreadable(repo: Repo, tip: str, exc: Exception) -> str:
    """Why the chain at `tip` cannot be read, in words."""
    try:
        kind = repo.store[tip.encode()].type_name.decode()
    except KeyError:
        return f"it points at {tip[:12]}, which is not in the repository"
    if kind != "commit":
        return f"it points at a {kind}, not a commit"
    text = str(exc).strip() or type(exc).__name__
    return f"an event.json in its chain cannot be read: {text[:120]}"


def scan(repo: Repo) -> list[BrokenRef]:
    """Every malformed ref under `refs/balanced/<kind>/`, read in full (the doctor's look, not a reader's)."""
    out = []
    for ref, tip in repo.list_refs("refs/balanced/").items():
        parts = ref.split("/", 3)
        if parts[2:3] == ["broken"]:
            out.append(BrokenRef(ref, tip, "an old tip of a malformed ref, set aside so that writing could go on"))
            continue
        if len(parts) < 4 or parts[2] not in KINDS:
            continue  # not a kind this version writes: another version's, left alone
        _events, why = chain_of(repo, parts[2], parts[3], tip)
        if why:
            out.append(BrokenRef(ref, tip, why))
    return out


def untold(repo: Repo, broken: list[BrokenRef]) -> list[BrokenRef]:
    """The ones of `broken` never told to this clone's lead, marked as told now: the inbox hears of each once."""
    path = repo.state_dir / "told-broken"
    try:
        told = set(path.read_text().split("\n"))
    except FileNotFoundError:
        told = set()
    new = [b for b in broken if f"{b.ref} {b.tip}" not in told]
    if new:
        with open(path, "a", encoding="utf-8") as f:
            f.writelines(f"{b.ref} {b.tip}\n" for b in new)
    return new


@dataclass(frozen=True)
class StaleLock:
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
