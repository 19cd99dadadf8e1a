"""`check`, its cache in notes, and trust in front of it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.builders import commit, git, make_repo
from tests.support.cli import balanced

CHECK = 'test -f ok.txt && echo checked >> "$HOME/check-runs"'


def _project(tmp: Path, check: str = CHECK, setup: str | None = None) -> Path:
    settings = "[worktree]\n"
    if setup:
        settings += f"setup = {json.dumps(setup)}\n"
    settings += f"check = {json.dumps(check)}\n"
    return make_repo(tmp / "proj", {"ok.txt": "fine\n", ".magnum/settings.toml": settings})


def _runs(home: Path) -> int:
    p = home / "check-runs"
    return len(p.read_text().splitlines()) if p.exists() else 0


def test_check_refuses_until_allowed(tmp_path: Path, sealed: Path) -> None:
    repo = _project(tmp_path)
    r = balanced(repo, "check")
    assert r.code == 1, r
    assert "not approved yet" in r.err and "git balanced allow" in r.err
    assert "Traceback" not in r.err
    assert _runs(sealed) == 0, "nothing ran before the approval"


def test_check_runs_once_per_tree(tmp_path: Path, sealed: Path) -> None:
    repo = _project(tmp_path)
    assert balanced(repo, "allow", "--yes").code == 0
    r = balanced(repo, "check")
    assert r.code == 0 and "Check passed" in r.out, r
    r2 = balanced(repo, "check")
    assert r2.code == 0 and "answered from its note" in r2.out, r2
    assert _runs(sealed) == 1, "the same tree and command is never checked twice"
    git(repo, "commit", "--allow-empty", "-q", "-m", "same tree")
    assert "answered from its note" in balanced(repo, "check").out, "the note is keyed by tree, not commit"
    note = git(repo, "notes", "--ref=balanced-checks", "show", git(repo, "rev-parse", "HEAD^{tree}"))
    rec = json.loads(note.splitlines()[0])
    assert rec["result"] == "pass" and rec["command"] == CHECK
    assert git(repo, "status", "--porcelain") == "", "the user's working tree is untouched"


def test_check_failure_exit_status_and_tail(tmp_path: Path, sealed: Path) -> None:
    repo = _project(tmp_path, check="echo broken-thing; exit 3")
    balanced(repo, "allow", "--yes")
    r = balanced(repo, "check", "--json")
    assert r.code == 3, "the exit status is the check's"
    data = json.loads(r.out)
    assert data["result"] == "fail" and "broken-thing" in data["tail"]


def test_changed_command_asks_again(tmp_path: Path, sealed: Path) -> None:
    repo = _project(tmp_path)
    balanced(repo, "allow", "--yes")
    commit(repo, {".magnum/settings.toml": '[worktree]\ncheck = "rm -rf ~"\n'}, "sneaky")
    r = balanced(repo, "check")
    assert r.code == 1 and "changed since you approved them" in r.err and "rm -rf ~" in r.err
    assert "changed since" in balanced(repo, "trust").out


def test_deny_then_allow(tmp_path: Path, sealed: Path) -> None:
    repo = _project(tmp_path)
    assert balanced(repo, "deny").code == 0
    r = balanced(repo, "check")
    assert r.code == 1 and "refused" in r.err
    data = json.loads(balanced(repo, "trust", "--json").out)
    assert data["state"] == "denied"
    trust_dir = sealed / ".local" / "state" / "git-balanced" / "trust"
    assert any(trust_dir.iterdir()), "the approval lives outside the repository"
    assert not list(repo.rglob("*trust*")), "nothing about trust is written in the repository"


def test_allow_without_terminal_says_how(tmp_path: Path) -> None:
    repo = _project(tmp_path)
    r = balanced(repo, "allow")
    assert r.code == 1 and "allow --yes" in r.err


def test_setup_runs_once_per_scratch_worktree(tmp_path: Path, sealed: Path) -> None:
    repo = _project(tmp_path, setup='echo s >> "$HOME/setup-runs"')
    balanced(repo, "allow", "--yes")
    assert balanced(repo, "check").code == 0
    commit(repo, {"b.txt": "b\n"})
    assert balanced(repo, "check").code == 0
    assert (sealed / "setup-runs").read_text().count("s") == 1, "setup ran once for the scratch worktree"


def test_check_bad_rev_and_no_check(tmp_path: Path) -> None:
    repo = _project(tmp_path)
    balanced(repo, "allow", "--yes")
    r = balanced(repo, "check", "nope")
    assert r.code == 1 and "'nope' names no commit" in r.err
    bare = make_repo(tmp_path / "plain")
    r = balanced(bare, "check")
    assert r.code == 1 and "no check command" in r.err


def test_not_a_repository(tmp_path: Path) -> None:
    r = balanced(tmp_path, "check")
    assert r.code == 1 and "not inside a git repository" in r.err and "hint:" in r.err


def test_scratch_worktree_recovers_after_a_crash(tmp_path: Path, sealed: Path) -> None:

    repo = _project(tmp_path)
    balanced(repo, "allow", "--yes")
    assert balanced(repo, "check").code == 0
    scratch = next((sealed / ".balanced" / "worktrees").glob("proj-*/scratch-check"))
    (scratch / ".git").unlink()  # a crash half-way through leaves a broken folder
    commit(repo, {"c.txt": "c\n"})
    assert balanced(repo, "check").code == 0, "a broken scratch worktree is rebuilt"


# A check (or setup) that hangs, and a child of it in a session of its own, which a process group kill misses.
HANGS = 'setsid sh -c \'echo $$ > "$HOME/escaped"; exec sleep 300\' & echo $$ > "$HOME/{name}"; wait'


def test_a_check_past_its_timeout_is_stopped_with_all_it_started(tmp_path: Path, sealed: Path) -> None:
    from tests.support.wait import gone, wait_until

    repo = _project(tmp_path, check=HANGS.format(name="check"))
    settings = (repo / ".magnum" / "settings.toml").read_text() + "check_timeout = 2\n"
    commit(repo, {".magnum/settings.toml": settings}, "a short check timeout")
    balanced(repo, "allow", "--yes")
    r = balanced(repo, "check", "--json")
    assert r.code == 124, r
    data = json.loads(r.out)
    assert data["result"] == "fail", "a check stopped at its timeout failed"
    assert data["tail"].endswith("the check ran past its 2 s timeout and was stopped"), data["tail"]
    pids = [int((sealed / name).read_text()) for name in ("check", "escaped")]
    wait_until(lambda: all(gone(p) for p in pids), 10, "the check, and what it started in a session of its own, "
               "to be ended")


def test_a_setup_past_its_timeout_is_stopped(tmp_path: Path, sealed: Path) -> None:
    from tests.support.wait import gone, wait_until

    repo = _project(tmp_path, setup=HANGS.format(name="setup"))
    settings = (repo / ".magnum" / "settings.toml").read_text().replace("[worktree]\n",
                                                                           '[worktree]\ncheck_timeout = "2s"\n')
    commit(repo, {".magnum/settings.toml": settings}, "a short timeout")
    balanced(repo, "allow", "--yes")
    r = balanced(repo, "check", "--json")
    assert r.code == 124, r
    tail = json.loads(r.out)["tail"]
    assert tail.startswith("setup failed:") and tail.endswith("the setup ran past its 2 s timeout and was stopped")
    escaped = int((sealed / "escaped").read_text())
    wait_until(lambda: gone(escaped), 10, "what setup started to be ended")
    assert _runs(sealed) == 0, "the check did not run after a setup that never ended"


def test_a_bad_check_timeout_names_the_file_and_key(tmp_path: Path) -> None:
    for value in ("0", '"soon"', "999999"):
        repo = _project(tmp_path / value.strip('"'))
        settings = (repo / ".magnum" / "settings.toml").read_text() + f"check_timeout = {value}\n"
        commit(repo, {".magnum/settings.toml": settings}, "a bad timeout")
        r = balanced(repo, "check")
        assert r.code == 1 and "Traceback" not in r.err, r
        assert ".magnum/settings.toml" in r.err and "`worktree.check_timeout`" in r.err, r.err
        assert 'or "90s", "30m", "2h"' in r.err, "it says what is allowed"


def test_what_a_passing_check_leaves_running_is_ended(tmp_path: Path, sealed: Path) -> None:
    from tests.support.wait import gone, wait_until

    daemon = ('setsid sh -c \'echo $$ > "$HOME/daemon"; exec sleep 300\' > /dev/null 2>&1 & '
              'while [ ! -s "$HOME/daemon" ]; do sleep 0.05; done; exit 0')
    repo = _project(tmp_path, check=daemon)
    balanced(repo, "allow", "--yes")
    assert balanced(repo, "check").code == 0
    pid = int((sealed / "daemon").read_text())
    wait_until(lambda: gone(pid), 10, "a server the check left behind to be ended with it")


def test_check_slots_put_the_copy_back_at_once_without_tripping_on_each_other(tmp_path: Path, sealed: Path) -> None:
    """Four check slots of a landing put the checks' copy back together (landing/checks.reset_copy). Two that
    both found its hooks folder missing once had the second remove, as a file, the folder the first had just
    made (IsADirectoryError, and `land` exited 3 about one run in four)."""
    import shutil
    import threading

    from git_balanced.git import Repo
    from git_balanced.landing import checks
    from git_balanced.machines.reach import workcopy

    repo = Repo.discover(make_repo(tmp_path / "proj"))
    copy = workcopy.ensure(repo, workcopy.CHECKS)
    hooks = workcopy.git_dir(copy) / "hooks"
    failed: list[BaseException] = []

    def slot(start: threading.Barrier) -> None:
        start.wait()
        try:
            checks.reset_copy(repo, copy, None)
        except BaseException as exc:  # the test names what any slot raised
            failed.append(exc)

    for _ in range(30):
        shutil.rmtree(hooks, ignore_errors=True)  # as a check's code may leave it
        start = threading.Barrier(4)
        slots = [threading.Thread(target=slot, args=(start,)) for _ in range(4)]
        for t in slots:
            t.start()
        for t in slots:
            t.join()
        assert not failed, f"a slot failed putting the copy back: {failed[0]!r}"
        assert hooks.is_dir() and not any(hooks.iterdir()), "an empty hooks folder, as the copy was made"


def test_the_whole_output_of_a_check_is_kept_bounded(tmp_path: Path, sealed: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from git_balanced.git import Repo
    from git_balanced.landing import checks

    repo = _project(tmp_path, check="seq 1 100; exit 3")
    assert balanced(repo, "allow", "--yes").code == 0
    r = balanced(repo, "check", "--json")
    assert r.code == 3, r
    data = json.loads(r.out)
    assert data["tail"].splitlines() == [str(n) for n in range(71, 101)], "the note keeps the last 30 lines"
    lead = Repo.discover(repo)
    whole = checks.kept_log(lead, data["tree"], "seq 1 100; exit 3")
    assert whole is not None and whole.splitlines() == [str(n) for n in range(1, 101)], "the log keeps them all"
    assert checks.kept_log(lead, data["tree"]) == whole, "found by its tree alone too"

    monkeypatch.setattr(checks, "LOG_BYTES", 50)
    monkeypatch.setattr(checks, "LOGS_KEPT", 2)
    for n in range(3):
        checks.keep_log(lead, f"{n:040x}", "c", "x" * 80 + f" end {n}")
    kept = sorted(p.name for p in (lead.state_dir / "check-logs").glob("*.log"))
    assert len(kept) == 2, kept
    cut = checks.kept_log(lead, f"{2:040x}", "c")
    assert cut is not None and cut.startswith("[... the start is cut") and cut.endswith(" end 2")
    assert len(cut.splitlines()[1]) == 50, "only the last LOG_BYTES are kept"
