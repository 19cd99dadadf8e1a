"""`[balanced] placement` ("local", "single" with `machine`, "balanced") and `fallback`, with local and a real
sshd machine: where `plan` puts each piece, and the words that say which mode decided."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from git_balanced.git import Repo
from git_balanced.machines.inventory.records import set_readiness
from tests.support.builders import commit, make_repo
from tests.support.cli import balanced
from tests.support.sshd import Machine, known_in, module_machine

WORDS = 'placement = "{}" in .magnum/settings.toml'


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Machine, Path]]:
    with module_machine(tmp_path_factory.mktemp("modes"), "alpha") as found:
        yield found


@pytest.fixture
def alpha(box: tuple[Machine, Path], sealed: Path) -> Machine:
    """The module's machine, added in this test's private HOME, and ready."""
    m, config = box
    known_in(config, sealed)
    assert balanced(sealed, "machines", "add", "alpha").code == 0
    return m


def lead(tmp_path: Path, balanced_table: str, tick: list[str]) -> Path:
    repo = make_repo(tmp_path / "proj")
    commit(repo, {".magnum/settings.toml": f'[balanced]\nagent = "shell"\n{balanced_table}'}, "settings")
    set_readiness(Repo.discover(repo), "alpha", {"ready": True})  # as `ready` leaves it: placement reads this
    assert balanced(repo, "untick", "local", "alpha").code == 0
    if tick:
        assert balanced(repo, "tick", *tick).code == 0
    return repo


def placed(repo: Path, tmp_path: Path, n: int = 2) -> list[tuple[str | None, str]]:
    """Where `plan` puts `n` shell pieces that name no machine, and why."""
    (tmp_path / "plan.yaml").write_text(json.dumps({"task": "Place", "pieces": [
        {"id": f"p{i}", "task": f"Write f{i}", "agent": "shell", "run": f"echo {i} > f{i}.txt"} for i in range(n)]}))
    ran = balanced(repo, "plan", str(tmp_path / "plan.yaml"), "--wait", "--json")
    assert ran.code == 0, ran
    return [(p["placed"] or None, p["why"]) for p in json.loads(ran.out)["pieces"]]


@pytest.mark.sshd
def test_balanced_spreads_over_the_ticked_machines(alpha: Machine, tmp_path: Path) -> None:
    got = placed(lead(tmp_path, "", ["local", "alpha"]), tmp_path)
    assert sorted(m for m, _ in got) == ["alpha", "local"], got


@pytest.mark.sshd
def test_local_puts_every_piece_here_whatever_is_ticked(alpha: Machine, tmp_path: Path) -> None:
    got = placed(lead(tmp_path, 'placement = "local"\n', ["alpha"]), tmp_path)
    assert got == [("local", f"local: {WORDS.format('local')} (this machine only)")] * 2, got


@pytest.mark.sshd
def test_single_puts_every_piece_on_its_machine(alpha: Machine, tmp_path: Path) -> None:
    got = placed(lead(tmp_path, 'placement = "single"\nmachine = "alpha"\n', ["local"]), tmp_path)
    assert got == [("alpha", f"alpha: {WORDS.format('single')} names it")] * 2, got


@pytest.mark.sshd
def test_when_the_machine_is_down_fallback_decides(alpha: Machine, tmp_path: Path) -> None:
    single = 'placement = "single"\nmachine = "alpha"\n'
    alpha.cut()
    try:
        (m, why), = placed(lead(tmp_path / "a", single + "fallback = false\n", ["local"]), tmp_path, 1)
        assert m is None and why.startswith(f"{WORDS.format('single')} names alpha, but it cannot be reached ("), why
        assert why.endswith("; it waits for alpha (fallback = false)"), why
        (m, why), = placed(lead(tmp_path / "b", single + "fallback = true\n", []), tmp_path, 1)
        assert m == "local" and why.startswith(f"local: {WORDS.format('single')} names alpha, but it cannot be "), why
        assert why.endswith("; fallback = true puts it on this machine"), why
        # Balanced, with this machine unticked: the one ticked machine is down.
        (m, why), = placed(lead(tmp_path / "c", "fallback = false\n", ["alpha"]), tmp_path, 1)
        assert m is None and why.startswith("no ticked machine can take it now: alpha: it cannot be reached ("), why
        (m, why), = placed(lead(tmp_path / "d", "fallback = true\n", ["alpha"]), tmp_path, 1)
        assert m == "local" and why.startswith(f"local: {WORDS.format('balanced')} found no machine: no ticked "
                                               "machine can take it now: alpha: it cannot be reached ("), why
        assert why.endswith("; fallback = true puts it on this machine"), why
    finally:
        alpha.restart()
    (m, why), = placed(lead(tmp_path / "e", single + "fallback = true\n", []), tmp_path, 1)
    assert (m, why) == ("alpha", f"alpha: {WORDS.format('single')} names it"), "back: it goes there again"


@pytest.mark.parametrize(("table", "said"), [
    ('placement = "single"\n', '`balanced.machine` is not set, but placement = "single" needs it'),
    ('machine = "alpha"\n', '`balanced.machine` is "alpha", but it is read only with placement = "single", and '
                            'placement is "balanced".'),
    ('placement = "everywhere"\n', '`balanced.placement` is "everywhere", but it must be one of "local"'),
    ('fallback = "yes"\n', '`balanced.fallback` is "yes" (a string), but it must be true or false.'),
])
def test_bad_placement_settings_are_one_clear_message(table: str, said: str, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "proj")
    path = repo / ".magnum" / "settings.toml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(f"[balanced]\n{table}")
    ran = balanced(repo, "allow", "--yes")
    assert ran.code == 1 and "Traceback" not in ran.out + ran.err, ran
    assert f"{path}: {said}" in ran.err, ran.err


def test_a_piece_placed_here_by_the_settings_starts_here_unticked(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "proj")
    commit(repo, {".magnum/settings.toml": '[worktree]\ncheck = "true"\n\n[balanced]\nagent = "shell"\n'
                                           'placement = "local"\n'}, "settings")
    assert balanced(repo, "allow", "--yes").code == 0 and balanced(repo, "untick", "local").code == 0
    (m, why), = placed(repo, tmp_path, 1)
    assert (m, why) == ("local", f"local: {WORDS.format('local')} (this machine only)")
    assert balanced(repo, "start").code == 0
    ran = balanced(repo, "engine", "--until-idle")
    assert ran.code == 0, ran
    inbox = balanced(repo, "inbox").out
    assert "p0 goes to" not in inbox and "balanced/p0 landed in main" in inbox, inbox
