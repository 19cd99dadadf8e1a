"""The projects the chief works over: repositories on this machine or on an SSH machine, kept as a chain of
events on `refs/balanced/chief/projects` in the chief's repository, one commit per change.

    add_project("~/src/shop")                      # a repository here, named `shop`
    add_project("build-box:src/shop-ios", name="ios")  # one on a machine you added
    remove_project("ios")
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from git_balanced.chief import home
from git_balanced.errors import BalancedError, NotARepository
from git_balanced.git import Repo
from git_balanced.machines.inventory import records
from git_balanced.state.events import Event, node_id, read_event, write_event_commit
from git_balanced.state.refs import lamport_of, read_chain, update_with_retry

REF = home.ref("projects")
ADDED, REMOVED = "project added", "project removed"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,39}")


@dataclass(frozen=True)
class Project:
    """One registered repository: its name, its machine (None for this one) and its folder there."""

    name: str
    machine: str | None
    path: str

    @property
    def where(self) -> str:
        """`PATH` here, `MACHINE:PATH` on a machine: what `projects add` takes."""
        return f"{self.machine}:{self.path}" if self.machine else self.path

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "machine": self.machine, "path": self.path, "where": self.where}


def check_name(name: str) -> str:
    """`name` when it is a project's name (letters, digits, '_' and '-', 40 at most), else one clear refusal."""
    if not _NAME.fullmatch(name):
        raise BalancedError(f"{name!r} is not a project name: use letters, digits, '_' and '-' (40 at most), "
                            "starting with a letter or digit.", hint="give another with --name NAME.")
    return name


def _default_name(path: str) -> str:
    """A project name from the folder's last part: `~/src/Shop App` is `Shop-App`."""
    slug = re.sub(r"[^A-Za-z0-9_-]+", "-", Path(path.rstrip("/")).name).strip("-_")[:40]
    return slug or "project"


def parse_where(where: str) -> tuple[str | None, str]:
    """(machine, path) from `PATH` or `MACHINE:PATH`; `local:PATH` is this machine. A colon after a slash is
    part of a path. On a machine, `~/src/app` is kept as `src/app` (the home folder, where a command starts)."""
    head, colon, tail = where.partition(":")
    if colon and head and "/" not in head:
        if head == records.LOCAL:
            return None, tail
        # A path there is from / or from the SSH user's home, where a command there starts: `~/x` is `x`.
        return head, ("." if tail in ("~", "~/") else tail[2:] if tail.startswith("~/") else tail)
    return None, where


def _of(d: dict[str, Any]) -> Project:
    return Project(str(d["name"]), d.get("machine") or None, str(d["path"]))


def _fold(events: list[Event]) -> dict[str, Project]:
    out: dict[str, Project] = {}
    for ev in events:
        if ev.event == ADDED:
            out[str(ev.data["name"])] = _of(ev.data)
        elif ev.event == REMOVED:
            out.pop(str(ev.data["name"]), None)
    return out


def _projects_at(repo: Repo, tip: str | None) -> dict[str, Project]:
    """The projects as of the commit `tip`: the list its event holds after its change (one commit read), or,
    for a tip that holds none (a merge of two clones' chains), the fold of the whole chain."""
    if not tip:
        return {}
    ev, _ = read_event(repo, tip)
    if ev is not None and isinstance(ev.data.get("projects"), list):
        return {str(d["name"]): _of(d) for d in ev.data["projects"]}
    return _fold(read_chain(repo, tip))


def list_projects() -> list[Project]:
    """Every registered project, by name."""
    repo = home.repo()
    return sorted(_projects_at(repo, repo.read_ref(REF)).values(), key=lambda p: p.name)


def project(name: str) -> Project:
    """The project called `name`, or one clear refusal naming the ones there are."""
    found = {p.name: p for p in list_projects()}
    if name not in found:
        known = ", ".join(found) or "none yet"
        raise BalancedError(f"There is no project named {name!r} (projects: {known}).",
                            hint="`git balanced projects` lists them; `git balanced projects add PATH` adds one.")
    return found[name]


def _local_root(path: str) -> str:
    """The top folder of the repository at `path` on this machine, or a refusal saying it is none."""
    folder = Path(path).expanduser().absolute()
    if not folder.is_dir():
        raise BalancedError(f"{folder} is not a folder.", hint="give the folder of a git repository.")
    try:
        return str(Repo.discover(folder).root)
    except NotARepository:
        raise BalancedError(f"{folder} is not a git repository.",
                            hint=f"give a repository's folder, or make one there: `git -C {folder} init`.") from None


def _check_machine(machine: str) -> None:
    if machine not in records.added():
        raise BalancedError(f"There is no machine named {machine!r}.",
                            hint=f"add it with `git balanced machines add {machine} --host HOST`, or see "
                                 "`git balanced machines`.")


def _change(event: str, project: Project, check: Any) -> None:
    """Append one change to the chain, after `check(projects now)` on the tip it builds on (compare-and-swap)."""
    repo = home.repo()
    node = node_id(repo)

    def build(tip: str | None) -> str:
        before = _projects_at(repo, tip)
        check(before)
        after = {**before, project.name: project} if event == ADDED else \
            {n: p for n, p in before.items() if n != project.name}
        data = {**project.to_json(), "projects": [after[n].to_json() for n in sorted(after)]}
        ev = Event(event=event, data=data, lamport=lamport_of(repo, tip) + 1, node=node, time=time.time())
        verb = "Added" if event == ADDED else "Removed"
        return write_event_commit(repo, ev, f"{verb} project {project.name} ({project.where})", [tip] if tip else [])

    update_with_retry(repo, REF, build, f"balanced: {event}")


def add_project(where: str, name: str | None = None, *, reached: Any = None) -> Project:
    """Register the repository at `PATH` or `MACHINE:PATH` under `name` (default: its folder's name). A folder
    here must be a repository; a machine must be one you added, and `reached(project)` (when given) reads it
    there first, refusing what is not a repository."""
    machine, path = parse_where(where.strip())
    if not path:
        raise BalancedError(f"{where!r} names no folder.", hint="give PATH or MACHINE:PATH.")
    if machine is None:
        path = _local_root(path)
    else:
        _check_machine(machine)
    new = Project(check_name(name) if name else _default_name(path), machine, path)
    if reached is not None:
        reached(new)

    def check(now: dict[str, Project]) -> None:
        same = next((p for p in now.values() if (p.machine, p.path) == (new.machine, new.path)), None)
        if same:
            raise BalancedError(f"{new.where} is a project already, named {same.name!r}.",
                                hint=f"`git balanced projects rm {same.name}` first to add it under another name.")
        if new.name in now:
            raise BalancedError(f"There is a project named {new.name!r} already ({now[new.name].where}).",
                                hint=f"give this one another name: `git balanced projects add {where} --name NAME`.")

    _change(ADDED, new, check)
    return new


def remove_project(name: str) -> Project:
    """Take the project `name` off the list (the repository itself is untouched)."""
    gone = project(name)

    def check(now: dict[str, Project]) -> None:
        if name not in now:
            raise BalancedError(f"There is no project named {name!r}.", hint="`git balanced projects` lists them.")

    _change(REMOVED, gone, check)
    return gone
