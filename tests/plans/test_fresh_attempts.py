"""Every attempt starts clean: a re-stored plan, or a piece of the same id in another plan, gets a branch of its
own from the lead's current tip; a retry goes on from its own earlier commits; old work is never dropped."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.builders import commit, git
from tests.support.cli import balanced
from tests.support.plans import engine, inbox_text, jobs_of, lead_repo, piece, plan

ONE_ATTEMPT = "attempts = 1\n"


def test_a_re_stored_piece_starts_from_the_current_tip_on_a_branch_of_its_own(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path, extra=ONE_ATTEMPT)
    # The first attempt commits something, then fails: its commit never lands, and its worktree stays.
    plan(repo, [piece("feat", "echo old > src/old.txt && git add -A && git commit -qm old && exit 3")], "--start")
    r = engine(repo, "--until-idle")
    assert r.code == 1, r
    [first] = jobs_of(repo, "feat")
    assert first["state"] == "failed" and first["branch"] == "balanced/feat"
    old_tip = git(repo, "rev-parse", "balanced/feat")
    commit(repo, {"src/moved.txt": "the lead moved on\n"}, "the lead moves on")
    tip = git(repo, "rev-parse", "main")
    # The same piece, stored again in a new plan, now works: from the new tip, without the old commit.
    r = plan(repo, [piece("feat", "test -f src/moved.txt && test ! -f src/old.txt && echo new > src/new.txt")],
             "--start")
    assert r.code == 0, r
    note = "balanced/feat keeps 1 commit of an earlier plan that never landed; it stays there"
    assert note in r.out, r.out
    r = engine(repo, "--until-idle")
    assert r.code == 0, r
    second = [j for j in jobs_of(repo, "feat") if j["id"] != first["id"]]
    assert [j["state"] for j in second] == ["landed"], second
    assert second[0]["branch"] != "balanced/feat", "a branch of its own, not the failed plan's"
    assert f"this plan's feat works on {second[0]['branch']}" in r.out + inbox_text(repo)
    assert second[0]["base"] == tip, "it started from the lead's current tip"
    assert (repo / "src" / "new.txt").read_text() == "new\n"
    assert not (repo / "src" / "old.txt").exists(), "nothing of the old attempt leaked in"
    assert git(repo, "rev-parse", "balanced/feat") == old_tip, "the old attempt's commits are kept where they were"
    assert note in inbox_text(repo), "the lead hears where the old work is"


def test_a_piece_of_the_same_id_in_another_live_plan_gets_its_own_branch(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    first = plan(repo, [piece("doc", "echo one > src/one.txt")], "--json", "--start", task="first")
    second = plan(repo, [piece("doc", "echo two > src/two.txt")], "--json", "--start", task="second")
    branches = [json.loads(r.out)["pieces"][0]["branch"] for r in (first, second)]
    assert branches[0] == "balanced/doc" and branches[1] != branches[0], branches
    r = engine(repo, "--until-idle")
    assert r.code == 0, r
    assert [j["state"] for j in jobs_of(repo, "doc")] == ["landed", "landed"]
    assert git(repo, "show", f"{branches[0]}:src/one.txt") == "one"
    assert git(repo, "ls-tree", "--name-only", branches[1], "src/") == "src/base.txt\nsrc/two.txt", \
        "the second plan's branch holds only its own work"


def test_a_branch_made_after_the_plan_was_stored_is_left_alone(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    r = plan(repo, [piece("late", "echo mine > src/late.txt")], "--json")
    assert json.loads(r.out)["pieces"][0]["branch"] == "balanced/late"
    # Someone makes a branch of that name, with work of their own, before the plan starts.
    git(repo, "checkout", "-q", "-b", "balanced/late")
    commit(repo, {"src/theirs.txt": "theirs\n"}, "their own work")
    theirs = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "main")
    assert balanced(repo, "start").code == 0
    r = engine(repo, "--until-idle")
    assert r.code == 0, r
    [job] = jobs_of(repo, "late")
    assert job["state"] == "landed" and job["branch"] != "balanced/late", job
    assert git(repo, "rev-parse", "balanced/late") == theirs, "their branch is untouched"
    assert not (repo / "src" / "theirs.txt").exists(), "and none of it landed"
    assert f"late: balanced/late holds work of another plan, which stays there; late works on {job['branch']}" \
        in inbox_text(repo)


def test_a_retry_goes_on_from_its_own_earlier_commits(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    marker = tmp_path / "second"
    run = (f'if [ -f {marker} ]; then test -f src/first.txt && echo two > src/second.txt; '
           f'else touch {marker}; echo one > src/first.txt; git add -A; git commit -qm first; exit 5; fi')
    plan(repo, [piece("steps", run)], "--start")
    r = engine(repo, "--until-idle")
    assert r.code == 0, r
    rows = jobs_of(repo, "steps")
    assert [j["state"] for j in rows] == ["retried", "landed"], rows
    assert rows[0]["branch"] == rows[1]["branch"] == "balanced/steps"
    assert (repo / "src" / "first.txt").exists() and (repo / "src" / "second.txt").exists(), \
        "attempt 2 went on from attempt 1's commit"



def test_a_retry_on_a_fresh_branch_takes_a_name_no_other_plan_holds(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    # Another plan, stored first, holds balanced/p-2 and balanced/q-2: the names a conflict's retry would take.
    other = plan(repo, [piece("p-2", "echo p2 > src/p2.txt"), piece("q-2", "echo q2 > src/q2.txt")], "--json",
                 task="other")
    held = {p["branch"] for p in json.loads(other.out)["pieces"]}
    assert held == {"balanced/p-2", "balanced/q-2"}, held
    # Two pieces that write the same file: one lands, the other conflicts and tries again from the new tip.
    plan(repo, [piece("p", "echo p > src/base.txt"), piece("q", "echo q > src/base.txt")], "--start")
    r = engine(repo, "--until-idle")
    assert r.code == 0, r
    retried = [j for pid in ("p", "q") for j in jobs_of(repo, pid) if j["attempt"] == 2]
    assert len(retried) == 1 and retried[0]["state"] == "landed", retried
    assert retried[0]["branch"] not in held, "the retry's fresh branch is its own"
    assert balanced(repo, "start", json.loads(other.out)["plan"]).code == 0
    assert engine(repo, "--until-idle").code == 0
    for pid, name in (("p-2", "p2"), ("q-2", "q2")):
        [job] = jobs_of(repo, pid)
        assert job["state"] == "landed" and job["branch"] == f"balanced/{pid}", job
        assert git(repo, "ls-tree", "--name-only", str(job["branch"]), "src/").split() == \
            ["src/base.txt", f"src/{name}.txt"], "its branch holds only its own work"
