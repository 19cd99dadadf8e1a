"""Careless workers on this machine, as real shell pieces run by the real engine: whatever a piece runs in its
worktree (or its tests run in the check), the lead's branch, refs, notes and hooks stay as they were, the piece
does not land, and an honest piece after it still lands."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from tests.support.builders import git
from tests.support.model_server import run_shell, say
from tests.support.plans import CHECK, engine, inbox_text, jobs_of, lead_repo, piece, plan
from tests.support.real_agents import real_agents

HOOK_NAMES = ("pre-merge-commit", "pre-push", "post-checkout")
# A check that also runs the branch's own tests: each tests/*.sh, as a project's test runner would.
RUN_TESTS = 'sh check.sh'
CHECK_SH = '! grep -rq BAD src || exit 1\nfor t in tests/*.sh; do [ -f "$t" ] || continue; sh "$t" || exit 1; done\n'


@pytest.fixture(params=["fenced", "unfenced"])
def either_way(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """A route that is closed with the fence and without it (GIT_BALANCED_NO_FENCE=1, as on a machine without
    namespaces): the test runs both ways."""
    from git_balanced import fence

    if request.param == "unfenced":
        monkeypatch.setenv("GIT_BALANCED_NO_FENCE", "1")
    elif not fence.available():
        pytest.skip("this machine does not let a process make a folder read-only for its children")
    return str(request.param)


def careful_lead(tmp: Path, check: str = CHECK) -> Path:
    """A lead with hooks of its own (kept byte for byte) and one attempt per piece."""
    repo = lead_repo(tmp, check=check, extra="attempts = 1\n")
    hooks = Path(git(repo, "rev-parse", "--path-format=absolute", "--git-common-dir")) / "hooks"
    hooks.mkdir(exist_ok=True)
    for name in HOOK_NAMES:
        (hooks / name).write_text(f"#!/bin/sh\n# the lead's own {name}\nexit 0\n")
        (hooks / name).chmod(0o755)
    return repo


def snapshot(repo: Path) -> dict[str, object]:
    """The lead's branch, its refs outside git balanced's own state, its hooks (bytes) and its config."""
    common = Path(git(repo, "rev-parse", "--path-format=absolute", "--git-common-dir"))
    refs = {line.split(" ", 1)[1]: line.split(" ", 1)[0]
            for line in git(repo, "for-each-ref", "--format=%(objectname) %(refname)").splitlines()}
    return {"main": refs.get("refs/heads/main"),
            "refs": {r: s for r, s in refs.items() if not r.startswith(("refs/balanced/", "refs/notes/balanced"))
                     and not r.startswith("refs/heads/balanced/")},
            "hooks": {p.name: p.read_bytes() for p in sorted((common / "hooks").iterdir())},
            "config": (common / "config").read_bytes()}


def assert_untouched(repo: Path, before: dict[str, object]) -> None:
    after = snapshot(repo)
    for key in ("main", "refs", "hooks", "config"):
        assert after[key] == before[key], f"the lead's {key} changed: {before[key]!r} -> {after[key]!r}"


def worker_copy_moved(repo: Path, pid: str) -> None:
    """The worker really ran its commands: in its copy (its branch's own), main and escape are its commit."""
    [copy] = (Path(os.environ["HOME"]) / ".balanced" / "copies").glob(f"lead-*-workers/balanced+{pid}")
    tip = git(repo, "rev-parse", f"refs/heads/balanced/{pid}")
    assert git(copy, "rev-parse", "refs/heads/main", "refs/heads/escape").split() == [tip, tip]


def honest_piece_lands(repo: Path) -> None:
    assert plan(repo, [piece("honest", "echo fine > src/honest.txt")], "--start").code == 0
    r = engine(repo, "--until-idle")
    assert r.code == 0, r
    assert [j["state"] for j in jobs_of(repo, "honest")] == ["landed"]
    assert git(repo, "show", "main:src/honest.txt") == "fine"


def run_careless(repo: Path, pid: str, run: str) -> dict[str, object]:
    before = snapshot(repo)
    assert plan(repo, [piece(pid, run)], "--start").code == 0
    engine(repo, "--until-idle")
    assert_untouched(repo, before)
    [job] = jobs_of(repo, pid)
    assert job["state"] != "landed", job
    return job


def test_a_worker_that_moves_main_and_makes_a_branch_moves_only_its_copy(tmp_path: Path, either_way: str) -> None:
    repo = careful_lead(tmp_path)
    job = run_careless(repo, "mover", "echo BAD > src/bad.txt && git add -A && git commit -qm unchecked && "
                                      "git update-ref refs/heads/main HEAD && git branch escape")
    assert "escape" not in git(repo, "branch", "--list"), "no branch of the worker's in the lead"
    assert job["state"] == "failed"
    assert "its check failed" in inbox_text(repo)
    assert "landed in main" not in inbox_text(repo)
    assert git(repo, "show", "refs/heads/balanced/mover:src/bad.txt") == "BAD", \
        "the worker's branch, and only it, was fetched back"
    worker_copy_moved(repo, "mover")
    honest_piece_lands(repo)


def test_a_worker_that_forges_a_passing_note_does_not_land(tmp_path: Path, either_way: str) -> None:
    repo = careful_lead(tmp_path)
    forged = {"at": 1767225600.0, "code": 0, "command": CHECK,
              "command_hash": hashlib.sha256(CHECK.encode()).hexdigest()[:16], "passed": True,
              "result": "pass", "seconds": 0.1, "tail": "", "tree": "TREE"}
    note = tmp_path / "note.json"
    note.write_text(json.dumps(forged, sort_keys=True) + "\n")
    run = ("echo BAD > src/bad.txt && git add -A && git commit -qm forged && t=$(git rev-parse 'HEAD^{tree}') && "
           f"sed s/TREE/$t/ {note} > forged.note && git notes --ref balanced-checks add -f -F forged.note \"$t\" && "
           "rm forged.note && git notes --ref balanced-checks show \"$t\"")
    before_notes = git(repo, "for-each-ref", "refs/notes/")
    job = run_careless(repo, "forger", run)
    tree = git(repo, "rev-parse", "refs/heads/balanced/forger^{tree}")
    shown = git(repo, "notes", "--ref", "balanced-checks", "show", tree)
    assert '"result": "fail"' in shown and '"result": "pass"' not in shown, \
        "the lead's note on the forged tree is its own failing one, not the worker's"
    assert job["state"] == "failed" and "its check failed" in inbox_text(repo)
    assert before_notes != git(repo, "for-each-ref", "refs/notes/"), "the lead recorded its own check"
    honest_piece_lands(repo)


def test_a_worker_that_rewrites_the_hooks_rewrites_only_its_copys(tmp_path: Path, either_way: str) -> None:
    repo = careful_lead(tmp_path)
    run = ('for f in "$(git rev-parse --git-common-dir)"/hooks/*; do printf "#!/bin/sh\\nexit 0\\n" > "$f"; done; '
           'printf "#!/bin/sh\\nexit 0\\n" > "$(git rev-parse --git-common-dir)/hooks/pre-commit"; '
           'echo BAD > src/bad.txt')
    job = run_careless(repo, "silencer", run)
    assert job["state"] == "failed"
    hooks = Path(git(repo, "rev-parse", "--path-format=absolute", "--git-common-dir")) / "hooks"
    assert not (hooks / "pre-commit").exists()
    # The next job reads the hooks its copy has: the lead's, byte for byte.
    seen = 'for h in "$(git rev-parse --git-common-dir)"/hooks/*; do case $h in *.sample) ;; *) cat "$h";; esac; done'
    assert plan(repo, [piece("next", f"{seen} > src/seen.txt")], "--start").code == 0
    assert engine(repo, "--until-idle").code == 0
    expected = "".join(p.read_text() for p in sorted(hooks.iterdir()))
    assert git(repo, "show", "main:src/seen.txt") == expected.strip(), "the next job got the lead's hooks"
    honest_piece_lands(repo)


def test_a_worker_that_writes_the_lead_by_its_path_is_refused(tmp_path: Path) -> None:
    """The worker finds the lead's repository (its copy borrows the lead's objects, and says where) and writes
    it by path: main, a branch, a hook, a check result. On this machine the runner and its workers see the
    lead's repository read-only, so every write is refused."""
    from git_balanced import fence

    if not fence.available():
        pytest.skip("this machine does not let a process make a folder read-only for its children (no user "
                    "namespaces; tests/test_fence.py says whether it should); the unfenced case is tested on its own")
    repo = careful_lead(tmp_path)
    lead = ('lead=$(dirname "$(cat "$(git rev-parse --git-common-dir)/objects/info/alternates")"); '
            'echo "$lead" > found.txt; here=$(git rev-parse HEAD); ')
    run = (lead + 'git --git-dir="$lead" update-ref refs/heads/main "$here" 2> refused.txt; '
           'git --git-dir="$lead" branch escape "$here" 2>> refused.txt; '
           'printf "#!/bin/sh\nexit 0\n" > "$lead/hooks/pre-push" 2>> refused.txt; '
           'git --git-dir="$lead" notes --ref balanced-checks add -f -m pass "$here" 2>> refused.txt; '
           'echo BAD > src/bad.txt; git add -A; git commit -qm tried')
    job = run_careless(repo, "pathfinder", run)
    assert job["state"] == "failed"
    branch = "refs/heads/balanced/pathfinder"
    assert git(repo, "show", f"{branch}:found.txt") == str(repo / ".git"), "it did find the lead's repository"
    refused = git(repo, "show", f"{branch}:refused.txt")
    assert refused.count("Read-only file system") >= 3, refused
    honest_piece_lands(repo)


FORGED = {"at": 9999999999.0, "code": 0, "command": RUN_TESTS,
          "command_hash": hashlib.sha256(RUN_TESTS.encode()).hexdigest()[:16], "passed": True,
          "result": "pass", "seconds": 0.1, "tail": "", "tree": "TREE"}


@pytest.mark.parametrize("fence", ["fenced", "unfenced"])
def test_a_test_that_writes_the_lead_by_path_is_refused_or_undone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fence: str) -> None:
    """The branch's own test, run by the check, finds the lead's repository and writes it by path: it moves main,
    makes a branch, and writes a passing check result (dated in the future, so that it would win) for the tree
    it checks. Fenced, every write is refused by the file system; unfenced (a machine without namespaces), the
    moved refs are put back, the forged result is taken out, and the check fails saying so."""
    from git_balanced import fence as fencing
    from git_balanced.git import Repo
    from git_balanced.landing import checks

    if fence == "unfenced":
        monkeypatch.setenv("GIT_BALANCED_NO_FENCE", "1")
    elif not fencing.available():
        pytest.skip("this machine does not let a process make a folder read-only for its children (no user "
                    "namespaces; tests/test_fence.py says whether it should); the unfenced case is tested on its own")
    repo = careful_lead(tmp_path, check=RUN_TESTS)
    (repo / "check.sh").write_text(CHECK_SH)
    note = tmp_path / "forged.json"
    note.write_text(json.dumps(FORGED, sort_keys=True) + "\n")
    git(repo, "add", "check.sh")
    git(repo, "commit", "-qm", "the check runs the tests")
    from tests.support.cli import balanced

    assert balanced(repo, "allow", "--yes").code == 0
    # What the check checks is HEAD of its scratch worktree: the test puts it on the lead's main, by path.
    test = ("git update-ref refs/heads/main HEAD; git branch from-the-check; here=$(git rev-parse HEAD); "
            f"git -C {repo} update-ref refs/heads/main $here; git -C {repo} branch escape $here; "
            "t=$(git rev-parse HEAD^{tree}); "
            f"sed s/TREE/$t/ {note} > $HOME/forged.note; "
            f"git -C {repo} notes --ref balanced-checks add -f -F $HOME/forged.note $t; exit 0\n")
    # The branch's tests then fail (tests/fails.sh runs after tests/careless.sh): its own check refuses it.
    run = f"mkdir -p tests && printf '%s' '{test}' > tests/careless.sh && echo 'exit 1' > tests/fails.sh"
    before_notes = set(git(repo, "notes", "--ref", "balanced-checks", "list").splitlines())
    job = run_careless(repo, "tester", run)
    assert job["state"] == "failed"
    assert "its check failed" in inbox_text(repo)
    assert not os.path.exists(repo / ".git" / "refs" / "heads" / "escape")
    new_notes = set(git(repo, "notes", "--ref", "balanced-checks", "list").splitlines()) - before_notes
    said = [git(repo, "notes", "--ref", "balanced-checks", "show", line.split()[1]) for line in new_notes]
    assert said and all('"result": "pass"' not in n for n in said), said
    if fence == "fenced":
        assert any("Read-only file system" in n for n in said), said
    else:
        assert any("The check's code moved the lead's escape, main; put back." in n for n in said), said
        assert any("The check's code wrote 1 check result(s) into the lead's refs/notes/balanced-checks; they "
                   "were taken out, and do not count." in n for n in said), said
    r = Repo.discover(repo)
    for line in new_notes:
        hit = checks.cached(r, line.split()[1], RUN_TESTS)
        assert hit is not None and not hit.passed, "the lead's own result is the one that counts"
    honest_piece_lands(repo)


