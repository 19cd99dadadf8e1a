"""The one door to SSH: every `ssh` the package runs is built and started here.

Each command is the system `ssh` with `-F <config>` (DESIGN §3), `BatchMode` (never a prompt) and a
`ConnectTimeout`. Commands to one host share a ControlMaster whose socket sits in a private folder, so
a command costs a channel on an open connection rather than a TCP and key exchange. At most
`MAX_SESSIONS` commands run on one host at a time, counted across threads and processes with flock'ed
slot files, under sshd's default `MaxSessions` of 10 per connection.
"""

from __future__ import annotations

import hashlib
import os
import random
import re
import shlex
import stat
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from git_balanced import proc
from git_balanced.errors import BalancedError
from git_balanced.files import Flock
from git_balanced.machines.inventory.names import SshHost
from git_balanced.proc import Result
from git_balanced.shipped.runfiles import alive as process_alive  # zombie-aware, stdlib

MAX_SESSIONS = 6
CONNECT_TIMEOUT = 10
PERSIST_SECONDS = 600
# The remote side of `run_python`: the first stdin line is the script's length in bytes, then the script,
# then the caller's data, which the script reads from stdin as usual. Fixed text: nothing is interpolated. The
# folder it starts in (`-c` puts it first on the import path) is dropped before the script imports anything: a
# `json.py` there is a file, never the json module the runner reads with (`-P` would need Python 3.11 there).
BOOTSTRAP = (
    "import sys;sys.path[:]=[p for p in sys.path if p];"
    "n=int(sys.stdin.buffer.readline());s=sys.stdin.buffer.read(n);sys.argv[0]='balanced';"
    "exec(compile(s,'<balanced>','exec'),{'__name__':'__main__','__builtins__':__builtins__})"
)
_UNREACHABLE = re.compile(
    r"ssh: connect to host|ssh: Could not resolve|Connection (refused|timed out|closed by|reset)|"
    r"kex_exchange_identification|Permission denied \(|Host key verification failed|"
    r"No route to host|Network is unreachable|Operation timed out|Broken pipe|banner exchange"
)


class MachineUnreachable(BalancedError):
    """SSH could not reach or log in to a machine: nothing ran there. `detail` is what ssh (or git) said, when
    it said something; `timed_out` is whether the machine did not answer in time, rather than refused."""

    def __init__(self, message: str, hint: str | None = None, *, detail: str = "", timed_out: bool = False) -> None:
        super().__init__(message, hint)
        self.detail = detail
        self.timed_out = timed_out


def ssh_failed(err: str) -> bool:
    """Whether ssh's own words in `err` say that it could not reach or log in to the machine."""
    return _UNREACHABLE.search(err) is not None



def config_path() -> Path | None:
    """The SSH config every ssh gets with `-F`; None when the user has none at all."""
    env = os.environ.get("GIT_BALANCED_SSH_CONFIG")
    if env:
        path = Path(env).expanduser()
        if not path.is_file():
            raise BalancedError(
                f"GIT_BALANCED_SSH_CONFIG names {path}, which is not a file.",
                hint="Point GIT_BALANCED_SSH_CONFIG at an SSH config file, or unset it to use ~/.ssh/config.",
            )
        return path
    default = Path.home() / ".ssh" / "config"
    return default if default.is_file() else None


def control_dir() -> Path:
    """A short private folder for the master sockets (a Unix socket path must fit in 108 bytes)."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isdir(runtime) and len(runtime) < 40:
        path = Path(runtime) / "gb"
    else:
        path = Path(f"/tmp/gb-{os.getuid()}")
    try:
        path.mkdir(mode=0o700)
    except FileExistsError:
        pass
    st = path.lstat()
    # A shared /tmp lets anyone create the folder first; a socket there could be someone else's master.
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or stat.S_IMODE(st.st_mode) & 0o077:
        raise BalancedError(
            f"{path} is not a private folder of yours (owner {st.st_uid}, mode {oct(st.st_mode)}).",
            hint=f"Remove it (`rm -rf {path}`) or set XDG_RUNTIME_DIR to a private folder.",
        )
    return path


_SAFE_USER = re.compile(r"[A-Za-z0-9_.][A-Za-z0-9_.@$-]*")
_SAFE_HOSTNAME = re.compile(r"[A-Za-z0-9_.:%\[\]][A-Za-z0-9_.:%\[\]-]*")


def check_resolved(alias: str, settings: dict[str, str], config: Path | None) -> None:
    """Refuse a user or host name from the config that a ProxyCommand's %r/%h could run as shell."""
    for key, pattern in (("user", _SAFE_USER), ("hostname", _SAFE_HOSTNAME)):
        value = settings.get(key, "")
        if value and not pattern.fullmatch(value):
            raise BalancedError(
                f"Refusing machine {alias}: the SSH config {config or 'none'} gives it the {key} {value!r}.",
                hint=f"Fix the {key.capitalize() if key == 'user' else 'HostName'} line for {alias} there.",
            )


