"""Workers' short handles against a real repository: `e3` is the third piece of its plan and stays so, `e1.2` is
a piece's second job, `e2@build-box` runs elsewhere; the board and the inbox show them, and show, stop and
land take them where they take a job id. Two live plans with an `e1` each are told apart as `e1:PLAN`."""

from __future__ import annotations

import json
from pathlib import Path

from git_balanced import jobs as J
from git_balanced.lead import open_lead
from tests.support.cli import balanced
from tests.support.plans import lead_repo, piece, plan


def _stored(repo: Path, ids: list[str], task: str) -> str:
    ran = plan(repo, [piece(p, "true") for p in ids], "--json", task=task)
    assert ran.code == 0, ran.err
    return str(json.loads(ran.out)["plan"])


def _job(repo: Path, plan_id: str, piece_id: str, machine: str = "local", attempt: int = 1) -> str:
    fields = {"plan": plan_id, "piece": piece_id, "task": "t", "lead": "main", "machine": machine, "agent": "shell",
              "attempt": attempt}
    return J.place(open_lead(str(repo)).repo, fields)


def _board(repo: Path) -> dict[str, object]:
    ran = balanced(repo, "board", "--json")
    assert ran.code == 0, ran.err
    return json.loads(ran.out)


def test_handles_follow_the_plan_not_the_order_jobs_came_in(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    first = _stored(repo, ["api", "web", "docs"], "First")
    docs = _job(repo, first, "docs")  # the third piece starts first: still e3
    web = _job(repo, first, "web", machine="build-box")
    api = _job(repo, first, "api")
    api2 = _job(repo, first, "api", attempt=2)
    handle = {r["id"]: r["handle"] for r in _board(repo)["jobs"]}  # type: ignore[attr-defined]
    assert handle == {docs: "e3", web: "e2@build-box", api: "e1", api2: "e1.2"}
    text = balanced(repo, "board").out
    assert "e2@build-box web" in text and "e1.2         api" in text, text
    shown = balanced(repo, "show", "e1.2", "--json")
    assert shown.code == 0 and json.loads(shown.out)["id"] == api2 and json.loads(shown.out)["handle"] == "e1.2"
    assert json.loads(balanced(repo, "show", "e2", "--json").out)["id"] == web, "the machine may be left out"
    wrong = balanced(repo, "show", "e2@other")
    assert wrong.code == 1 and "No worker has the handle e2@other." in wrong.err
    stopped = balanced(repo, "stop", "e3")
    assert stopped.code == 0 and f"Stopped docs ({docs})" in stopped.out
    heard = balanced(repo, "inbox").out
    assert "[e3] docs: you stopped it" in heard, heard
    said = [e for e in json.loads(balanced(repo, "inbox", "--json").out) if e.get("job") == docs]
    assert said and all(e["handle"] == "e3" for e in said), "and in the inbox's JSON"
    told = json.loads(balanced(repo, "mcp", "--call", "inbox").out)["messages"]
    assert [m["handle"] for m in told if m.get("job") == docs] == ["e3"] * len(said), "and to an agent lead"

    second = _stored(repo, ["fix"], "Second")
    fix = _job(repo, second, "fix")
    both = balanced(repo, "show", "e1")
    assert both.code == 1 and "e1 names workers of 2 plans: " in both.err
    assert f"e1:{first[-4:]} (api, queued, job {api})" in both.err and f"e1:{second[-4:]} (fix" in both.err
    handle = {r["id"]: r["handle"] for r in _board(repo)["jobs"]}  # type: ignore[attr-defined]
    assert handle[api] == f"e1:{first[-4:]}" and handle[fix] == f"e1:{second[-4:]}" and handle[docs] == "e3"
    one = balanced(repo, "show", f"e1:{second[-4:]}", "--json")
    assert one.code == 0 and json.loads(one.out)["id"] == fix
    landed = balanced(repo, "land", "e3")
    assert landed.code == 1 and "has no branch to land yet" in landed.err, "land takes a handle too"
