"""The headless lead's parts that need no agent: its command lines, the session each agent names, and the
refusals of `lead start|status|stop` (the turns themselves are tests/e2e/test_headless_lead.py)."""

from __future__ import annotations

from pathlib import Path

from git_balanced.kit.headless import session_of, turn_argv
from tests.support.builders import make_repo
from tests.support.cli import balanced


def test_each_turn_after_the_first_resumes_the_session(tmp_path: Path) -> None:
    (tmp_path / "instructions.md").write_text("Lead well.")
    first = turn_argv("claude", "Do it", None, tmp_path)
    assert first[:3] == ["claude", "-p", "Do it"] and "--resume" not in first
    assert first[first.index("--allowedTools") + 1] == "mcp__balanced__*" and "--strict-mcp-config" in first
    assert turn_argv("claude", "News", "s-1", tmp_path)[-2:] == ["--resume", "s-1"]
    assert turn_argv("pi", "News", "s-2", tmp_path)[-3:] == ["--session", "s-2", "News"]
    assert turn_argv("pi", "-x", None, tmp_path)[-1] == " -x", "a leading dash is no option to Pi"
    resumed = turn_argv("codex", "News", "t-3", tmp_path)
    assert resumed[:3] == ["codex", "exec", "resume"] and resumed[-2:] == ["t-3", "News"]
    first_codex = turn_argv("codex", "Do it", None, tmp_path)
    assert 'mcp_servers.balanced.command="git"' in first_codex
    assert 'approval_policy="never"' in first_codex and 'approval_policy="never"' in resumed, "no one to approve"
    assert 'mcp_servers.balanced.default_tools_approval_mode="approve"' in first_codex, \
        "Codex with approvals off calls only read-only tools of a server without it"


def test_the_session_is_read_from_each_agents_events() -> None:
    assert session_of("claude", '{"type":"system","subtype":"init","session_id":"abc"}\n') == "abc"
    assert session_of("pi", 'noise\n{"type":"session","id":"p1","cwd":"/x"}\n') == "p1"
    assert session_of("codex", '{"type":"thread.started","thread_id":"t1"}\n') == "t1"
    assert session_of("codex", '{"type":"turn.started"}\n') is None


def test_status_stop_and_start_say_what_is_wrong(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "lead")
    r = balanced(repo, "lead", "status")
    assert r.code == 0 and "No headless lead was started for main" in r.out, r
    assert balanced(repo, "lead", "status", "--json").out.strip() == "null"
    r = balanced(repo, "lead", "stop")
    assert r.code == 1 and "error: No headless lead runs for main." in r.err and "hint: " in r.err, r
    r = balanced(repo, "lead", "start", "--agent", "claude", "  ")
    assert r.code == 1 and "TASK is empty" in r.err, r
