"""Objects read through one `git cat-file --batch`, started with os alone, for the git hooks that run on every push:
`subprocess` alone costs a hook more than the rest of its start. git runs as run.py runs it (its environment
without the GIT_* variables a hook is handed, automatic maintenance off), in the checkout's working tree; a folder
of ours (`~/.balanced/`, where workers and checks write: untrusted.py) is not read here, and the caller asks through
Repo instead. Nothing here writes.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing is not imported for this: it would be a good part of a hook's start
if TYPE_CHECKING:
    from types import TracebackType

# The GIT_* variables a child git keeps (proc.no_git_env's: identity and config, never a repository's place).
KEPT_GIT_ENV = frozenset({
    "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL",
    "GIT_COMMITTER_DATE", "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL", "GIT_TEMPLATE_DIR", "GIT_EDITOR", "GIT_SSH",
    "GIT_SSH_COMMAND", "GIT_TERMINAL_PROMPT"})
NO_AUTO_MAINTENANCE = ("-c", "gc.auto=0", "-c", "maintenance.auto=false")  # run.py's


class Unread(Exception):
    """git could not be started or did not answer as `cat-file --batch` answers: ask through Repo instead."""


def child_env(environ: dict[str, str] | os._Environ[str]) -> dict[str, str]:
    """`environ` without the GIT_* variables git leaks into hooks (proc.no_git_env)."""
    return {k: v for k, v in environ.items() if not k.startswith("GIT_") or k in KEPT_GIT_ENV}


def of_ours(path: str) -> bool:
    """Whether `path` lies under `~/.balanced/` (untrusted.folder_of_ours)."""
    base = os.path.realpath(os.path.join(os.path.expanduser("~"), ".balanced"))
    real = os.path.realpath(path)
    return real == base or real.startswith(base + os.sep)


class Batch:
    """One `git cat-file --batch` in the working tree `root`, asked in rounds: `read(names)` writes the names and
    reads their objects, (id, type, content) each, or None where git says it has none."""

    def __init__(self, root: str) -> None:
        if of_ours(root):
            raise Unread(f"{root} is a folder of ours")
        child_in, self._to = os.pipe()
        self._from, child_out = os.pipe()
        argv = ["git", "-C", root, *NO_AUTO_MAINTENANCE, "cat-file", "--batch"]
        actions = [(os.POSIX_SPAWN_DUP2, child_in, 0), (os.POSIX_SPAWN_DUP2, child_out, 1),
                   (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)]
        try:
            self._pid = os.posix_spawnp("git", argv, child_env(os.environ), file_actions=actions)
        except OSError as exc:
            for fd in (child_in, child_out, self._to, self._from):
                os.close(fd)
            raise Unread(f"git: {exc}") from None
        os.close(child_in)
        os.close(child_out)
        self._buffer = bytearray()

    def __enter__(self) -> Batch:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """End git (its input closed) and wait for it."""
        if self._pid:
            for fd in (self._to, self._from):
                os.close(fd)
            os.waitpid(self._pid, 0)
            self._pid = 0

    def read(self, names: list[str]) -> list[tuple[str, str, bytes] | None]:
        """The objects `names` name (ids, `REV:PATH`, anything `git cat-file` reads), in order."""
        if any("\n" in n for n in names):
            raise Unread("a name with a line break")
        request = "".join(f"{n}\n" for n in names).encode()
        try:
            while request:
                request = request[os.write(self._to, request):]
        except OSError as exc:
            raise Unread(f"git cat-file: {exc}") from None
        return [self._answer() for _ in names]

    def _answer(self) -> tuple[str, str, bytes] | None:
        header = self._line().split(b" ")
        if header[-1] == b"missing":
            return None
        if len(header) != 3 or not header[2].isdigit():
            raise Unread(f"git cat-file said {b' '.join(header)!r}")
        size = int(header[2])
        body = self._take(size + 1)
        return header[0].decode(), header[1].decode(), body[:size]

    def _line(self) -> bytes:
        while b"\n" not in self._buffer:
            self._fill()
        end = self._buffer.index(b"\n")
        line = bytes(self._buffer[:end])
        del self._buffer[:end + 1]
        return line

    def _take(self, size: int) -> bytes:
        while len(self._buffer) < size:
            self._fill()
        out = bytes(self._buffer[:size])
        del self._buffer[:size]
        return out

    def _fill(self) -> None:
        chunk = os.read(self._from, 1 << 16)
        if not chunk:
            raise Unread("git cat-file ended early")
        self._buffer += chunk


def tree_entries(raw: bytes, id_size: int) -> dict[str, tuple[int, str]]:
    """A tree object's entries, name -> (mode, id), its ids `id_size` bytes long (20, or 32 for SHA-256)."""
    out: dict[str, tuple[int, str]] = {}
    at = 0
    while at < len(raw):
        space = raw.index(b" ", at)
        nul = raw.index(b"\0", space)
        out[raw[space + 1:nul].decode("utf-8", "surrogateescape")] = \
            (int(raw[at:space], 8), raw[nul + 1:nul + 1 + id_size].hex())
        at = nul + 1 + id_size
    return out


def commit_tree(raw: bytes) -> str | None:
    """The tree a commit object names (its first header), or None for something else."""
    head = raw[:5 + 64 + 1]
    if not head.startswith(b"tree "):
        return None
    return head[5:].partition(b"\n")[0].decode("ascii", "replace")
