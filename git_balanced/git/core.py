"""A repository's core: where it lives, git run here, and its objects and refs through dulwich (a write of a
ref is one compare-and-swap; a listing of the state's refs is read once per `listing_once`)."""

from __future__ import annotations

import os
import time
from functools import cached_property
from pathlib import Path

from git_balanced import proc
from git_balanced.errors import NotARepository
from git_balanced.git.discover import found_in_process
from git_balanced.git.locks import remove_if_stale
from git_balanced.git.objects import Objects, shared
from git_balanced.git.refs import BALANCED, LOCKED, fsync_file, packed_refs, read_plain, refs_from_files, write_loose
from git_balanced.git.run import git_out, run_git

TYPE_CHECKING = False  # typing is not imported for this: the board and the inbox start without it
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from typing import Any, Self

    from dulwich.repo import Repo as DulwichRepo

# The git commands that never write a ref: running any other through a Repo drops its listing (listing_once).
_READS_NO_REF = frozenset({
    "rev-parse", "for-each-ref", "show-ref", "cat-file", "show", "log", "rev-list", "merge-base", "ls-tree",
    "ls-files", "diff", "diff-tree", "status", "config", "symbolic-ref", "merge-tree", "commit-tree", "hash-object",
    "mktree", "check-ref-format", "var", "grep", "describe", "name-rev", "count-objects", "check-ignore"})


# Besides the state's refs, those swapped as git swaps a loose ref (refs.write_loose) once they exist.
_SWAPPED_OWN = ("refs/heads/", "refs/notes/")



class _Within:
    """A `with` block: `enter()` as it starts, `leave()` as it ends, however it ends (what
    contextlib.contextmanager would make of a generator that yields once, without importing contextlib)."""

    __slots__ = ("_enter", "_leave")

    def __init__(self, enter: Callable[[], None], leave: Callable[[], None]) -> None:
        self._enter, self._leave = enter, leave

    def __enter__(self) -> None:
        self._enter()

    def __exit__(self, *exc: object) -> None:
        self._leave()

