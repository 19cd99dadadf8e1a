"""Which machines there are: `local`, the ones you added (kept per user), ticks (kept per repository)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from git_balanced.errors import BalancedError
from git_balanced.files import Flock, write_json
from git_balanced.git import Repo
from git_balanced.machines.inventory import boxes
from git_balanced.machines.inventory import held as holds
from git_balanced.machines.inventory.names import SshHost
from git_balanced.machines.inventory.placement import WEIGHTS
from git_balanced.models import MachineName
from git_balanced.ui import clock

LOCAL = "local"


def _user_file() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    d = Path(base) / "git-balanced"
    d.mkdir(parents=True, exist_ok=True)
    return d / "machines.json"


def _load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
        return data if isinstance(data, dict) else {}
    except FileNotFoundError:
        return {}
    except ValueError as exc:
        raise BalancedError(f"{path} is not valid JSON ({exc}).",
                            hint=f"fix or remove {path}; `git balanced machines add` writes it again.") from None


def _save(path: Path, data: dict[str, Any]) -> None:
    write_json(path, data, indent=2, sort_keys=True)


def added() -> dict[str, dict[str, Any]]:
    """The machines you added: name -> {host, preference}."""
    path = _user_file()
    machines = _load(path).get("machines", {})
    if not isinstance(machines, dict) or not all(isinstance(m, dict) for m in machines.values()):
        raise BalancedError(f"{path}: `machines` must map each name to {{\"host\": ..., \"preference\": ...}}.",
                            hint=f"fix or remove {path}; `git balanced machines add NAME --host HOST` writes it.")
    return dict(machines)


def check_host(host: str) -> SshHost:
    """The host as an SshHost: one that ssh would read as an option, or that holds blanks or control
    characters, is refused here, where it comes in, and taken as checked from then on."""
    return SshHost.of(host, what="the host", hint="give --host a plain SSH host name or alias.")


def known() -> set[str]:
    """Every machine's name: `local` and the ones you added."""
    return {LOCAL, *added()}


def host_alias(machine: str) -> SshHost:
    """The SSH host an added machine is reached as, checked where it is read from the machines file."""
    entry = added().get(machine)
    if entry is None:
        raise BalancedError(f"There is no added machine named {machine!r}.",
                            hint=f"add it with `git balanced machines add {machine}`, or see `git balanced machines`.")
    spec = boxes.spec_from(entry, machine, f" in {_user_file()}")
    if spec is not None:  # a box is reached through the SSH machine whose engine runs it
        if spec.on is None:
            raise BalancedError(f"Machine {machine} is a {spec.kind} on this machine: it has no SSH host.",
                                hint=f"`git balanced machines` shows it; `git balanced ready {machine}` checks it.")
        return host_alias(spec.on)
    host = str(entry.get("host") or machine)
    return SshHost.of(host, what="the host", where=f" of machine {machine} in {_user_file()}",
                      hint=f"`git balanced machines rm {machine}`, then add it again with a plain SSH host name or "
                           "alias.")


def box_of(machine: str) -> boxes.BoxSpec | None:
    """The box an added machine is (container or pod), checked; None for `local`, an SSH machine or one not
    added."""
    entry = added().get(machine)
    return None if entry is None else boxes.spec_from(entry, machine, f" in {_user_file()}")


def add_box(name: str, spec: boxes.BoxSpec, preference: str) -> None:
    """Keep a box machine for you: its name, its spec and its SSH machine (`on`, an added one) checked here."""
    checked = MachineName.of(name)
    if name == LOCAL:
        raise BalancedError("`local` is this machine: it cannot be a container.",
                            hint="name the container machine otherwise, e.g. `git balanced machines add box "
                                 "--container IMAGE`.")
    if preference not in WEIGHTS:
        raise BalancedError(f"--preference {preference!r} is not one of {', '.join(WEIGHTS)}.",
                            hint="use --preference prefer, normal, less-often or manual-only.")
    boxes.check(spec)
    data = _load(_user_file())
    if spec.on is not None and (spec.on not in data.get("machines", {}) or data["machines"][spec.on].get("kind")):
        raise BalancedError(f"--on {spec.on}: there is no added SSH machine of that name.",
                            hint=f"add it first: `git balanced machines add {spec.on} --host HOST`.")
    data.setdefault("machines", {})[checked] = {**spec.entry(), "preference": preference}
    _save(_user_file(), data)


def local_preference() -> str:
    """This machine's preference: `normal` unless you set it (`manual-only` keeps it for coordination only)."""
    pref = (_load(_user_file()).get("local") or {}).get("preference", "normal")
    return pref if pref in WEIGHTS else "normal"


