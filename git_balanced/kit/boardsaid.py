"""The last answer of `board` (with `--all`, `--json`), `inbox` and `inbox --json`, kept with a stamp of everything
it was made from, so that the next look, when nothing of that changed, prints it without loading the state's
modules.

It is kept in the lead's `.git/balanced/cache/said/KIND` (kit/boardstamp.py writes it, after the command ran in
full through front.py). The stamp is a list of facts, each a kind, a key and the value it had just before the
answer was made: a file's or folder's identity (`st`: its time in ns, size, inode, mode, owner and change time,
which no writer can set back; git writes a ref by renaming its file, so a folder's time changes when a ref in it
is written or removed), a variable of the environment, a process's life (`pid`: whether it runs, and its start
tick), a lock held or not, and the like.
The answer is used only when each value is the same now, and the moment it stops being true has not come.

Only builtins and `os` are used here (no json, re, pathlib, typing): this is what a look costs when nothing
changed. A file not as written, or from another user, is read past: the command then runs in full.
"""

from __future__ import annotations

import os
import sys

from git_balanced.shipped.pids import plain_fd  # os alone: what opens a file a worker may have put a FIFO as

TYPE_CHECKING = False  # typing itself is not imported for this: the start-up is what this module is for
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import TextIO

HEAD = "git-balanced said 1"  # the first line of a kept answer: another layout is read past
KINDS = ("board", "board-all", "board-json", "inbox", "inbox-json")
CLOCK_ENV = "GIT_BALANCED_SAID_NOW"  # for tests: the time stamps are judged at, in seconds since 1970 (stamped: set)
SETTLED = 1.0  # seconds: a file or folder changed this recently may change again within its clock tick unseen
HEAD_READ = 1 << 16  # characters read first: the stamp (some hundred facts), before the answer is read, if at all
LIMIT = 64 << 20  # bytes: a larger answer is not kept, nor a larger file read (`board --json` at 10,000 jobs: 7 MB)
PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def clock() -> float:
    """Now, in seconds since 1970 (CLOCK_ENV when set, for tests)."""
    told = os.environ.get(CLOCK_ENV, "")
    if told:
        try:
            return float(told)
        except ValueError:
            pass
    import time  # built in: no file is read for it

    return time.time()


def where() -> tuple[str, str, str] | None:
    """The checkout of the current folder (its folder, git folder and common git folder) when an answer may be
    kept for it: a checkout whose `.git` is a folder of its own, outside `~/.balanced/` (where workers' copies
    and worktrees are), found as git finds it; else None. A linked worktree's answers are never kept: its git
    folder, and what its `.git` file names, are the worktree's own to write."""
    from git_balanced.git.discover import found_paths

    found = found_paths(os.getcwd())
    if found is None:
        return None
    root, git_dir, common = found
    if git_dir != common or git_dir != os.path.join(root, ".git"):
        return None
    home = os.path.realpath(os.path.join(os.path.expanduser("~"), ".balanced"))
    return None if common == home or common.startswith(home + os.sep) else found


def path_of(common: str, kind: str) -> str:
    """Where the answer of `kind` is kept for the repository whose common git folder is `common`: a folder of its
    own under the caches, so that keeping one changes nothing the stamp holds of the caches' folder."""
    return os.path.join(common, "balanced", "cache", "said", kind)


def escaped(text: str) -> str:
    """`text` on one line of the kept file: backslashes, tabs and line ends written out."""
    return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def value(kind: str, key: str) -> str:
    """The value now of the fact `kind` of `key` (see the module's words)."""
    if kind == "st":
        try:
            st = os.stat(key)
        except OSError:
            return "-"
        return f"{st.st_mtime_ns}.{st.st_size}.{st.st_ino}.{st.st_mode}.{st.st_uid}.{st.st_ctime_ns}"
    if kind == "env":
        found = os.environ.get(key)
        return "-" if found is None else "=" + found
    if kind == "pid":
        from git_balanced.shipped import pids

        return f"{int(pids.alive(int(key), mine=True))}.{pids.start_tick(int(key))}"
    if kind == "lock":
        return _locked(key)
    return _other(kind, key)


