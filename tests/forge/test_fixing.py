"""With `[pr] fix = true` the engine watches the pull request `ship --pr` opened on the scripted forge: a
failed check run goes to a worker on the lead's agent (a shell worker here), whose fix waits under Now as
`Ready to push`; `ship` on it pushes, and the forge sees the new head and a passing run."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.forge.conftest import Project
from tests.support.builders import commit, git
from tests.support.cli import balanced
from tests.support.forge import TOKEN, Forge, Run

# The fixer, the shell lead's `[pr] run`: it tries to push (which must be refused), then fixes what its message
# ($BALANCED_TASK) asks for: the base merged (the conflict resolved its way), a comment when a reviewer asks for
# one, else the widget's value.
FIXER = """git push {bare} HEAD:refs/heads/sneaky
case "$BALANCED_TASK" in
  *"does not merge"*) base=$(printf '%s' "$BALANCED_TASK" | sed -n 's/.*git merge \\([0-9a-f]*\\).*/\\1/p')
    git merge -q "$base" || true
    printf 'def widget():\\n    return 3\\n' > widget.py && git add widget.py && git commit -qm 'Merge the base' ;;
  *"asked for changes"*) printf '# The widget.\\n' >> widget.py ;;
  *) printf 'def widget():\\n    return 2\\n' > widget.py ;;
esac
"""


def ci(forge: Forge, sha: str) -> list[Run]:
    """The forge's CI: the widget must return 2."""
    ok = "return 2" in (forge.show(sha, "widget.py") or "")
    return [Run("lint", "success"), Run("tests", "success" if ok else "failure",
                                        "" if ok else "FAILED tests/test_widget.py::test_two - assert 1 == 2",
                                        [] if ok else [{"path": "widget.py", "start_line": 2, "end_line": 2,
                                                        "message": "returns 1, wants 2"}])]


def _fixing_on(project: Project) -> None:
    """`[pr] fix = true`, and the fixer (fix.sh, in the repository) as `[pr] run`."""
    (project.repo / "fix.sh").write_text(FIXER.format(bare=project.bare))
    settings = project.repo / ".magnum/settings.toml"
    settings.write_text(settings.read_text() + 'fix = true\nrun = "sh fix.sh"\n')
    git(project.repo, "add", "-A")
    git(project.repo, "commit", "-qm", "fix pull requests")