def add(name: str, host: str | None, preference: str) -> None:
    """Keep a machine for you (or this machine's preference). Its name, and its host when it has one of its
    own, are checked here, where they come in; what is checked already (an SshHost) is taken as it is."""
    checked = MachineName.of(name)
    if preference not in WEIGHTS:
        raise BalancedError(f"--preference {preference!r} is not one of {', '.join(WEIGHTS)}.",
                            hint="use --preference prefer, normal, less-often or manual-only.")
    if name == LOCAL:
        if host:
            raise BalancedError("`local` is this machine: it has no --host.",
                                hint=f"`git balanced machines add local --preference {preference}` sets its "
                                     "preference; `git balanced untick local` keeps pieces off it here.")
        data = _load(_user_file())
        data["local"] = {"preference": preference}
        _save(_user_file(), data)
        return
    where = check_host(host) if host else checked
    data = _load(_user_file())
    data.setdefault("machines", {})[checked] = {"host": where, "preference": preference}
    _save(_user_file(), data)


def remove(name: str) -> None:
    data = _load(_user_file())
    if name not in data.get("machines", {}):
        raise BalancedError(f"There is no added machine named {name!r}.", hint="see `git balanced machines`.")
    del data["machines"][name]
    _save(_user_file(), data)


def _ticks_file(repo: Repo) -> Path:
    return repo.state_dir / "ticks.json"


def ticked(repo: Repo) -> set[str]:
    """Machines that may take this repository's workers; the first time, only `local`."""
    data = _load(_ticks_file(repo))
    return set(data.get("ticked", [LOCAL]))


def set_ticks(repo: Repo, names: list[str], on: bool) -> set[str]:
    names_known = known()
    unknown = [n for n in names if n not in names_known]
    if unknown:
        raise BalancedError(f"No machine named {', '.join(unknown)}.",
                            hint="add it first: `git balanced machines add NAME --host HOST`.")
    now = ticked(repo)
    now = now | set(names) if on else now - set(names)
    _save(_ticks_file(repo), {"ticked": sorted(now)})
    return now


def readiness(repo: Repo) -> dict[str, dict[str, Any]]:
    """What `ready` found on each machine for this repository."""
    return dict(_load(repo.state_dir / "ready.json"))


def set_readiness(repo: Repo, name: str, record: dict[str, Any]) -> None:
    path = repo.state_dir / "ready.json"
    data = _load(path)
    kept = {"setup_done": True} if data.get(name, {}).get("setup_done") else {}  # learnt from workers, not ready
    data[name] = {**kept, **record, "at": time.time()}
    _save(path, data)


def mark_setup_done(repo: Repo, name: str) -> None:
    """Remember that setup has run on a machine: placement prefers it among equals (caches are warm there)."""
    path = repo.state_dir / "ready.json"
    data = _load(path)
    if not data.get(name, {}).get("setup_done"):
        data[name] = {**data.get(name, {}), "setup_done": True}
        _save(path, data)


INELIGIBLE_SECONDS = 30.0


def _unreachable_file(repo: Repo) -> Path:
    return repo.state_dir / "unreachable.json"


def mark_unreachable(repo: Repo, name: str, why: str, seconds: float = INELIGIBLE_SECONDS) -> None:
    """Keep a machine out of placement for `seconds` (a probe of it timed out): per machine, per repository."""
    path = _unreachable_file(repo)
    with Flock(f"{path}.lock"):  # probes answer from threads, other processes write it too
        data = {k: v for k, v in _load(path).items() if float(v.get("until", 0)) > time.time()}
        data[name] = {"why": why, "until": time.time() + seconds}
        _save(path, data)


def mark_timed_out(repo: Repo, machine: str, why: str) -> None:
    """A machine that timed out is ineligible for placement for a while, and the lead hears when it was."""
    mark_unreachable(repo, machine, f"{why} at {clock(time.time(), seconds=True)}")


def ineligible(repo: Repo) -> dict[str, str]:
    """Machines kept out of placement now, with why and until when, in words; held ones (held.py) until they
    answer again."""
    out = {}
    for name, v in _load(_unreachable_file(repo)).items():
        until = float(v.get("until", 0))
        if until > time.time():
            when = clock(until, seconds=True)
            out[name] = f"{v.get('why', 'it did not answer')}; it is skipped until {when}"
    for name, h in holds.held(repo).items():  # held until it answers again: no time says when
        out[name] = holds.why(h)
    return out
