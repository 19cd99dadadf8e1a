"""Moving the lead's checkout with a landing: the files, the index and the branch all move, or none of them.

`git merge --ff-only` writes the files one by one, then the index, then the branch. When the disk fills halfway,
it stops there: new files half-written, the index and the branch as they were, and the half-written files look
like the person's own. So a landing first asks whether the write fits (with room to spare), and if git fails
anyway (another process filled the disk meanwhile, or a smudge filter such as Git LFS's writes more than the
blobs hold), every path git may have written and the index are put back as they were before it reports.
"""

from __future__ import annotations

import errno
import os
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from git_balanced.errors import BalancedError, DiskFull, GitError, disk_full
from git_balanced.files import clear_debris
from git_balanced.git import Repo
from git_balanced.shipped import pids

BLOCK = 4096  # what one more file costs at the least on most file systems
MARGIN = 1 << 20  # room kept over the estimate: reflogs, ORIG_HEAD, the locks, what the estimate cannot see
MODE_LINK, MODE_EXEC, MODE_GITLINK = 0o120000, 0o100755, 0o160000


@dataclass(frozen=True)
class Change:
    """One path the move changes: its mode and blob before (`old`) and after (`new`); None where it is absent."""

    path: str
    old_mode: int
    old: str | None
    new_mode: int
    new: str | None


def changes(repo: Repo, a: str, b: str) -> list[Change]:
    """The files that differ between commits `a` and `b`, with their blobs on each side."""
    found = []
    for c in repo.diff_tree(a, b):
        zero = "0" * len(c.old)
        found.append(Change(c.path, c.old_mode, None if c.old == zero else c.old, c.new_mode,
                            None if c.new == zero else c.new))
    return found


def fast_forward(repo: Repo, branch: str, tip: str, target: str, *, check_room: bool = True) -> bool:
    """Fast-forward the checked-out `branch` from `tip` to `target`, carrying the person's other changes;
    False when the branch is no longer at `tip`. On a failure the checkout and the index are as before."""
    moves = changes(repo, tip, target)
    what = f"moving {branch} and your checkout to {target[:7]}"
    if check_room:
        ensure_room(repo, moves, what)
    index = repo.git_dir / "index"
    _forget_kept(repo)
    keep = repo.state_dir / f"index.before-land.{os.getpid()}"
    try:
        try:
            os.link(index, keep)  # a second name for the index git replaces, which costs no room
        except FileNotFoundError:
            keep = Path()
        except OSError as exc:
            if disk_full(exc) is not None:  # not even a name fits: nothing was written yet
                raise DiskFull(str(repo.git_dir), what=what) from None
            keep = Path()  # a file system without hard links: git replaces the index only once the files are in
        made = _missing_folders(repo, moves)
        since = time.time()
        r = repo.fast_forward_checkout(target, "balanced land")
        if r.code == 0:
            return True
        now = repo.rev_parse(f"refs/heads/{branch}")
        if now == target:  # the branch moved; what failed after that (a hook's output) changes nothing
            return True
        if now != tip:  # you committed meanwhile: git refused before writing a file
            return False
        short = _short_of_room(repo)  # git does not always say why a write failed (a filter's output): look
        try:
            restore(repo, tip, moves, made, keep)
        except OSError as exc:  # the one case where the checkout is not as it was: say so, and which paths
            shown = " ".join(c.path for c in moves[:10]) + (" …" if len(moves) > 10 else "")
            raise BalancedError(
                f"{branch} did not move, and putting back the files git wrote failed too ({exc.strerror}).",
                hint=f"make room, then `git restore --source=HEAD --staged --worktree -- {shown}` puts them back "
                     "as committed.") from exc
        clear_debris(repo.common_dir / "objects", since)
        full = disk_full(GitError(["git", "merge", "--ff-only", target], r.code, r.out, r.err), str(repo.root),
                         what) or (DiskFull(short, what=what) if short else None)
        if full is not None:
            raise full
        raise BalancedError(f"Could not move {branch}: {r.err.strip() or r.out.strip()}; your checkout is as it "
                            "was.", hint="commit or stash your changes, then run `git balanced land` again.")
    finally:
        if keep != Path():
            keep.unlink(missing_ok=True)


def _forget_kept(repo: Repo) -> None:
    """Remove the second names of old indexes that a landing killed halfway left (each holds an index's room)."""
    for kept in repo.state_dir.glob("index.before-land.*"):
        pid = kept.name.rsplit(".", 1)[1]
        if pid.isdigit() and int(pid) != os.getpid() and pids.alive(int(pid)):
            continue  # a landing of another process, going on now
        kept.unlink(missing_ok=True)


