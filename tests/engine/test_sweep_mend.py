"""The sweeper under what could go wrong: a `git_balanced/` in the lead's checkout, an entry written through a
link or naming a path outside its folder, a full disk in its thread, a busy lock or a machine out of reach at gc."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import time
from pathlib import Path

import pytest

import git_balanced
from git_balanced import proc
from git_balanced.chief import there
from git_balanced.chief.projects import Project
from git_balanced.engine import sweep
from git_balanced.files import Flock
from git_balanced.lead import Lead, open_lead
from git_balanced.machines.reach import workcopy
from tests.support.cli import balanced
from tests.support.plans import lead_repo
from tests.support.wait import wait_until

JOB = "1m94b9tmp2hbkm9"


def _entry(jid: str = JOB, **over: str | None) -> sweep.Entry:
    return sweep.Entry({"id": jid, "machine": "local", "runner_key": jid, "branch": f"balanced/{jid}", **over})


def _plant(root: Path, module: str, marker: Path) -> None:
    """A `git_balanced` package in `root` whose `module` writes `marker` when it runs."""
    parts = module.split(".")
    for i in range(1, len(parts)):
        (root.joinpath(*parts[:i])).mkdir(exist_ok=True)
        (root.joinpath(*parts[:i]) / "__init__.py").write_text("")
    root.joinpath(*parts[:-1], parts[-1] + ".py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")


@pytest.fixture
def lead(tmp_path: Path) -> Lead:
    return open_lead(str(lead_repo(tmp_path, check=None)))


def test_the_hand_over_runs_this_package_not_one_in_the_checkout(lead: Lead, tmp_path: Path) -> None:
    marker = tmp_path / "planted-ran"
    _plant(lead.repo.root, "git_balanced.engine.sweep", marker)
    journal = sweep.Journal(lead)
    journal.add([_entry()])
    sweep.hand_over(lead)
    wait_until(lambda: not journal.ids() or marker.exists(), 30, "the sweeper process to end its work")
    assert not marker.exists(), "the checkout's git_balanced/ did not run"


def _ended(pid: int) -> bool:
    """Whether our child `pid` ended: reaped here, or already by subprocess's own clean-up of the Popen that
    spawn_detached let go of (then waitpid finds no such child)."""
    try:
        return os.waitpid(pid, os.WNOHANG)[0] == pid
    except ChildProcessError:
        return True


def test_our_processes_import_the_running_package_whatever_their_folder(tmp_path: Path) -> None:
    marker = tmp_path / "planted-ran"
    _plant(tmp_path, "git_balanced.front", marker)
    _plant(tmp_path, "git_balanced.cli", marker)
    log = tmp_path / "front.log"
    pid = proc.spawn_ours("git_balanced.front", ["--version"], cwd=tmp_path, log=log)
    wait_until(lambda: _ended(pid), 30, "git balanced --version to end")
    assert not marker.exists() and "git balanced" in log.read_text(), "the engine's starter runs ours"
    said = there.said(Project("p", None, str(tmp_path)), ["--version"])  # the chief, in a project's folder
    assert said.startswith("git balanced") and not marker.exists(), "the chief's runs in a project run ours"


def test_what_our_processes_start_inherits_the_pythonpath_it_was_given(tmp_path: Path) -> None:
    """The package's folder is put on the import path of our own process alone: a check or an agent it starts
    sees PYTHONPATH as the person set it (a pip install's site-packages would otherwise come first in it), while
    our process imports the running package, not the one its folder holds."""
    marker = tmp_path / "planted-ran"
    _plant(tmp_path, "git_balanced.proc", marker)
    out = tmp_path / "seen.json"
    code = ("import json, os, sys, git_balanced; from git_balanced import proc\n"
            f"json.dump([git_balanced.__file__, os.environ.get('PYTHONPATH')], open({str(out)!r}, 'w'))\n")
    script = tmp_path / "mod_seen.py"
    script.write_text(code)
    env = {**os.environ, "PYTHONPATH": f"/elsewhere{os.pathsep}{tmp_path}"}
    cp = subprocess.run(proc.ours("mod_seen"), cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert cp.returncode == 0, cp.stderr
    package, seen = json.loads(out.read_text())
    assert Path(package).parent == Path(git_balanced.__file__).parent, "the running package, not the folder's"
    assert seen == f"/elsewhere{os.pathsep}{tmp_path}" and not marker.exists(), seen


def test_an_entry_is_written_whole_and_never_through_a_link(lead: Lead, tmp_path: Path) -> None:
    journal = sweep.Journal(lead)
    journal.dir.mkdir()
    outside = tmp_path / "outside.txt"
    outside.write_text("mine\n")
    (journal.dir / JOB).symlink_to(outside)
    journal.add([_entry()])
    assert outside.read_text() == "mine\n", "the file the link names is untouched"
    assert not (journal.dir / JOB).is_symlink() and [e.id for e in journal.entries()] == [JOB]
    assert os.listdir(journal.dir) == [JOB], "no temporary file left, and none would be taken for a job"
    assert not sweep._ID.fullmatch(f".{JOB}.{os.getpid()}-0a1b2c3d.tmp")


@pytest.mark.parametrize("bad", [{"branch": ""}, {"branch": ".."}, {"branch": "balanced/../.."},
                                 {"branch": "balanced/.hidden"}, {"branch": "a//b"}, {"machine": "../x"},
                                 {"machine": ".."}, {"machine": "a/b"}, {"base": "../../x"}, {"base": "."},
                                 {"runner_key": "../x"}], ids=str)
def test_an_entry_naming_a_path_outside_its_folder_is_refused(lead: Lead, bad: dict[str, str]) -> None:
    kept = workcopy.for_branch(lead.repo, "balanced/other")  # a copy beside: the whole folder must stay
    kept.mkdir(parents=True)
    (kept / "HEAD").write_text("ref: refs/heads/balanced/other\n")
    journal = sweep.Journal(lead)
    journal.add([_entry(**bad)])
    assert sweep.Entry.read((journal.dir / JOB).read_text()) is None
    assert sweep.finish(lead) == 0 and journal.ids() == [], "crossed out as junk, never cleaned up after"
    assert (kept / "HEAD").is_file() and workcopy.path(lead.repo).is_dir(), "nothing outside is removed"


def test_a_full_disk_in_the_thread_leaves_it_ready_for_the_next_batch(lead: Lead, monkeypatch: pytest.MonkeyPatch,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sweep, "cleanup_many", lambda lead, jobs: None)
    s = sweep.Sweeper(lead)
    real = s.journal.cross_out

    def full(ids: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(s.journal, "cross_out", full)
    s.mark([_entry()])
    assert s.drain(10) is True, "the thread let go"
    assert "No space left on device" in capsys.readouterr().err, "and said why"
    assert s.journal.ids() == [JOB], "the job stays written down"
    monkeypatch.setattr(s.journal, "cross_out", real)
    s.mark([_entry("1m94b9tmp2hbkm8")])
    assert s.drain(10) is True and s.journal.ids() == [JOB], "the next mark started a thread that did its job"
    monkeypatch.setenv(sweep.WAIT_ENV, "1")
    began = time.monotonic()
    s.end()
    assert time.monotonic() - began < 10, "an ending engine that waits is not held for ever"


def test_gc_waits_for_no_sweeper_and_no_machine(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path, check=None)
    lead = open_lead(str(repo))
    journal = sweep.Journal(lead)
    journal.add([_entry()])
    with Flock(lead.repo.state_dir / sweep.LOCK):
        ran = balanced(repo, "gc")
        assert ran.code == 0 and "Another sweeper is cleaning up after landed workers" in ran.err, ran
        assert journal.ids() == [JOB], "left to the sweeper that holds the lock"
    journal.add([_entry("1m94b9tmp2hbkm8", machine="far")])  # a machine never reached: no record, no address
    began = time.monotonic()
    ran = balanced(repo, "gc")
    assert ran.code == 0 and "1 landed worker on other machines go on in a process of its own" in ran.err, ran
    assert time.monotonic() - began < 30
    assert JOB not in journal.ids(), "this machine's cleanup done here"
    wait_until(lambda: not journal.ids(), 60, "the process of its own to cross out the far one")
