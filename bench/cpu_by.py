"""Where a run's CPU goes, by process: a `git` shim that logs each git command's CPU, and the kernel's process
accounting for every other process of the computer (`bench/scale.py --cpu`).

The shim is a small C program (compiled here with `cc`) put first on PATH, for the lead's engine and for the
machines' sessions: it runs the real git as its child, waits for it, and appends one line to a log: the CPU
of the command and of every process it waited for (`wait4`'s rusage: `git fetch` with its `index-pack` and its
ssh, say), its wall time, the user, the folder and the command line. Git's own children find git in its exec
path, not through the shim, so each command a program of ours (or a runner, or the machine's sshd) started is
one line. Process accounting (`acct(2)`, as root) writes a record for every process that ends on the computer:
its name, its user, its own CPU (in hundredths of a second, rounded down: a 4 ms git reads 0). The shim's lines
are exact; the accounting says what the rest is (Python, sshd, ssh, sh).
"""

from __future__ import annotations

import collections
import ctypes
import os
import pwd
import shlex
import shutil
import struct
import subprocess
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

SHIM_C = r"""
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/stat.h>
int main(int argc, char **argv) {
    struct timeval t0, t1; gettimeofday(&t0, 0);
    pid_t pid = fork();
    if (pid == 0) { argv[0] = "git"; execv(REAL, argv); _exit(127); }
    int status = 0; struct rusage ru;
    while (wait4(pid, &status, 0, &ru) < 0) {}
    gettimeofday(&t1, 0);
    long us = ru.ru_utime.tv_sec * 1000000L + ru.ru_utime.tv_usec + ru.ru_stime.tv_sec * 1000000L
              + ru.ru_stime.tv_usec;
    long wall = (t1.tv_sec - t0.tv_sec) * 1000000L + (t1.tv_usec - t0.tv_usec);
    char cwd[1024]; if (!getcwd(cwd, sizeof cwd)) strcpy(cwd, "?");
    char line[8192]; int n = snprintf(line, sizeof line, "%ld\t%ld\t%d\t%s\t", us, wall, (int)getuid(), cwd);
    for (int i = 1; i < argc && n < (int)sizeof line - 3; i++) {
        for (char *c = argv[i]; *c && n < (int)sizeof line - 3; c++) line[n++] = (*c == '\t' || *c == '\n') ? ' ' : *c;
        line[n++] = ' ';
    }
    line[n++] = '\n';
    umask(0);
    int fd = open(LOG, O_WRONLY | O_APPEND | O_CREAT, 0666);
    if (fd >= 0) { if (write(fd, line, n) < 0) {} close(fd); }
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    return 128 + WTERMSIG(status);
}
"""


def shim(folder: Path) -> Path:
    """Build the git shim in `folder/bin/git` (its log: `folder/git.log`, which any user may append to); the
    folder to put first on PATH. Every user may read and run it (the machines' users are others)."""
    real = shutil.which("git")
    cc = shutil.which("cc") or shutil.which("gcc")
    if real is None or cc is None:
        raise SystemExit("--cpu needs git and a C compiler (cc) on PATH")
    (folder / "bin").mkdir(parents=True, exist_ok=True)
    (folder / "shim.c").write_text(SHIM_C)
    log = folder / "git.log"
    log.touch()
    log.chmod(0o666)
    subprocess.run([cc, "-O2", f'-DREAL="{real}"', f'-DLOG="{log}"', "-o", str(folder / "bin" / "git"),
                    str(folder / "shim.c")], check=True)
    for p in (folder, folder / "bin"):
        p.chmod(0o755)
    return folder / "bin"


@dataclass
class GitLine:
    cpu: float  # seconds, the command's and its waited-for children's
    wall: float
    uid: int
    cwd: str
    argv: list[str]


def git_lines(log: Path) -> list[GitLine]:
    """The shim's log, a line a git command."""
    out = []
    for line in log.read_text(errors="replace").splitlines():
        parts = line.split("\t", 4)
        if len(parts) == 5:
            out.append(GitLine(int(parts[0]) / 1e6, int(parts[1]) / 1e6, int(parts[2]), parts[3],
                               parts[4].split()))
    return out


def subcommand(argv: list[str]) -> str:
    """git's subcommand and the options that change its cost (fetch, push, rev-list...); git's own options
    before it (`-c k=v`, `-C path`, `--git-dir=...`, `--no-pager`...) skipped."""
    rest = list(argv)
    while rest and rest[0].startswith("-"):
        rest = rest[2:] if rest[0] in ("-c", "-C") else rest[1:]
    if not rest:
        return "(none)"
    sub = rest[:2] if rest[0] in ("worktree", "notes", "commit-graph", "maintenance") else rest[:1]
    flags = [a.split("=")[0] for a in rest[len(sub):] if a.startswith("-") and a not in ("-q", "--quiet")][:3]
    return " ".join([*sub, *flags])


def kind(line: GitLine, lead: Path) -> str:
    """Where a command of a lead's run ran: `lead` (its repository), `worker` (a worktree of its local
    workers, named after it), `machine` (a machine's user); `other` for the rest."""
    if line.uid != os.getuid():
        return "machine"
    if line.cwd == str(lead) or line.cwd.startswith(str(lead) + "/"):
        return "lead"
    if any(part.startswith(lead.name) for part in line.cwd.split("/")):
        return "worker"
    return "other"


def by_command(lines: Iterable[GitLine], lead: Path) -> dict[tuple[str, str], list[float]]:
    """(where, subcommand) -> [count, CPU seconds]."""
    out: dict[tuple[str, str], list[float]] = collections.defaultdict(lambda: [0, 0.0])
    for line in lines:
        row = out[(kind(line, lead), subcommand(line.argv))]
        row[0] += 1
        row[1] += line.cpu
    return out


