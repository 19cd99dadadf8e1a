"""What a lead's hooks record (its mode, its model) is its session's: it holds the lead's workers while that
session's process runs, and a run after it, without an agent lead, goes by the settings again."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from git_balanced.agents import lead_session, modes
from git_balanced.agents.wiring import balanced_argv
from git_balanced.channel import presence
from git_balanced.engine.context import Context
from git_balanced.lead import open_lead, settings_at
from tests.support.builders import make_repo
from tests.support.cli import balanced
from tests.support.hook_inputs import codex_stop

# A lead's agent as far as its hooks see it: it runs the hook through `sh -c` (as Claude Code does), with the
# hook's input on the hook's stdin, says so, and runs on until its own stdin ends.
AGENT = ("import subprocess, sys\n"
         "subprocess.run(sys.argv[1:], input=sys.stdin.readline(), text=True, check=True)\n"
         "print('hooked', flush=True)\n"
         "sys.stdin.read()\n")


def test_a_leads_mode_and_model_hold_its_workers_only_while_its_session_runs(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "lead")
    lead = open_lead(str(repo))
    ctx = Context(lead, settings_at(lead.repo, lead.branch))
    hook = shlex.join([*balanced_argv(), "hook", "user-prompt-submit"])
    agent = subprocess.Popen([sys.executable, "-c", AGENT, "sh", "-c", hook], cwd=repo, text=True,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert agent.stdin is not None and agent.stdout is not None
    try:
        agent.stdin.write(json.dumps({**codex_stop(repo), "hook_event_name": "UserPromptSubmit",
                                      "permission_mode": "plan", "prompt": "Plan it."}) + "\n")
        agent.stdin.flush()
        assert agent.stdout.readline().strip() == "hooked"
        rec = modes.last(lead.repo, "main")
        assert (rec["pid"], rec["mode"]) == (agent.pid, "plan"), "the session is the agent, not the shell between"
        assert modes.workers_level(lead.repo, "main") == "read-only", "a live lead in plan mode holds its workers"
        assert modes.for_worker(lead.repo, "main") == "read-only"
        assert ctx.default_model("codex") == "gpt-5.5", "and its workers start on its model"
    finally:
        agent.stdin.close()
        agent.wait(30)
    assert modes.last(lead.repo, "main")["mode"] == "plan", "the record stays, for the board to tell"
    assert modes.recorded(lead.repo, "main") is None, "its session ended: its mode holds no worker"
    assert modes.for_worker(lead.repo, "main") == "free", "a run without an agent lead goes by the settings"
    assert ctx.default_model("codex") is None, "nor does a worker start on the old lead's model"


def test_a_pid_taken_by_another_process_is_not_the_session(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "lead")
    lead = open_lead(str(repo))
    assert balanced(repo, "hook", "stop", input=json.dumps(codex_stop(repo))).code == 0
    assert modes.workers_level(lead.repo, "main") == "free", "a live Codex lead that never asks"
    path = next((lead.repo.state_dir / "lead-mode").iterdir())
    rec = json.loads(path.read_text())
    path.write_text(json.dumps({**rec, "tick": str(int(rec["tick"] or 0) + 1)}))
    assert modes.recorded(lead.repo, "main") is None, "same pid, another start: not the session that recorded"
    del rec["pid"], rec["tick"]
    path.write_text(json.dumps(rec))
    assert modes.recorded(lead.repo, "main") is None, "a record naming no session is taken as gone"


def test_a_headless_leads_session_is_its_driver(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its turns' agents come and go; the driver runs through them, and its hooks' records are the driver's."""
    repo = make_repo(tmp_path / "lead")
    lead = open_lead(str(repo))
    (presence.lead_dir(lead.repo, "main") / "lead.json").write_text(json.dumps({"pid": os.getppid()}))
    monkeypatch.setenv(presence.HEADLESS_ENV, "1")
    assert balanced(repo, "hook", "stop", input=json.dumps(codex_stop(repo))).code == 0
    assert modes.last(lead.repo, "main")["pid"] == os.getppid()
    assert lead_session.lives(modes.last(lead.repo, "main"))


def test_where_there_is_no_proc_ps_tells_the_same() -> None:
    """macOS and the BSDs have no /proc: there `ps` names each process above the hook and its parent."""
    for pid in (os.getpid(), os.getppid()):
        assert lead_session.from_ps(pid) == lead_session._name_and_parent(pid), pid
