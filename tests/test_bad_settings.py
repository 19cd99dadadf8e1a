"""A table of `.magnum/settings.toml` files no one should write (docs/safety/inputs.md): `git balanced allow`
refuses each with exit 1 and one message naming the file and the key or line, never a traceback, and
records no approval; a command that could never run is never approved."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from git_balanced import trust
from git_balanced.errors import TrustError
from git_balanced.git import Repo
from tests.support.builders import make_repo
from tests.support.cli import balanced

DEEP = 3000

# (case id, the file's text, what the message must say besides the file's name)
CASES: list[tuple[str, str, str]] = [
    ("check-nul", '[worktree]\ncheck = "pytest\\u0000 -q"\n',
     "`worktree.check` is \"pytest\\u0000 -q\": it holds a NUL"),
    ("setup-nul", '[worktree]\nsetup = "\\u0000"\n', "`worktree.setup`"),
    ("check-200k", '[worktree]\ncheck = "' + "x" * 200_000 + '"\n', "it has 200,000 bytes, more than 65,536"),
    ("setup-70k-bytes", '[worktree]\nsetup = "' + "é" * 35_000 + '"\n', "`worktree.setup` is"),
    ("attempts-20-digits", "[balanced]\nattempts = 99999999999999999999\n",
     "`balanced.attempts` is 99999999999999999999, but it must be a whole number from 1 to 100"),
    ("attempts-101", "[balanced]\nattempts = 101\n", "`balanced.attempts` is 101"),
    ("cap-million", "[balanced]\ncap = 1000000\n", "`balanced.cap` is 1000000, but it must be a whole number of "
                                                   "running workers from 1 to 1,000"),
    ("check-slots-65", "[balanced]\ncheck_slots = 65\n", "`balanced.check_slots` is 65"),
    ("ask-timeout-huge", "[balanced]\nask_timeout = 1000000000\n", "from 1 to 604,800 (a week)"),
    ("lost-after-week", "[balanced]\nlost_after = 604801\n", "`balanced.lost_after` is 604801"),
    ("takeover-after-huge", "[balanced]\ntakeover_after = 9223372036854775807\n", "`balanced.takeover_after`"),
    ("model-nul", '[balanced]\nmodel = "son\\u0000net"\n', "`balanced.model` is \"son\\u0000net\": it holds a NUL"),
    ("model-newline", '[balanced]\nmodel = "a\\nb"\n', "it holds a control character (\\x0a); it is one line"),
    ("model-escape", '[balanced]\nmodel = "\\u001b[2J"\n', "control character (\\x1b)"),
    ("model-300", '[balanced]\nmodel = "' + "m" * 300 + '"\n', "it has 300 characters, more than 200"),
    ("ladder-51", "[agents.claude]\nmodels = [" + ", ".join(['"m"'] * 51) + "]\n",
     "`agents.claude.models` is"),
    ("ladder-item-nul", '[agents.claude]\nmodels = ["haiku", "\\u0000"]\n', "`agents.claude.models` item 2"),
    ("protect-nul", '[worktree]\nprotect = ["src/\\u0000"]\n', "`worktree.protect` item 1"),
    ("protect-1001", "[worktree]\nprotect = [" + ", ".join(['"a/**"'] * 1001) + "]\n",
     "a list of path globs (one line each, up to 1,000)"),
    ("arrays-deep", "x = " + "[" * DEEP + "]" * DEEP + "\n", "line 1 nests brackets more than 20 levels deep"),
    ("inline-tables-deep", "x = " + "{a = " * DEEP + "1" + "}" * DEEP + "\n", "more than 20 levels deep"),
    ("arrays-deep-line-3", '[worktree]\ncheck = "[[[["\nprotect = ' + "[" * 30 + "]" * 30 + "\n",
     "line 3 nests brackets"),
    ("dotted-key-deep", "a" + ".b" * 1000 + " = 1\n", "`a.b.b.b.b"),
    ("table-header-deep", "[a" + ".b" * 1000 + "]\nc = 1\n", "is nested more than 20 levels deep"),
]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "r")


@pytest.mark.parametrize(("text", "said"), [pytest.param(t, s, id=i) for i, t, s in CASES])
def test_a_bad_settings_file_is_refused_naming_the_file_and_the_key(repo: Path, text: str, said: str) -> None:
    path = repo / ".magnum" / "settings.toml"
    path.parent.mkdir()
    path.write_text(text, encoding="utf-8")
    ran = balanced(repo, "allow", "--yes")
    assert ran.code == 1, (ran.code, ran.err[-2000:])
    assert ran.err.startswith("error: ") and "Traceback" not in ran.err, ran.err[-2000:]
    assert str(path) in ran.err, f"the message names the file: {ran.err[:500]}"
    assert said in ran.err, f"{said!r} not in {ran.err[:1000]!r}"
    assert len(ran.err) < 4000, "a long value is cut, not echoed whole"
    state = Path(os.environ["XDG_STATE_HOME"]) / "git-balanced" / "trust"
    assert not state.exists() or not list(state.iterdir()), "no approval is recorded"


def test_settings_at_every_bound_are_taken(repo: Path) -> None:
    path = repo / ".magnum" / "settings.toml"
    path.parent.mkdir()
    path.write_text('[worktree]\ncheck = "printf \'\\u001b[1m\\t\'; ' + "x" * 65_000 + '"\n'
                    '[balanced]\nattempts = 100\ncap = 1000\ncheck_slots = 64\nask_timeout = 604800\n'
                    f'model = "{"m" * 200}"\n[agents.claude]\nmodels = [' + ", ".join(['"m"'] * 50) + "]\n")
    ran = balanced(repo, "allow", "--yes")
    assert ran.code == 0, ran.err[-2000:]


@pytest.mark.parametrize("check", ["pytest\0 -q", "x" * 131_072], ids=["nul", "128k"])
def test_allow_never_records_a_command_that_could_never_run(repo: Path, check: str) -> None:
    """Settings refuse these when read; an approval asked for them directly is refused all the same."""
    cmds = trust.Commands(setup=None, check=check)
    with pytest.raises(TrustError) as info:
        trust.allow(Repo.discover(repo), cmds)
    assert info.value.message.startswith("The check command in .magnum/settings.toml can never run: it ")
    assert trust.status(Repo.discover(repo), cmds) == "unknown", "nothing recorded"
