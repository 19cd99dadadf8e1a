"""The landing queue against real repositories: batches, bisection, preflight, the lead's working tree."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from git_balanced import jobs as J
from git_balanced.job_events import Finished, record
from git_balanced.lead import open_lead
from tests.support.builders import commit, git
from tests.support.cli import balanced
from tests.support.landing import branch, branches, check_runs, landed_subjects, project, tip_passed


def test_a_clean_batch_costs_one_check(tmp_path: Path, sealed: Path) -> None:
    repo = project(tmp_path)
    names = branches(repo, 6)
    r = balanced(repo, "land", *names, "--json")
    assert r.code == 0, r
    data = json.loads(r.out)
    assert [v["status"] for v in data["verdicts"]] == ["landed"] * 6
    assert data["check_runs"] == 1 and check_runs(sealed) == 1, "6 branches, one check"
    assert landed_subjects(repo)[:6] == [f"Land f{i}" for i in range(6, 0, -1)]
    for sha in git(repo, "rev-list", "--first-parent", "--merges", "main").splitlines():
        assert len(git(repo, "rev-list", "--parents", "-n1", sha).split()) == 3, "one --no-ff merge per branch"
    assert tip_passed(repo)
    shown = git(repo, "log", "-1", "--notes=balanced", "--format=%N", "main")
    note = json.loads(shown.splitlines()[0])
    assert note["branch"] == "f6" and note["result"] == "pass" and note["check"].startswith("! grep")
    assert "Land f6" in balanced(repo, "log").out


def test_one_culprit_is_found_and_the_rest_lands(tmp_path: Path, sealed: Path) -> None:
    repo = project(tmp_path)
    names = branches(repo, 8, bad={3})
    r = balanced(repo, "land", *names)
    assert r.code == 1
    assert "check failed f3" in r.out and "src/f3.txt" not in landed_subjects(repo)
    assert sorted(s for s in landed_subjects(repo) if s.startswith("Land")) == sorted(
        f"Land f{i}" for i in range(1, 9) if i != 3)
    assert check_runs(sealed) <= 6, f"{check_runs(sealed)} checks for 8 branches with one culprit"
    assert tip_passed(repo), "the lead's tip passed the check"
    inbox = git(repo, "log", "--format=%s", "refs/balanced/inbox/main")
    assert "f3 did not land: its check failed" in inbox and "landed in main as" in inbox


def test_preflight_spends_no_check(tmp_path: Path, sealed: Path) -> None:
    repo = project(tmp_path)
    commit(repo, {"src/shared.txt": "main's version\n"}, "main edits shared")
    branch(repo, "clash", {"src/shared.txt": "other version\n"}, base="main~1")
    git(repo, "branch", "empty", "main")
    branch(repo, "settings", {".magnum/settings.toml": '[worktree]\ncheck = "true"\n'})
    r = balanced(repo, "land", "clash", "empty", "settings")
    assert r.code == 1
    assert "conflict  clash: it conflicts with main in src/shared.txt" in r.out
    assert "already   empty" in r.out
    assert "held      settings" in r.out and "git balanced land settings --yes" in r.out
    assert check_runs(sealed) == 0, "nothing was checked"
    assert balanced(repo, "land", "nosuch").err.startswith("error: There is no job or local branch")
    # A name git could never give a branch is not looked up as one, and reads as no job either.
    assert balanced(repo, "land", "a..b").err.startswith("error: There is no job or local branch named 'a..b'")


def test_protected_branch_lands_on_your_word(tmp_path: Path, sealed: Path) -> None:
    repo = project(tmp_path)
    branch(repo, "settings", {".magnum/settings.toml": '[worktree]\ncheck = "false"\n'})
    r = balanced(repo, "land", "settings", "--yes")
    assert r.code == 0 and "landed    settings" in r.out, r
    assert check_runs(sealed) == 1, "checked by the lead's committed command, not the branch's `false`"


def test_branches_that_conflict_with_each_other(tmp_path: Path, sealed: Path) -> None:
    repo = project(tmp_path)
    branch(repo, "a", {"src/x.txt": "from a\n"})
    branch(repo, "b", {"src/x.txt": "from b\n"})
    r = balanced(repo, "land", "a", "b")
    assert "landed    a" in r.out
    assert "conflict  b" in r.out and "src/x.txt" in r.out


def test_lead_working_tree_is_safe(tmp_path: Path, sealed: Path) -> None:
    repo = project(tmp_path)
    branch(repo, "f1", {"src/f1.txt": "one\n"})
    (repo / "notes.txt").write_text("mine, not committed\n")
    r = balanced(repo, "land", "f1")
    assert r.code == 0, r
    assert (repo / "src" / "f1.txt").read_text() == "one\n", "the checkout moved with the branch"
    assert (repo / "notes.txt").read_text() == "mine, not committed\n", "uncommitted work carried along"
    branch(repo, "f2", {"src/f2.txt": "two\n"})
    (repo / "src" / "f2.txt").write_text("my own f2\n")
    before = git(repo, "rev-parse", "main")
    r = balanced(repo, "land", "f2")
    assert r.code == 1 and "in the way f2: your untracked file src/f2.txt is in the way" \
        in r.out, r
    assert git(repo, "rev-parse", "main") == before, "nothing moved"
    assert (repo / "src" / "f2.txt").read_text() == "my own f2\n", "the user's file is kept"
    assert check_runs(sealed) == 1, "refused before spending a check"


def test_a_tree_is_never_checked_twice(tmp_path: Path, sealed: Path) -> None:
    repo = project(tmp_path)
    branches(repo, 2, bad={2})
    balanced(repo, "land", "f1", "f2")
    runs = check_runs(sealed)
    r = balanced(repo, "land", "f2")
    assert r.code == 1 and "check failed" in r.out
    assert check_runs(sealed) == runs, "the failing tree was answered from its note"


def test_lead_moving_during_the_check_rebuilds_the_batch(tmp_path: Path, sealed: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # The check stands in for another writer of the lead's branch while it runs: so it must be let write there
    # (fenced, the lead's repository is read-only to it).
    monkeypatch.setenv("GIT_BALANCED_NO_FENCE", "1")
    lead_dir = tmp_path / "lead"
    check = (f'if [ ! -f "$HOME/moved" ]; then touch "$HOME/moved"; '
             f'git -C {lead_dir} commit -q --allow-empty -m "moved meanwhile"; fi; true')
    repo = project(tmp_path, check=check)
    branch(repo, "f1", {"src/f1.txt": "one\n"})
    r = balanced(repo, "land", "f1")
    assert r.code == 0, r
    subjects = landed_subjects(repo)
    assert subjects[0] == "Land f1" and "moved meanwhile" in subjects, "landed on top of the new tip"


def test_parallel_slots_take_fewer_rounds(tmp_path: Path, sealed: Path) -> None:
    repo = project(tmp_path, extra="[balanced]\ncheck_slots = 4\n")
    names = branches(repo, 12, bad={5})
    ran = balanced(repo, "land", *names, "--json")
    assert ran.code in (0, 1) and ran.out.strip(), f"land with 4 check slots exited {ran.code}:\n{ran.err}"
    data = json.loads(ran.out)
    assert [v["branch"] for v in data["verdicts"] if v["status"] == "check_failed"] == ["f5"]
    assert data["rounds"] <= 3, data


def test_broken_settings_never_land(tmp_path: Path, sealed: Path) -> None:
    repo = project(tmp_path)
    branch(repo, "typo", {".magnum/settings.toml": '[worktree]\ncheck = "true"\n[balanced]\natempts = 2\n'})
    r = balanced(repo, "land", "typo", "--include-protected")
    assert r.code == 1 and "refused   typo: its .magnum/settings.toml is invalid" in r.out, r
    assert "atempts" in r.out
    assert check_runs(sealed) == 0


def test_each_landing_note_names_its_own_tree(tmp_path: Path, sealed: Path) -> None:
    repo = project(tmp_path)
    branches(repo, 2)
    balanced(repo, "land", "f1", "f2")
    for rev in ("main", "main^"):
        note = json.loads(git(repo, "notes", "--ref=balanced", "show", rev))
        assert note["tree"] == git(repo, "rev-parse", f"{rev}^{{tree}}"), f"{rev}'s note names its tree"
        assert note["checked_tree"] == git(repo, "rev-parse", "main^{tree}"), "and the tree the check passed"


def test_the_batch_shrinks_after_a_failure_and_grows_after_a_pass(tmp_path: Path, sealed: Path) -> None:
    repo = project(tmp_path)
    limit = repo / ".git" / "balanced" / "landing.json"
    branches(repo, 3, bad={2})
    balanced(repo, "land", "f1", "f2", "f3")
    assert json.loads(limit.read_text())["limit"] == 17, "32 halved after the failure, then one more for the pass"
    limit.write_text('{"limit": 2}')
    for i in range(4, 9):
        branch(repo, f"g{i}", {f"src/g{i}.txt": "fine\n"})
    runs = check_runs(sealed)
    data = json.loads(balanced(repo, "land", *[f"g{i}" for i in range(4, 9)], "--json").out)
    assert [v["status"] for v in data["verdicts"]] == ["landed"] * 5
    assert check_runs(sealed) - runs == 2, "batches of 2, then 3 (grown by one): two checks for five branches"
    assert json.loads(limit.read_text())["limit"] == 4


def finished_job(repo: Path, name: str) -> str:
    """A job whose worker finished on branch `name`; its id."""
    lead = open_lead(str(repo))
    jid = J.place(lead.repo, {"plan": "p1", "piece": name, "task": "t", "lead": "main", "machine": "local",
                              "branch": name, "attempt": 1})
    record(lead.repo, jid, Finished(ran={"head": git(repo, "rev-parse", name)}), f"{name}: finished")
    return jid


def test_a_job_lands_by_a_unique_prefix_of_its_id_and_an_ambiguous_one_is_refused(tmp_path: Path,
                                                                                  sealed: Path) -> None:
    repo = project(tmp_path)
    branches(repo, 2)
    one, two = finished_job(repo, "f1"), finished_job(repo, "f2")
    common = os.path.commonprefix([one, two])
    assert common, "ids placed a moment apart share their leading (time) characters"
    before = git(repo, "rev-parse", "main")
    refused = balanced(repo, "land", common)
    assert refused.code == 1 and one in refused.err and two in refused.err, refused
    assert refused.err.startswith(f"error: {common!r} is the start of 2 job ids"), refused.err
    assert git(repo, "rev-parse", "main") == before and check_runs(sealed) == 0, "nothing landed, nothing checked"
    assert balanced(repo, "stop", common).err == refused.err, "stop refuses it in the same words"
    r = balanced(repo, "land", one[:len(common) + 1])
    assert r.code == 0 and "landed    f1" in r.out, r
    jobs = J.all_jobs(open_lead(str(repo)).repo)
    assert (jobs[one].state, jobs[two].state) == ("landed", "finished"), "the prefix named f1's job alone"
    assert json.loads(git(repo, "notes", "--ref=balanced", "show", "main"))["job"] == one
    unknown = balanced(repo, "stop", "zzzz")
    assert (unknown.code, unknown.err.splitlines()[0]) == (1, "error: There is no job named 'zzzz'.")


def test_a_landing_made_again_is_noted_once(tmp_path: Path, sealed: Path) -> None:
    """A landing made again after a fault (the branch put back, the same merge made anew: the same id, as git
    makes one commit of the same tree, parents, message and time) carries one landing record, not two."""
    repo = project(tmp_path)
    [name] = branches(repo, 1)
    before = git(repo, "rev-parse", "main")
    assert "landed" in balanced(repo, "land", name).out
    landed = git(repo, "rev-parse", "main")
    git(repo, "reset", "-q", "--hard", before)
    assert "landed" in balanced(repo, "land", name).out
    assert git(repo, "rev-parse", "main") == landed, "the same merge, made again (fixed dates in the tests)"
    records = [json.loads(x) for x in git(repo, "notes", "--ref=balanced", "show", landed).splitlines()]
    assert len(records) == 1, records
