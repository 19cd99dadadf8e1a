"""Refs read in-process from the files git keeps them in (loose refs and packed-refs), as `git for-each-ref`
lists them, where that is plain (None where git should answer instead); and a loose ref swapped as git swaps it."""

from __future__ import annotations

import bisect
import os
import re
import time
from _thread import allocate_lock  # threading.Lock itself, without importing threading
from pathlib import Path

from git_balanced import process

TYPE_CHECKING = False  # typing is not imported for this: the board and the inbox start without it
if TYPE_CHECKING:
    from typing import NamedTuple
else:
    from git_balanced.typed import NamedTuple

ZERO = "0" * 40
BALANCED = "refs/balanced/"  # the state's refs (DESIGN §4)
OBJECT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")  # a full object id, SHA-1 or SHA-256
_PER_WORKTREE = ("refs/bisect/", "refs/worktree/", "refs/rewritten/")  # kept in each worktree's own folder
# A component git would refuse in a ref's name (git-check-ref-format), or one that is not a plain ref file.
_ODD_PART = re.compile(r"^\.|\.lock$|\.\.|[\x00-\x20\x7f~^:?*\[\\]|@\{|\.$|^$")


class PackedRefs:
    """The packed-refs file of a repository, parsed once for each version of it (its inode, size and time), and
    shared by this process's Repos and threads on that repository (`packed_refs`): a lead's ten thousand packed
    refs are some megabytes parsed, once, not once a Repo. Each version is read whole under a lock and kept as one
    snapshot, so a reader never mixes two."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = allocate_lock()
        self._key: tuple[int, int, int] | None = None
        self._seen = Packed({}, [])  # the last version read

    def read(self) -> Packed | None:
        """Each packed ref with its id, and their names sorted (empty when there is no file); None when the file is
        not what git writes."""
        with self._lock:
            try:
                with open(self.path, "rb") as fh:
                    st = os.fstat(fh.fileno())
                    key = (st.st_ino, st.st_size, st.st_mtime_ns)
                    if key != self._key:
                        parsed = _parse(fh.read())
                        if parsed is None:
                            return None
                        self._key, self._seen = key, Packed(parsed, sorted(parsed))
            except FileNotFoundError:
                self._key, self._seen = None, Packed({}, [])
            except OSError:
                return None
            return self._seen

    def refs(self) -> dict[str, str] | None:
        """Each packed ref with its id ({} when there is no file); None when the file is not what git writes."""
        seen = self.read()
        return None if seen is None else seen.refs

    def names_under(self, whole: str) -> list[str]:
        """The packed refs named `whole` or under `whole/`, as the last `read()` read them."""
        return self._seen.names_under(whole)


class Packed(NamedTuple):
    """One version of packed-refs: each ref's id, and the names sorted."""

    refs: dict[str, str]
    names: list[str]

    def names_under(self, whole: str) -> list[str]:
        """The refs named `whole` or under `whole/`: a bisection of the sorted names, so a lead's thousands of
        packed branches cost nothing to a listing of its jobs."""
        names, out = self.names, []
        at = bisect.bisect_left(names, whole)
        while at < len(names) and names[at].startswith(whole):
            if len(names[at]) == len(whole) or names[at][len(whole)] == "/":
                out.append(names[at])
            at += 1
        return out


def _parse(raw: bytes) -> dict[str, str] | None:
    """The refs of a packed-refs file's bytes; None when it is not what git writes."""
    parsed: dict[str, str] = {}
    for line in raw.decode("utf-8", "replace").splitlines():
        if line.startswith(("#", "^")) or not line:
            continue
        sha, _, name = line.partition(" ")
        if not OBJECT_ID.fullmatch(sha) or not name.startswith("refs/"):
            return None
        parsed[name] = sha
    return parsed


class _Shared(process.Bounded[str, PackedRefs]):
    """This process's PackedRefs, by the real path of the file."""

    KEEP = 16

    def __init__(self) -> None:
        super().__init__()
        self.lock = allocate_lock()


def packed_refs(common_dir: Path) -> PackedRefs:
    """The PackedRefs of the repository whose common folder is `common_dir`, shared by this process."""
    path = os.path.realpath(common_dir / "packed-refs")
    shared = process.part(_Shared)
    with shared.lock:
        return shared.made(path, lambda: PackedRefs(Path(path)))


