"""The chief's kit, without an agent: the hook that refuses what the chief never runs (as its agent calls it), the
files `chief on` writes and `chief off` takes away, its tools as the MCP server lists them, and its status and
stop when none runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from git_balanced.chief import home
from git_balanced.hooks.chief import refused
from tests.support.cli import balanced

REFUSED = {
    "git balanced land --all": "`git balanced land` is refused",
    "cd ../shop && git balanced ship --yes": "`git balanced ship` is refused",
    "git -C ~/src/shop balanced answer q7k2mx --allow": "`git balanced answer --allow` is refused",
    "FOO=1 git-balanced worker 'Fix it' --run 'make'": "`git balanced worker` is refused",
    "git push origin main": "`git push` is refused",
    "git -c a.b=c push": "`git push` is refused",
    "python -m git_balanced.cli retry e3": "`git balanced retry` is refused",
}
LET = ["git balanced projects", "git balanced now --all", "git balanced answer q7k2mx 'Use port 8080.'",
       "git log --oneline", "echo git balanced land", "git balanced board --json"]


@pytest.mark.parametrize("command", sorted(REFUSED))
def test_what_the_chief_never_runs_is_refused_with_the_reason(command: str) -> None:
    why = refused(command)
    assert why is not None and REFUSED[command] in why, why
    assert why.startswith("The chief talks to leads and never lands, ships, allows a command or starts a worker")


def test_what_the_chief_may_run_goes_through() -> None:
    assert [c for c in LET if refused(c)] == ["echo git balanced land"], "an echo's words are taken as a command"


def test_the_hook_answers_as_the_agent_reads_it(tmp_path: Path) -> None:
    call = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "git balanced ship"}}
    ran = balanced(tmp_path, "hook", "chief-pre-tool-use", input=json.dumps(call))
    assert ran.code == 0, ran.err
    spec = json.loads(ran.out)["hookSpecificOutput"]
    assert spec["permissionDecision"] == "deny" and "`git balanced ship` is refused" in spec["permissionDecisionReason"]
    call["tool_input"] = {"command": "git balanced projects"}
    ran = balanced(tmp_path, "hook", "chief-pre-tool-use", input=json.dumps(call))
    assert (ran.code, ran.out) == (0, ""), "left to the agent"


def test_chief_on_writes_its_files_and_off_takes_them_away(tmp_path: Path) -> None:
    ran = balanced(tmp_path, "chief", "on", "--agent", "claude")
    assert ran.code == 0, ran.err
    folder = home.folder()
    mcp = json.loads((folder / ".mcp.json").read_text())
    assert mcp["mcpServers"]["balanced"] == {"command": "git", "args": ["balanced", "mcp", "--chief"]}
    hooks = json.loads((folder / ".claude" / "settings.json").read_text())
    assert hooks["hooks"]["PreToolUse"][0]["hooks"][0]["command"] == "git balanced hook chief-pre-tool-use"
    assert "You are the chief for git balanced" in (folder / "CLAUDE.md").read_text()
    (folder / "CLAUDE.md").write_text("my own words\n")
    ran = balanced(tmp_path, "chief", "off")
    assert ran.code == 0, ran.err
    said = [line.split() for line in ran.out.splitlines()[:3]]
    assert said[0] == ["removed", ".mcp.json"] and said[2][-1] == "CLAUDE.md", ran.out
    assert "kept: changed since `chief on` wrote it" in ran.out, ran.out
    assert not (folder / ".claude").exists() and (folder / "CLAUDE.md").read_text() == "my own words\n"
    again = balanced(tmp_path, "chief", "on", "--agent", "claude")
    assert again.code == 1 and "CLAUDE.md exists already, and git balanced did not write it." in again.err


def test_the_chiefs_tools_are_listed_with_their_hints(tmp_path: Path) -> None:
    from git_balanced.chief.verbs import CHIEF_VERBS
    from git_balanced.kit.server import tool_specs

    names = [t["name"] for t in tool_specs(CHIEF_VERBS)]
    assert names == ["projects", "start_lead", "tell_lead", "answer", "pass_on", "note", "how_are_they_doing"]
    assert not {"land", "ship", "allow", "worker", "plan"} & set(names), "nothing that lands, ships or allows"
    ran = balanced(tmp_path, "mcp", "--chief", "--call", "projects")
    assert ran.code == 0, ran.err
    assert json.loads(ran.out)["projects"] == []


def test_status_and_stop_without_a_chief(tmp_path: Path) -> None:
    ran = balanced(tmp_path, "chief", "status")
    assert (ran.code, ran.out.strip()) == (0, "No chief was started. `git balanced chief start --agent claude` "
                                               "starts one.")
    assert balanced(tmp_path, "chief", "status", "--json").out.strip() == "null"
    stop = balanced(tmp_path, "chief", "stop")
    assert stop.code == 1 and "No chief runs." in stop.err


def test_the_chiefs_own_kit_runs_this_package_whatever_its_folder_holds(tmp_path: Path) -> None:
    """The kit a driven chief runs with (chief/session.py: its MCP server and its hook) starts this git balanced,
    never a `git_balanced/` in the folder the agent runs it from, and its hook line is one shell command."""
    import shlex
    import subprocess

    from git_balanced.chief import session

    folder, marker = tmp_path / "chief", tmp_path / "planted-ran"
    planted = folder / "git_balanced"
    planted.mkdir(parents=True)
    (planted / "__init__.py").write_text("")
    (planted / "cli.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    session.write_kit(folder, "claude")
    command = json.loads((folder / "settings.json").read_text())["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    assert shlex.split(command)[-2:] == ["hook", "chief-pre-tool-use"], command
    call = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "git balanced ship"}}
    ran = subprocess.run(["sh", "-c", command], cwd=folder, input=json.dumps(call), capture_output=True, text=True,
                         timeout=60)
    assert ran.returncode == 0 and "`git balanced ship` is refused" in ran.stdout, ran
    server = json.loads((folder / "mcp.json").read_text())["mcpServers"]["balanced"]
    ran = subprocess.run([server["command"], *server["args"][:-2], "--version"], cwd=folder, capture_output=True,
                         text=True, timeout=60)
    assert ran.returncode == 0 and "git balanced" in ran.stdout + ran.stderr, ran
    assert not marker.exists(), "a git_balanced/ in the chief's folder ran"
