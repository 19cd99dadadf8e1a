"""A worker of an agent lead starts on the lead's model: the lead's hooks record it (Codex and Pi say it in
each input, Claude Code's transcript names it), and a piece of the same agent with no `model` of its own is
started on it."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from git_balanced.agents import lead_model, lead_session, modes
from git_balanced.engine.context import Context
from git_balanced.hooks import agent as agent_hooks
from git_balanced.lead import open_lead, settings_at
from tests.hooks.test_agent import run_claude
from tests.support import agent_home
from tests.support.cli import balanced
from tests.support.hook_inputs import claude_prompt, claude_stop, codex_stop
from tests.support.model_server import ModelServer, say
from tests.support.plans import engine, jobs_of, lead_repo, plan
from tests.support.real_agents import agent_piece, commit_turn, real_agents
from tests.support.streams import STREAMS


def _hook(repo: Path, name: str, payload: dict) -> None:
    ran = balanced(repo, "hook", name, input=json.dumps(payload))
    assert ran.code == 0, ran


def test_workers_of_a_real_claude_lead_start_on_its_model(tmp_path: Path, agent_bin: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    repo = lead_repo(tmp_path)
    settings = agent_hooks.render("claude-lead-settings.json")
    log, _ = run_claude(tmp_path, agent_bin, repo, settings, [say("Planned.")], {}, more=("--model", "opus"))
    init = next(json.loads(line) for line in log.splitlines() if '"subtype":"init"' in line)
    leads = init["model"]
    assert "opus" in leads, init
    rec = modes.last(open_lead(str(repo)).repo, "main")  # its `-p` session has ended: what it recorded, kept
    assert rec and rec["model"] == leads, f"its Stop hook found the model in its transcript: {rec}"
    # The person turns the lead to bypass permissions for its next prompt (in this process, which runs on), so
    # its worker commits unasked.
    transcript = next(Path(os.environ["HOME"]).glob(f".claude/projects/*/{init['session_id']}.jsonl"))
    _hook(repo, "user-prompt-submit", {**claude_prompt(repo), "session_id": init["session_id"],
                                       "transcript_path": str(transcript), "permission_mode": "bypassPermissions"})
    now = modes.recorded(open_lead(str(repo)).repo, "main")
    assert now == {**rec, "mode": "bypassPermissions", "level": "free", "at": pytest.approx(time.time(), abs=60),
                   **lead_session.of_hook()}
    with real_agents(monkeypatch, agent_bin, {"claude": [commit_turn("src/story.txt", "story"), say("Done.")]}) \
            as servers:
        assert plan(repo, [agent_piece("story", "claude")], "--start", budget=1.0).code == 0
        assert engine(repo, "--until-idle", timeout=240).code == 0
        asked = {r.body.get("model") for r in servers.claude.main_requests()}
    job = jobs_of(repo, "story")[0]
    assert (job["state"], job["model"]) == ("landed", leads), job
    assert asked == {leads}, "the worker asked the model for the lead's model, not the settings' sonnet"


def _context(repo: Path) -> Context:
    lead = open_lead(str(repo))
    return Context(lead, settings_at(lead.repo, lead.branch))


def test_the_leads_model_is_read_from_each_agents_hook_input(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    ctx = _context(repo)
    assert ctx.default_model("codex") is None, "no lead seen, no model of its own"
    _hook(repo, "stop", codex_stop(repo))  # Codex names its model in every hook input
    assert ctx.default_model("codex") == "gpt-5.5"
    assert ctx.default_model("pi") is None, "a worker of another agent does not take a Codex model"
    assert ctx.default_model("shell") is None
    _hook(repo, "user-prompt-submit", {"agent": "pi", "permission_mode": "acceptEdits", "prompt": "Go.",
                                       "model": "scripted/scripted-coder", "cwd": str(repo)})
    assert ctx.default_model("pi") == "scripted/scripted-coder" and ctx.default_model("codex") is None
    transcript = tmp_path / "session.jsonl"
    transcript.write_text("\n".join(json.dumps(e) for e in [
        {"type": "assistant", "message": {"role": "assistant", "model": "claude-opus-4-7", "content": []}},
        {"type": "assistant", "message": {"role": "assistant", "model": "<synthetic>", "content": []}},
        {"type": "user", "message": {"role": "user", "content": "model: x"}}]) + "\n")
    _hook(repo, "stop", {**claude_stop(repo), "transcript_path": str(transcript)})
    assert ctx.default_model("claude") == "claude-opus-4-7", "the newest real reply's model"
    _hook(repo, "user-prompt-submit", {**claude_stop(repo), "hook_event_name": "UserPromptSubmit",
                                       "transcript_path": str(tmp_path / "gone.jsonl")})
    assert ctx.default_model("claude") == "claude-opus-4-7", "a hook that cannot tell keeps what its session said"
    _hook(repo, "stop", {**codex_stop(repo), "model": "--yolo\nrm -rf /"})
    rec = modes.recorded(open_lead(str(repo)).repo, "main")
    assert rec is not None and "model" not in rec, "a name unfit for a command line is not kept"


def test_a_real_pi_leads_extension_names_its_model(tmp_path: Path, agent_bin: str) -> None:
    repo = lead_repo(tmp_path)
    extension = tmp_path / "balanced.ts"
    extension.write_text(agent_hooks.render("pi-balanced.ts"))
    with ModelServer([say("Ready.")]) as server:
        env = agent_home.pi_env(Path(os.environ["HOME"]), server.url)
        env["PATH"] = agent_bin + os.pathsep + env["PATH"]
        argv = ["pi", "--mode", "json", "--provider", agent_home.PI_PROVIDER, "--model", agent_home.PI_MODEL,
                "--no-session", "-e", str(extension), "Hello."]
        cp = subprocess.run(argv, cwd=repo, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                            timeout=180)
    rec = modes.last(open_lead(str(repo)).repo, "main")
    assert rec and rec["model"] == f"{agent_home.PI_PROVIDER}/{agent_home.PI_MODEL}", \
        f"{rec}\n{cp.stdout[-2000:]}{cp.stderr[-2000:]}"
    assert _context(repo).default_model("pi") is None, "its session has ended: its Pi workers no longer take it"


def test_a_lead_without_a_mode_and_a_headless_lead_keep_their_model(tmp_path: Path) -> None:
    """Pi's lead extension names no mode, and a headless lead has no hooks: its turn's stream names the model."""
    repo = lead_repo(tmp_path)
    lead = open_lead(str(repo))
    _hook(repo, "stop", {"agent": "pi", "hook_event_name": "Stop", "model": "scripted/scripted-coder",
                         "cwd": str(repo)})
    assert modes.recorded(lead.repo, "main") is None, "no mode, so no level for its workers"
    assert _context(repo).default_model("pi") == "scripted/scripted-coder"
    claude_turn = (STREAMS / "claude-success.jsonl").read_text()
    assert lead_model.of_stream("claude", claude_turn) == "claude-sonnet-5-5"
    assert lead_model.of_stream("pi", (STREAMS / "pi-success.jsonl").read_text()) == "scripted/scripted-coder"
    assert lead_model.of_stream("codex", (STREAMS / "codex-success.jsonl").read_text()) is None
    modes.remember_model(lead.repo, "main", "claude", lead_model.of_stream("claude", claude_turn), None,
                         lead_session.owner_of(os.getpid()))
    assert (_context(repo).default_model("claude"), _context(repo).default_model("pi")) == \
        ("claude-sonnet-5-5", None), "the lead is Claude Code now"