def ssh_settings(alias: SshHost, config: Path | None = None, *,
                 extra: list[str] | None = None) -> dict[str, str]:
    """What `ssh -G` makes of `alias` (Include, Match and ProxyJump applied): lower-case keys, first value.
    The alias was checked where it came in (an SshHost), so it cannot pass for an option."""
    cfg = config if config is not None else config_path()
    cmd = ["ssh", "-G", "-F", str(cfg) if cfg else "none", *(extra or []), "--", alias]
    res = proc.run(cmd, timeout=30)
    if not res.ok:
        raise BalancedError(
            f"`ssh -G {alias}` failed: {res.err.strip() or res.code}",
            hint=f"Check the SSH config {cfg or 'none'}.",
        )
    settings: dict[str, str] = {}
    for line in res.out.splitlines():
        key, _, value = line.partition(" ")
        settings.setdefault(key.lower(), value)
    return settings


class Transport:
    """Run commands on one SSH machine through a shared, self-healing ControlMaster."""

    def __init__(self, name: SshHost | str, *, config: Path | None = None, multiplex: bool = True,
                 connect_timeout: int = CONNECT_TIMEOUT) -> None:
        self.name = SshHost.of(name)  # checked once: an SshHost from where it came in is taken as it is
        self.config = config if config is not None else config_path()
        self.multiplex = multiplex
        self.connect_timeout = connect_timeout
        self._dir = control_dir()
        self._key: str | None = None
        self._master_pid: int | None = None

    # -- the pieces of an ssh command line -------------------------------------------------------

    def _base(self) -> list[str]:
        opts = {
            "BatchMode": "yes",
            "ConnectTimeout": str(self.connect_timeout),
            "ServerAliveInterval": "15",
            "ServerAliveCountMax": "3",
            "LogLevel": "ERROR",
            # A machine runs agents: it gets no way back into this machine's keys, display or ports.
            "ForwardAgent": "no",
            "ForwardX11": "no",
            "ClearAllForwardings": "yes",
        }
        if self.multiplex:
            opts |= {"ControlPath": str(self._dir / "%C"), "ControlMaster": "no"}
        else:
            opts |= {"ControlPath": "none", "ControlMaster": "no"}
        cmd = ["ssh", "-F", str(self.config) if self.config else "none"]
        for key, value in opts.items():
            cmd += ["-o", f"{key}={value}"]
        return cmd

    def _socket(self) -> Path:
        """The master's socket; `ssh -G` expands `%C` (a hash of local host, host, port and user)."""
        if self._key is None:
            # Ours is given on the command line, so the config's own ControlPath does not matter.
            path = ssh_settings(self.name, self.config, extra=["-o", f"ControlPath={self._dir}/%C"])
            check_resolved(self.name, path, self.config)
            name = Path(path.get("controlpath", "")).name
            if not name or "%" in name:
                ident = f"{path.get('user')}@{path.get('hostname')}:{path.get('port')}"
                name = hashlib.sha1(ident.encode()).hexdigest()
            self._key = name
        return self._dir / self._key

    def _fail(self, res: Result, doing: str) -> MachineUnreachable:
        where = f"`ssh -F {self.config or 'none'} {self.name} true`"
        detail = res.err.strip().splitlines()[-1] if res.err.strip() else f"ssh exited {res.code}"
        return MachineUnreachable(
            f"Machine {self.name} cannot be reached ({doing}): {detail}",
            hint=f"Try {where}, or `git balanced machines` to see which machines answer.",
            detail=detail, timed_out=res.code == 124 or "timed out" in detail,
        )

    # -- the master ------------------------------------------------------------------------------

    def check(self) -> bool:
        """True when this host's ControlMaster is alive and answering."""
        if not self.multiplex:
            return False
        sock = self._socket()
        if not sock.exists():
            return False
        res = proc.run([*self._base(), "-O", "check", "--", self.name], timeout=10)
        m = re.search(r"pid=(\d+)", res.err)
        self._master_pid = int(m.group(1)) if res.ok and m else None
        return res.ok

    def _ensure_master(self) -> None:
        # Fast path: the master this object saw is still running and its socket is in place.
        if self._master_pid is not None and self._socket().exists() and process_alive(self._master_pid):
            return
        with Flock(self._dir / f"{self._socket().name}.master"):
            if self.check():
                return
            # A socket whose master died (killed, rebooted) refuses connections: clear it and rebuild.
            self._socket().unlink(missing_ok=True)
            cmd = self._base()
            cmd[cmd.index("ControlMaster=no")] = "ControlMaster=yes"
            cmd += ["-o", f"ControlPersist={PERSIST_SECONDS}", "-f", "-N", "--", self.name]
            res = proc.run(cmd, timeout=self.connect_timeout * 3 + 5)
            if not res.ok or not self.check():
                raise self._fail(res, "opening the shared connection")

    def close(self) -> None:
        """Ask the ControlMaster to exit (other processes will start a new one when they need it)."""
        if not self.multiplex or not self._socket().exists():
            return
        proc.run([*self._base(), "-O", "exit", "--", self.name], timeout=10)
        self._master_pid = None

    # -- commands --------------------------------------------------------------------------------

    @contextmanager
    def slot(self, timeout: float | None = None) -> Iterator[int]:
        """Hold one of the host's MAX_SESSIONS session slots (for ssh started elsewhere, e.g. git)."""
        i, lock = self.take_slot(timeout)
        try:
            yield i
        finally:
            lock.release()

    def take_slot(self, timeout: float | None = None, *, wait: bool = True) -> tuple[int, Flock]:
        """One of the host's session slots as (number, its lock, held); releasing the lock frees it. Without
        `wait`, BalancedError at once when all are taken."""
        key = self._socket().name  # shared by multiplexed and direct sessions: the cap is the host's
        deadline = None if timeout is None else time.monotonic() + timeout
        delay = 0.005
        while True:
            for i in random.sample(range(MAX_SESSIONS), MAX_SESSIONS):
                lock = Flock(self._dir / f"{key}.slot{i}")
                if lock.take(wait=False):
                    return i, lock
            if not wait or (deadline is not None and time.monotonic() > deadline):
                raise BalancedError(
                    f"All {MAX_SESSIONS} SSH sessions to {self.name} "
                    + (f"stayed busy for {timeout:.0f} s." if wait and timeout is not None else "are busy."),
                    hint="Wait for the running commands there to finish, or give a longer timeout.",
                )
            time.sleep(delay)
            delay = min(delay * 2, 0.1)

    def run(self, argv: list[str], *, input: str | bytes | None = None,
            timeout: float | None = 60) -> Result:
        """Run argv on the machine; it is quoted for the remote shell, never interpolated."""
        if not argv:
            raise BalancedError("No command was given to run on " + self.name + ".")
        return self._ssh(shlex.join(argv), input, timeout)

    def run_python(self, source: str, args: list[str], *, input: str | bytes = "",
                   timeout: float | None = 60) -> Result:
        """Run a Python script on the machine with `args`; script and input both travel on stdin."""
        data = input.encode() if isinstance(input, str) else input
        return self._ssh(_python_line(args), _framed(source) + data, timeout)

    def open_python(self, source: str, args: list[str]) -> tuple[subprocess.Popen[bytes], Flock]:
        """A Python script kept running on the machine over the shared connection, to talk to on its stdin
        and stdout (a runner session): the process and the session slot it holds until it is closed. The
        script travels first on stdin, as with `run_python`. Only through a master: without one, every
        command is its own connection, and there is nothing to keep open."""
        if not self.multiplex:
            raise BalancedError(f"Sessions to {self.name} need the shared connection.",
                                hint="unset GIT_BALANCED_SSH_MULTIPLEX, or set it to 1.")
        self._ensure_master()
        _, lock = self.take_slot(wait=False)
        p = None
        try:
            p = proc.open_pipes([*self._base(), "-T", "--", self.name, _python_line(args)])
            assert p.stdin is not None
            p.stdin.write(_framed(source))
            p.stdin.flush()
        except BaseException:
            if p is not None:
                p.kill()
                p.wait()
            lock.release()
            raise
        return p, lock

    def _ssh(self, remote: str, input: str | bytes | None, timeout: float | None) -> Result:
        if self.multiplex:
            self._ensure_master()
        cmd = [*self._base(), "-T", "--", self.name, remote]
        data = input.encode() if isinstance(input, str) else input
        started = time.monotonic()
        with self.slot(timeout):
            left = None if timeout is None else max(1.0, timeout - (time.monotonic() - started))
            raw = proc.run(cmd, input=data, timeout=left, text=False)
        res = Result(raw.code, _text(raw.out), _text(raw.err))
        self.raise_unreachable(res)
        return res

    def raise_unreachable(self, res: Result) -> None:
        """MachineUnreachable when `res` is ssh failing to reach the machine, not the command failing there."""
        # 255 is ssh's own failure; a remote command can exit 255 too, so also look at what ssh said.
        if res.code == 255 and _UNREACHABLE.search(res.err):
            raise self._fail(res, "running a command")

    @contextmanager
    def machine(self, timeout: float = 60) -> Iterator[Any]:
        """The machine as a plumbum SshMachine over this same ssh (config, options, shared connection), for
        commands built as plumbum objects; it holds two slots: its shell there and the command it runs.
        Only `ready` uses it: plumbum costs more to import than the rest of a start-up, and its shell and
        `which` there cost two round trips more than `run`, which the hot paths keep."""
        from plumbum import local
        from plumbum.commands.processes import ProcessExecutionError
        from plumbum.machines.ssh_machine import SshMachine

        if self.multiplex:
            self._ensure_master()
        base = self._base()
        with self.slot(timeout), self.slot(timeout):
            try:
                # The name is an SshHost: SshMachine puts it after the options without a `--`.
                there = SshMachine(self.name, ssh_command=local[base[0]][tuple(base[1:])],
                                   connect_timeout=self.connect_timeout)
            except (ProcessExecutionError, EOFError) as exc:  # what ssh said, without plumbum's framing
                said = str(getattr(exc, "stderr", "") or exc)
                raise self._fail(Result(255, "", said), "opening a shell there") from None
            except BrokenPipeError:  # ssh ended before plumbum wrote to its shell: ask ssh itself what it says
                res = self.run(["true"], timeout=self.connect_timeout + 5)
                self.raise_unreachable(res)
                raise self._fail(Result(255, "", res.err or "its shell closed at once"), "opening a shell there") \
                    from None
            with there:
                yield there

    def run_command(self, command: Any, *, timeout: float = 60) -> Result:
        """Run a plumbum command object of `machine()` as `run` runs an argv: a Result whatever its exit code,
        124 after `timeout`, MachineUnreachable when ssh could not reach the machine."""
        # Not plumbum's run(timeout=...): through the shared connection ssh hands its pipes to the master,
        # so after plumbum kills ssh it still waits for them to close, that is, for the command to end.
        with command.popen(stdin=subprocess.DEVNULL) as p:
            try:
                out, err = p.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
                return Result(124, "", f"timed out after {timeout} seconds")
        res = Result(p.returncode, _text(out), _text(err))
        self.raise_unreachable(res)
        return res

    # -- git -------------------------------------------------------------------------------------

    def git_env(self) -> dict[str, str]:
        """Environment for `git push/fetch` to this machine: the same -F, options and master."""
        if self.multiplex:
            self._ensure_master()
        return {"GIT_SSH_COMMAND": shlex.join(self._base()), "GIT_SSH_VARIANT": "ssh"}

    def git_url(self, path: str) -> str:
        """A remote for git: `alias:path` (a relative path is relative to the machine's home)."""
        if path.startswith("-") or "\n" in path or "\0" in path:
            raise BalancedError(f"Refusing the remote path {path!r}.", hint="Give a plain folder path.")
        return f"{self.name}:{path}"

    def __repr__(self) -> str:
        return f"Transport({self.name!r}, multiplex={self.multiplex})"


def _python_line(args: list[str]) -> str:
    """The remote command that runs a script sent on stdin (BOOTSTRAP), with `args`, quoted."""
    return shlex.join(["python3", "-c", BOOTSTRAP, *args])


def _framed(source: str) -> bytes:
    """A script as BOOTSTRAP reads it from stdin: its length in bytes on a line, then the script."""
    code = source.encode()
    return str(len(code)).encode() + b"\n" + code


def _text(data: str | bytes) -> str:
    return data.decode(errors="replace") if isinstance(data, bytes) else data
