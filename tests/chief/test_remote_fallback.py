"""What the chief says when `git balanced` in a project on an SSH machine (a real sshd) does not do as asked: git
balanced's own refusal there in its words, whatever they hold; an older one's refusal of an option, with what to
update; a call that runs past its time, with the command that runs it there; and a machine that cannot be
reached, said for its project while the chief reads on."""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest

from git_balanced.chief import remote
from git_balanced.chief.projects import add_project, project
from git_balanced.errors import BalancedError
from git_balanced.lead import open_lead
from tests.support.builders import make_repo
from tests.support.cli import balanced
from tests.support.remote_projects import install_there, owned_by, project_there
from tests.support.sshd import Machine, known_in, module_machine
from tests.support.wait import wait_until

pytestmark = pytest.mark.sshd


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Machine, Path]]:
    """One machine for the module, git balanced installed there in ~/.local/bin."""
    with module_machine(tmp_path_factory.mktemp("remote"), "box") as (m, config):
        install_there(m)
        owned_by(m, m.home / ".local")
        yield m, config


def _there(box: tuple[Machine, Path], sealed: Path, tmp_path: Path, name: str) -> Machine:
    """A repository `name` on the module's machine, added as the chief's project box:NAME in this test's HOME."""
    m, config = box
    known_in(config, sealed)
    project_there(tmp_path, m, name)
    owned_by(m, m.home / name)
    add_project(f"box:{name}")
    return m


def _refused(name: str, args: list[str], timeout: float = remote.TIMEOUT) -> BalancedError:
    with pytest.raises(BalancedError) as refused:
        remote.run_there(project(name), args, timeout=timeout)
    return refused.value


def test_a_refusal_there_is_said_in_its_own_words(box: tuple[Machine, Path], sealed: Path, tmp_path: Path) -> None:
    _there(box, sealed, tmp_path, "words")
    said = _refused("words", ["pass", "q not found"])
    assert (said.message, said.hint) == (
        "box:words: There is no question q not found.",
        "(on box) `git balanced inbox` shows the questions; their ids look like q7k2mx."), \
        "its words say `not found`: still git balanced's refusal, not a missing git balanced"
    older = _refused("words", ["board", "--since-when"])
    assert (older.message, older.hint) == ("box:words: No such option '--since-when'.",
                                           "(on box) the git balanced on box is older than this one: update it there.")


def test_a_call_past_its_time_says_so_with_the_command_that_runs_it_there(
        box: tuple[Machine, Path], sealed: Path, tmp_path: Path) -> None:
    _there(box, sealed, tmp_path, "slow")
    # A stamp there once its refs have settled (tochief.stamp is empty for a second after a write, and a call
    # since an empty stamp answers at once)
    stamps: list[str] = []
    wait_until(lambda: stamps.append(remote.read_json(project("slow"), ["chief", "held", "--since", ""])["stamp"])
               or stamps[-1] != "", 20, "a settled stamp on box")
    stamp = stamps[-1]
    args = ["chief", "held", "--json", "--since", stamp, "--wait", "8"]  # nothing changes there: it waits 8 s
    late = _refused("slow", args, timeout=2)
    assert late.message == f"box:slow: `git balanced {shlex.join(args)}` did not end within 2 s on box.", late
    assert late.hint is not None and late.hint.startswith("run it there to see where it waits: `ssh box ")
    ssh, host, there = shlex.split(late.hint.split("`")[1])
    assert (ssh, host) == ("ssh", "box")
    assert shlex.split(there) == ["cd", "slow", "&&", "PATH=$HOME/.local/bin:$PATH", "git", "balanced", *args], \
        "the very call, as the person's shell and the machine's read it"


def test_a_machine_that_cannot_be_reached_is_said_for_its_project(
        box: tuple[Machine, Path], sealed: Path, tmp_path: Path) -> None:
    m = _there(box, sealed, tmp_path, "gone")
    here = open_lead(str(make_repo(tmp_path / "here")))
    assert balanced(tmp_path, "projects", "add", str(here.repo.root)).code == 0
    m.cut()
    try:
        every = balanced(tmp_path, "now", "--all")
    finally:
        m.restart()
    assert every.code == 0, every.err
    lines = every.out.splitlines()
    assert any(line.startswith("gone (box:gone): not read: Machine box cannot be reached") for line in lines), \
        every.out
    assert f"here ({here.repo.root}): nothing waits on you" in lines, "the project here is read all the same"
