"""What the inbox's readers keep (channel/inbox_cache.py): a second read parses one file and reads only what came
since; a kept file that no longer answers (another fold mark, an inbox started again, a file spoiled) is read past,
never trusted; and workers' handles made from the done jobs' briefs are those made from their whole states."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from git_balanced import handles, process
from git_balanced.channel import inbox, inbox_cache
from git_balanced.git import Repo
from git_balanced.state import cache, refs
from git_balanced.state.views import PlanView
from tests.state.test_archive import _plan
from tests.support.builders import make_repo


@pytest.fixture(scope="module")
def lead(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    """A lead with a done plan, a live one, and their inbox messages."""
    repo = Repo.discover(make_repo(tmp_path_factory.mktemp("kept") / "lead"))
    _plan(repo, 2, done=True)
    _plan(repo, 2, done=False)
    return repo


def _texts(repo: Repo) -> list[str]:
    process.forget()
    return [e["text"] for e in inbox.entries(repo, "main")]


def _kept(repo: Repo) -> Path:
    return Path(inbox_cache._path(repo, inbox.inbox_ref("main")))


def test_a_second_read_reads_the_kept_file_and_what_came_since(lead: Repo) -> None:
    whole = [ev.data["text"] for ev in refs.events_of(lead, inbox.inbox_ref("main"))]
    assert _texts(lead) == whole and _kept(lead).exists(), "read whole once, and kept"
    inbox.post(lead, "main", "one more")
    assert _texts(lead) == [*whole, "one more"], "what came since is read too"
    held = json.loads(_kept(lead).read_text())
    assert held["tip"] == lead.read_ref(inbox.inbox_ref("main")) and len(held["events"]) == len(whole) + 1
    held["events"][0][6]["text"] = "from the kept file"  # a reader that reads the file shows what it holds
    _kept(lead).write_text(json.dumps(held))
    assert _texts(lead)[0] == "from the kept file"


def test_a_kept_file_that_cannot_answer_is_read_past(lead: Repo) -> None:
    ref = inbox.inbox_ref("main")
    _texts(lead)
    _kept(lead).write_text("{not json")
    whole = [ev.data["text"] for ev in refs.events_of(lead, ref)]
    assert _texts(lead) == whole, "a spoiled file: read whole, and written again"
    tip = lead.read_ref(ref)
    assert tip is not None and lead.delete_ref(ref, tip)
    inbox.post(lead, "main", "a new inbox")  # started again: its first commit is not one the file holds
    assert _texts(lead) == ["a new inbox"]
    held = json.loads(_kept(lead).read_text())
    held["mark"] = tip  # another fold mark than the inbox's
    _kept(lead).write_text(json.dumps(held))
    assert inbox_cache.read(lead, ref, lead.read_ref(ref) or "", None) is None


def test_handles_from_briefs_are_the_handles_from_whole_states(lead: Repo, monkeypatch) -> None:
    process.forget()
    cache.read_all(lead, "jobs")
    cache.read_all(lead, "plans")
    process.forget()
    assert any(st.get("brief") for st in cache.read_live(lead, "jobs").values()), "the done jobs read as briefs"
    briefly = handles.of_repo(lead, "main")
    whole = {pid: PlanView(pid, st) for pid, st in cache.read_all(lead, "plans").items()}
    monkeypatch.setattr(handles, "_plans", lambda repo: whole)
    jobs = {jid: handles.Who.of(jid, st) for jid, st in cache.read_all(lead, "jobs").items()}
    assert briefly == handles.handles(lead, jobs, "main") and len(briefly) == 4
