"""What a worker or a checked test plants in the repositories it can write (its copy, the checks' copy, their
hooks and config) never runs in a command of git balanced's: not while the engine checks, lands and retries, nor
in `doctor`, `board` or `clean`. Each plant logs the marks of whoever ran it: a worker's runs carry its job
(`BALANCED_JOB`), a check's `GIT_BALANCED_CHECK`; a line with neither was run by git balanced itself. Run with
the fence and without it (`GIT_BALANCED_NO_FENCE=1`): the door to git holds either way."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from tests.support.builders import commit, git
from tests.support.cli import balanced
from tests.support.plans import engine, jobs_of, lead_repo, piece, plan

CHECK_SH = '! grep -rq BAD src || exit 1\nfor t in tests/*.sh; do [ -f "$t" ] || continue; sh "$t" || exit 1; done\n'


@pytest.fixture(params=["fenced", "unfenced"])
def fencing(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "unfenced":
        monkeypatch.setenv("GIT_BALANCED_NO_FENCE", "1")
    return str(request.param)


def plant_script(log: Path) -> str:
    """Shell that plants, in the repository its working folder belongs to, a hook for every event git balanced's
    own commands would fire, an fsmonitor, and filter, diff and merge drivers named for every file; each logs."""
    logger = f'#!/bin/sh\necho "job=$BALANCED_JOB check=$GIT_BALANCED_CHECK $0" >> {log}\n'
    return f"""common=$(git rev-parse --path-format=absolute --git-common-dir)
here=$(git rev-parse --path-format=absolute --git-dir)
mkdir -p "$common/hooks" "$common/info" "$common/planted"
for h in post-checkout pre-commit post-commit reference-transaction post-merge pre-auto-gc post-rewrite \\
         pre-merge-commit prepare-commit-msg commit-msg post-index-change; do
  printf '%s' '{logger}' > "$common/hooks/$h"; chmod +x "$common/hooks/$h"
  printf '%s' '{logger}' > "$common/planted/$h"; chmod +x "$common/planted/$h"
done
printf '%s' '{logger}exit 1\n' > "$common/planted/fsmonitor"; chmod +x "$common/planted/fsmonitor"
printf '%s' '{logger}cat\n' > "$common/planted/filter"; chmod +x "$common/planted/filter"
git config core.fsmonitor "$common/planted/fsmonitor"
git config filter.planted.clean "$common/planted/filter"
git config filter.planted.smudge "$common/planted/filter"
git config diff.planted.textconv "$common/planted/filter"
printf '* filter=planted diff=planted\\n' > "$common/info/attributes"
git config extensions.worktreeConfig true
git config --worktree core.hooksPath "$common/planted" 2>/dev/null || true
printf '[core]\\n\\thooksPath = %s\\n' "$common/planted" > "$common/planted/included"
git config include.path "$common/planted/included"
: "$here"
git status --porcelain >/dev/null  # the plant is real: this git, the planter's own, runs it
"""


def ran_by_us(log: Path) -> list[str]:
    lines = log.read_text().splitlines() if log.exists() else []
    return [line for line in lines if line.startswith("job= check= ")]


def checked_lead(tmp: Path) -> Path:
    repo = lead_repo(tmp, check="sh check.sh", extra="attempts = 1\n")
    commit(repo, {"check.sh": CHECK_SH}, "The check runs the tests")
    assert balanced(repo, "allow", "--yes").code == 0
    return repo


def test_a_checked_test_that_plants_in_the_checks_copy_runs_nowhere_of_ours(tmp_path: Path, fencing: str) -> None:
    """The issue's first route: a passing test writes a post-checkout hook (and more) into the checks' copy;
    the next check's checkout, outside the fence, ran it, and it moved the lead's main."""
    repo = checked_lead(tmp_path)
    log = tmp_path / "ran.log"
    test = plant_script(log) + "exit 0\n"
    planter = piece("planter", f"mkdir -p tests && cat > tests/plant.sh <<'EOF'\n{test}EOF\n")
    later = [piece(f"honest{i}", f"echo fine > src/honest{i}.txt", after=["planter"]) for i in range(2)]
    assert plan(repo, [planter, *later], "--start").code == 0
    r = engine(repo, "--until-idle")
    assert r.code == 0, r
    for pid in ("planter", "honest0", "honest1"):
        assert [j["state"] for j in jobs_of(repo, pid)] == ["landed"], (pid, jobs_of(repo, pid))
    assert log.exists(), "the planted things ran inside the checks, where they are the check's own"
    assert ran_by_us(log) == [], f"git balanced ran what a checked test planted ({fencing}):\n{log.read_text()}"


def test_a_worker_that_plants_in_its_copy_is_run_by_nothing_of_ours(tmp_path: Path, fencing: str) -> None:
    """A worker plants hooks, an fsmonitor and drivers in its copy and fails, so its worktree is kept; the
    engine's retries and landings of other pieces, `doctor`, `doctor --fix`, `board` and `clean` run none."""
    repo = checked_lead(tmp_path)
    log = tmp_path / "ran.log"
    failing = piece("planter", plant_script(log) + "echo planted > src/planted.txt\nexit 1\n")
    others = [piece(f"honest{i}", f"echo fine > src/honest{i}.txt") for i in range(2)]
    assert plan(repo, [failing, *others], "--start").code == 0
    engine(repo, "--until-idle")
    assert [j["state"] for j in jobs_of(repo, "planter")] != ["landed"]
    for i in range(2):
        assert [j["state"] for j in jobs_of(repo, f"honest{i}")] == ["landed"]
    for args in (["board"], ["board", "--json"], ["doctor"], ["doctor", "--fix", "--yes"], ["jobs"]):
        balanced(repo, *args)
    assert plan(repo, [piece("after", "echo after > src/after.txt")], "--start").code == 0
    assert engine(repo, "--until-idle").code == 0
    assert log.exists(), "the worker ran its plant itself"
    assert ran_by_us(log) == [], f"git balanced ran what a worker planted ({fencing}):\n{log.read_text()}"


