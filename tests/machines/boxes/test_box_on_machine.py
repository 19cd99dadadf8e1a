"""A container on an SSH machine's engine: the machine's own (rootless) podman, reached through the one door to
SSH, `podman exec -i` there; the piece lands through the check here and its container is gone after."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from git_balanced.git import Repo
from git_balanced.jobs import all_jobs
from tests.machines.boxes.conftest import SANDBOX_CONF, image_tag
from tests.support.builders import git, make_repo
from tests.support.cli import balanced
from tests.support.sshd import Machine, sshd_machines

pytestmark = [pytest.mark.sshd, pytest.mark.boxes]

SETTINGS = '[worktree]\ncheck = "test ! -e broken.txt"\n\n[balanced]\nagent = "shell"\n'
# Its user's own podman keeps images on overlay (rootless, as this kernel allows), not on the slow vfs.
STORAGE_CONF = '[storage]\ndriver = "overlay"\n'


def as_machine_user(m: Machine, env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    """A command as the machine's user, with its HOME and the engine's settings."""
    run_as = ["runuser", "-u", m.user, "--"] if m.own_user else []
    full = {"HOME": str(m.home), "USER": m.user, "PATH": "/usr/sbin:/usr/bin:/sbin:/bin", **env}  # as sshd's
    return subprocess.run([*run_as, "env", *[f"{k}={v}" for k, v in env.items()], *argv], env=full,
                          capture_output=True, text=True, cwd=m.home, timeout=600)


def engine_files(m: Machine) -> dict[str, str]:
    """The sandbox's engine settings, written where the machine's user reads them."""
    folder = m.home / ".balanced-engine"
    folder.mkdir(exist_ok=True)
    (folder / "containers.conf").write_text(SANDBOX_CONF)
    (folder / "storage.conf").write_text(STORAGE_CONF)
    if m.own_user:
        for p in (folder, *folder.iterdir()):
            shutil.chown(p, m.user, m.user)
    return {"CONTAINERS_CONF": str(folder / "containers.conf"), "CONTAINERS_STORAGE_CONF": str(folder / "storage.conf")}


def test_a_piece_runs_in_a_container_on_an_ssh_machines_engine(small_image: Path, tmp_path: Path) -> None:
    with sshd_machines(tmp_path, ["alpha"]) as ms:
        alpha = ms[0]
        env = engine_files(alpha)
        loaded = as_machine_user(alpha, env, "podman", "load", "-q", "-i", str(small_image))
        assert loaded.returncode == 0, loaded.stderr
        repo = make_repo(tmp_path / "proj", {".magnum/settings.toml": SETTINGS})
        add = ["machines", "add", "box", "--container", image_tag(None), "--on", "alpha",
               *[w for k, v in env.items() for w in ("--engine-env", f"{k}={v}")]]
        for args in (["allow", "--yes"], ["machines", "add", "alpha"], add, ["tick", "box"], ["untick", "local"],
                     ["ready", "box"]):
            ran = balanced(repo, *args)
            assert ran.code == 0, f"git balanced {' '.join(args)} failed:\n{ran.out}\n{ran.err}"
        assert "container" in ran.out and "on alpha" in ran.out, ran.out
        pieces = [{"id": "p1", "task": "Write f1", "agent": "shell", "run": "id -un > who.txt; echo 1 > f1.txt"}]
        (tmp_path / "plan.yaml").write_text(json.dumps({"task": "On alpha's engine", "pieces": pieces}))
        assert balanced(repo, "plan", str(tmp_path / "plan.yaml"), "--start").code == 0
        ran = balanced(repo, "engine", "--until-idle")
        assert ran.code == 0, ran.out + ran.err
        [job] = all_jobs(Repo.discover(repo)).values()
        assert (job.machine, job.state) == ("box", "landed"), ran.out
        assert git(repo, "show", "main:who.txt") == "root", "root in its box, the machine's user outside"
        left = as_machine_user(alpha, env, "podman", "ps", "-a", "--filter", "label=balanced=1", "--format",
                               "{{.Names}}")
        assert left.returncode == 0 and left.stdout.strip() == "", left.stdout + left.stderr
