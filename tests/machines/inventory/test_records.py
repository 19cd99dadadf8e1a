"""The machines file: a host in it that ssh would read as an option is refused where it is read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from git_balanced.machines.prepare import agents_probe
from tests.support.builders import make_repo
from tests.support.cli import balanced

SHELL = '[worktree]\ncheck = "true"\n\n[balanced]\nagent = "shell"\n'


def test_a_host_in_the_machines_file_that_ssh_would_read_as_an_option_is_refused(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "proj", {"README.md": "sample\n", ".magnum/settings.toml": SHELL})
    marker = tmp_path / "x"
    cfg = tmp_path / "config"
    (cfg / "git-balanced").mkdir(parents=True)
    machines = cfg / "git-balanced" / "machines.json"
    machines.write_text(json.dumps({"machines": {"box": {"host": f"-oProxyCommand=touch {marker}",
                                                         "preference": "normal"}}}))
    r = balanced(repo, "ready", "box", "--yes", env={"XDG_CONFIG_HOME": str(cfg)})
    assert r.code == 1, r
    assert f"box  not ready: Refusing the host '-oProxyCommand=touch {marker}' of machine box in {machines}: it " \
        "starts with '-'." in r.out, r
    assert not marker.exists(), "nothing was run"


def test_the_agents_of_a_machine_whose_host_is_refused_or_that_is_gone_are_not_asked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`agents_probe.refresh` works each machine's host out itself (`records.host_alias`): the one it refuses,
    and a machine no longer added, are left out of the answer and nothing runs."""
    marker = tmp_path / "x"
    cfg = tmp_path / "config"
    (cfg / "git-balanced").mkdir(parents=True)
    (cfg / "git-balanced" / "machines.json").write_text(json.dumps(
        {"machines": {"box": {"host": f"-oProxyCommand=touch {marker}", "preference": "normal"}}}))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(cfg))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert agents_probe.refresh(["box", "gone"], ["claude"]) == {}
    assert not marker.exists(), "nothing was run"
