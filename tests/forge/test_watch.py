"""The watcher's decisions, one look at a time against the scripted forge (no worker runs here): each trouble
goes out once per head, at most `[pr] fixes_a_day` a day, then to the person only; passing checks reset the
count; an unchanged pull request costs only 304s; a merged one is recorded; the looks come every 2 minutes."""

from __future__ import annotations

from git_balanced.forge import prs, watch
from git_balanced.forge.where import open_forge
from git_balanced.lead import Lead, open_lead, settings_at
from tests.forge.conftest import Project
from tests.support.builders import commit, git
from tests.support.cli import balanced
from tests.support.forge import TOKEN, Run


def _opened(project: Project) -> Lead:
    settings = project.repo / ".magnum/settings.toml"
    settings.write_text(settings.read_text() + 'fix = true\nrun = "true"\n')
    git(project.repo, "commit", "-qam", "fix pull requests")
    assert balanced(project.repo, "ship", "--pr", "--yes").code == 0
    return open_lead(str(project.repo))


def _look(lead: Lead) -> prs.Pr:
    settings = settings_at(lead.repo, lead.branch)
    watch.look(lead, settings, open_forge(lead, "origin"), prs.of_lead(lead)[0])
    return prs.of_lead(lead)[0]


def _new_failing_head(project: Project, n: int) -> str:
    sha = commit(project.repo, {"widget.py": f"def widget():\n    return {10 + n}\n"}, f"try {n}")
    git(project.repo, "push", "-q", "origin", "feature")
    project.forge.checks(sha, Run("tests", "failure", f"FAILED try {n}"))
    return sha


def test_the_fourth_failure_in_a_day_is_yours_and_a_pass_resets_the_count(project: Project) -> None:
    lead = _opened(project)
    for n in range(1, 4):
        _new_failing_head(project, n)
        p = _look(lead)
        assert p.last == "sent" and p.fixes_today() == n
        assert _look(lead).events == p.events, "the same failing run goes out once"
    assert "Checks failed · sent to its session (plan " in balanced(project.repo, "board").out
    _new_failing_head(project, 4)
    p = _look(lead)
    assert p.last == "to you" and "3 fixes sent today already" in str(p.events[-1].data["why"])
    assert "Checks failed · yours: 3 fixes sent today already" in balanced(project.repo, "board").out
    passing = commit(project.repo, {"widget.py": "def widget():\n    return 2\n"}, "fixed by hand")
    git(project.repo, "push", "-q", "origin", "feature")
    project.forge.checks(passing, Run("tests", "success"))
    p = _look(lead)
    assert p.last == "checks passed" and p.fixes_today() == 0, "a passing run resets the count"
    _new_failing_head(project, 5)
    assert _look(lead).last == "sent", "a new failing run is sent again"


def test_requested_changes_and_a_conflict_go_out_with_their_words(project: Project) -> None:
    lead = _opened(project)
    head = project.forge.head_sha("feature") or ""
    project.forge.checks(head, Run("tests", "success"))
    project.forge.review(1, "CHANGES_REQUESTED", "Not quite.", (("widget.py", 2, "return 2, please"),))
    p = _look(lead)
    said = [e for e in p.events if e.event == "changes requested"][0].data["said"]
    assert said == "rev asked for changes: Not quite.\n  widget.py:2: return 2, please"
    assert p.last == "sent" and p.fields["decision"] == "changes requested"
    project.forge.review(1, "APPROVED", "Fine now.")
    other = project.repo.parent / "other"
    git(project.repo.parent, "clone", "-q", str(project.bare), str(other))
    commit(other, {"widget.py": "def widget():\n    return 3\n"}, "the base's own widget")
    git(other, "push", "-q", "origin", "main")
    p = _look(lead)
    assert p.fields["conflicts"] is True and p.last == "sent"
    assert [e for e in p.events if e.event == "conflict with the base"][0].data["said"].startswith(
        "Merging main into feature conflicts")


def test_an_unchanged_pull_request_costs_only_304s_and_a_merged_one_is_recorded(project: Project) -> None:
    lead = _opened(project)
    project.forge.checks(project.forge.head_sha("feature") or "", Run("tests", "success"))
    _look(lead)
    mark = len(project.forge.seen)
    _look(lead)
    again = project.forge.seen[mark:]
    assert again and {s.status for s in again} == {304}, [(s.path, s.status) for s in again]
    project.forge.merge(1)
    p = _look(lead)
    assert p.state == "merged" and not prs.of_lead(lead, open_only=True)
    assert "pull request #1" not in balanced(project.repo, "board").out
    assert TOKEN not in (project.repo / ".git/balanced/forge-etags.json").read_text()


def test_the_engine_looks_every_two_minutes_and_not_at_all_with_fixing_off(project: Project) -> None:
    lead = _opened(project)
    settings = settings_at(lead.repo, lead.branch)
    watch.engine_tick(lead, settings, at=1000.0)
    looked = len(project.forge.seen)
    watch.engine_tick(lead, settings, at=1000.0 + watch.INTERVAL - 1)
    assert len(project.forge.seen) == looked, "not again within 2 minutes"
    watch.engine_tick(lead, settings, at=1000.0 + watch.INTERVAL)
    assert len(project.forge.seen) > looked
    off = settings.model_copy(update={"pr": settings.pr.model_copy(update={"fix": False})})
    seen = len(project.forge.seen)
    watch.engine_tick(lead, off, at=5000.0)
    assert len(project.forge.seen) == seen

