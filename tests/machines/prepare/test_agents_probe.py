"""What a machine has of the agent CLIs, asked of the real CLIs' own status commands (no model is called)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from git_balanced.machines.inventory import pins
from git_balanced.machines.prepare import agents_probe
from tests.support import agent_home


def _point(monkeypatch: pytest.MonkeyPatch, env: dict[str, str], agent_bin: str) -> None:
    for key in [k for k in os.environ if k not in env]:
        monkeypatch.delenv(key)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("PATH", agent_bin + os.pathsep + env["PATH"])


def test_each_cli_says_whether_it_is_signed_in(tmp_path: Path, agent_bin: str,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    url = "http://127.0.0.1:9"  # a closed port: a probe that called a model would fail, not hang
    env = agent_home.claude_env(home, url)
    env.update(agent_home.codex_env(home, url))
    env.update(agent_home.pi_env(home, url))
    _point(monkeypatch, env, agent_bin)
    facts = agents_probe.probe(None)
    for agent in agents_probe.AGENTS:
        f = facts["agents"][agent]
        assert f["installed"] and f["signed_in"] and f["version"], (agent, f)
        assert agents_probe.missing_words(agent, f) == ""
    assert facts["git"] and facts["node"], facts
    assert facts["agents"]["pi"]["node_needed"] == "22.19"
    for agent, (_package, version) in pins.AGENTS.items():  # read from the package, as --version says
        assert facts["agents"][agent]["version"] == version, (agent, facts["agents"][agent])

    bare = tmp_path / "bare"  # the same CLIs, with no key, no login and no provider of its own
    _point(monkeypatch, {**agent_home._base(bare), "CODEX_HOME": str(bare / ".codex")}, agent_bin)
    (bare / ".codex").mkdir(parents=True)
    facts = agents_probe.probe(None, ["claude", "codex", "pi"])
    for agent, name in (("claude", "Claude Code"), ("codex", "Codex"), ("pi", "Pi")):
        f = facts["agents"][agent]
        assert f["installed"] and not f["signed_in"], (agent, f)
        assert agents_probe.missing_words(agent, f) == f"not signed in to {name}"
    assert facts["agents"]["claude"]["sign_in_hint"] == "run `claude /login`"

    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    gone = agents_probe.probe(None, ["codex"])["agents"]["codex"]
    assert not gone["installed"] and agents_probe.missing_words("codex", gone) == "Codex is not installed there"


def _cli(folder: Path, name: str, says: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / name
    script.write_text(f"#!/bin/sh\necho \"$*\" >> '{script}.calls'\necho '{says}'\n")
    script.chmod(0o755)
    return script


def test_the_probe_here_imports_nothing_from_the_folder_it_runs_in(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Run in a lead's checkout, where a worker's landed branch could leave a `json.py`, the probe's script reads
    with the standard library's json, never that file."""
    marker = tmp_path / "planted-ran"
    (tmp_path / "json.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    monkeypatch.chdir(tmp_path)
    facts = agents_probe.probe(None, ["pi"])
    assert not marker.exists() and "error" not in facts, facts
    assert set(facts["agents"]) == {"pi"}, facts


def test_a_version_is_read_from_the_package_its_command_links_into_else_asked_of_the_cli(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    # codex as npm installs it: a link into its package, whose package.json names it among its bins
    package = tmp_path / "lib" / "node_modules" / "@openai" / "codex"
    (package / "package.json").parent.mkdir(parents=True)
    (package / "package.json").write_text(
        '{"name": "@openai/codex", "version": "9.8.7", "bin": {"codex": "bin/codex.js"}}')
    (bin_dir / "codex").symlink_to(_cli(package / "bin", "codex.js", "codex-cli 1.0.0"))
    # pi in a package whose bins do not name it: its own --version is asked
    other = tmp_path / "other"
    (other / "package.json").parent.mkdir(parents=True)
    (other / "package.json").write_text('{"name": "tools", "version": "5.5.5", "bin": {"tool": "t.js"}}')
    (bin_dir / "pi").symlink_to(_cli(other / "dist", "pi.js", "0.42.0"))
    # claude with no package at all, and a package.json that is not JSON above it
    (tmp_path / "loose" / "package.json").parent.mkdir(parents=True)
    (tmp_path / "loose" / "package.json").write_text("{not json")
    (bin_dir / "claude").symlink_to(_cli(tmp_path / "loose" / "bin", "claude", "2.0.1 (Claude Code)"))
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}/usr/bin:/bin")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))

    got = agents_probe.probe(None, ["claude", "codex", "pi"])["agents"]

    def calls(script: Path) -> list[str]:
        return Path(f"{script}.calls").read_text().splitlines()

    assert got["codex"]["version"] == "9.8.7"
    assert "--version" not in calls(package / "bin" / "codex.js")  # not started for its version
    assert got["pi"]["version"] == "0.42.0" and "--version" in calls(other / "dist" / "pi.js")
    assert got["claude"]["version"] == "2.0.1" and "--version" in calls(tmp_path / "loose" / "bin" / "claude")


def test_facts_kept_by_several_processes_at_once_are_all_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`keep` is a read-modify-write of a file each process writes: a flock makes every process's facts stay."""
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path), "PYTHONPATH": str(Path(__file__).parents[3])}
    code = ("import sys\nfrom git_balanced.machines.prepare import agents_probe\n"
            "for i in range(25):\n    agents_probe.keep(f'{sys.argv[1]}-{i}', {'git': '2', 'agents': {}})\n")
    runs = [subprocess.Popen([sys.executable, "-c", code, f"m{n}"], env=env) for n in range(4)]
    assert [r.wait() for r in runs] == [0, 0, 0, 0]
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    kept = agents_probe.kept()
    assert sorted(kept) == sorted(f"m{n}-{i}" for n in range(4) for i in range(25))
