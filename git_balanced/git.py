"""The one door to git: the git binary where hooks or porcelain matter, dulwich for fast object and ref work."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from git_balanced import proc, ui, untrusted
from git_balanced.errors import GitError, NotARepository
from git_balanced.files import Flock

if TYPE_CHECKING:
    from dulwich.repo import Repo as DulwichRepo

ZERO = "0" * 40
# A detached HEAD file: a commit id (SHA-1 or SHA-256) on a line of its own.
_DETACHED = re.compile(r"(?:[0-9a-f]{40}|[0-9a-f]{64})\n?")
# What makes a name more than a ref's name to `git rev-parse` (`main~1`, `main^{tree}`, `main@{1}`, `a:b`).
_REV_SYNTAX = re.compile(r"[~^:?*\[\\@\s]|\.\.")

BALANCED = "refs/balanced/"  # the state's refs (DESIGN §4)
# The git commands that never write a ref: running any other through a Repo drops its listing (listing_once).
_READS_NO_REF = frozenset({
    "rev-parse", "for-each-ref", "show-ref", "cat-file", "show", "log", "rev-list", "merge-base", "ls-tree",
    "ls-files", "diff", "diff-tree", "status", "config", "symbolic-ref", "merge-tree", "commit-tree", "hash-object",
    "mktree", "check-ref-format", "var", "grep", "describe", "name-rev", "count-objects", "check-ignore"})

# A writer holds a ref's `.lock` for the milliseconds it takes to write 41 bytes and rename them; one older than
# this was left by a process that ended (killed, or its machine went down) and will never be released.
STALE_LOCK_SECONDS = 60.0


def lock_age(lock: Path) -> float | None:
    """How many seconds ago a lock file was last written, or None when there is none."""
    try:
        return max(0.0, time.time() - lock.stat().st_mtime)
    except FileNotFoundError:
        return None


def remove_if_stale(lock: Path, guard: Path, *, say: bool = True) -> float | None:
    """Remove `lock` when it is older than STALE_LOCK_SECONDS; its age when removed, else None.

    Cleaners take `guard` (a flock) and look at the age again under it: two cleaners that both saw the same
    stale lock must not have the second remove the fresh lock a live writer took after the first removed it."""
    age = lock_age(lock)
    if age is None or age < STALE_LOCK_SECONDS:
        return None
    with Flock(guard):
        age = lock_age(lock)
        if age is None or age < STALE_LOCK_SECONDS:
            return None
        lock.unlink(missing_ok=True)
    if not say:  # the caller lists what it removed
        return age
    ui.note(f"[balanced] Removed a stale lock, {lock}: {int(age)} seconds old, left by a git process that "
            "ended; no writer holds one that long.")
    return age


def write_config(path: Path, values: Mapping[str, str]) -> None:
    """Set `section.key` values in one repository's config file, read and written once (with dulwich), where
    `git config` would start a process for each."""
    from dulwich.config import ConfigFile

    cfg = ConfigFile.from_path(str(path))
    for key, value in values.items():
        section, _, name = key.rpartition(".")
        cfg.set((section.encode(),), name.encode(), value.encode())
    cfg.write_to_path(str(path))


def config_text(text: str, values: Mapping[str, str]) -> str:
    """The config file `text` with these `section.key` values set (with dulwich), as git would read it."""
    import io

    from dulwich.config import ConfigFile

    cfg = ConfigFile.from_file(io.BytesIO(text.encode()))
    for key, value in values.items():
        section, _, name = key.rpartition(".")
        cfg.set((section.encode(),), name.encode(), value.encode())
    out = io.BytesIO()
    cfg.write_to_file(out)
    return out.getvalue().decode()


def git_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for a child git: ours without the GIT_* variables leaked by hooks."""
    env = proc.no_git_env()
    if extra:
        env.update(extra)
    return env


