"""The guard: a piece with `paths` may write only there, refused at the edit (the agent's PreToolUse hook, fed
the JSON the real CLIs send) and at the commit (the pre-commit hook the runner installs in the worktree)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from git_balanced.agents.shell import ShellAdapter
from git_balanced.commands.board import collect, render
from git_balanced.engine.loop import Engine
from git_balanced.lead import open_lead
from git_balanced.shipped import guard, runner
from tests.support.builders import commit, git, make_repo
from tests.support.cli import Ran, balanced
from tests.support.wait import wait_until

SPEC = {"piece": "docs", "job": "j1", "paths": ["docs/**", "README.md"], "owners": {"api": ["src/**"]}}


@pytest.mark.parametrize("path, globs, expected", [
    ("tests/unit/test_a.py", ["tests/**"], True),
    ("tests", ["tests/**"], False),
    ("testsuite/a.py", ["tests/**"], False),
    ("notes.md", ["*.md"], True),
    ("docs/notes.md", ["*.md"], False),
    ("docs/notes.md", ["**/*.md"], True),
    ("docs/deep/a.txt", ["docs"], True),
    ("docs/deep/a.txt", ["docs/"], True),
    ("src/a1.py", ["src/a?.py"], True),
    ("src/ab/c.py", ["src/a?.py"], False),
    ("src/b.py", ["src/[ab].py"], True),
    ("src/c.py", ["src/[!ab].py"], True),
    ("README.md", ["./README.md"], True),
])
def test_globs(path: str, globs: list[str], expected: bool) -> None:
    assert guard.matches(path, globs) is expected, f"{path} against {globs}"


def test_refusals_name_the_owner_when_another_piece_owns_the_path() -> None:
    got = guard.refusals(["docs/a.md", "src/app.py", "setup.cfg"], SPEC)
    assert got == ["src/app.py belongs to the piece api, not to docs (docs/**, README.md)",
                   "setup.cfg is outside the paths of docs (docs/**, README.md)"]
    assert guard.refusals(["anything"], {"piece": "free", "paths": []}) == [], "no paths, no guard"


def test_refusals_of_absolute_paths(tmp_path: Path) -> None:
    wt = tmp_path / "wt"
    wt.mkdir()
    got = guard.refusals_in([str(wt / "docs/a.md"), str(wt / "src/x.py"), "/etc/passwd"], str(wt), SPEC)
    assert got == ["/etc/passwd is outside this worker's worktree",
                   "src/x.py belongs to the piece api, not to docs (docs/**, README.md)"]


# -- the edit: PreToolUse, through `git balanced hook pre-tool-use` -----------------------------------------
def run_hook(cwd: Path, payload: dict, env: dict[str, str]) -> Ran:
    """`git balanced hook pre-tool-use` fed `payload`, as the agent runs it in its worktree."""
    return balanced(cwd, "hook", "pre-tool-use", input=json.dumps(payload), env=env)


@pytest.fixture
def worker_dirs(tmp_path: Path) -> tuple[Path, Path]:
    wt = make_repo(tmp_path / "wt")
    run_dir = tmp_path / "run"
    (run_dir / "hooks").mkdir(parents=True)
    (run_dir / "hooks" / "guard.json").write_text(json.dumps(SPEC))
    return wt, run_dir


def claude_write(wt: Path, rel: str) -> dict:
    """What Claude Code 2.1 sends before a Write (captured from the real CLI, paths made ours)."""
    return {"session_id": "77dca979-a16d-4399-8ceb-7bceb54d53b6",
            "transcript_path": "/home/ada/.claude/projects/-wt/77dca979-a16d-4399-8ceb-7bceb54d53b6.jsonl",
            "cwd": str(wt), "prompt_id": "29b9aa88-c445-46a7-b4a9-a27f9bb9d75e", "permission_mode": "acceptEdits",
            "effort": {"level": "medium"}, "hook_event_name": "PreToolUse", "tool_name": "Write",
            "tool_input": {"file_path": str(wt / rel), "content": "hello\n"}, "tool_use_id": "toolu_000002"}


def codex_patch(wt: Path, rel: str) -> dict:
    """What Codex 0.171 sends before apply_patch (captured from the real CLI, paths made ours)."""
    return {"session_id": "01a2263d-af1b-7f82-964f-90c475cc9ec7", "turn_id": "01a2263d-af30-7b02-8398-bf8773eef8ca",
            "transcript_path": "/home/ada/.codex/sessions/rollout.jsonl", "cwd": str(wt),
            "hook_event_name": "PreToolUse", "model": "gpt-5.5", "permission_mode": "bypassPermissions",
            "tool_name": "apply_patch",
            "tool_input": {"command": f"*** Begin Patch\n*** Add File: {wt / 'docs/ok.md'}\n+ok\n"
                                      f"*** Update File: {rel}\n@@\n-a\n+b\n*** End Patch\n"},
            "tool_use_id": "call_000003"}


def test_the_hook_refuses_a_claude_edit_outside_the_paths(worker_dirs: tuple[Path, Path]) -> None:
    wt, run_dir = worker_dirs
    env = {"BALANCED_RUN_DIR": str(run_dir), "GIT_BALANCED_WORKTREE": str(wt), "GIT_BALANCED_JOB": "j1"}
    cp = run_hook(wt, claude_write(wt, "src/app.py"), env)
    assert cp.code == 0, cp.err
    out = json.loads(cp.out)["hookSpecificOutput"]
    assert out["hookEventName"] == "PreToolUse" and out["permissionDecision"] == "deny"
    assert "src/app.py belongs to the piece api, not to docs" in out["permissionDecisionReason"]
    ok = run_hook(wt, claude_write(wt, "docs/guide.md"), env)
    assert ok.code == 0 and ok.out == "", "an edit inside the paths is left to the agent's permissions"


def test_the_hook_refuses_a_codex_patch_touching_another_piece(worker_dirs: tuple[Path, Path]) -> None:
    wt, run_dir = worker_dirs
    env = {"BALANCED_RUN_DIR": str(run_dir), "GIT_BALANCED_WORKTREE": str(wt), "GIT_BALANCED_JOB": "j1"}
    cp = run_hook(wt, codex_patch(wt, "src/api.py"), env)
    out = json.loads(cp.out)["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny", cp.out
    assert "src/api.py belongs to the piece api" in out["permissionDecisionReason"]
    assert "docs/ok.md" not in out["permissionDecisionReason"], "the path inside the paths is not named"


def test_without_a_guard_the_hook_says_nothing(tmp_path: Path) -> None:
    wt = make_repo(tmp_path / "wt")
    cp = run_hook(wt, claude_write(wt, "anything.txt"), {"GIT_BALANCED_WORKTREE": str(wt)})
    assert cp.code == 0 and cp.out == "", cp.err


# -- the commit: the pre-commit hook in the worker's worktree ---------------------------------------------
def start(tmp_path: Path, repo: Path, job: str, run: str, spec: dict) -> dict:
    runs, wt = tmp_path / "runs", tmp_path / "worktrees" / job
    built = ShellAdapter().build(task="t", rules="", model=None, budget_usd=None, worktree=str(wt),
                                 run_dir=str(runs / job), run=run)
    req = {"job": job, "repo": str(repo), "worktree": str(wt), "branch": f"balanced/{job}",
           "base": git(repo, "rev-parse", "HEAD"), "setup": None, "argv": built.argv, "env": built.env,
           "files": {}, "meter": None, "commit_message": f"{job}: work\n", "commit_leftovers": True,
           "runs_dir": str(runs), "guard": {"script": Path(guard.__file__).read_text(), "spec": spec}}
    cp = subprocess.run([sys.executable, runner.__file__, "start"], input=json.dumps(req), capture_output=True,
                        text=True, timeout=60)
    assert cp.returncode == 0 and "error" not in json.loads(cp.stdout), cp.stdout + cp.stderr
    def status() -> dict:
        return runner.status({"jobs": [job], "runs_dir": str(runs)})["jobs"][job]

    return wait_until(lambda: (st := status())["state"] == "finished" and st, 30, f"{job} to finish",
                      said=status)["result"]


def test_the_runners_commit_is_refused_with_the_reason(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "lead")
    res = start(tmp_path, repo, "j1", "mkdir -p docs src && echo a > docs/a.md && echo b > src/app.py", SPEC)
    assert res["commits"] == 0 and res["dirty"], res
    assert "The guard refused this commit: src/app.py belongs to the piece api, not to docs" in res["commit_error"]
    assert res["reason"] == "guard", "the guard's mark says who refused, not the words"
    ok = start(tmp_path, repo, "j2", "mkdir -p docs && echo a > docs/a.md && echo r >> README.md", SPEC)
    assert ok["commit_error"] is None and ok["commits"] == 1, ok


def test_an_agents_own_commit_is_refused_and_the_repositorys_hook_still_runs(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "lead")
    theirs = repo / ".git" / "hooks"
    theirs.mkdir(exist_ok=True)
    (theirs / "pre-commit").write_text(f"#!/bin/sh\necho ran >> '{tmp_path}/their-pre-commit'\n")
    (theirs / "commit-msg").write_text(f"#!/bin/sh\necho ran >> '{tmp_path}/their-commit-msg'\n")
    for hook in ("pre-commit", "commit-msg"):
        (theirs / hook).chmod(0o755)
    run = ("mkdir -p src docs && echo b > src/app.py && git add -A && "
           "(git commit -q -m 'sneak' || echo REFUSED) && git reset -q && git checkout -q -- . && git clean -fdq && "
           "mkdir -p docs && echo a > docs/a.md && git add -A && git commit -q -m 'docs'")
    res = start(tmp_path, repo, "j1", run, SPEC)
    assert res["exit_code"] == 0 and res["commits"] == 1, res
    assert git(repo, "log", "-1", "--format=%s", "balanced/j1") == "docs"
    assert git(repo, "show", "--name-only", "--format=", "balanced/j1") == "docs/a.md"
    assert "The guard refused this commit: src/app.py belongs to the piece api" in \
        (tmp_path / "runs" / "j1" / "log").read_text()
    assert (tmp_path / "their-pre-commit").read_text().count("ran") == 1, "the repository's pre-commit ran once, " \
        "behind the guard, for the commit it let through"
    assert (tmp_path / "their-commit-msg").read_text().count("ran") == 1, "other hooks run through their wrapper"
    commit(repo, {"src/lead.py": "x\n"}, "the lead commits anything")  # the lead's checkout has no guard
    assert (tmp_path / "their-pre-commit").read_text().count("ran") == 2


def test_a_refused_commit_fails_the_attempt_on_the_board(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path / "lead", {"README.md": "sample\n", ".magnum/settings.toml":
                                         '[worktree]\ncheck = "true"\n[balanced]\nagent = "shell"\nattempts = 2\n'})
    plan = tmp_path / "plan.yaml"
    plan.write_text("task: Docs and code\npieces:\n"
                    "  - id: api\n    task: The API.\n    agent: shell\n    paths: [\"src/**\"]\n"
                    "    run: \"mkdir -p src && echo api > src/api.py\"\n"
                    "  - id: docs\n    task: The docs.\n    agent: shell\n    paths: [\"docs/**\"]\n"
                    "    run: \"mkdir -p docs src && echo d > docs/d.md && echo oops > src/api.py\"\n")
    assert balanced(repo, "allow", "--yes").code == 0
    ran = balanced(repo, "plan", str(plan), "--start")
    assert ran.code == 0, ran.err
    monkeypatch.chdir(repo)
    lead = open_lead(str(repo))
    engine = Engine(lead)
    wait_until(lambda: not engine.pass_once(), 90, "the engine to have nothing left to do", every=0.3)
    rows = [r for r in collect(lead)["jobs"] if r["piece"] == "docs"]
    assert [r["state"] for r in rows] == ["failed"], "the same command would write the same paths: no retry"
    assert "the guard refused its commit" in rows[0]["reason"], rows[0]
    job = git(engine.repo.root, "log", "-1", "--format=%B", f"refs/balanced/jobs/{rows[0]['id']}~1")
    assert "its commit was refused: The guard refused this commit: src/api.py belongs to the piece api, " \
           "not to docs (docs/**)" in job, job
    assert "src/api.py belongs to the piece api" in render(collect(lead)), "the reason is on the board"
    assert git(repo, "show", "main:src/api.py") == "api", "the api piece landed; docs took nothing of it"
