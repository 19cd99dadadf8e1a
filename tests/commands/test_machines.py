"""`machines`, `machines add/rm`, `tick`/`untick`, and placement over them: real SSH configs, real sshd."""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytest_mock import MockerFixture

from git_balanced.git import Repo
from git_balanced.lead import Lead
from git_balanced.machines.inventory import records as inventory
from git_balanced.machines.placing.where import Want, place
from git_balanced.machines.reach import probe
from tests.support.builders import make_repo
from tests.support.cli import balanced
from tests.support.sshd import Machines, sshd_machines


@pytest.fixture
def machines(tmp_path: Path) -> Iterator[Machines]:
    with sshd_machines(tmp_path, ["alpha", "beta"]) as ms:
        yield ms


def _rows(repo: Path) -> dict[str, dict]:
    ran = balanced(repo, "machines", "--json")
    assert ran.code == 0, ran.err
    return {r["name"]: r for r in json.loads(ran.out)}


@pytest.mark.sshd
def test_inventory_reads_the_ssh_config_through_include(machines: Machines, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "proj")
    rows = _rows(repo)
    assert list(rows) == ["local", "beta", "alpha"], "local first, then the config's hosts (Include first)"
    assert rows["local"]["ticked"] and rows["local"]["ready"], "the first time only local is ticked"
    for m in machines:
        r = rows[m.name]
        assert not r["added"] and r["address"] == f"{m.user}@127.0.0.1:{m.port}", r
    # `tick` adds a host of the SSH config and ticks it, here only.
    ran = balanced(repo, "tick", "beta")
    assert ran.code == 0 and "Added beta from your SSH config" in ran.out and "git balanced ready beta" in ran.out
    rows = _rows(repo)
    assert rows["beta"]["added"] and rows["beta"]["ticked"] and not rows["beta"]["ready"]
    assert rows["beta"]["why_not"] == "`git balanced ready` has not run"
    assert not rows["alpha"]["added"]
    words = balanced(repo, "machines").out
    assert "beta     yes     no" in words and "(not added)" in words, words
    other = make_repo(tmp_path / "other")
    assert _rows(other)["beta"]["added"] and not _rows(other)["beta"]["ticked"], "ticks are per repository"


def test_add_rm_preference_and_ticks(sealed: Path, tmp_path: Path) -> None:
    (sealed / ".ssh").mkdir()
    (sealed / ".ssh" / "config").write_text("Host box\n  HostName 10.1.2.3\n  User ci\n  Port 2222\n")
    repo = make_repo(tmp_path / "proj")
    ran = balanced(repo, "machines", "add", "build", "--host", "box", "--preference", "prefer")
    assert ran.code == 0 and "Added build (ci@10.1.2.3:2222, prefer)" in ran.out, ran
    saved = json.loads((sealed / ".config" / "git-balanced" / "machines.json").read_text())
    assert saved["machines"]["build"] == {"host": "box", "preference": "prefer"}, "kept per user"
    rows = _rows(repo)
    assert rows["build"]["preference"] == "prefer" and "box" not in rows, "an added host is not offered again"
    assert balanced(repo, "tick", "build").code == 0
    assert _rows(repo)["build"]["ticked"]
    assert balanced(repo, "untick", "local").code == 0
    assert not _rows(repo)["local"]["ticked"]
    ran = balanced(repo, "tick", "nowhere")
    assert ran.code == 1 and "No machine named nowhere" in ran.err and "machines add" in ran.err
    ran = balanced(repo, "machines", "rm", "build")
    assert ran.code == 0 and "Removed build" in ran.out
    assert "build" not in _rows(repo) and "box" in _rows(repo)
    ran = balanced(repo, "machines", "rm", "build")
    assert ran.code == 1 and "no added machine named 'build'" in ran.err and "Traceback" not in ran.err
    ran = balanced(repo, "machines", "add", "local", "--host", "box")
    assert ran.code == 1 and "`local` is this machine: it has no --host" in ran.err, ran
    assert "`git balanced machines add local --preference normal` sets its preference" in ran.err, ran.err
    ran = balanced(repo, "machines", "add", "local", "--preference", "manual-only")
    assert ran.code == 0 and "it only coordinates" in ran.out, ran
    assert _rows(repo)["local"]["preference"] == "manual-only"
    # Outside a repository the list still works; ticks and readiness are simply not known there.
    outside = balanced(tmp_path, "machines", "--json")
    assert outside.code == 0 and json.loads(outside.out)[0]["ticked"] is None


