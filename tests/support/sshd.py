"""Real SSH machines for tests: one OpenSSH sshd per machine on 127.0.0.1, each with its own user.

As root (DESIGN §12), every machine gets a throwaway Unix user `bal-<random>` with its own home, so what
one machine does is invisible to the others and a machine can be killed as a whole (its sshd and every
process of its user). Without root, every machine is the current user with its own HOME through sshd's
`SetEnv`, and killing a machine ends the processes that carry that HOME.

The client side is written at `$GIT_BALANCED_SSH_CONFIG`: a `Host <name>` block per machine, the last
machine's block in a second file reached through `Include`, so the inventory is tested with Include.
"""

from __future__ import annotations

import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

from git_balanced.shipped.runfiles import alive as process_alive  # zombie-aware

SSHD = "/usr/sbin/sshd"
# The interpreter machine users run: the project's own python may live under /root, which they cannot read.
MACHINE_PYTHON = "/usr/bin/python3"
OWNER_MARK = ".balanced-test-owner"
COMMANDS_LOG = ".ssh/commands.log"


@dataclass
class Machine:
    """One running sshd on loopback and the account it lets in."""

    name: str
    user: str
    home: Path
    port: int
    folder: Path
    own_user: bool
    uid: int = -1
    process: subprocess.Popen[bytes] | None = field(repr=False, default=None)

    @property
    def pid(self) -> int:
        """The listening sshd's pid."""
        assert self.process is not None, f"{self.name} was never started"
        return self.process.pid

    @property
    def log_path(self) -> Path:
        return self.folder / "sshd.log"

    def log(self) -> str:
        """Everything sshd wrote (it runs with `-e`, so that is its whole log)."""
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def commands(self) -> list[str]:
        """The command of every SSH session this machine ran, oldest first (git's included)."""
        path = self.home / COMMANDS_LOG
        return path.read_text(errors="replace").splitlines() if path.exists() else []

    def accepted(self) -> int:
        """How many SSH connections sshd has authenticated so far."""
        return self.log().count("Accepted publickey for ")

    def processes(self) -> list[int]:
        """Pids of every process of this machine other than the listening sshd."""
        return [pid for pid in _pids() if pid != self.pid and self._owns(pid)]

    def _owns(self, pid: int) -> bool:
        if self.own_user:
            return _uid_of(pid) == self.uid
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        except OSError:
            return False
        return f"HOME={self.home}".encode() in environ

    def kill(self) -> None:
        """The machine dies at once: SIGKILL to its sshd, its sessions and every process of its user."""
        # Per-connection sshd processes run as root (or carry the test's HOME), so find them as children.
        doomed = _descendants(self.pid) if self.process is not None else []
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for pid in doomed:
            with suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)

        def ended() -> bool:  # again each time: a process forked while the others were killed lives on
            left = self.processes()
            for pid in left:
                with suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            return not left

        _wait_until(ended, 5, f"the processes of {self.name} to end")

    def freeze(self) -> None:
        """The machine hangs: the kernel still accepts TCP connections, nobody answers."""
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGSTOP)

    def thaw(self) -> None:
        """Undo `freeze`."""
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGCONT)

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def cut(self) -> None:
        """The network goes: sshd and every SSH session end, but what runs detached there goes on."""
        assert self.process is not None
        doomed = _descendants(self.pid)
        self.process.kill()
        self.process.wait()
        for pid in doomed:
            with suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)

    def restart(self) -> None:
        """Bring sshd back on the same port, with the same keys and home (after `kill` or `cut`)."""
        assert self.process is not None and self.process.poll() is not None, f"{self.name} still runs"
        log = open(self.log_path, "ab")  # noqa: SIM115  (sshd owns it until it exits)
        self.process = subprocess.Popen(
            [SSHD, "-D", "-e", "-f", str(self.folder / "sshd_config")], stdin=subprocess.DEVNULL, stdout=log,
            stderr=log, start_new_session=True,
        )
        log.close()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # the log holds the first start's line too: ask the port
            with suppress(OSError), socket.create_connection(("127.0.0.1", self.port), timeout=1):
                return
            time.sleep(0.02)
        raise RuntimeError(f"sshd for {self.name} did not come back:\n{self.log()}")


