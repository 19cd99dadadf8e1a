"""What the real agent CLIs send their hooks on stdin, as captured from Claude Code 2.1 and Codex 0.171."""

from __future__ import annotations

from pathlib import Path

SESSION = "77dca979-a16d-4399-8ceb-7bceb54d53b6"


def claude_bash(cwd: Path, command: str) -> dict:
    """Claude Code 2.1's PreToolUse input for a Bash call, as captured."""
    return {"session_id": SESSION, "transcript_path": f"/home/ada/.claude/projects/x/{SESSION}.jsonl",
            "cwd": str(cwd), "prompt_id": "29b9aa88-c445-46a7-b4a9-a27f9bb9d75e", "permission_mode": "acceptEdits",
            "effort": {"level": "medium"}, "hook_event_name": "PreToolUse", "tool_name": "Bash",
            "tool_input": {"command": command, "description": "Run a command"}, "tool_use_id": "toolu_000004"}


def claude_prompt(cwd: Path) -> dict:
    return {"session_id": SESSION, "transcript_path": f"/home/ada/.claude/projects/x/{SESSION}.jsonl",
            "cwd": str(cwd), "prompt_id": "29b9aa88-c445-46a7-b4a9-a27f9bb9d75e", "permission_mode": "default",
            "hook_event_name": "UserPromptSubmit", "prompt": "What is new?"}


def claude_stop(cwd: Path, active: bool = False) -> dict:
    return {"session_id": SESSION, "transcript_path": f"/home/ada/.claude/projects/x/{SESSION}.jsonl",
            "cwd": str(cwd), "prompt_id": "29b9aa88-c445-46a7-b4a9-a27f9bb9d75e", "permission_mode": "default",
            "effort": {"level": "medium"}, "hook_event_name": "Stop", "stop_hook_active": active,
            "last_assistant_message": "Done.", "background_tasks": [], "session_crons": []}


def codex_stop(cwd: Path) -> dict:
    """Codex 0.171's Stop input, as captured."""
    return {"session_id": "01a2263d-af1b-7f82-964f-90c475cc9ec7", "turn_id": "01a2263d-af30-7b02-8398-bf8773eef8ca",
            "transcript_path": "/home/ada/.codex/sessions/rollout.jsonl", "cwd": str(cwd),
            "hook_event_name": "Stop", "model": "gpt-5.5", "permission_mode": "bypassPermissions",
            "stop_hook_active": False, "last_assistant_message": "Done one."}
