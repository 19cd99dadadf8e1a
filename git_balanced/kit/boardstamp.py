"""The stamp of `board`'s and `inbox`'s answer, and the answer kept with it (kit/boardsaid.py reads it back).

front.py takes the stamp (`before`) just before the command runs in full, and keeps what it printed (`keep`)
when the command told it could (`told`): the stamp is of the state as it was before the answer was read from it,
so a change while the command runs is a change the next look sees. Each input the board and the inbox read is
a fact of the stamp:

- the refs: every folder under `refs/balanced/`, `refs/notes/` and `refs/replace/`, the lead's branch's file and
  its folders, HEAD, `packed-refs`, the config, grafts and `shallow` (git writes a ref by renaming its file);
- what `.git/balanced/` holds that is not a cache of the refs: the engine's pid file and whether its engine runs
  (its start tick), the headless lead's record and whether its driver runs, the machine's node name, the held
  machines, the machines' check seats, the fence's remembered probe (and the boot it was made in);
- this machine's check seats: their folder, each seat's lock (held or not), each holder's note and process;
- the environment the words depend on (the variables read, the families GIT_ and GIT_BALANCED_ named), stdout's
  encoding and whether it is a terminal, the time zone, this package's version and each of its modules loaded.

The caches under `.git/balanced/cache/` are in it as the command left them (it may write them as it reads): each is
keyed by the refs it was made from, so only a cache changed otherwise (by hand, by another version) changes them.
An answer is not kept where its words change with time (a running worker's clock, the JSON's seconds since the
lead's session was seen) or come from parts this does not stamp (questions, reviews, schedules, pull requests,
corrections, held machines: what waits on your answer); nor while a fact changed less than boardsaid.SETTLED ago.
"""

from __future__ import annotations

import os

from git_balanced import process
from git_balanced.files import loads  # json.loads' answer, without importing json (and re)
from git_balanced.kit.boardsaid import (
    CLOCK_ENV,
    HEAD,
    LIMIT,
    SETTLED,
    clock,
    escaped,
    path_of,
    printable,
    value,
    where,
)
from git_balanced.shipped.pids import PID_BOUND, plain_fd

TYPE_CHECKING = False  # typing is not imported for this: the board and the inbox start without it
if TYPE_CHECKING:
    from typing import Any

ENV = ("HOME", "PATH", "TZ", "NO_COLOR", "COLUMNS", "TERM", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE",
       "LC_TIME", "PYTHONIOENCODING", "PYTHONUTF8", "XDG_CACHE_HOME", "XDG_CONFIG_HOME")
FAMILIES = "GIT_ BALANCED_"  # a variable of these set or unset later changes the stamp (envnames)
TREES = ("refs/balanced", "refs/notes", "refs/replace")
GIT_FILES = ("packed-refs", "config", "info/grafts", "shallow", "reftable")
STATE_FILES = ("engine.pid", "node", "held.json", "check-seats.json", "fence.json")
FENCE_FOR = 3600.0  # fence.REMEMBERED_FOR: the board shows a probe's answer this long


class _Told:
    """What the command that ran told about its answer: whether it may be kept (None: it did not say)."""

    __slots__ = ("sure",)

    def __init__(self) -> None:
        self.sure: bool | None = None


def told(sure: bool) -> None:
    """Say, from a command, whether what it prints may be kept (its words do not change with time alone, nor
    come from what the stamp leaves out)."""
    process.part(_Told).sure = sure


def told_board(data: dict[str, Any], as_json: bool) -> None:
    """Say whether the board of `data` may be kept: not with a worker running (its clock), what waits on your
    answer or a schedule (their own parts' words), nor, as JSON, a lead session seen (seconds since)."""
    from git_balanced.vocab import JobState

    running = any(r.get("state") == JobState.RUNNING for r in data.get("jobs", ()))
    theirs = any("text" in r for r in [*data.get("now", ()), *data.get("next", ())])
    told(not running and not theirs and not (as_json and data.get("lead_session")))


class Stamp:
    """The facts of one answer as they were before it was made, and where it is kept."""

    __slots__ = ("at", "facts", "kind", "taken", "until")

    def __init__(self, kind: str, at: tuple[str, str, str]) -> None:
        self.kind, self.at = kind, at
        self.facts: list[tuple[str, str, str]] = []
        self.until: float | None = None
        self.taken = clock()  # before any fact: a change within SETTLED of this may not show in a time

    def add(self, kind: str, key: str) -> None:
        self.facts.append((kind, key, escaped(value(kind, key))))