class Machines(list[Machine]):
    """The machines of one test; `stop()` ends them all and removes their users."""

    def __init__(self, machines: list[Machine], config: Path) -> None:
        super().__init__(machines)
        self.config = config

    def by_name(self, name: str) -> Machine:
        return next(m for m in self if m.name == name)

    def stop(self) -> None:
        """Kill every machine and remove what it created outside the test's folder."""
        for m in self:
            if m.process is not None and m.process.poll() is None:
                with suppress(ProcessLookupError):
                    os.kill(m.process.pid, signal.SIGCONT)  # a frozen sshd cannot take SIGTERM
            m.kill()
            if m.own_user:
                _remove_user(m.user)


def sshd_available() -> bool:
    return Path(SSHD).exists() and shutil.which("ssh") is not None and shutil.which("ssh-keygen") is not None


def start_machines(tmp_path: Path, names: list[str], env: dict[str, dict[str, str]] | None = None) -> Machines:
    """Start one sshd per name and write the client config; the caller must call `.stop()`. `env` gives a
    machine's sessions more environment (`{"beta": {"PATH": ...}}`), as its login would."""
    if not sshd_available():
        import pytest  # only here: the benchmark uses this module without pytest

        pytest.skip("OpenSSH server missing: run scripts/ensure-sshd.sh")
    root = os.geteuid() == 0
    if root:
        _sweep_stale_users()
        # sshd as root needs its privilege-separation folder; a fresh container lacks it.
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
    base = tmp_path / "sshd"
    base.mkdir(parents=True, exist_ok=True)
    client_key = base / "client_ed25519"
    if not client_key.exists():
        _keygen(client_key)
    known_hosts = base / "known_hosts"
    machines = Machines([], _config_path())
    try:
        for name in names:
            machines.append(_start_one(base, name, client_key, known_hosts, root, (env or {}).get(name, {})))
    except BaseException:
        machines.stop()
        raise
    _write_client_config(machines, base, client_key, known_hosts)
    return machines


@contextmanager
def sshd_machines(tmp_path: Path, names: list[str], env: dict[str, dict[str, str]] | None = None
                  ) -> Iterator[Machines]:
    """`start_machines` as a context manager: the machines and their users are gone afterwards."""
    machines = start_machines(tmp_path, names, env)
    try:
        yield machines
    finally:
        machines.stop()


@contextmanager
def module_machine(base: Path, name: str) -> Iterator[tuple[Machine, Path]]:
    """One sshd machine for a whole test module: (the machine, its SSH client config), with
    GIT_BALANCED_SSH_CONFIG naming that config meanwhile. A test's own HOME learns it with `known_in`."""
    import pytest

    config = base / "ssh_config"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GIT_BALANCED_SSH_CONFIG", str(config))
        with sshd_machines(base, [name]) as ms:
            yield ms[0], config


def known_in(config: Path, home: Path) -> None:
    """The module machine's SSH config copied into `home`'s own, as a person's ~/.ssh/config names a host."""
    mine = home / ".ssh" / "config"
    mine.parent.mkdir(parents=True, exist_ok=True)
    mine.write_text(config.read_text())


