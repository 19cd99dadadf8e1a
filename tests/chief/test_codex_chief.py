"""Codex as the headless chief: its shell's `git balanced land` and `git push` are refused by the chief's hook,
which Codex runs from the `.codex/hooks.json` git balanced wrote in the chief's folder (the real Codex CLI against
the scripted model server)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from git_balanced.chief import home
from tests.support.cli import balanced
from tests.support.model_server import run_shell, say
from tests.support.real_agents import bodies, real_agents
from tests.support.wait import wait_until

pytestmark = [pytest.mark.agents]


def test_a_codex_chief_is_refused_land_and_push_through_its_shell(tmp_path: Path, agent_bin: str,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    turns = [run_shell("git balanced land --all"), run_shell("git push origin main"), say("Tried.")]
    with real_agents(monkeypatch, agent_bin, {"codex": turns}) as servers:
        started = balanced(tmp_path, "chief", "start", "--agent", "codex", "Land what is ready.")
        assert started.code == 0, started.err
        try:
            def status() -> dict[str, object]:
                return dict(json.loads(balanced(tmp_path, "chief", "status", "--json").out))

            wait_until(lambda: int(status().get("turns") or 0) >= 1, 240, "the codex chief's first turn", every=1,
                       said=status)
            sent = json.dumps(bodies(servers.codex))
        finally:
            balanced(tmp_path, "chief", "stop")
    hooks = json.loads((home.folder() / ".codex" / "hooks.json").read_text())
    assert "chief-pre-tool-use" in json.dumps(hooks["hooks"]["PreToolUse"])
    assert "`git balanced land` is refused" in sent, sent[-3000:]
    assert "`git push` is refused" in sent, sent[-3000:]
