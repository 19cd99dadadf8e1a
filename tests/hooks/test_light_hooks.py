"""The agents' hooks that run on every tool call and every turn, started light (hooks/worker.py, hooks/turn.py,
git/peek.py): each decides what the door's path decides, reads only what the lead wrote, and where a file it
reads is missing or junk it falls back to the door's path or to the stricter level, never to allowing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from git_balanced.agents import lead_session, levels, modes, wiring
from git_balanced.channel import names, presence
from git_balanced.channel.inbox import post
from git_balanced.git import Repo, peek
from git_balanced.hooks import agent as agent_hooks
from git_balanced.lead import open_lead
from tests.hooks.test_modes import hook, worker_env
from tests.support.builders import make_repo
from tests.support.cli import Ran, _as_a_process
from tests.support.hook_inputs import claude_prompt, claude_stop

NOT_LIGHT = ("typing", "dataclasses", "pathlib", "subprocess", "git_balanced.git.core", "git_balanced.state")


@pytest.fixture(scope="module")
def lead(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("light") / "lead")


def edit_in(worktree: Path) -> dict:
    return {"hook_event_name": "PreToolUse", "tool_name": "Write", "cwd": str(worktree),
            "tool_input": {"file_path": str(worktree / "a.txt"), "content": "x\n"}}


def test_a_workers_hook_reads_its_leads_mode_file_as_the_door_reads_the_lead(lead: Path, tmp_path: Path) -> None:
    worktree = make_repo(tmp_path / "wt")
    env = worker_env(lead, worktree)
    mode_file = Path(env[levels.MODE_FILE_ENV])
    assert mode_file == Path(modes.mode_file(open_lead(str(lead)).repo, "main")), "the engine names the lead's file"
    door = {**env, levels.MODE_FILE_ENV: None}  # a worker started before the file was named: the lead is found
    # (what the lead's file holds, the level the worker was started at, whether the edit is refused)
    live = lead_session.owner_of(os.getpid())  # a session that runs: this test's process
    gone = {"pid": 2 ** 22 + 1, "tick": "1"}  # one that does not: its record counts for nothing

    def rec(mode: str, owner: dict) -> str:
        return json.dumps({"mode": mode, **owner})

    cases = [(None, None, False), (rec("plan", live), None, True), (rec("plan", gone), None, False),
             ('{"mode": "plan"}', None, False), (rec("bypassPermissions", live), None, False),
             ("{junk", None, False), ("[1, 2]", None, False), (rec("", live), None, False),
             ("{junk", "read-only", True), (rec("bypassPermissions", live), "read-only", True),
             (b"\xff\xfe", None, False)]
    for content, started, refused in cases:
        mode_file.unlink(missing_ok=True)
        if isinstance(content, bytes):
            mode_file.write_bytes(content)
        elif content is not None:
            mode_file.write_text(content)
        level = {"GIT_BALANCED_WORKER_MODE": started}
        light = hook(worktree, "pre-tool-use", edit_in(worktree), {**env, **level})
        slow = hook(worktree, "pre-tool-use", edit_in(worktree), {**door, **level})
        assert light == slow, (content, started)
        said = json.loads(light.out)["hookSpecificOutput"] if light.out else {}
        assert (said.get("permissionDecision") == "deny") == refused, (content, started, light)


def test_a_workers_hook_without_its_worktree_named_takes_the_doors_path(lead: Path, tmp_path: Path) -> None:
    read = {"hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": {"file_path": "README.md"}}
    outside = tmp_path / "not-a-repo"
    outside.mkdir()
    env = {**worker_env(lead, lead), "GIT_BALANCED_WORKTREE": None}
    ran = hook(outside, "pre-tool-use", read, env)
    assert ran.code == 1 and "is not inside a git repository" in ran.err, ran


def turn_through_the_door(repo: Path, name: str, payload: dict) -> Ran:
    """The hook as hooks/agent.py runs it, the repository opened through the door."""
    run = agent_hooks.stop_hook if name == "stop" else agent_hooks.user_prompt_submit_hook
    with _as_a_process(repo, json.dumps(payload), {}) as (out, err):
        code = run(Repo.discover(repo), [])
    return Ran(code, out.getvalue(), err.getvalue())


def test_a_leads_turn_hooks_hand_each_message_once_as_the_door_does(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "lead")
    lead = open_lead(str(repo))
    stop = {**claude_stop(repo), "session_id": "s1"}
    assert hook(repo, "stop", stop) == Ran(0, "", ""), "no inbox yet: nothing to say"
    rec = modes.recorded(lead.repo, "main")
    assert rec is not None and rec["mode"] == "default" and presence.seen_at(lead.repo, "main") is not None
    cursor = Path(names.cursor_in(str(lead.repo.state_dir), "main"))
    prompt = claude_prompt(repo)
    for name, payload, said in (("stop", stop, "reason"), ("user-prompt-submit", prompt, "hookSpecificOutput")):
        post(lead.repo, "main", f"news for {name}")
        before = cursor.read_text() if cursor.exists() else None
        light = hook(repo, name, payload)
        assert light.code == 0 and f"news for {name}" in json.dumps(json.loads(light.out)[said]), light
        if before is None:
            cursor.unlink()
        else:
            cursor.write_text(before)
        assert turn_through_the_door(repo, name, payload) == light, "the same news, in the same words"
        assert hook(repo, name, payload) == Ran(0, "", ""), "handed over once"
    subprocess.run(["git", "pack-refs", "--all"], cwd=repo, check=True)
    assert peek.ref_id(str(lead.repo.common_dir), names.inbox_ref("main")) == lead.repo.read_ref(
        names.inbox_ref("main")), "a packed inbox is read from packed-refs"
    assert hook(repo, "stop", stop) == Ran(0, "", "")
    unknown = f"{'0' * 40} 0.0\n"  # a cursor that names no message: every message again, as the door says
    cursor.write_text(unknown)
    light = hook(repo, "stop", stop)
    cursor.write_text(unknown)
    assert light.out and turn_through_the_door(repo, "stop", stop) == light


def test_peek_leaves_to_git_what_only_git_can_tell(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    common = str(Repo.discover(repo).common_dir)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()
    assert peek.branch_of(f"{common}") == "main" and peek.ref_id(common, "refs/heads/main") == head
    assert peek.ref_id(common, "refs/balanced/inbox/none") is None
    (Path(common) / "refs/heads/odd").write_text("not an id\n")
    (Path(common) / "refs/heads/link").symlink_to(Path(common) / "refs/heads/main")
    (Path(common) / "refs/heads/sym").write_text("ref: refs/heads/main\n")
    assert [peek.ref_id(common, f"refs/heads/{n}") for n in ("odd", "link", "sym")] == [peek.UNSURE] * 3
    (Path(common) / "packed-refs").write_text("# pack-refs with: peeled\nzzz refs/heads/x\n")
    assert peek.ref_id(common, "refs/heads/absent") == peek.UNSURE, "packed-refs git would not write"
    (Path(common) / "packed-refs").unlink()
    subprocess.run(["git", "checkout", "-q", "--detach"], cwd=repo, check=True)
    assert peek.branch_of(common) is None, "a detached HEAD is Repo.current_branch's to tell"


def test_the_hooks_on_each_call_and_turn_import_nothing_heavy(lead: Path, tmp_path: Path) -> None:
    """A worker's pre-tool-use and a lead's stop without news, each in a fresh interpreter as its agent runs it:
    neither loads typing, dataclasses, pathlib, subprocess, the git door's core or the state."""
    worktree = make_repo(tmp_path / "wt2")
    env = worker_env(lead, worktree)
    read = json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": {"file_path": "a"}})
    assert hook(lead, "stop", claude_stop(lead)).code == 0  # whatever news there was is handed over
    probe = ("import json, sys\nfrom git_balanced.front import main\ncode = main()\n"
             f"sys.stderr.write(json.dumps([m for m in sys.modules if m.startswith({NOT_LIGHT!r})]))\n"
             "sys.exit(code)\n")
    for cwd, args, stdin, more in ((worktree, ["pre-tool-use"], read, env),
                                   (lead, ["stop"], json.dumps(claude_stop(lead)), {})):
        for _ in range(2):  # the first stop records its session (this process) anew: a write, which may load more
            cp = subprocess.run([sys.executable, "-c", probe, "hook", *args], cwd=cwd, input=stdin,
                                capture_output=True, text=True, env={**os.environ, **more}, timeout=60)
        assert cp.returncode == 0 and cp.stdout == "", cp
        assert json.loads(cp.stderr) == [], f"`hook {args[0]}` imported {cp.stderr}"
    argv = wiring.balanced_argv()
    assert argv[1:3] == ["-P", "-c"] and "runpy" not in argv[3], "a hook on this machine starts without runpy"