def before(kind: str) -> Stamp | None:
    """The stamp of `kind`'s answer in this checkout, taken now; None where none is kept (boardsaid.where)."""
    at = where()
    if at is None:
        return None
    process.part(_Told).sure = None
    _, git_dir, common = at
    from git_balanced.git.peek import branch_of

    branch = branch_of(git_dir)
    if branch is None or os.path.exists(os.path.join(common, "reftable")):
        return None
    try:
        return _taken(kind, at, branch)
    except (Unstamped, OSError, ValueError):  # the command runs in full all the same, its answer not kept
        return None


def _taken(kind: str, at: tuple[str, str, str], branch: str) -> Stamp:
    """The facts of `kind`'s answer in the checkout `at`, whose branch is `branch`."""
    _, git_dir, common = at
    s = Stamp(kind, at)
    for fact in ("version", "out", "tz", "host", "clock"):
        s.add(fact, "")
    s.add("envnames", FAMILIES)
    for name in sorted({*ENV, *(n for n in os.environ if n.startswith(tuple(FAMILIES.split())))} - {CLOCK_ENV}):
        s.add("env", name)
    s.add("st", "/etc/localtime")
    s.add("link", "/etc/localtime")
    _git(s, git_dir, common, branch)
    if kind.startswith("board"):
        _state(s, os.path.join(common, "balanced"), branch, seen=kind == "board-json")
        _seats(s)
    else:
        s.add("st", os.path.join(common, "balanced", "node"))
    return s


def _git(s: Stamp, git_dir: str, common: str, branch: str) -> None:
    """The refs' facts: HEAD, the branch's file and folders, git's own files, each folder of TREES."""
    s.add("st", os.path.join(git_dir, "HEAD"))
    for name in GIT_FILES:
        s.add("st", os.path.join(common, name))
    s.add("st", os.path.join(common, "refs"))
    parts = ["refs", "heads", *branch.split("/")]
    for n in range(2, len(parts) + 1):
        s.add("st", os.path.join(common, *parts[:n]))
    for tree in TREES:
        for folder in _folders(os.path.join(common, tree)):
            s.add("st", folder)


class Unstamped(Exception):
    """An input that cannot be stamped cheaply: no answer is kept."""


def _folders(top: str) -> list[str]:
    """`top` and every folder under it (`top` alone when it is missing: its making changes its parent); Unstamped
    for a link among them (what changes behind it changes no folder here)."""
    out = [top]
    try:
        with os.scandir(top) as entries:
            for entry in entries:
                if entry.is_symlink():
                    raise Unstamped(entry.path)
                if entry.is_dir(follow_symlinks=False):
                    out += _folders(entry.path)
    except OSError:
        pass
    return out


def _state(s: Stamp, state: str, branch: str, *, seen: bool) -> None:
    """The facts of `.git/balanced/` the board reads: its files, and the processes they name."""
    from git_balanced.channel.names import SEEN, lead_dir_in

    for name in STATE_FILES:
        s.add("st", os.path.join(state, name))
    s.add("read", "/proc/sys/kernel/random/boot_id")
    lead = lead_dir_in(state, branch)
    s.add("st", os.path.join(lead, "lead.json"))
    if seen:
        s.add("st", os.path.join(lead, SEEN))
    fd = plain_fd(os.path.join(state, "engine.pid"))
    try:
        if fd is not None:
            with os.fdopen(fd, encoding="utf-8") as fh:
                s.add("pid", str(int(fh.read(64).split()[0])))  # its pid first (its start tick may follow)
    except (OSError, ValueError, IndexError, UnicodeDecodeError):
        pass
    _pid_of(s, os.path.join(lead, "lead.json"))


def _pid_of(s: Stamp, path: str) -> None:
    """The process the JSON record at `path` names (`pid`), as a fact, when it names one."""
    fd = plain_fd(path)
    if fd is None:
        return
    try:
        with os.fdopen(fd, encoding="utf-8") as fh:
            rec = loads(fh.read())
    except (OSError, ValueError):
        return
    pid = rec.get("pid") if isinstance(rec, dict) else None
    if isinstance(pid, int) and not isinstance(pid, bool) and 0 < pid < PID_BOUND:
        s.add("pid", str(pid))