def refs_from_files(common_dir: Path, prefix: str, packed: PackedRefs) -> dict[str, str] | None:
    """The refs under `prefix` with their ids, sorted by name, as `git for-each-ref PREFIX` lists them, read from
    the files git keeps them in: the loose refs (read first: a ref git packs meanwhile is then in packed-refs),
    then packed-refs. None where git should answer instead: a pattern, a worktree's own refs, another ref store,
    a name or a file git would judge (a link, a symbolic ref that does not resolve, a ref that is not an id).
    It costs a tenth of starting git for ten refs, and two thirds for two thousand (bench/listing.py)."""
    if not prefix.startswith("refs/") or any(c in prefix for c in "*?[\\") or prefix.startswith(_PER_WORKTREE):
        return None
    if (common_dir / "reftable").exists():
        return None
    whole = prefix.rstrip("/")
    files: list[str] = []
    folders = [whole]
    while folders:
        rel = folders.pop()
        try:
            with os.scandir(f"{common_dir}/{rel}") as entries:
                for entry in entries:
                    if entry.is_symlink():
                        return None
                    if entry.name.endswith(".lock"):
                        continue  # a writer's lock, not a ref
                    if _ODD_PART.search(entry.name):
                        return None
                    (folders if entry.is_dir(follow_symlinks=False) else files).append(f"{rel}/{entry.name}")
        except FileNotFoundError:
            continue
        except NotADirectoryError:
            if rel != whole or prefix.endswith("/"):
                return None
            files.append(rel)  # the prefix names one ref: for-each-ref matches it whole
    found: dict[str, str] = {}
    symbolic: dict[str, str] = {}
    for name in files:
        try:
            text = _ref_text(f"{common_dir}/{name}")
        except FileNotFoundError:
            continue  # removed since the folder was read: as if read after
        except OSError:
            return None
        if OBJECT_ID.fullmatch(text):
            found[name] = text
        elif text.startswith("ref: refs/"):
            symbolic[name] = text[5:]
        else:
            return None
    seen = packed.read()
    if seen is None:
        return None
    listed = seen.refs
    for name in seen.names_under(whole):
        if name not in found and name not in symbolic and (name != whole or not prefix.endswith("/")):
            found[name] = listed[name]
    for name, target in symbolic.items():  # as git shows one: the id of the ref it names
        tip = _loose_id(common_dir, target) or listed.get(target)
        if tip is None:
            return None
        found[name] = tip
    return dict(sorted(found.items()))


def _ref_text(path: str) -> str:
    """A loose ref file's text, stripped; OSError (FileNotFoundError when it is gone) as open raises it."""
    fd = os.open(path, os.O_RDONLY)
    try:
        return os.read(fd, 4096).decode("utf-8", "replace").strip()
    finally:
        os.close(fd)


def _loose_id(common_dir: Path, ref: str) -> str | None:
    """The id a loose ref holds, or None (no such file, or not an id)."""
    if ref.startswith(_PER_WORKTREE) or any(_ODD_PART.search(part) for part in ref.split("/")):
        return None
    try:
        text = _ref_text(f"{common_dir}/{ref}")
    except OSError:
        return None
    return text if OBJECT_ID.fullmatch(text) else None


def read_plain(common_dir: Path, ref: str, packed: PackedRefs) -> tuple[bool, str | None]:
    """The id of `ref` read from git's files as git reads it: its loose file, else packed-refs (read once while it
    is unchanged), rather than dulwich's check of every name in packed-refs at each read (2 s for 20,000 refs).
    (True, None) when there is no such ref; (False, None) where dulwich should answer instead: a symbolic ref, an
    odd name, a file that is not an id, packed-refs not as git writes it."""
    if ref.startswith(_PER_WORKTREE) or any(_ODD_PART.search(part) for part in ref.split("/")):
        return False, None
    try:
        text = _ref_text(f"{common_dir}/{ref}")
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        text = None
    except OSError:
        return False, None
    if text is not None:
        return (True, text) if OBJECT_ID.fullmatch(text) else (False, None)
    listed = packed.refs()
    if listed is None:
        return False, None
    return True, listed.get(ref)


LOCKED = None  # what write_loose answers when another writer holds the ref's lock


def write_loose(common_dir: Path, ref: str, new: str, old: str | None, packed: PackedRefs, *, who: str,
                message: str, fsync: bool) -> bool | None:
    """Compare-and-swap one loose ref the way git does it: take `<ref>.lock` (O_EXCL), read the ref again under
    it (its loose file, else packed-refs), write `new` there and rename it over the ref only if the ref is still
    `old` (None: absent); a line in its reflog. Each write is whole (a rename), so a writer killed at any point
    leaves the ref as it was or as it is now, and at worst its lock (removed once stale). With `fsync`, the new
    file is on disk before the rename; without, the caller makes a batch of them durable at once (core.batch).
    True when swapped (or `old` is `new`), False when the ref was not `old`, LOCKED when the lock is held."""
    path = f"{common_dir}/{ref}"
    lock = f"{path}.lock"
    os.makedirs(os.path.dirname(path), exist_ok=True)
    try:
        fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except FileExistsError:
        return LOCKED
    try:
        try:
            now: str | None = _ref_text(path)
        except FileNotFoundError:
            listed = packed.refs()
            if listed is None:
                raise ValueError("packed-refs is not as git writes it") from None
            now = listed.get(ref)
        if now is not None and not OBJECT_ID.fullmatch(now):
            raise ValueError(f"{ref} holds {now[:60]!r}, not an id")
        if now != old or now == new:  # another writer moved it; or it is `new` already, which needs no write
            os.close(fd)
            fd = -1
            os.unlink(lock)
            return now == old
        os.write(fd, f"{new}\n".encode())
        if fsync:
            os.fsync(fd)
        os.close(fd)
        fd = -1
        os.rename(lock, path)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        try:
            os.unlink(lock)
        except FileNotFoundError:
            pass
        raise
    _log(common_dir, ref, old, new, who, message)
    return True


def _log(common_dir: Path, ref: str, old: str | None, new: str, who: str, message: str) -> None:
    """Append the swap to the ref's reflog, as git writes a line of it. Its folder is made again when it is gone
    (git removes a reflog folder left empty by a delete, as `gc` folding every plan away does)."""
    line = f"{old or ZERO} {new} {who} {int(time.time())} +0000\t{' '.join(message.split())}\n"
    path = f"{common_dir}/logs/{ref}"
    try:
        fh = open(path, "a", encoding="utf-8")
    except FileNotFoundError:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fh = open(path, "a", encoding="utf-8")
    with fh:
        fh.write(line)


def fsync_file(path: str) -> None:
    """Flush one file to disk (a file removed since needs nothing)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