def _other(kind: str, key: str) -> str:
    """The facts read more rarely than a file's identity (value)."""
    if kind == "read":
        try:
            with open(key, "rb") as fh:
                return fh.read(4096).decode("utf-8", "replace")
        except OSError:
            return "-"
    if kind == "link":
        try:
            return os.readlink(key)
        except OSError:
            return "-"
    if kind == "envnames":  # which variables of a family are set: one set later changes what git or we do
        return " ".join(sorted(n for n in os.environ if n.startswith(tuple(key.split())) and n != CLOCK_ENV))
    if kind == "out":
        out = sys.stdout
        return f"{out.isatty()} {getattr(out, 'encoding', None)} {getattr(out, 'errors', None)}"
    if kind == "tz":
        import time

        return f"{time.timezone}.{time.altzone}.{time.daylight}.{'/'.join(time.tzname)}"
    if kind == "clock":  # a run with the tests' clock never uses an answer kept without it, nor the other way
        return "set" if os.environ.get(CLOCK_ENV) else "-"
    if kind == "host":
        return f"{os.cpu_count()}.{os.getuid()}.{os.geteuid()}"
    if kind == "version":
        from git_balanced import __version__

        return f"{__version__} {PACKAGE} {sys.version}"
    raise ValueError(f"no fact of kind {kind}")


def _locked(path: str) -> str:
    """Whether another process holds the lock on `path` now (as seats.seats_in_use asks): "1", "0", or "-"."""
    import fcntl

    fd = plain_fd(path)
    if fd is None:
        return "-"
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return "1"
    finally:
        os.close(fd)
    return "0"


def same(facts: Iterable[tuple[str, str, str]]) -> bool:
    """Whether each fact (kind, key, value as kept) has that value now."""
    return all(escaped(value(kind, key)) == kept for kind, key, kept in facts)


def answer(kind: str) -> str | None:
    """The answer kept for `kind` in this checkout, when every fact of its stamp holds now and its moment has
    not passed; else None (the command runs in full)."""
    try:
        return _answer(kind)
    except Exception:  # noqa: BLE001 — a kept file not as written is read past, never a traceback
        return None


def _answer(kind: str) -> str | None:
    found = where()
    if found is None:
        return None
    fh = _open(path_of(found[2], kind))
    if fh is None:
        return None
    with fh:
        # the stamp first, read alone: a look after a change reads past the answer without reading it (7 MB at --all)
        text = fh.read(HEAD_READ)
        if text.count("\n") < 5:  # a first read shorter than the head: the rest of the file read for it
            text += fh.read()
        head, named, until, at, count, rest = text.split("\n", 5)
        if head != HEAD or named != kind or at != "\t".join(found):
            return None
        if until != "-" and clock() >= float(until):
            return None
        lines = rest.split("\n", int(count) + 1)
        if len(lines) < int(count) + 2:  # a stamp longer than the first read: the rest of the file read for it
            lines = (rest + fh.read()).split("\n", int(count) + 1)
        facts = [line.split("\t") for line in lines[:-2]]
        length = int(lines[-2])
        if any(len(f) != 3 for f in facts) or len(facts) != int(count):
            return None
        if not facts or facts[0][:2] != ["version", ""]:
            return None
        if not any(f[0] == "st" and f[1] == os.path.join(found[1], "HEAD") for f in facts):
            return None
        if not same((f[0], f[1], f[2]) for f in facts):
            return None
        said = lines[-1] + fh.read()
    return said if len(said) == length and printable(said) else None


def printable(said: str, encoded: bytes | None = None) -> bool:
    """Whether `said` is words a board or an inbox prints: printable characters, line ends, tabs, and the one
    escape they use (bold, on a terminal); a kept file with any other control character is refused. `encoded`:
    `said` in UTF-8, when made already (its ASCII is then not encoded again)."""
    if said.isascii() and not (said.encode("ascii") if encoded is None else encoded).translate(None, _PLAIN):
        return True  # told in C: JSON's text, most boards'
    return said.replace("\x1b[1m", "").replace("\x1b[0m", "").replace("\n", "").replace("\t", "").isprintable()


_PLAIN = bytes(range(0x20, 0x7F)) + b"\n\t"  # the ASCII characters str.isprintable takes, and line ends and tabs


def _open(path: str) -> TextIO | None:
    """The kept file at `path`, opened to read its text, when it is a plain file of this user's of at most LIMIT
    bytes; else None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    fh = os.fdopen(fd, encoding="utf-8", errors="surrogatepass", newline="")
    st = os.fstat(fd)
    if st.st_uid != os.geteuid() or (st.st_mode & 0o170000) != 0o100000 or st.st_size > LIMIT:
        fh.close()
        return None
    return fh