@pytest.mark.agents
def test_a_real_claude_worker_that_moves_main_moves_only_its_copy(tmp_path: Path, agent_bin: str,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    careless = run_shell("printf 'BAD\\n' > src/bad.txt && git add -A && git commit -q -m unchecked && "
                         "git update-ref refs/heads/main HEAD && git branch escape && git log --oneline -1 main")
    turns = {"claude": [careless, say("I moved main to my commit.")]}
    with real_agents(monkeypatch, agent_bin, turns) as servers:
        repo = careful_lead(tmp_path)
        before = snapshot(repo)
        assert plan(repo, [{"id": "claude-mover", "task": "Write src/bad.txt.", "agent": "claude"}],
                    "--start", budget=1.0).code == 0
        ran = engine(repo, "--until-idle", timeout=240)
        assert servers["claude"].main_requests(), "the real Claude Code took its scripted turn"
    assert ran.code == 1 and "claude-mover failed: its check failed" in ran.err, \
        "the engine returns once nothing can move, and says which piece did not land"
    assert_untouched(repo, before)
    [job] = jobs_of(repo, "claude-mover")
    assert job["state"] == "failed", (job, inbox_text(repo))
    assert "its check failed" in inbox_text(repo)
    assert git(repo, "show", "refs/heads/balanced/claude-mover:src/bad.txt") == "BAD"
    worker_copy_moved(repo, "claude-mover")
    honest_piece_lands(repo)