def run_git(args: Iterable[str], *, cwd: str | os.PathLike[str], input: str | bytes | None = None,
            env: Mapping[str, str] | None = None, timeout: float | None = None, text: bool = True) -> proc.Result:
    """Run git in `cwd` and return the result whatever its exit code. In a folder a worker, a check or a setup
    could have written (untrusted.folder_of_ours), nothing of that folder's runs: no hook, no fsmonitor, no
    driver, pager or helper its config names, and the working tree is the folder itself."""
    environ = git_env(env)
    argv = ["git", *args]
    where = os.fspath(cwd)
    if untrusted.folder_of_ours(where):
        environ = untrusted.safe_env(environ)
        argv = untrusted.safe_argv(argv[1:], where, lambda a, c: untrusted.safe_listing(a, c, environ))
    return proc.run(argv, cwd=cwd, input=input, env=environ, timeout=timeout, text=text)


def git_out(args: Iterable[str], *, cwd: str | os.PathLike[str], input: str | None = None,
            env: Mapping[str, str] | None = None) -> str:
    """Run git and return stdout without its trailing newline; GitError on a non-zero exit."""
    argv = list(args)
    res = run_git(argv, cwd=cwd, input=input, env=env)
    if res.code != 0:
        raise GitError(["git", *argv], res.code, res.out, res.err)
    return res.out.rstrip("\n")


_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_PER_WORKTREE = ("refs/bisect/", "refs/worktree/", "refs/rewritten/")  # kept in each worktree's own folder
# A component git would refuse in a ref's name (git-check-ref-format), or one that is not a plain ref file.
_ODD_PART = re.compile(r"^\.|\.lock$|\.\.|[\x00-\x20\x7f~^:?*\[\\]|@\{|\.$|^$")


# A config line that moves the working tree, makes the repository bare, or brings in other config files.
_MOVES_TREE = re.compile(r"^[ \t]*(?:worktree[ \t]*=|bare[ \t]*=[ \t]*(?!false|no|off|0)\w)|^[ \t]*\[[ \t]*include",
                         re.IGNORECASE | re.MULTILINE)


def _common_dir(git_dir: str) -> str | None:
    """The common git folder of `git_dir`: the one its `commondir` file names (a linked worktree's), or itself;
    None when that file cannot be read."""
    try:
        with open(f"{git_dir}/commondir", encoding="utf-8") as fh:
            return os.path.realpath(os.path.join(git_dir, fh.readline().strip()))
    except FileNotFoundError:
        return git_dir
    except (OSError, UnicodeDecodeError):
        return None


def _is_git_dir(path: str) -> bool:
    """Whether `path` is a git folder as git judges one: a HEAD of its own, and objects and refs in its common
    folder."""
    common = _common_dir(path)
    return common is not None and os.path.isfile(f"{path}/HEAD") and os.path.isdir(f"{common}/refs") and \
        os.path.isdir(f"{common}/objects")


def found_in_process(where: Path) -> tuple[Path, Path, Path] | None:
    """The working tree, git folder and common git folder of the checkout holding `where`, found as git finds
    them (`git rev-parse --show-toplevel --git-dir --git-common-dir`) without starting it: up from `where` to
    the first `.git`, a folder or a file naming one (a linked worktree, a submodule). None where git should
    answer: a bare repository or a git folder on the way, a `.git` git would not take, another file system, a
    folder or `.git` owned by another user (git's safe.directory), or a config that moves the working tree."""
    try:
        here = os.path.realpath(where)
        uid, device = os.geteuid(), os.stat(here).st_dev
    except OSError:
        return None
    while True:
        dotgit = f"{here}/.git"
        try:
            st = os.stat(dotgit)
        except FileNotFoundError:
            st = None
        except OSError:
            return None
        if st is not None:
            if st.st_uid != uid or os.stat(here).st_uid != uid:
                return None
            if os.path.isdir(dotgit):
                git_dir = dotgit
            else:
                try:
                    with open(dotgit, encoding="utf-8") as fh:
                        line = fh.readline().strip()
                except (OSError, UnicodeDecodeError):
                    return None
                if not line.startswith("gitdir: "):
                    return None
                git_dir = os.path.realpath(os.path.join(here, line[len("gitdir: "):]))
            common = _common_dir(git_dir)
            if common is None or not _is_git_dir(git_dir) or os.path.exists(f"{git_dir}/config.worktree"):
                return None
            try:
                with open(f"{common}/config", encoding="utf-8") as fh:
                    if _MOVES_TREE.search(fh.read()):
                        return None
            except FileNotFoundError:
                pass
            except (OSError, UnicodeDecodeError):
                return None
            return Path(here), Path(git_dir), Path(common)
        if _is_git_dir(here):
            return None  # inside a git folder, or a bare repository: git says what that is
        parent = os.path.dirname(here)
        if parent == here:
            return None
        try:
            if os.stat(parent).st_dev != device:
                return None
        except OSError:
            return None
        here = parent