@pytest.mark.parametrize("args", [
    ["machines", "add", "--", "-oProxyCommand=touch {marker}"],
    ["machines", "add", "ok", "--host", "-oProxyCommand=touch {marker}"],
    ["machines", "add", "ok", "--host", "a b;touch {marker}"],
    ["machines", "add", "bad;touch {marker}", "--host", "box"],
    ["machines", "add", "evil"],
    ["tick", "evil"],
])
def test_strange_host_names_are_refused_and_nothing_runs(sealed: Path, tmp_path: Path, args: list[str]) -> None:
    marker = tmp_path / "pwned"
    (sealed / ".ssh").mkdir()
    (sealed / ".ssh" / "config").write_text(
        f"Host box\n  HostName 10.0.0.1\nHost evil\n  HostName $(touch${{IFS}}{marker})\n"
        f"  User `touch${{IFS}}{marker}`\n")
    repo = make_repo(tmp_path / "proj")
    ran = balanced(repo, *[a.format(marker=marker) for a in args])
    assert ran.code in (1, 2), ran
    assert "Traceback" not in ran.err and ("Refusing" in ran.err or "machine name" in ran.err or
                                          "No machine named" in ran.err), ran.err
    assert not marker.exists(), "nothing of the name was run"
    assert not (sealed / ".config" / "git-balanced" / "machines.json").exists() or \
        "evil" not in (sealed / ".config" / "git-balanced" / "machines.json").read_text()
    rows = _rows(repo)
    assert "refused" in balanced(repo, "machines").out and rows["evil"]["address"] == ""
    assert not marker.exists()




@pytest.mark.sshd
def test_a_probe_that_times_out_keeps_a_machine_out_for_30_seconds(
        machines: Machines, tmp_path: Path, mocker: MockerFixture) -> None:
    repo_path = make_repo(tmp_path / "proj")
    repo = Repo.discover(repo_path)
    lead = Lead(repo, "main")
    for m in machines:
        inventory.add(m.name, None, "normal")
        inventory.set_readiness(repo, m.name, {"ready": True})
    inventory.set_ticks(repo, ["alpha", "beta"], True)
    assert {s.name: s.reachable for s in place(lead, [], reserve=0).seats} == \
        {"local": True, "alpha": True, "beta": True}
    mocker.patch.object(probe, "PROBE_TIMEOUT", 2.0)
    machines.by_name("alpha").freeze()  # its connection hangs: the command through it never answers
    for pid in machines.by_name("alpha").processes():  # and so does the connection open already
        os.kill(pid, signal.SIGSTOP)
    started = time.monotonic()
    placed = place(lead, [Want("shell")], reserve=0)
    assert time.monotonic() - started < 8, "the probe gives up after its timeout, not ssh's 10 s or more"
    alpha = next(s for s in placed.seats if s.name == "alpha")
    assert not alpha.reachable and "did not answer within 2 s" in alpha.why_not and "skipped until" in alpha.why_not
    p = placed.one
    assert p.machine in ("local", "beta") and "skipped alpha: it did not answer within 2 s" in p.why, p.why
    stored = json.loads((repo.state_dir / "unreachable.json").read_text())
    assert 28 < stored["alpha"]["until"] - time.time() <= 30, "kept per machine in .git/balanced/"
    started = time.monotonic()
    again = {s.name: s for s in place(lead, [], reserve=0).seats}
    assert time.monotonic() - started < 1.9, "within 30 seconds it is not asked again"
    assert json.loads((repo.state_dir / "unreachable.json").read_text()) == stored, "nor marked again"
    assert not again["alpha"].reachable and again["beta"].reachable
    for pid in machines.by_name("alpha").processes():
        os.kill(pid, signal.SIGCONT)
    machines.by_name("alpha").thaw()
