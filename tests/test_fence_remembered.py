"""The board shows the fence as this machine's last probe found it within the hour (fence.py's
remembered_why_unavailable), so a look at the board starts no probe; whatever fences something probes itself."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from git_balanced import fence
from tests.support.builders import make_repo
from tests.support.cli import balanced


def test_a_kept_answer_is_shown_while_fresh_and_probed_again_after(tmp_path: Path) -> None:
    kept = tmp_path / "fence.json"
    why = fence.why_unavailable()
    assert fence.remembered_why_unavailable(kept) == why, "no answer kept: probed"
    rec = json.loads(kept.read_text())
    assert rec["why"] == why and rec["uid"] == os.getuid() and rec["path"] == os.environ.get("PATH", "")
    kept.write_text(json.dumps({**rec, "why": "as kept"}))
    assert fence.remembered_why_unavailable(kept) == "as kept", "a fresh answer is shown without a probe"
    for stale in ({**rec, "at": rec["at"] - 2 * fence.REMEMBERED_FOR, "why": "old"}, {**rec, "at": rec["at"] + 3600},
                  {**rec, "boot": "another boot", "why": "old"}, {**rec, "path": "/elsewhere", "why": "old"},
                  {**rec, "uid": -1, "why": "old"}, {**rec, "why": 5}, [rec], "not json {"):
        kept.write_text(stale if isinstance(stale, str) else json.dumps(stale))
        assert fence.remembered_why_unavailable(kept) == why, stale
        assert json.loads(kept.read_text())["why"] == why, "probed again, and kept anew"


def test_the_board_reads_the_kept_answer_and_the_switch_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path / "lead")
    first = balanced(repo, "board", "--json")
    assert first.code == 0, first.err
    kept = repo / ".git" / "balanced" / "fence.json"
    rec = json.loads(kept.read_text())
    assert json.loads(first.out)["fence"] == {"fenced": rec["why"] is None, "why": rec["why"]}
    kept.write_text(json.dumps({**rec, "why": "this machine refuses user or mount namespaces (as kept)"}))
    shown = balanced(repo, "board")
    assert shown.code == 0 and "(as kept)" in shown.out + shown.err, "the board says what was kept, unprobed"
    kept.write_text(json.dumps({**rec, "why": None}))
    monkeypatch.setenv("GIT_BALANCED_NO_FENCE", "1")
    off = json.loads(balanced(repo, "board", "--json").out)["fence"]
    assert off == {"fenced": False, "why": "GIT_BALANCED_NO_FENCE is set, which turns the fence off"}
