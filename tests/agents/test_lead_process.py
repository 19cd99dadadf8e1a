"""Which process above a hook is the lead's session: the one named as a pinned agent CLI's process is, past any
launcher or wrapper between them; and those names are the ones the pinned CLIs really have."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

from git_balanced.agents import lead_session, modes
from git_balanced.agents.wiring import balanced_argv
from git_balanced.lead import open_lead
from tests.agents.test_lead_session import AGENT
from tests.support import agent_home
from tests.support.builders import make_repo
from tests.support.hook_inputs import codex_stop
from tests.support.wait import wait_until


def test_the_session_is_the_agent_past_a_wrapper_between(tmp_path: Path) -> None:
    """`claude` (this Python under that name, as /proc names Claude Code's binary) runs its hook under `timeout`
    and `nice`, through `sh -c`: the session is the agent, past all three."""
    repo = make_repo(tmp_path / "lead")
    lead = open_lead(str(repo))
    named = tmp_path / "bin" / "claude"
    named.parent.mkdir()
    named.symlink_to(sys.executable)
    hook = shlex.join([*balanced_argv(), "hook", "user-prompt-submit"])
    agent = subprocess.Popen([str(named), "-c", AGENT, "timeout", "60", "nice", "sh", "-c", hook], cwd=repo, text=True,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert agent.stdin is not None and agent.stdout is not None
    try:
        assert lead_session._name_and_parent(agent.pid)[0] == "claude"
        agent.stdin.write(json.dumps({**codex_stop(repo), "hook_event_name": "UserPromptSubmit",
                                      "permission_mode": "plan", "prompt": "Plan it."}) + "\n")
        agent.stdin.flush()
        assert agent.stdout.readline().strip() == "hooked"
        rec = modes.last(lead.repo, "main")
        assert (rec["pid"], rec["tick"]) == (agent.pid, lead_session.owner_of(agent.pid)["tick"]), \
            "the session is the agent, not a wrapper between"
        assert lead_session.lives(rec)
    finally:
        agent.stdin.close()
        agent.wait(30)
    assert not lead_session.lives(modes.last(lead.repo, "main")), "its session ended with the agent"


def test_the_pinned_clis_processes_have_the_names_looked_for(tmp_path: Path, agent_bin: str) -> None:
    """Each CLI started as a lead runs it, waiting on its input (no model is asked): its process is named as
    lead_session.AGENTS says (Codex's npm script execs its binary; Pi names its Node.js process), and none is
    a name the walk passes."""
    assert not lead_session.AGENTS & lead_session.PASSING
    home = Path(os.environ["HOME"])
    url = "http://127.0.0.1:9"  # never reached: nothing is asked before the input comes
    started = {
        "claude": (["claude", "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"],
                   agent_home.claude_env(home, url)),
        "codex": (["codex", "exec", "--skip-git-repo-check", "-"], agent_home.codex_env(home, url)),
        "pi": (["pi", "--mode", "rpc", "--no-session"], agent_home.pi_env(home, url)),
    }
    procs = {}
    try:
        for cli, (argv, env) in started.items():
            env["PATH"] = agent_bin + os.pathsep + env["PATH"]
            procs[cli] = subprocess.Popen(argv, cwd=tmp_path, env=env, stdin=subprocess.PIPE,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for cli, p in procs.items():
            wait_until(lambda p=p: lead_session._name_and_parent(p.pid)[0] in lead_session.AGENTS, 60,
                       f"{cli}'s process to take its name")
            assert lead_session._name_and_parent(p.pid)[0] == cli
            assert p.poll() is None, f"{cli} waits on its input"
    finally:
        for p in procs.values():
            p.kill()
            p.wait(30)
