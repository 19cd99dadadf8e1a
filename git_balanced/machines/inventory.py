"""Which machines there are: `local`, the ones you added (kept per user), ticks (kept per repository)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from git_balanced.errors import BalancedError
from git_balanced.git import Repo
from git_balanced.machines.placement import WEIGHTS, Seat

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
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, path)


def added() -> dict[str, dict[str, Any]]:
    """The machines you added: name -> {host, preference}."""
    return dict(_load(_user_file()).get("machines", {}))


def add(name: str, host: str | None, preference: str) -> None:
    from git_balanced.machines.transport import validate_host
    from git_balanced.models import MachineName

    MachineName.of(name)
    if name == LOCAL:
        raise BalancedError("`local` is always there.", hint="set its preference with `machines add` of another "
                                                             "name, or tick/untick it.")
    if preference not in WEIGHTS:
        raise BalancedError(f"--preference {preference!r} is not one of {', '.join(WEIGHTS)}.",
                            hint="use --preference prefer, normal, less-often or manual-only.")
    validate_host(host or name)
    data = _load(_user_file())
    data.setdefault("machines", {})[name] = {"host": host or name, "preference": preference}
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
    known = {LOCAL, *added()}
    unknown = [n for n in names if n not in known]
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
    data[name] = {**record, "at": time.time()}
    _save(path, data)


def seats(lead: Any, running: dict[str, int] | None = None, unreachable: set[str] | None = None) -> list[Seat]:
    """Every machine as placement sees it: local always ready, others as `ready` left them."""
    repo = lead.repo
    ticks = ticked(repo)
    ready = readiness(repo)
    running = running if running is not None else _running(repo)
    out = [Seat(LOCAL, "normal", running.get(LOCAL, 0), ready=True, reachable=True, ticked=LOCAL in ticks,
                setup_done=bool(ready.get(LOCAL, {}).get("setup_done")))]
    for name, m in sorted(added().items()):
        r = ready.get(name, {})
        out.append(Seat(name, m.get("preference", "normal"), running.get(name, 0), ready=bool(r.get("ready")),
                        reachable=name not in (unreachable or set()), ticked=name in ticks,
                        setup_done=bool(r.get("setup_done")),
                        why_not=r.get("why", "") or ("" if r.get("ready") else "`git balanced ready` has not run")))
    return out


def _running(repo: Repo) -> dict[str, int]:
    from git_balanced.jobs import all_jobs

    counts: dict[str, int] = {}
    for j in all_jobs(repo).values():
        if j.state in ("queued", "running"):
            counts[j.machine] = counts.get(j.machine, 0) + 1
    return counts
