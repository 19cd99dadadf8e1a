"""A project on a real sshd machine, as the chief's tests set one up: git balanced installed there as `pipx
install` puts it, what the test made there given to the machine's user, and a repository there with a job."""

from __future__ import annotations

import os
import shutil
import sysconfig
from pathlib import Path

import git_balanced
from git_balanced import jobs as J
from git_balanced.lead import Lead, open_lead
from tests.support.builders import make_repo
from tests.support.cli import balanced
from tests.support.sshd import MACHINE_PYTHON, Machine


def install_there(m: Machine) -> None:
    """git balanced in the machine user's ~/.local/bin, as `pipx install` puts it: this checkout of the package
    and the test environment's libraries, run by the machine's own Python."""
    code = Path(git_balanced.__file__).resolve().parents[1]
    libs = sysconfig.get_paths()["purelib"]
    script = m.home / ".local" / "bin" / "git-balanced"
    script.parent.mkdir(parents=True)
    script.write_text(f"#!/bin/sh\nPYTHONPATH={code}:{libs} exec {MACHINE_PYTHON} -c "
                      "'import sys; from git_balanced.front import main; sys.exit(main())' \"$@\"\n")
    script.chmod(0o755)


def owned_by(m: Machine, path: Path) -> None:
    """Everything under `path` made the machine user's, as if it had made it there."""
    if not m.own_user:
        return
    for root, dirs, files in os.walk(m.home):
        for name in [*dirs, *files]:
            shutil.chown(os.path.join(root, name), m.user, m.user)
    shutil.chown(m.home, m.user, m.user)
    assert path.is_relative_to(m.home)


def project_there(here: Path, m: Machine, name: str) -> tuple[Lead, str]:
    """The machine added (run in `here`) and a repository `name` in its home with one job placed in it: (that
    repository's lead, the job's id). Nothing there is the machine user's yet (owned_by)."""
    assert balanced(here, "machines", "add", m.name).code == 0
    lead = open_lead(str(make_repo(m.home / name, {"README.md": name})))
    jid = J.place(lead.repo, {"plan": "p1", "piece": "build", "task": "t", "lead": "main", "machine": "local",
                              "agent": "shell", "attempt": 1})
    return lead, jid