class PackedRefs:
    """The packed-refs file of a repository, parsed once for each version of it (its inode, size and time)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._key: tuple[int, int, int] | None = None
        self._refs: dict[str, str] = {}

    def refs(self) -> dict[str, str] | None:
        """Each packed ref with its id ({} when there is no file); None when the file is not what git writes."""
        try:
            with open(self.path, "rb") as fh:
                st = os.fstat(fh.fileno())
                key = (st.st_ino, st.st_size, st.st_mtime_ns)
                if key != self._key:
                    parsed: dict[str, str] = {}
                    for raw in fh.read().decode("utf-8", "replace").splitlines():
                        if raw.startswith(("#", "^")) or not raw:
                            continue
                        sha, _, name = raw.partition(" ")
                        if not _ID.fullmatch(sha) or not name.startswith("refs/"):
                            return None
                        parsed[name] = sha
                    self._key, self._refs = key, parsed
        except FileNotFoundError:
            self._key, self._refs = None, {}
        except OSError:
            return None
        return self._refs


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
        if _ID.fullmatch(text):
            found[name] = text
        elif text.startswith("ref: refs/"):
            symbolic[name] = text[5:]
        else:
            return None
    listed = packed.refs()
    if listed is None:
        return None
    for name, sha in listed.items():
        if name not in found and name not in symbolic and (name.startswith(whole + "/") or (
                name == whole and not prefix.endswith("/"))):
            found[name] = sha
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
    return text if _ID.fullmatch(text) else None


@dataclass(frozen=True)
class MergeResult:
    clean: bool
    tree: str
    conflicts: tuple[str, ...]


@dataclass(frozen=True)
class TreeChange:
    """One file that differs between two trees, as `git diff-tree -r --no-renames` names it: its modes and
    blob ids on each side (a zero id, and mode 0, on the side where it is absent) and what happened to it
    (`A`, `M`, `D`, `T`)."""

    path: str
    old_mode: int
    new_mode: int
    old: str
    new: str
    status: str


class Repo:
    """One repository as seen from a checkout (or a bare repository)."""

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
        self._packed = PackedRefs(common_dir / "packed-refs")

    @classmethod
    def discover(cls, cwd: str | os.PathLike[str] | None = None) -> Repo:
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

    @property
    def store(self) -> Any:
        """dulwich's object store, loosely typed: its stubs want ObjectID where bytes do."""
        return self.dul.object_store

    @property
    def _refs(self) -> Any:
        return self.dul.refs

    def write_blob(self, data: bytes) -> str:
        """Write a loose blob; returns its id."""
        from dulwich.objects import Blob

        blob = Blob.from_string(data)
        self.store.add_object(blob)
        return blob.id.decode()

    def write_tree(self, entries: Iterable[tuple[str, int, str]]) -> str:
        """Write a loose tree of (name, mode, sha) entries; returns its id."""
        from dulwich.objects import Tree

        tree: Any = Tree()
        for name, mode, sha in entries:
            tree.add(name.encode(), mode, sha.encode())
        self.store.add_object(tree)
        return tree.id.decode()

    def write_commit(self, tree: str, parents: list[str], message: str, when: float | None = None) -> str:
        """Write a loose commit by the repository's identity; returns its id."""
        from dulwich.objects import Commit

        c: Any = Commit()
        c.tree = tree.encode()
        c.parents = [p.encode() for p in parents]
        ident = self.identity_line.encode()
        c.author = c.committer = ident
        ts = int(when if when is not None else time.time())
        c.author_time = c.commit_time = ts
        c.author_timezone = c.commit_timezone = 0
        c.encoding = b"UTF-8"
        c.message = message.encode()
        self.store.add_object(c)
        return c.id.decode()

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
        """The id a ref points at, or None."""
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
        lock on the ref is removed, and the swap tried again; a fresh one is a lost race."""
        from dulwich.file import FileLocked

        refs = self._refs
        self._reflog_dir(ref)
        self._listed = None
        try:
            # Naming the committer spares dulwich a read of the git config for the reflog on every update.
            who = self.identity_line.encode()
            if old is None:
                return bool(refs.add_if_new(ref.encode(), new.encode(), committer=who, message=message.encode()))
            return bool(refs.set_if_equals(ref.encode(), old.encode(), new.encode(), committer=who,
                                           message=message.encode()))
        except FileLocked:
            if self.clear_stale_lock(ref):
                return self.cas_ref(ref, new, old, message)
            return False  # another writer holds the lock: the same as losing the race

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

    @contextmanager
    def listing_once(self) -> Iterator[None]:
        """Within it, the refs under refs/balanced/ are listed once for every kind of them (a pass of the
        engine, and the board, read four to six kinds), and listed again after a ref was written through this
        object. What another process writes meanwhile is seen at the next listing."""
        self._listing += 1
        try:
            yield
        finally:
            self._listing -= 1
            if not self._listing:
                self._listed = None

    def list_refs(self, prefix: str) -> dict[str, str]:
        """Every ref under `prefix` with its id, as `git for-each-ref` lists them (see listing_once)."""
        if not self._listing or not prefix.startswith(BALANCED) or any(c in prefix for c in "*?["):
            return self._for_each_ref(prefix)
        if self._listed is None:
            self._listed = {}
            for ref, tip in self._for_each_ref(BALANCED).items():
                end = ref.find("/", len(BALANCED))
                self._listed.setdefault(ref[:end + 1] if end > 0 else ref, {})[ref] = tip
        if prefix in self._listed:
            return dict(self._listed[prefix])
        whole = prefix.rstrip("/")  # as for-each-ref matches: the whole name, or up to a slash
        return {ref: tip for refs in self._listed.values() for ref, tip in refs.items()
                if ref == whole or ref.startswith(whole + "/")}

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

    # -- porcelain-ish helpers ---------------------------------------------------------------------------------
    def rev_parse(self, rev: str) -> str | None:
        """The commit id `rev` names, or None. A branch's full ref name (`refs/heads/…`, which git keeps
        pointing at a commit) is read in-process, without starting git."""
        if rev.startswith("refs/heads/") and not _REV_SYNTAX.search(rev):
            try:
                return self.read_ref(rev)
            except (OSError, ValueError):
                pass  # unreadable here: git says what it is
        obj = self._object(rev)
        if obj is not None:
            return obj.id.decode() if obj.type_name == b"commit" else None
        res = self._run("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
        return res.out.strip() or None if res.code == 0 else None

    def tree_of(self, rev: str) -> str:
        """The tree of a commit (or the tree itself); a full commit id is read in-process."""
        obj = self._object(rev)
        if obj is not None and obj.type_name in (b"commit", b"tree"):
            return str((obj.tree if obj.type_name == b"commit" else obj.id).decode())
        return self._git("rev-parse", f"{rev}^{{tree}}")

    def _object(self, rev: str) -> Any | None:
        """The object a full id names, its tags peeled, read through dulwich; None for anything else (a name, an
        abbreviated id, an object dulwich cannot find or read), which git then resolves."""
        if not _ID.fullmatch(rev):
            return None
        try:
            obj = self.store[rev.encode()]
            while obj.type_name == b"tag":
                obj = self.store[obj.object[1]]
        except Exception:  # missing or unreadable here: git has the last word on it
            return None
        return obj

    def current_branch(self) -> str | None:
        """The checked-out branch's short name, or None when HEAD is detached. Read from this checkout's HEAD
        file, as `git symbolic-ref HEAD` reads it, without starting git; git answers when the file says
        something else (another ref store's placeholder, a symbolic ref outside refs/heads/)."""
        try:
            head = (self.git_dir / "HEAD").read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            head = ""
        name = head[len("ref: refs/heads/"):].rstrip("\n") if head.startswith("ref: refs/heads/") else ""
        if name and name != ".invalid" and "\n" not in name:
            return name
        if _DETACHED.fullmatch(head):
            return None
        res = self._run("symbolic-ref", "--quiet", "--short", "HEAD")
        return res.out.strip() if res.code == 0 else None

    def is_ancestor(self, a: str, b: str) -> bool:
        return self._run("merge-base", "--is-ancestor", a, b).code == 0

    def show_file(self, rev: str, path: str) -> str | None:
        """A file's text at `rev`, or None when it has no such file. A branch or a commit id is read
        through dulwich (the engine reads its settings so every pass); any other revision through git."""
        sha = rev if re.fullmatch(r"[0-9a-f]{40}", rev) else self.read_ref(
            rev if rev.startswith("refs/") else f"refs/heads/{rev}")
        if sha is None:
            res = self._run("show", f"{rev}:{path}")
            return res.out if res.code == 0 else None
        from dulwich.errors import NotTreeError
        from dulwich.object_store import tree_lookup_path

        try:
            commit = self.store[sha.encode()]
            while commit.type_name == b"tag":
                commit = self.store[commit.object[1]]
            _, blob_id = tree_lookup_path(self.store.__getitem__, commit.tree, path.encode())
            blob = self.store[blob_id]
        except (KeyError, NotTreeError):
            return None
        return blob.data.decode(errors="replace") if blob.type_name == b"blob" else None

    def merge_tree(self, ours: str, theirs: str) -> MergeResult:
        """Merge two commits without touching any worktree (`git merge-tree --write-tree`)."""
        res = self._run("merge-tree", "--write-tree", "--name-only", "--no-messages", ours, theirs)
        lines = res.out.splitlines()
        if res.code not in (0, 1) or not lines:
            raise GitError(["git", "merge-tree", "--write-tree", ours, theirs], res.code, res.out, res.err)
        conflicts = tuple(dict.fromkeys(x for x in lines[1:] if x))
        return MergeResult(res.code == 0, lines[0], conflicts)

    def status_paths(self) -> list[str]:
        """Paths with uncommitted changes (staged, unstaged or untracked) in this checkout."""
        out = self._run("status", "--porcelain=v1", "-z", "--untracked-files=all").out
        paths: list[str] = []
        parts = out.split("\0")
        i = 0
        while i < len(parts):
            item = parts[i]
            if len(item) > 3:
                paths.append(item[3:])
                if item[0] in "RC":
                    i += 1
                    if i < len(parts) and parts[i]:
                        paths.append(parts[i])
            i += 1
        return paths

    def status_entries(self) -> list[tuple[str, str]]:
        """Each path of this checkout with uncommitted changes, untracked ones included, and git's two-letter
        code for it (`??` for an untracked file); a rename as the removal and the addition it is."""
        out = self._run("status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames").out
        return [(item[:2], item[3:]) for item in out.split("\0") if len(item) > 3]

    def changed_paths(self, a: str, b: str) -> list[str]:
        """Paths that differ between two commits or trees."""
        out = self._git("diff", "--name-only", "-z", "--no-renames", a, b)
        return [p for p in out.split("\0") if p]

    def diff_tree(self, a: str, b: str) -> list[TreeChange]:
        """The files that differ between commits or trees `a` and `b`, each with its blobs on both sides."""
        out = self._git("diff-tree", "-r", "-z", "--no-renames", "--no-commit-id", a, b)
        parts = out.split("\0")
        found = []
        for head, path in zip(parts[0::2], parts[1::2], strict=False):
            if not head.startswith(":"):
                continue
            old_mode, new_mode, old, new, status = head[1:].split(" ")
            found.append(TreeChange(path, int(old_mode, 8), int(new_mode, 8), old, new, status))
        return found

    def numstat(self, base: str, tip: str) -> list[tuple[int | None, int | None, str]]:
        """Lines added and removed in each file from the merge base of `base` and `tip` to `tip`
        (`git diff --numstat base...tip`); None for a binary file's counts."""
        out = self._git("diff", "--numstat", "--no-renames", f"{base}...{tip}")
        found = []
        for line in out.splitlines():
            parts = line.split("\t", 2)
            if len(parts) == 3:
                found.append((int(parts[0]) if parts[0].isdigit() else None,
                              int(parts[1]) if parts[1].isdigit() else None, parts[2]))
        return found

    def object_sizes(self, ids: list[str]) -> list[int]:
        """The size in bytes of each object in `ids`, in order (one `git cat-file --batch-check` for all)."""
        if not ids:
            return []
        out = self._git("cat-file", "--batch-check=%(objectsize)", input="\n".join(ids) + "\n")
        return [int(x) for x in out.split()]

    def files_in(self, rev: str, paths: list[str]) -> list[str]:
        """Those of `paths` (from the top of the tree) that are files in the tree of `rev`."""
        if not paths:
            return []
        out = self._git("ls-tree", "-z", "--full-tree", rev, "--", *paths)
        have = {entry.split("\t", 1)[1] for entry in out.split("\0") if "\t" in entry and " blob " in entry}
        return [p for p in paths if p in have]

    def merge_base(self, a: str, b: str) -> str:
        """The best common ancestor of commits `a` and `b`; GitError when they share none."""
        return self._git("merge-base", a, b)

    def count_commits(self, since: str, until: str) -> int:
        """How many commits `until` has that `since` has not (`git rev-list --count since..until`)."""
        return int(self._git("rev-list", "--count", f"{since}..{until}"))

    def commits(self, tip: str, exclude: str | None = None, *, first_parent: bool = False,
                most: int | None = None) -> list[str]:
        """The commits of `tip`, newest first, without those of `exclude`; along first parents only
        (`first_parent`), and `most` of them at the most."""
        args = ["rev-list", *(["--first-parent"] if first_parent else []),
                *([f"--max-count={most}"] if most is not None else []), tip, *([f"^{exclude}"] if exclude else [])]
        return self._git(*args).split()

    def subject(self, rev: str) -> str:
        """The first line of the message of commit `rev`."""
        return self._git("log", "-1", "--format=%s", rev)

    def first_parent_log(self, revs: str, fmt: str, *, notes: str | None = None, most: int | None = None,
                         oldest_first: bool = False) -> str:
        """`git log --first-parent` of `revs` (a branch, `A..B`) in the format `fmt`, newest first unless
        `oldest_first`; with the notes of `notes` for `%N`, and `most` commits at the most."""
        args = ["log", "--first-parent", *([f"--notes={notes}"] if notes else []), f"--format={fmt}",
                *([f"-n{most}"] if most is not None else []), *(["--reverse"] if oldest_first else []), revs]
        return self._git(*args)

    def write_index_tree(self) -> str:
        """Write this checkout's index as a tree (`git write-tree`); its id."""
        return self._git("write-tree")

    def commit_tree(self, tree: str, parents: list[str], message: str) -> str:
        """Write a commit of `tree` on `parents` through git (its identity and dates as git takes them); its id."""
        return self._git("commit-tree", tree, *(x for p in parents for x in ("-p", p)), "-m", message)

    def git_path(self, name: str) -> Path:
        """Where git keeps `name` of this checkout (`hooks`, say), as an absolute path: core.hooksPath and a
        linked worktree's folders included (`git rev-parse --git-path`)."""
        return Path(self._git("rev-parse", "--path-format=absolute", "--git-path", name))

    def cat_file_batch(self, asked: bytes) -> bytes | None:
        """What `git cat-file --batch` answers for the object names in `asked` (one a line), as it writes it;
        None when git failed."""
        res = run_git(["cat-file", "--batch"], cwd=self.root, input=asked, text=False)
        out: bytes = res.out  # type: ignore[assignment]  # bytes, as text=False reads them
        return out if res.code == 0 else None

    def config_value(self, key: str) -> str | None:
        """The value git reads for `key` (`core.hooksPath`) from this repository's config and the user's, or
        None when none is set."""
        res = self._run("config", "--get", key)
        return (res.out.strip() or None) if res.ok else None

    def upstream(self, branch: str) -> str | None:
        """The short name of `branch`'s upstream (`origin/main`), or None when it has none."""
        res = self._run("rev-parse", "--abbrev-ref", "--symbolic-full-name", f"{branch}@{{upstream}}")
        return (res.out.strip() or None) if res.ok else None

    def update_ref(self, ref: str, new: str, old: str, *, message: str) -> bool:
        """Point `ref` at `new` through git (any ref store git knows) only if it still points at `old`; False
        when it does not."""
        return self._run("update-ref", "-m", message, ref, new, old).ok

    def delete_ref(self, ref: str, old: str | None) -> bool:
        """Remove `ref` through git only if it still points at `old` (None: whatever it points at); False when
        it does not, or git could not."""
        return self._run("update-ref", "-d", ref, *([old] if old else [])).ok

    def fetch(self, remote: str, specs: list[str], *, fetch_head: bool = True, upload_pack: str | None = None,
              env: Mapping[str, str] | None = None, timeout: float | None = None) -> proc.Result:
        """Fetch the refspecs `specs` from `remote` (a name, a path, a URL), without tags; without writing
        FETCH_HEAD unless `fetch_head`, with the machine's `upload_pack` program when given; git's result,
        whatever its exit code."""
        return self._run("fetch", "--quiet", "--no-tags", *([] if fetch_head else ["--no-write-fetch-head"]),
                         *([f"--upload-pack={upload_pack}"] if upload_pack else []), remote, *specs,
                         env=env, timeout=timeout)

    def push(self, remote: str, specs: list[str], *, quiet: bool = True, lease: str | None = None,
             receive_pack: str | None = None, env: Mapping[str, str] | None = None,
             timeout: float | None = None) -> proc.Result:
        """Push the refspecs `specs` to `remote` without running this repository's pre-push hooks (state is
        not code: they have nothing to judge in it); git's result (`--porcelain`), whatever its exit code.
        With `lease` (`REF:ID`), all of it lands only if the remote's REF is still ID (`--atomic
        --force-with-lease`); `receive_pack` names the machine's program."""
        return self._run("push", *(["--quiet"] if quiet else []), "--porcelain", "--no-verify",
                         *([f"--receive-pack={receive_pack}"] if receive_pack else []),
                         *(["--atomic", f"--force-with-lease={lease}"] if lease else []), remote, *specs,
                         env=env, timeout=timeout)

    def push_as_user(self, remote: str, spec: str) -> proc.Result:
        """Push `spec` to `remote` as the user's own `git push` would, hooks and all (shipping the lead's
        branch upstream); git's result, whatever its exit code."""
        return self._run("push", remote, spec)

    def fast_forward_checkout(self, target: str, reflog_action: str) -> proc.Result:
        """Fast-forward the checked-out branch and its working tree to `target` (`git merge --ff-only`), its
        reflog line saying `reflog_action`; git's result, whatever its exit code."""
        return self._run("merge", "--ff-only", "--quiet", target, env={"GIT_REFLOG_ACTION": reflog_action})

    def prune_worktrees(self, *, dry_run: bool = False) -> proc.Result:
        """Forget the linked worktrees whose folders are gone (`git worktree prune`), or only say which
        (`dry_run`: a line `Removing worktrees/NAME: why` each); git's result, whatever its exit code."""
        return self._run("worktree", "prune", *(["--dry-run", "--verbose"] if dry_run else []))

    def remove_worktree(self, path: Path, *, copy: Path | None = None) -> proc.Result:
        """Remove the linked worktree at `path` (of `copy`, another repository, when given), which git refuses
        when anything in it changed; git's result, whatever its exit code."""
        return self._run("worktree", "remove", str(path), cwd=copy)

    def is_ignored(self, path: str) -> bool:
        """Whether git ignores `path` (relative to the working tree) here (`git check-ignore`)."""
        return self._run("check-ignore", "-q", "--", path).code == 0

    def config_values(self, pattern: str) -> list[tuple[str, str]]:
        """The config keys (lowercased, as git names them) matching the regex `pattern`, with their values,
        in the order git reads them (`git config --get-regexp`)."""
        res = self._run("config", "--null", "--get-regexp", pattern)
        found = []
        for entry in res.out.split("\0") if res.code == 0 else []:
            key, _, value = entry.partition("\n")
            if key:
                found.append((key, value))
        return found

    def committer_ident(self) -> str | None:
        """The committer line git would write here (`Name <email> time zone`), or None when it has none."""
        res = self._run("var", "GIT_COMMITTER_IDENT")
        return res.out.strip() if res.ok else None

    def root_commits(self, rev: str) -> list[str]:
        """The commits without parents that `rev` reaches, newest first ([] when it names none)."""
        res = self._run("rev-list", "--max-parents=0", rev)
        return res.out.split() if res.ok else []

    def kept_by_a_ref(self, sha: str) -> bool:
        """Whether a branch, remote branch or tag of this repository holds the commit `sha`."""
        res = self._run("for-each-ref", "--count=1", "--contains", sha, "refs/heads/", "refs/remotes/", "refs/tags/")
        return res.code == 0 and bool(res.out.strip())

    # -- another checkout, seen from this repository ---------------------------------------------------------
    def status_at(self, where: Path) -> proc.Result:
        """`git status --porcelain` of the checkout at `where` (untracked files by folder); git's result."""
        return self._run("status", "--porcelain", "--untracked-files=normal", cwd=where)

    def head_at(self, where: Path) -> tuple[str | None, str | None]:
        """The commit and the branch (short name) of the checkout at `where`; None for what it has not."""
        head = self._run("rev-parse", "--verify", "--quiet", "HEAD", cwd=where).out.strip()
        branch = self._run("symbolic-ref", "--quiet", "--short", "HEAD", cwd=where).out.strip()
        return head or None, branch or None

    def branch_tips_at(self, where: Path) -> list[tuple[str, str]]:
        """Each branch of the checkout at `where`, as (its commit, its short name)."""
        out = self._run("for-each-ref", "--format=%(objectname) %(refname:short)", "refs/heads/", cwd=where).out
        return [(sha, name) for sha, _, name in (line.partition(" ") for line in out.splitlines())]

    def common_dir_at(self, where: Path) -> Path | None:
        """The common git folder of the checkout at `where`, or None when git finds none there."""
        res = self._run("rev-parse", "--path-format=absolute", "--git-common-dir", cwd=where)
        return Path(res.out.strip()) if res.code == 0 and res.out.strip() else None

    def remotes(self) -> list[str]:
        """The names of this repository's remotes."""
        return self._git("remote").split()

    def put_worktree_at(self, git_dir: Path, where: Path, rev: str) -> None:
        """Put the worktree at `where`, whose own git folder is `git_dir`, at `rev`: detached, forced, and
        without an untracked or ignored file. The folder is named, not found through the worktree's `.git` file,
        which what ran there could have rewritten."""
        self._git(f"--git-dir={git_dir}", "checkout", "--quiet", "--detach", "--force", rev, cwd=where)
        self._git(f"--git-dir={git_dir}", "clean", "-ffdq", cwd=where)