def start(folder: Path, name: str) -> Path:
    """Before the engine of lead `name` runs: the shim's log so far set aside (that lead's setup), and the file
    its process accounting goes to."""
    log = folder / "git.log"
    if log.exists():
        log.rename(folder / f"setup-{name}.git.log")
    return folder / f"{name}.acct"


def cut(acct: Path, pid: int) -> None:
    """After that engine (process `pid`) ended: the shim's log since `start` kept as `<name>.git.log` beside its
    accounting, and its pid as `<name>.pid`."""
    acct.with_suffix(".pid").write_text(str(pid))
    log = acct.parent / "git.log"
    if log.exists():
        log.rename(acct.with_suffix(".git.log"))


def report(folder: Path, leads: dict[str, Path], machine_uids: set[int], sshd: set[int], pieces: int) -> str:
    """git by where and subcommand, then every process by whose and name: each lead's engine run side by side
    (`sshd`: the pids of the machines' sshd)."""
    fresh, old = (folder / "fresh.git.log", folder / "history.git.log")
    if not (fresh.exists() and old.exists()):
        return "cpu: the shim logged no git command"
    gf, go = by_command(git_lines(fresh), leads["fresh"]), by_command(git_lines(old), leads["history"])
    af, ao = (by_process(ended(folder / f"{n}.acct"), machine_uids,
                         {int((folder / f"{n}.pid").read_text()): "engine", **{pid: "sshd" for pid in sshd}})
              for n in ("fresh", "history"))
    return "\n".join([compare("git commands by where and subcommand", gf, go, pieces),
                      compare("every process of the run that ended, by whose and name (10 ms a process, rounded "
                              "down)", af, ao, pieces)])


# -- process accounting ----------------------------------------------------------------------------------

ACCT_V3 = struct.Struct("<BBHIIIIIIfHHHHHHHH16s")  # struct acct_v3, 64 bytes


def _comp(c: int) -> float:
    """A comp_t (13-bit mantissa, 3-bit base-8 exponent) of hundredths of a second, in seconds."""
    return ((c & 0x1FFF) << (3 * (c >> 13))) / 100.0


@contextmanager
def accounting(path: Path) -> Iterator[Path]:
    """The kernel's process accounting on, into `path`, for the time of the block (root only)."""
    path.touch()
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.acct(str(path).encode()) != 0:
        raise SystemExit(f"acct({path}) failed: {os.strerror(ctypes.get_errno())} (--cpu needs root)")
    try:
        yield path
    finally:
        libc.acct(None)


@dataclass
class Ended:
    comm: str
    uid: int
    pid: int
    ppid: int
    cpu: float  # its own user + system seconds, rounded down to 10 ms each


def ended(path: Path) -> list[Ended]:
    """The records of the processes that ended while accounting was on."""
    data = path.read_bytes()
    out = []
    for off in range(0, len(data) - ACCT_V3.size + 1, ACCT_V3.size):
        f = ACCT_V3.unpack_from(data, off)
        if f[1] & 0x7F != 3:
            continue
        out.append(Ended(f[18].rstrip(b"\0").decode(errors="replace"), f[4], f[6], f[7], _comp(f[10]) + _comp(f[11])))
    return out


def by_process(records: list[Ended], machine_uids: set[int], roots: dict[int, str]) -> dict[tuple[str, str],
                                                                                          list[float]]:
    """(whose, process name) -> [count, CPU seconds]: `machine` for a machine's user, else the name of the root
    (`roots`: pid -> name, the engine's process and the machines' sshd) it descends from, by the parents the
    records name; what descends from none (another program's, on a shared computer) is left out."""
    parent = {r.pid: r.ppid for r in records}

    def whose(r: Ended) -> str | None:
        if r.uid in machine_uids:
            return "machine"
        pid, seen = r.pid, 0
        while pid in parent and seen < 64:
            if pid in roots:
                return roots[pid]
            pid, seen = parent[pid], seen + 1
        return roots.get(pid)

    out: dict[tuple[str, str], list[float]] = collections.defaultdict(lambda: [0, 0.0])
    for r in records:
        who = whose(r)
        if who is not None:
            row = out[(who, r.comm)]
            row[0] += 1
            row[1] += r.cpu
    return out


def uid_of(user: str) -> int | None:
    try:
        return pwd.getpwnam(user).pw_uid
    except KeyError:
        return None


def compare(title: str, fresh: dict[tuple[str, str], list[float]], old: dict[tuple[str, str], list[float]],
            pieces: int, top: int = 25) -> str:
    """The rows of two runs side by side, a piece: count and CPU ms fresh, then with history, then the CPU
    difference; the largest differences first."""
    keys = set(fresh) | set(old)
    zero = [0, 0.0]
    rows = sorted(keys, key=lambda k: -abs(old.get(k, zero)[1] - fresh.get(k, zero)[1]))[:top]
    out = [f"{title} (a piece: count, CPU ms; fresh, then with history, then the difference)"]
    for k in rows:
        f, o = fresh.get(k, zero), old.get(k, zero)
        out.append(f"  {k[0]:16s} {shlex.quote(k[1])[:44]:44s} {f[0] / pieces:6.2f} {f[1] / pieces * 1000:7.1f}  "
                   f"{o[0] / pieces:6.2f} {o[1] / pieces * 1000:7.1f}  {(o[1] - f[1]) / pieces * 1000:+7.1f}")
    tf, to = sum(v[1] for v in fresh.values()), sum(v[1] for v in old.values())
    out.append(f"  {'all':61s} {tf / pieces * 1000:7.1f}  {'':6s} {to / pieces * 1000:7.1f}  "
               f"{(to - tf) / pieces * 1000:+7.1f}")
    return "\n".join(out)
