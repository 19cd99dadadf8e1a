"""A Codex worker commits its own work: exactly `git add` and `git commit` in its own worktree go ahead unasked,
with its own message (Codex's sandbox keeps every `.git` read-only, so its hook runs them, inside the fence);
nothing else is widened. The real Codex CLI against the scripted model server, and its hook's input as Codex
sends it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from git_balanced.shipped import pretool
from tests.support.builders import git, make_repo
from tests.support.model_server import run_shell, say
from tests.support.plans import engine, inbox_text, lead_repo, plan
from tests.support.real_agents import agent_piece, real_agents, rows


def outputs(server: object) -> list[str]:
    """What the model was told of each of its shell calls, in order."""
    seen: list[str] = []
    for r in server.requests:  # type: ignore[attr-defined]
        for item in r.body.get("input", []):
            if item.get("type") == "function_call_output" and item.get("output") not in seen:
                seen.append(item["output"])
    return seen


def test_a_codex_worker_commits_with_its_own_message_and_nothing_wider(
        tmp_path: Path, agent_bin: str, monkeypatch: pytest.MonkeyPatch) -> None:
    evil = tmp_path / "evil"
    evil.mkdir()
    (evil / "pre-commit").write_text(f"#!/bin/sh\ntouch {tmp_path / 'ran'}\n")
    (evil / "pre-commit").chmod(0o755)
    turns = [run_shell(f"git -c core.hooksPath={evil} commit --allow-empty -m widened"),
             run_shell("printf 'mine\\n' > src/mine.txt"),
             run_shell('git add -A && git commit -m "my message"'),
             say("I committed src/mine.txt.")]
    with real_agents(monkeypatch, agent_bin, {"codex": turns}) as servers:
        repo = lead_repo(tmp_path)
        assert plan(repo, [agent_piece("mine", "codex")], "--start").code == 0
        ran = engine(repo, "--until-idle", timeout=240)
        assert ran.code == 0, ran
        told = outputs(servers.codex)
    assert rows(repo)["mine"]["state"] == "landed", inbox_text(repo)
    log = git(repo, "log", "--format=%s", "main")
    assert "my message" in log.splitlines(), log
    assert "widened" not in log and not (tmp_path / "ran").exists(), "a hooksPath of its own never ran"
    said = next(t for t in told if "my message" in t)
    assert "Your hook ran it in your worktree" in said and "(exit 0)" in said and "1 file changed" in said, said
    assert "mine: " not in log, "the runner had nothing left to commit for it"
    inbox = inbox_text(repo)
    assert "git add" not in inbox and "git commit" not in inbox, f"the lead was asked nothing of it: {inbox}"


def codex_bash(cwd: Path, command: str, workdir: Path | None = None) -> dict:
    """Codex 0.171's PreToolUse input for a shell call, as captured."""
    tool_input: dict[str, str] = {"command": command}
    if workdir is not None:
        tool_input["workdir"] = str(workdir)
    return {"session_id": "01a2450b-2e13-7c92-a88e-c26f389a38cb", "turn_id": "01a2450b-2ef7-7872-a370-a2c107f91d13",
            "transcript_path": "/home/ada/.codex/sessions/rollout.jsonl", "cwd": str(cwd),
            "hook_event_name": "PreToolUse", "model": "gpt-5.5", "permission_mode": "bypassPermissions",
            "tool_name": "Bash", "tool_input": tool_input, "tool_use_id": "call_000003"}


@pytest.mark.parametrize("command", [
    "git -c core.hooksPath=/tmp/h commit -m x",
    "git --git-dir=../other/.git commit -m x",
    "git -C ../other commit -m x",
    "git push origin HEAD",
    "git add -A; git commit -m x",
    "git add -A && git commit -m x && git push",
    "git add -A && git commit -m x | tee log",
    "git add -A && git commit -m x > out",
    "GIT_DIR=../other/.git git commit -m x",
    'git commit -m "$(touch /tmp/x)"',
    "git add -A && rm -rf src",
    "git config core.hooksPath /tmp/h",
    "sh -c 'git commit -m x'",
    "git add -A && git commit -n -m x",
    "git commit --no-verify -am x",
    "git commit -anm x",
    "git commit --amend -m x",
    "git commit -F /etc/passwd",
    "git commit --template=/etc/passwd",
    "git add --pathspec-from-file=/etc/hosts",
    "git add -f secret.txt",
    "git commit -c HEAD",
])
def test_nothing_wider_than_its_own_add_and_commit_is_run_by_its_hook(command: str, tmp_path: Path) -> None:
    wt = make_repo(tmp_path / "wt", {"a.txt": "a\n"})
    (wt / "b.txt").write_text("b\n")
    before = git(wt, "rev-parse", "HEAD")
    got = pretool.pre_tool_use(codex_bash(wt, command), {}, str(wt), None, None, lambda *a: {"asked": a})
    assert got is None, f"left to Codex's own sandbox as before: {json.dumps(got)}"
    assert git(wt, "rev-parse", "HEAD") == before and "b.txt" in git(wt, "status", "--porcelain")


def test_its_own_add_and_commit_elsewhere_or_from_another_agent_are_not_run(tmp_path: Path) -> None:
    wt = make_repo(tmp_path / "wt", {"a.txt": "a\n"})
    other = make_repo(tmp_path / "other", {"a.txt": "a\n"})
    (other / "b.txt").write_text("b\n")
    command = "git add -A && git commit -m x"
    for data in (codex_bash(other, command), codex_bash(wt, command, workdir=other)):
        assert pretool.pre_tool_use(data, {}, str(wt), None, None, lambda *a: {}) is None
    claude = dict(codex_bash(other, command))
    claude.pop("turn_id")
    assert pretool.pre_tool_use(claude, {}, str(wt), None, None, lambda *a: {}) is None
    assert git(other, "log", "--format=%s") == "initial", "nothing was committed there"


def test_under_a_lead_that_asks_before_commands_its_own_commit_is_not_asked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wt = make_repo(tmp_path / "wt", {"a.txt": "a\n"})
    (wt / "b.txt").write_text("b\n")
    monkeypatch.setenv("GIT_BALANCED_ASK_COMMANDS", "1")
    asked: list[tuple[str, ...]] = []
    got = pretool.pre_tool_use(codex_bash(wt, 'git add b.txt && git commit -q -m "Add b"'), {}, str(wt), None, None,
                               lambda *a: asked.append(a) or {})
    assert asked == [] and got is not None, got
    assert git(wt, "log", "-1", "--format=%s") == "Add b" and git(wt, "status", "--porcelain") == ""
    assert "(exit 0)" in got["hookSpecificOutput"]["permissionDecisionReason"]
    # Any other command still goes to the lead.
    pretool.pre_tool_use(codex_bash(wt, "git push"), {}, str(wt), None, None, lambda *a: asked.append(a) or {})
    assert [a[1] for a in asked] == ["git push"]