def _seats(s: Stamp) -> None:
    """This machine's check seats as the board reads them (shipped/seats.py): their folder, each lock, each
    holder's note and process, and each worker run's note."""
    from git_balanced.shipped import seats

    folder = seats.seat_folder()
    s.add("st", folder)
    runs = os.path.expanduser(seats.SEAT_RUNS)
    s.add("st", runs)
    for name in sorted(_names(folder)):
        path = os.path.join(folder, name)
        if name.startswith("seat-") and name.endswith(".lock"):
            s.add("lock", path)
        elif name.startswith("held-") and name.endswith(".json"):
            s.add("st", path)
            _pid_of(s, path)
    for name in sorted(_names(runs)):
        note = os.path.join(runs, name, seats.SEAT_NOTE)
        s.add("st", note)
        _pid_of(s, note)


def _names(folder: str) -> list[str]:
    try:
        return [n for n in os.listdir(folder) if not n.startswith(".")]
    except OSError:
        return []


def keep(stamp: Stamp, said: str) -> bool:
    """Keep `said`, the answer the command printed, with `stamp`, when the command told it may be and no fact
    changed too recently to be sure of; True when kept."""
    if process.part(_Told).sure is not True:
        return False
    data = said.encode("utf-8", "surrogatepass")  # encoded once, for the check and the file (7 MB at --all)
    if not printable(said, data):
        return False
    _modules(stamp)
    if not _settled(stamp) or not _until(stamp):
        return False
    _caches(stamp)
    if any(c in key for _, key, _ in stamp.facts for c in "\t\n\r") or any("\t" in p for p in stamp.at):
        return False
    head = [HEAD, stamp.kind, "-" if stamp.until is None else repr(stamp.until), "\t".join(stamp.at),
            str(len(stamp.facts))]
    first = "\n".join([*head, *("\t".join(f) for f in stamp.facts), str(len(said)), ""]).encode("utf-8",
                                                                                            "surrogatepass")
    if len(first) + len(data) > LIMIT:  # read past as too large (boardsaid._open): not written
        return False
    path = path_of(stamp.at[2], stamp.kind)
    part = f"{path}.{os.getpid()}.part"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(part, "wb") as fh:
            fh.write(first)
            fh.write(data)
        os.replace(part, path)
    except OSError:
        try:
            os.remove(part)
        except OSError:
            pass
        return False
    return True


def _modules(stamp: Stamp) -> None:
    """The file of each module of the package the command loaded, beside the package's version (which stays the
    same across changes while developing): a change to any of them is a change."""
    import sys

    files = {getattr(m, "__file__", None) for n, m in list(sys.modules.items()) if n.startswith("git_balanced")}
    for path in sorted(f for f in files if isinstance(f, str)):
        stamp.add("st", path)


def _caches(stamp: Stamp) -> None:
    """The caches' folder and each cache file in it, as the command left them (it may have just written them): a
    cache is made from the refs the stamp holds, so only a cache changed by hand, or by another version of the
    package, changes these."""
    folder = os.path.dirname(os.path.dirname(path_of(stamp.at[2], stamp.kind)))
    stamp.add("st", folder)
    for name in sorted(_names(folder)):
        if name != "said":
            stamp.add("st", os.path.join(folder, name))


def _settled(stamp: Stamp) -> bool:
    """Whether no file or folder of the stamp changed within SETTLED of the moment it was taken (a writer in the
    same clock tick could leave its times as they were): judged by each one's change time, which utime cannot
    set."""
    newest = (stamp.taken - SETTLED) * 1e9
    return all(kept == "-" or int(kept.split(".")[-1]) < newest for kind, _, kept in stamp.facts if kind == "st")


def _until(stamp: Stamp) -> bool:
    """Set the moment the board's answer stops being true (the fence's remembered probe is shown for an hour);
    False when that cannot be told, or has passed."""
    if stamp.kind.startswith("board") and not os.environ.get("GIT_BALANCED_NO_FENCE"):
        try:
            with open(os.path.join(stamp.at[2], "balanced", "fence.json"), encoding="utf-8") as fh:
                at = loads(fh.read()).get("at")
        except (OSError, ValueError, AttributeError):
            return False
        if not isinstance(at, float):
            return False
        stamp.until = at + FENCE_FOR
    return stamp.until is None or clock() < stamp.until