class RepoCore:
    """One repository as seen from a checkout (or a bare repository): its folders, git run there, dulwich's
    view of it, and its refs. Repo adds the named git commands."""

    def __init__(self, root: Path, git_dir: Path, common_dir: Path, bare: bool = False) -> None:
        self.root = root
        self.git_dir = git_dir
        self.common_dir = common_dir
        self.bare = bare
        # The stale locks removed through this object, (lock path, age in seconds): the engine tells its lead.
        self.cleared: list[tuple[str, float]] = []
        self._log_dirs: set[str] = set()  # the reflog folders known to exist (see _reflog_dir)
        self._listing = 0  # inside how many `listing_once` blocks
        self._listed: dict[str, dict[str, str]] | None = None  # "refs/balanced/<kind>/" -> its refs, while listing
        self._packed = packed_refs(common_dir)  # shared by the process's Repos on it
        self._batching = 0  # inside how many `batch` blocks
        self._unsynced: str | None = None  # the last ref written in a batch without an fsync

    @classmethod
    def discover(cls, cwd: str | os.PathLike[str] | None = None) -> Self:
        """The repository containing `cwd` (default: the current folder): found in-process where that is plain
        (found_in_process), else by git."""
        where = Path(cwd or os.getcwd())
        found = found_in_process(where)
        if found is not None:
            return cls(*found)
        res = run_git(
            ["rev-parse", "--path-format=absolute", "--is-bare-repository", "--git-dir", "--git-common-dir",
             "--show-toplevel"], cwd=where)
        lines = res.out.splitlines()
        if res.code != 0 and len(lines) < 3:
            raise NotARepository(str(where))
        bare = lines[0] == "true"
        git_dir, common = Path(lines[1]), Path(lines[2])
        root = Path(lines[3]) if len(lines) > 3 and not bare else git_dir
        return cls(root, git_dir, common, bare)

    # -- running git -------------------------------------------------------------------------------------
    def _git(self, *args: str, input: str | None = None, env: Mapping[str, str] | None = None,
            cwd: str | os.PathLike[str] | None = None) -> str:
        """Run git here; stdout, or GitError with the command and both streams."""
        if args and args[0] not in _READS_NO_REF:
            self._listed = None
        return git_out(args, cwd=cwd or self.root, input=input, env=env)

    def _run(self, *args: str, input: str | None = None, env: Mapping[str, str] | None = None,
             cwd: str | os.PathLike[str] | None = None, timeout: float | None = None) -> proc.Result:
        """Run git here and return the result whatever its exit code."""
        if args and args[0] not in _READS_NO_REF:
            self._listed = None
        return run_git(args, cwd=cwd or self.root, input=input, env=env, timeout=timeout)

    # -- where things live ---------------------------------------------------------------------------------
    @property
    def state_dir(self) -> Path:
        """`.git/balanced/`: caches and locks, never shared."""
        d = self.common_dir / "balanced"
        d.mkdir(parents=True, exist_ok=True)
        return d

    @property
    def name(self) -> str:
        """The repository's folder name, as used for remote copies and worktree folders."""
        base = self.common_dir.parent if self.common_dir.name == ".git" else self.common_dir
        return base.name.removesuffix(".git") or "repo"

    @property
    def identity(self) -> str:
        """What names this repository on this machine: the real path of its common git folder."""
        return str(self.common_dir.resolve())

    def worktrees_home(self) -> Path:
        """`~/.balanced/worktrees/<repository>-<short hash of its path>/`, outside any `.git`."""
        import hashlib

        short = hashlib.sha256(self.identity.encode()).hexdigest()[:8]
        d = Path.home() / ".balanced" / "worktrees" / f"{self.name}-{short}"
        d.mkdir(parents=True, exist_ok=True)
        return d

    # -- dulwich for speed -----------------------------------------------------------------------------------
    @cached_property
    def dul(self) -> DulwichRepo:
        from dulwich.repo import Repo as DulwichRepo

        return DulwichRepo(str(self.common_dir if self.bare else self.root))

    @cached_property
    def store(self) -> Objects:
        """The objects of this repository: dulwich's store of its objects folder, shared by every Repo and
        thread of this process that reads it (objects.py)."""
        return shared(self.dul)

    @property
    def _refs(self) -> Any:
        return self.dul.refs

    def write_blob(self, data: bytes) -> str:
        """Write a loose blob; returns its id."""
        return self.store.add_raw("blob", data)

    def write_tree(self, entries: Iterable[tuple[str, int, str]]) -> str:
        """Write a loose tree of (name, mode, sha) entries (in git's order: a folder's name sorts as if it ended
        in '/'); returns its id."""
        named = {name.encode(): (mode, sha) for name, mode, sha in entries}  # a name given twice: the last
        rows = sorted(((name, mode, sha) for name, (mode, sha) in named.items()),
                      key=lambda row: row[0] + b"/" if row[1] == 0o040000 else row[0])
        return self.store.add_raw("tree", b"".join(b"%o %s\0" % (mode, name) + bytes.fromhex(sha)
                                                    for name, mode, sha in rows))

    def write_commit(self, tree: str, parents: list[str], message: str, when: float | None = None) -> str:
        """Write a loose commit by the repository's identity (its author and committer, at `when` in UTC, the
        message's encoding named UTF-8); returns its id."""
        ident = self.identity_line.encode()
        ts = int(when if when is not None else time.time())
        head = [b"tree " + tree.encode(), *(b"parent " + p.encode() for p in parents),
                b"author %s %d +0000" % (ident, ts), b"committer %s %d +0000" % (ident, ts), b"encoding UTF-8"]
        return self.store.add_raw("commit", b"\n".join(head) + b"\n\n" + message.encode())

    @cached_property
    def identity_line(self) -> str:
        """`Name <email>` for state commits: the user's git identity, or the tool's own."""
        name = os.environ.get("GIT_COMMITTER_NAME")
        email = os.environ.get("GIT_COMMITTER_EMAIL")
        if not (name and email):
            cfg = self.dul.get_config_stack()
            try:
                name = name or cfg.get((b"user",), b"name").decode()
                email = email or cfg.get((b"user",), b"email").decode()
            except KeyError:
                pass
        return f"{name or 'git balanced'} <{email or 'balanced@localhost'}>"

    def read_ref(self, ref: str) -> str | None:
        """The id a ref points at, or None. A ref under refs/ is read from git's files (refs.read_plain), with the
        packed-refs this process shared (dulwich would parse them again for each Repo); dulwich reads the others."""
        if ref.startswith("refs/") and not self._reftable:
            plain, tip = read_plain(self.common_dir, ref, self._packed)
            if plain:
                return tip
        try:
            return str(self._refs[ref.encode()].decode())
        except KeyError:
            return None

    def ref_lock(self, ref: str) -> Path:
        """The `.lock` file git and dulwich create next to a loose ref while they write it."""
        return self.common_dir / f"{ref}.lock"

    def clear_stale_lock(self, ref: str) -> bool:
        """Remove the lock of `ref` if it is stale (see STALE_LOCK_SECONDS); True when one was removed."""
        return self._clear(self.ref_lock(ref))

    def _clear(self, lock: Path) -> bool:
        age = remove_if_stale(lock, self.state_dir / "locks.lock")
        if age is not None:
            self.cleared.append((str(lock), age))
        return age is not None

    def held_locks(self, ref: str) -> list[Path]:
        """The locks a fast-forward of the checked-out `ref` takes (the ref's, and this checkout's HEAD's) that
        a live git holds now; stale ones are removed first."""
        held = []
        for lock in (self.ref_lock(ref), self.git_dir / "HEAD.lock"):
            self._clear(lock)
            if lock.exists():
                held.append(lock)
        return held

    def cas_ref(self, ref: str, new: str, old: str | None, message: str = "git balanced") -> bool:
        """Compare-and-swap: point `ref` at `new` only if it still points at `old` (None: is absent). A stale
        lock on the ref is removed, and the swap tried again; a fresh one is a lost race. The state's refs are
        swapped here as git swaps a loose ref (refs.write_loose), each with an fsync, or one for a whole `batch`;
        a lead's branch and the notes (an existing one: a new one is left to dulwich's checks of the names around
        it) the same way, which reads packed-refs through the process's shared copy; any other ref through
        dulwich, which parses packed-refs in each Repo."""
        self._reflog_dir(ref)
        self._listed = None
        plain = not self._reftable and (ref.startswith(BALANCED) or (old is not None and ref.startswith(_SWAPPED_OWN)))
        swapped = self._swap_own(ref, new, old, message) if plain else self._swap_dulwich(ref, new, old, message)
        if swapped is None:
            if self.clear_stale_lock(ref):
                return self.cas_ref(ref, new, old, message)
            return False  # another writer holds the lock: the same as losing the race
        return swapped

    def _swap_own(self, ref: str, new: str, old: str | None, message: str) -> bool | None:
        """The swap of one of the state's refs (refs.write_loose); None when its lock is held. A ref that is not
        plain (a symbolic ref, packed-refs git did not write, a ref where a folder is) is left to dulwich."""
        path = f"{self.common_dir}/{ref}"
        try:
            done = write_loose(self.common_dir, ref, new, old, self._packed, who=self.identity_line,
                               message=message, fsync=not (self._batching and ref.startswith(BALANCED)))
        except (ValueError, NotADirectoryError, FileExistsError, IsADirectoryError):
            return self._swap_dulwich(ref, new, old, message)
        if done is LOCKED:
            return None
        if done and self._batching:
            self._unsynced = path
        return done

    @cached_property
    def _reftable(self) -> bool:
        """Whether the refs are kept in a reftable (git 2.45's other ref store), not in files."""
        return (self.common_dir / "reftable").exists()

    def _swap_dulwich(self, ref: str, new: str, old: str | None, message: str) -> bool | None:
        """The swap through dulwich; None when another writer holds the ref's lock."""
        from dulwich.file import FileLocked

        refs = self._refs
        try:
            # Naming the committer spares dulwich a read of the git config for the reflog on every update.
            who = self.identity_line.encode()
            if old is None:
                return bool(refs.add_if_new(ref.encode(), new.encode(), committer=who, message=message.encode()))
            return bool(refs.set_if_equals(ref.encode(), old.encode(), new.encode(), committer=who,
                                           message=message.encode()))
        except FileLocked:
            return None

    def batch(self) -> _Within:
        """Within it (a pass of the engine), the state's refs swapped through this object are renamed into place
        one by one, as always (a kill leaves each whole), without an fsync each, and made durable at its end by
        one fsync: of the last one written, which on a journalling file system (ext4, xfs) commits the journal
        and every rename before it with it. A power cut within the batch can lose its last swaps, never a
        ref's old value and new value mixed."""
        return _Within(self._batch_in, self._batch_out)

    def _batch_in(self) -> None:
        self._batching += 1

    def _batch_out(self) -> None:
        self._batching -= 1
        if not self._batching and self._unsynced:
            last, self._unsynced = self._unsynced, None
            fsync_file(last)

    def _reflog_dir(self, ref: str) -> None:
        """Make the folder of `ref`'s reflog before dulwich writes it: dulwich makes it with a bare mkdir, and
        two writers making the first refs under one folder at once would see one of them fail."""
        folder = os.path.dirname(ref)
        if folder not in self._log_dirs:
            (self.common_dir / "logs" / folder).mkdir(parents=True, exist_ok=True)
            self._log_dirs.add(folder)

    def cas_ref_delete(self, ref: str, old: str) -> bool:
        """Remove `ref` only if it still points at `old`; False when another writer moved it first."""
        from dulwich.file import FileLocked

        self._reflog_dir(ref)
        self._listed = None
        try:
            return bool(self._refs.remove_if_equals(ref.encode(), old.encode(), committer=self.identity_line.encode(),
                                                    message=b"git balanced"))
        except FileLocked:
            return False

    def listing_once(self) -> _Within:
        """Within it, the refs of each kind under refs/balanced/ (its folder) are listed once, when first asked
        for (a pass of the engine, and the board, read four to six kinds), and listed again after a ref was
        written through this object. What another process writes meanwhile is seen at the next listing."""
        return _Within(self._listing_in, self._listing_out)

    def _listing_in(self) -> None:
        self._listing += 1

    def _listing_out(self) -> None:
        self._listing -= 1
        if not self._listing:
            self._listed = None

    def list_refs(self, prefix: str) -> dict[str, str]:
        """Every ref under `prefix` with its id, as `git for-each-ref` lists them (see listing_once)."""
        if not self._listing or not prefix.startswith(BALANCED) or any(c in prefix for c in "*?["):
            return self._for_each_ref(prefix)
        end = prefix.find("/", len(BALANCED))
        if end < 0:  # not within one kind's folder (refs/balanced/ itself): listed as asked
            return self._for_each_ref(prefix)
        if self._listed is None:
            self._listed = {}
        group = prefix[:end + 1]  # each kind's folder listed once, when first asked for: a reader that never
        if group not in self._listed:  # asks for the jobs' (the state's cache kept their list) reads none of them
            self._listed[group] = self._for_each_ref(group)
        if prefix == group:
            return dict(self._listed[group])
        whole = prefix.rstrip("/")  # as for-each-ref matches: the whole name, or up to a slash
        return {ref: tip for ref, tip in self._listed[group].items() if ref == whole or ref.startswith(whole + "/")}

    def refs_stamp(self, folder: str) -> tuple[int, ...] | None:
        """What changes whenever a ref directly in `folder` (as "refs/balanced/jobs/") is written, made or removed
        in git's files: the folder's time and packed-refs' identity; None where that cannot be told (a reftable,
        no such folder). A writer in the same clock tick as a look may leave it unchanged: a caller lists again
        while the stamp is newer than a second."""
        if self._reftable:
            return None
        try:
            st = os.stat(self.common_dir / folder)
        except OSError:
            return None
        try:
            packed = os.stat(self.common_dir / "packed-refs")
            packs: tuple[int, ...] = (packed.st_ino, packed.st_mtime_ns, packed.st_size)
        except FileNotFoundError:
            packs = ()
        return (st.st_mtime_ns, *packs)

    def _for_each_ref(self, prefix: str) -> dict[str, str]:
        """The refs under `prefix` as `git for-each-ref PREFIX` lists them: read from git's files in-process
        where that is plain (refs_from_files), else from git."""
        found = refs_from_files(self.common_dir, prefix, self._packed)
        if found is not None:
            return found
        out = self._git("for-each-ref", "--format=%(objectname) %(refname)", prefix)
        refs: dict[str, str] = {}
        for line in out.splitlines():
            sha, _, name = line.partition(" ")
            refs[name] = sha
        return refs