def _start_one(base: Path, name: str, client_key: Path, known_hosts: Path, root: bool,
               env: dict[str, str] | None = None) -> Machine:
    folder = base / name
    folder.mkdir()
    host_key = folder / "host_ed25519"
    _keygen(host_key)
    pub = client_key.with_suffix(".pub").read_text()
    if root:
        user = _create_user()
        home = Path(os.path.expanduser(f"~{user}"))
        ssh_dir = home / ".ssh"
        ssh_dir.mkdir(mode=0o700, exist_ok=True)
        (ssh_dir / "authorized_keys").write_text(pub)
        shutil.chown(ssh_dir, user, user)
        shutil.chown(ssh_dir / "authorized_keys", user, user)
        keys_line = "AuthorizedKeysFile .ssh/authorized_keys"
    else:
        user = _current_user()
        home = folder / "home"
        (home / ".ssh").mkdir(parents=True)
        (folder / "authorized_keys").write_text(pub)
        keys_line = f"AuthorizedKeysFile {folder / 'authorized_keys'}"
    uid = pwd.getpwnam(user).pw_uid if root else -1
    machine = Machine(name=name, user=user, home=home, port=0, folder=folder, own_user=root, uid=uid)
    for _ in range(5):  # another process may grab the free port between probe and bind
        machine.port = _free_port()
        conf = folder / "sshd_config"
        conf.write_text(_sshd_config(machine, host_key, keys_line, env or {}))
        log = open(machine.log_path, "ab")  # noqa: SIM115  (sshd owns it until it exits)
        machine.process = subprocess.Popen(
            [SSHD, "-D", "-e", "-f", str(conf)], stdin=subprocess.DEVNULL, stdout=log, stderr=log,
            start_new_session=True,
        )
        log.close()
        if _wait_listening(machine):
            break
    else:
        raise RuntimeError(f"sshd for {name} would not start:\n{machine.log()}")
    host_pub = host_key.with_suffix(".pub").read_text().split()
    with open(known_hosts, "a") as fh:
        fh.write(f"[127.0.0.1]:{machine.port} {host_pub[0]} {host_pub[1]}\n")
    return machine


def _sshd_config(m: Machine, host_key: Path, keys_line: str, env: dict[str, str]) -> str:
    lines = [
        f"Port {m.port}",
        "ListenAddress 127.0.0.1",
        f"HostKey {host_key}",
        f"PidFile {m.folder / 'sshd.pid'}",
        keys_line,
        "PubkeyAuthentication yes",
        "PasswordAuthentication no",
        "KbdInteractiveAuthentication no",
        "StrictModes no",
        "UsePAM no",
        f"AllowUsers {m.user}",
        "PermitRootLogin prohibit-password",
        "PrintMotd no",
        "X11Forwarding no",
        "LogLevel INFO",
        # Tests open many connections at once (the non-multiplexed benchmark, ten sessions in a burst).
        "MaxStartups 100:30:200",
        "MaxSessions 20",
    ]
    if not m.own_user:
        # sshd starts a session in the account's real home; move it to the machine's, as a login would.
        env = {"HOME": str(m.home), **env}
    if env:
        lines.append("SetEnv " + " ".join(f"{k}={v}" for k, v in env.items()))
    # Every session's command is written down (Machine.commands), then run as sshd would have run it.
    lines.append(f"ForceCommand printf '%s\\n' \"$SSH_ORIGINAL_COMMAND\" >> \"$HOME/{COMMANDS_LOG}\"; "
                 'cd "$HOME" && eval "${SSH_ORIGINAL_COMMAND:-exec $SHELL -l}"')
    return "\n".join(lines) + "\n"


def _write_client_config(machines: Machines, base: Path, key: Path, known_hosts: Path) -> None:
    config = machines.config
    config.parent.mkdir(parents=True, exist_ok=True)
    included = base / "config.d"
    included.mkdir(exist_ok=True)

    def block(m: Machine) -> str:
        return (
            f"Host {m.name}\n    HostName 127.0.0.1\n    Port {m.port}\n    User {m.user}\n"
            f"    IdentityFile {key}\n    IdentitiesOnly yes\n    UserKnownHostsFile {known_hosts}\n"
            "    StrictHostKeyChecking accept-new\n"
        )

    direct, via_include = machines[:-1], machines[-1:]
    (included / "machines.conf").write_text("".join(block(m) for m in via_include))
    # The Include comes before any Host line: inside a Host block it would only apply to that host.
    config.write_text(
        f"# test machines\nInclude {included}/*.conf\n\n" + "\n".join(block(m) for m in direct)
    )


def _config_path() -> Path:
    env = os.environ.get("GIT_BALANCED_SSH_CONFIG")
    return Path(env) if env else Path.home() / ".ssh" / "config"


