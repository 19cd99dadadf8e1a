"""An agent `ready` installed into `~/.local/bin` is found by the workers there, though a command run over SSH
does not have that folder on its PATH (the runner puts it first, as a login would); Node.js comes where an
agent needs a newer one, or the command to run is named."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from git_balanced.machines.inventory import pins
from git_balanced.machines.prepare.install import CannotInstall, Facts, described, install_node, node_needed
from tests.support.builders import git, make_repo
from tests.support.runner_calls import call, status_of
from tests.support.wait import wait_until


def test_the_runner_finds_an_agent_in_the_users_local_bin(tmp_path: Path) -> None:
    home = Path(os.environ["HOME"])
    assert str(home / ".local" / "bin") not in os.environ["PATH"].split(os.pathsep)
    agent = home / ".local" / "bin" / "prefix-agent"
    agent.parent.mkdir(parents=True)
    agent.write_text("#!/bin/sh\necho from the prefix > found.txt\n")
    agent.chmod(0o755)
    repo = make_repo(tmp_path / "lead", {"README.md": "sample\n"})
    runs = tmp_path / "runs"
    req = {"job": "p1", "repo": str(repo), "worktree": str(tmp_path / "wt" / "p1"), "branch": "balanced/p1",
           "base": git(repo, "rev-parse", "HEAD"), "argv": ["prefix-agent"], "runs_dir": str(runs),
           "commit_leftovers": True, "commit_message": "p1: work"}
    call("start", req)
    st = wait_until(lambda: (s := status_of(runs, "p1"))["state"] == "finished" and s, 30, "p1 to finish")
    assert st["result"]["exit_code"] == 0 and st["result"]["error"] is None, st
    assert git(repo, "show", "balanced/p1:found.txt") == "from the prefix"


def test_node_is_installed_where_an_agent_needs_a_newer_one_else_the_command_is_named() -> None:
    def facts(node: str | None, npm: str | None = "10.9.0", **more: object) -> Facts:
        return Facts({"node": node, "npm": npm, "arch": "x86_64", "system": "Linux", "musl": False, **more})

    assert node_needed(facts("20.20.2"), ["claude", "codex"], ["claude", "codex"]) is None
    assert node_needed(facts("20.20.2"), ["claude", "pi"], ["claude"]) == (22, 19, 0), "Pi runs on that Node"
    assert node_needed(facts(None, None), ["claude"], ["claude"]) == (18, 0, 0), "npm needs a Node to install"
    assert node_needed(facts("22.22.0", None), ["codex"], ["codex"]) == (16, 0, 0), "no npm: npm comes too"
    assert node_needed(facts("22.22.0"), ["pi"], []) is None
    # No sudo, and no prebuilt Node.js for musl: the exact command to run there.
    said: list[str] = []
    with pytest.raises(CannotInstall) as caught:
        install_node(SimpleNamespace(name="box"), facts("20.20.2", sudo=False, musl=True),  # type: ignore[arg-type]
                     (22, 19, 0), ["pi"], said.append)
    assert caught.value.why == "Node.js 22.19.0 or newer is needed there (it has 20.20.2)"
    assert f"https://nodejs.org/dist/v{pins.NODE_VERSION}/node-v{pins.NODE_VERSION}-linux-x64.tar.xz" \
        in caught.value.hint and "tar -xJ -C ~/.local --strip-components=1" in caught.value.hint
    assert not said, "nothing was tried"


def test_the_pinned_versions_in_docs_agents_md_are_those_of_pins_py() -> None:
    doc = (Path(__file__).resolve().parents[3] / "docs" / "agents.md").read_text()
    lines = doc.split("| agent | npm package | pinned |\n|---|---|---|\n", 1)[1].split("\n\n", 1)[0].splitlines()
    table = {row[1]: row[2] for row in ([c.strip(" `") for c in line.strip("|").split("|")] for line in lines)}
    assert table == dict(pins.AGENTS.values()), "docs/agents.md lists other versions than machines/inventory/pins.py"
    assert "git_balanced/machines/inventory/pins.py" in doc


def test_what_ready_installs_is_named_with_the_pinned_versions() -> None:
    claude, codex, pi = (pins.AGENTS[a][1] for a in ("claude", "codex", "pi"))
    assert described(["codex"]) == f"Codex {codex}"
    assert described(["claude", "codex"]) == f"Claude Code {claude} and Codex {codex}"
    assert described(["claude", "codex", "pi"]) == f"Claude Code {claude}, Codex {codex} and Pi {pi}"
