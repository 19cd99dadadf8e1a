"""`git balanced projects`: the repositories the chief works over, here and on SSH machines."""

from __future__ import annotations

from git_balanced import ui
from git_balanced.chief import home, remote
from git_balanced.chief.projects import Project, add_project, list_projects, remove_project


def list_command(*, as_json: bool) -> int:
    """List the projects; with --json, for programs."""
    found = list_projects()
    if as_json:
        ui.emit_json({"chief": str(home.folder()), "projects": [p.to_json() for p in found]})
        return 0
    if not found:
        ui.say("No projects yet. Add one with `git balanced projects add PATH` (or MACHINE:PATH).")
        return 0
    ui.table([[p.name, p.machine or "local", p.path] for p in found], head=["project", "machine", "path"])
    return 0


def _reached(p: Project) -> None:
    """A project on a machine is read there once before it is added: a folder that is not a repository, or a
    machine without git balanced, is refused now rather than on every read."""
    if p.machine:
        remote.read_json(p, ["board"])


def add_command(where: str, name: str | None) -> int:
    """Add the repository at PATH or MACHINE:PATH."""
    p = add_project(where, name, reached=_reached)
    ui.say(f"Added project {p.name} ({p.where}). `git balanced now --all` shows what waits on you in every project.")
    return 0


def rm_command(name: str) -> int:
    """Take a project off the list; the repository is untouched."""
    p = remove_project(name)
    ui.say(f"Removed project {p.name} ({p.where}); the repository itself is untouched.")
    return 0