def ensure_room(repo: Repo, moves: list[Change], what: str) -> None:
    """Refuse, before anything is written, a move whose files and index would not fit with room to spare."""
    sizes = _sizes(repo, [c.new for c in moves if c.new and c.new_mode != MODE_GITLINK])
    files = sum(-(-n // BLOCK) * BLOCK + BLOCK for n in sizes)
    try:
        index = (repo.git_dir / "index").stat().st_size
    except FileNotFoundError:
        index = 0
    tree, git = os.statvfs(repo.root), os.statvfs(repo.git_dir)
    same = os.stat(repo.root).st_dev == os.stat(repo.git_dir).st_dev
    asks = [(str(repo.root), tree, files + (index + MARGIN if same else MARGIN), len(sizes))]
    if not same:
        asks.append((str(repo.git_dir), git, index + MARGIN, 4))
    for where, st, need, inodes in asks:
        free = st.f_bavail * st.f_frsize
        if free < need or (st.f_files and st.f_favail < inodes + 16):  # f_files 0: no inode count kept
            raise DiskFull(where, what=what, need=need, free=free)


def _short_of_room(repo: Repo) -> str:
    """The folder, of the checkout and the git folder, whose disk has less room than a move keeps spare."""
    for where in (repo.root, repo.git_dir):
        st = os.statvfs(where)
        if st.f_bavail * st.f_frsize < MARGIN or (st.f_files and st.f_favail < 16):
            return str(where)
    return ""


def _sizes(repo: Repo, blobs: list[str]) -> list[int]:
    return repo.object_sizes(blobs)


def _missing_folders(repo: Repo, moves: list[Change]) -> list[Path]:
    """The folders the move would create (deepest first): a failed move takes them away again."""
    made: set[Path] = set()
    for c in moves:
        if c.new is None:
            continue
        parent = (repo.root / c.path).parent
        while parent != repo.root and not parent.exists():
            made.add(parent)
            parent = parent.parent
    return sorted(made, key=lambda p: len(p.parts), reverse=True)


def restore(repo: Repo, tip: str, moves: list[Change], made: list[Path], keep: Path) -> None:
    """Put every path of `moves` back as `tip` has it, take away the folders git made, and the index back."""
    root = repo.root
    # What the move brought goes first: on a full disk that frees the room the old files need.
    for c in moves:
        if c.new is not None and not _same(root / c.path, repo, c.old, c.old_mode):
            _remove(root / c.path)
    for folder in made:
        _remove(folder)
    for c in moves:
        if c.old is not None and c.old_mode != MODE_GITLINK and not _same(root / c.path, repo, c.old, c.old_mode):
            _write(root / c.path, repo.store[c.old.encode()].data, c.old_mode)
    index = repo.git_dir / "index"
    if keep != Path() and keep.exists() and not os.path.samefile(keep, index):
        os.replace(keep, index)  # git wrote a new index before it failed: the old one is still there by name


def _same(path: Path, repo: Repo, blob: str | None, mode: int) -> bool:
    """Whether `path` holds `blob` with `mode` already (so it needs no writing)."""
    if blob is None:
        return False
    try:
        st = path.lstat()
        if mode == MODE_LINK:
            return stat.S_ISLNK(st.st_mode) and os.fsencode(os.readlink(path)) == repo.store[blob.encode()].data
        if not stat.S_ISREG(st.st_mode) or bool(st.st_mode & 0o100) != (mode == MODE_EXEC):
            return False
        want = repo.store[blob.encode()].data
        return st.st_size == len(want) and path.read_bytes() == want
    except (FileNotFoundError, NotADirectoryError):
        return False


def _remove(path: Path) -> None:
    """Take away a file, a link or an empty folder at `path`; a folder that holds anything stays."""
    try:
        if path.is_dir() and not path.is_symlink():
            path.rmdir()
        else:
            path.unlink()
    except (FileNotFoundError, NotADirectoryError):
        pass
    except OSError as exc:
        if exc.errno != errno.ENOTEMPTY:  # a folder that holds the person's files stays
            raise


def _write(path: Path, data: bytes, mode: int) -> None:
    _remove(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if mode == MODE_LINK:
        os.symlink(os.fsdecode(data), path)
        return
    # Made afresh, so the umask shapes its permissions as it does git's checkout.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o777 if mode == MODE_EXEC else 0o666)
    with open(fd, "wb") as fh:
        fh.write(data)


@contextmanager
def full_disk_cleared(repo: Repo, what: str) -> Iterator[None]:
    """Turn a write that failed for want of room into one DiskFull, and take away the temporary object files
    the failed write left."""
    since = time.time()
    try:
        yield
    except (OSError, GitError) as exc:
        full = disk_full(exc, str(repo.common_dir), what)
        if full is None:
            raise
        clear_debris(repo.common_dir / "objects", since)
        raise full from None