def _keygen(path: Path) -> None:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", path.name, "-f", str(path)],
        check=True, stdin=subprocess.DEVNULL, capture_output=True,
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_listening(m: Machine) -> bool:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        text = m.log()
        if f"Server listening on 127.0.0.1 port {m.port}" in text:
            return True
        assert m.process is not None
        if m.process.poll() is not None:
            if "Address already in use" in text:
                return False
            raise RuntimeError(f"sshd for {m.name} exited {m.process.returncode}:\n{text}")
        time.sleep(0.01)
    raise RuntimeError(f"sshd for {m.name} did not listen within 10 s:\n{m.log()}")


def _create_user() -> str:
    name = f"bal-{secrets.token_hex(3)}"
    # `-p '*'`: without PAM, sshd refuses an account whose password field is the locked `!`.
    cmd = ["useradd", "-m", "-s", "/bin/sh", "-p", "*", "-K", "UMASK=022", name]
    for _ in range(20):  # useradd fails rather than waits when another one holds /etc/passwd
        cp = subprocess.run(cmd, capture_output=True, text=True)
        if cp.returncode == 0:
            break
        if cp.returncode != 1 or "lock" not in cp.stderr:
            raise RuntimeError(f"useradd {name} failed: {cp.stderr}")
        time.sleep(0.1)
    else:
        raise RuntimeError(f"useradd {name}: /etc/passwd stayed locked")
    home = Path(os.path.expanduser(f"~{name}"))
    (home / OWNER_MARK).write_text(str(os.getpid()))
    return name


def _remove_user(name: str) -> None:
    for _ in range(20):
        cp = subprocess.run(["userdel", "-r", "-f", name], capture_output=True, text=True)
        # 6: no such user; 12: the mail spool was missing, the user is gone all the same.
        if cp.returncode in (0, 6, 12):
            return
        time.sleep(0.1)
    raise RuntimeError(f"userdel {name} failed: {cp.stderr}")


def _sweep_stale_users() -> None:
    """Remove test users left by a test process that died before its teardown."""
    for line in Path("/etc/passwd").read_text().splitlines():
        fields = line.split(":")
        if len(fields) < 6 or not fields[0].startswith("bal-"):
            continue
        mark = Path(fields[5]) / OWNER_MARK
        try:
            owner = int(mark.read_text())
        except (OSError, ValueError):
            continue  # not ours: no mark
        if process_alive(owner):
            continue
        uid = int(fields[2])
        for pid in _pids():
            if _uid_of(pid) == uid:
                with suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        _remove_user(fields[0])


def _pids() -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def _descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for pid in _pids():
        try:
            ppid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(pid)
    found, todo = [], [root]
    while todo:
        kids = children.get(todo.pop(), [])
        found += kids
        todo += kids
    return found


def _uid_of(pid: int) -> int:
    """The real uid of a live process; -1 for one that is gone or a zombie (nothing left to kill)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return -1
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    if fields.get("State", "").strip().startswith("Z"):
        return -1
    return int(fields["Uid"].split()[0])


def _current_user() -> str:
    return pwd.getpwuid(os.geteuid()).pw_name


def _wait_until(cond: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


# -- a lead whose workers may run on the machines ---------------------------------------------------------
def wire_lead(repo: Path, machines: Machines, settings: str, *, tick: list[str] | None = None) -> str:
    """Commit `settings` as .magnum/settings.toml, allow it, tick local and `tick` (default: every machine)
    and run `ready --yes`; returns what `ready` printed. `repo` is a repository on branch main."""
    from tests.support.builders import commit
    from tests.support.cli import balanced

    commit(repo, {".magnum/settings.toml": settings}, "settings")
    for args in (["allow", "--yes"], ["tick", "local", *(tick if tick is not None else [m.name for m in machines])],
                 ["ready", "--yes"]):
        ran = balanced(repo, *args)
        assert ran.code == 0, f"git balanced {' '.join(args)} failed:\n{ran.out}\n{ran.err}"
    return ran.out