def test_a_failed_check_and_a_review_are_fixed_by_its_session_and_shipped(project: Project) -> None:
    repo, forge = project.repo, project.forge
    _fixing_on(project)
    forge.ci = ci
    assert balanced(repo, "ship", "--pr", "--yes").code == 0
    ran = balanced(repo, "engine", "--until-idle")
    assert ran.code == 0, ran.err
    events = git(repo, "log", "--format=%s", "refs/balanced/prs/1").splitlines()
    sent = events[1]
    assert sent.startswith("Pull request #1: checks failed, sent to its session (plan ")
    assert events[::-1] == ["Pull request #1 opened: fix pull requests",
                            "Pull request #1: checks failing · no review yet",
                            f"Pull request #1: checks failed on {(forge.head_sha('feature') or '')[:7]}",
                            sent, events[0]]
    assert events[0].startswith("Pull request #1: fixed by its session, ready to push (f")
    assert git(repo, "show", "feature:widget.py") == "def widget():\n    return 2", "the fix landed on the branch"
    plan = sent.split("(plan ")[1].rstrip(")")
    first = git(repo, "rev-list", "--max-parents=0", f"refs/balanced/plans/{plan}")
    task = json.loads(git(repo, "show", f"{first}:event.json"))["data"]["pieces"][0]["task"]
    assert "checks failed on" in task and "FAILED tests/test_widget.py::test_two - assert 1 == 2" in task
    assert "widget.py:2: returns 1, wants 2" in task and "Do not push" in task, "the failing part of the logs"
    said = balanced(repo, "show", "balanced/fix-pr-1").out
    assert "fatal: '/git balanced: a worker does not push. Commit your work; the person ships it" in said, said
    assert git(project.bare, "for-each-ref", "refs/heads/sneaky") == "", "its push was refused"
    rows = [r for r in json.loads(balanced(repo, "board", "--json").out)["now"] if r.get("kind") == "fix"]
    assert len(rows) == 1 and rows[0]["row"]["ships"]["summary"].endswith(" · 1 file · +1 \u22121")
    board = balanced(repo, "board").out
    assert f"1 ⇡ Ready to push {rows[0]['row']['id']}: #1 checks failed, fixed by its session (" in board, board
    assert "Fixed by its session · ready to push" in board
    shipped = balanced(repo, "ship", "--yes")
    assert shipped.code == 0, shipped.err
    assert forge.head_sha("feature") == git(repo, "rev-parse", "feature"), "the forge sees the new head"
    assert f"Answered {rows[0]['row']['id']}: shipped." in shipped.out
    ran = balanced(repo, "engine", "--until-idle")
    assert ran.code == 0, ran.err
    assert [r.conclusion for r in forge.runs[forge.head_sha("feature") or ""]] == ["success", "success"]
    last = git(repo, "log", "-1", "--format=%s", "refs/balanced/prs/1")
    assert last == "Pull request #1: checks passed", last

    forge.review(1, "CHANGES_REQUESTED", "Say what it is.", (("widget.py", 1, "a comment, please"),))
    ran = balanced(repo, "engine", "--until-idle")
    assert ran.code == 0, ran.err
    row = [r for r in json.loads(balanced(repo, "board", "--json").out)["now"] if r.get("kind") == "fix"][0]["row"]
    assert row["summary"].startswith("#1 changes requested, fixed by its session")
    assert balanced(repo, "ship", "--yes", row["id"]).code == 0
    assert (forge.show(forge.head_sha("feature") or "", "widget.py") or "").endswith("# The widget.\n"), \
        "the reviewer's change reached the forge"
    _no_token_anywhere([repo / ".git", Path(os.environ["HOME"])], [ran.out, ran.err, board])


def _no_token_anywhere(folders: list[Path], outputs: list[str]) -> None:
    """The token is in no output, and in no file of the repository's git folder or of the home the workers'
    runs (their logs, results and environments) live in."""
    assert not any(TOKEN in o for o in outputs)
    for folder in folders:
        for f in folder.rglob("*"):
            if f.is_file() and not f.is_symlink() and f.stat().st_size < 1 << 22:
                assert TOKEN.encode() not in f.read_bytes(), f"the token is in {f}"


def test_a_conflict_with_the_base_is_merged_by_its_session(project: Project) -> None:
    repo, forge = project.repo, project.forge
    _fixing_on(project)
    forge.ci = lambda forge, sha: [Run("tests", "success")]
    assert balanced(repo, "ship", "--pr", "--yes").code == 0
    other = repo.parent / "other"
    git(repo.parent, "clone", "-q", str(project.bare), str(other))
    base = commit(other, {"widget.py": "def widget():\n    return 3\n"}, "The base's own widget")
    git(other, "push", "-q", "origin", "main")
    assert forge.pulls[1] and forge.answer("GET", "/repos/ada/widgets/pulls/1", {}, {})[1]["mergeable"] is False
    ran = balanced(repo, "engine", "--until-idle")
    assert ran.code == 0, ran.err
    assert "Ready to push" in balanced(repo, "board").out
    shipped = balanced(repo, "ship", "--yes")
    assert shipped.code == 0, shipped.err
    assert forge.answer("GET", "/repos/ada/widgets/pulls/1", {}, {})[1]["mergeable_state"] == "clean", \
        "the forge sees a pull request that merges"
    git(project.bare, "merge-base", "--is-ancestor", base, "feature")  # the session merged the base itself