def test_a_workers_hook_runs_our_guard_never_one_planted_in_its_worktree(lead: Path, tmp_path: Path) -> None:
    """The hook line a worker's agent runs in its worktree (`wiring.balanced_argv`): a `git_balanced/` the worker
    wrote there is not what answers, and the guard still refuses what the worker's mode forbids."""
    worktree = make_repo(tmp_path / "wt-planted")
    marker = tmp_path / "planted-ran"
    planted = worktree / "git_balanced"
    planted.mkdir()
    (planted / "__init__.py").write_text("")
    (planted / "front.py").write_text(f"def main():\n    open({str(marker)!r}, 'w').write('ran')\n    return 0\n")
    env = {**os.environ, **worker_env(lead, worktree), "GIT_BALANCED_WORKER_MODE": "read-only"}
    cp = subprocess.run([*wiring.balanced_argv(), "hook", "pre-tool-use"], cwd=worktree, input=json.dumps(
        edit_in(worktree)), capture_output=True, text=True, env=env, timeout=60)
    assert not marker.exists(), "the worker's own git_balanced/front.py answered as the guard"
    assert "plan mode" in cp.stdout + cp.stderr, cp


def test_through_click_the_light_hooks_say_the_same(lead: Path, tmp_path: Path) -> None:
    """cli.py's click app runs the same hooks (commands/hook.py): a worker's edit and a lead's turn with news."""
    from git_balanced import cli, front

    def both(cwd: Path, args: list[str], stdin: dict, env: dict[str, str | None], reset: Path | None) -> list[Ran]:
        ran = []
        for main in (front.main, cli.main):
            before = reset.read_bytes() if reset and reset.exists() else None
            with _as_a_process(cwd, json.dumps(stdin), env) as (out, err):
                ran.append(Ran(main(list(args)), out.getvalue(), err.getvalue()))
            if reset and before is None:
                reset.unlink(missing_ok=True)
            elif reset and before is not None:
                reset.write_bytes(before)
        return ran

    worktree = make_repo(tmp_path / "wt3")
    env: dict[str, str | None] = {**worker_env(lead, worktree), "GIT_BALANCED_WORKER_MODE": "read-only"}
    light, slow = both(worktree, ["hook", "pre-tool-use"], edit_in(worktree), env, None)
    assert light == slow and "plan mode" in light.out, light
    repo = open_lead(str(lead)).repo
    post(repo, "main", "a line for both")
    cursor = Path(names.cursor_in(str(repo.state_dir), "main"))
    light, slow = both(lead, ["hook", "stop"], claude_stop(lead), {}, cursor)
    assert light == slow and "a line for both" in light.out, light