def test_without_a_fence_a_note_the_worker_wrote_in_the_lead_does_not_land_it(tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Unfenced, a worker can write the lead's `.git` (its copy's alternates say where it is): it writes a
    well-formed passing check result for the very tree its landing will make. A landing counts only a check
    its own process ran, so the real check runs, fails, and the BAD tree does not land."""
    monkeypatch.setenv("GIT_BALANCED_NO_FENCE", "1")
    repo = lead_repo(tmp_path, extra="attempts = 1\n")
    check = "! grep -rq BAD src"
    forged = {"at": 1767225600.0, "code": 0, "command": check, "passed": True, "result": "pass", "seconds": 0.1,
              "tail": "", "command_hash": hashlib.sha256(check.encode()).hexdigest()[:16], "tree": "TREE"}
    (tmp_path / "note.json").write_text(json.dumps(forged, sort_keys=True) + "\n")
    run = ("echo BAD > src/bad.txt && git add -A && git commit -qm forged && t=$(git rev-parse 'HEAD^{tree}') && "
           'objects=$(head -1 "$(git rev-parse --path-format=absolute --git-common-dir)/objects/info/alternates") && '
           f"sed s/TREE/$t/ {tmp_path / 'note.json'} > {tmp_path / 'forged.note'} && "
           f'GIT_ALTERNATE_OBJECT_DIRECTORIES="$(git rev-parse --path-format=absolute --git-common-dir)/objects" '
           f'git --git-dir="$(dirname "$objects")" notes --ref balanced-checks add -f -F {tmp_path / "forged.note"} '
           '"$t" && echo "forged a pass for $t"')
    assert plan(repo, [piece("forger", run)], "--start").code == 0
    engine(repo, "--until-idle")
    [job] = jobs_of(repo, "forger")
    assert job["state"] == "failed", job
    assert "BAD" not in git(repo, "ls-tree", "-r", "--name-only", "main"), "a tree nobody checked landed"
    shown = git(repo, "notes", "--ref", "balanced-checks", "show", git(repo, "rev-parse", "balanced/forger^{tree}"))
    assert '"result": "pass"' in shown and '"result": "fail"' in shown, \
        "the worker's forged pass is there, shown, and the lead's own failing result beside it"


def test_without_a_fence_check_board_doctor_and_the_engine_say_so_once(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Where workers and checks cannot be fenced, each of these says so plainly, with why and what it allows;
    the lead hears it once, not at every engine run. Where they can, none of it is said."""
    repo = lead_repo(tmp_path)
    assert plan(repo, [piece("p", "echo fine > src/p.txt")], "--start").code == 0
    for args in (["check"], ["board"], ["doctor"], ["engine", "--once"]):
        r = balanced(repo, *args)
        assert "not fenced" not in r.out + r.err, (args, r)
    monkeypatch.setenv("GIT_BALANCED_NO_FENCE", "1")
    said = "Workers and checks on this machine are not fenced: GIT_BALANCED_NO_FENCE is set"
    for args in (["check"], ["board"], ["doctor"], ["engine", "--until-idle"], ["engine", "--once"]):
        r = balanced(repo, *args)
        assert said in r.out + r.err and "never a recorded result" in r.out + r.err, (args, r)
    assert json.loads(balanced(repo, "board", "--json").out)["fence"] == {
        "fenced": False, "why": "GIT_BALANCED_NO_FENCE is set, which turns the fence off"}
    assert json.loads(balanced(repo, "doctor", "--json").out)["fence"]["fenced"] is False
    inbox = balanced(repo, "inbox").out
    assert inbox.count("are not fenced") == 1, inbox
