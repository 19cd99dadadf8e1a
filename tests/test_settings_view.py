"""Committed settings checked once by the models, then read back from `.git/balanced/cache/settings/` without
them: the same keys and values, the same refusals, and no pydantic in a process that finds them kept."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from git_balanced.errors import SettingsError
from git_balanced.git import Repo
from git_balanced.lead import settings_at
from git_balanced.settings import SETTINGS_PATH, load_settings_text, plain
from tests.support.builders import commit, make_repo
from tests.support.cli import forget_process_state

TEXT = """[worktree]
check = "python3 -m unittest"
protect = ["tests/**"]
check_timeout = "30m"

[balanced]
agent = "codex"
cap = 4

[agents.codex]
models = ["small", "large"]
"""


def kept(repo: Repo) -> list[Path]:
    return sorted((repo.state_dir / "cache" / "settings").glob("*.json"))


def test_a_kept_read_has_the_models_keys_values_and_ladder(tmp_path: Path) -> None:
    repo = Repo.discover(make_repo(tmp_path / "r", {SETTINGS_PATH: TEXT}))
    model = load_settings_text(TEXT, "x")
    first = settings_at(repo, "main")  # checked by the models, and kept
    assert len(kept(repo)) == 1
    forget_process_state()
    again = settings_at(repo, "main")  # read back from the cache
    for view in (first, again):
        assert plain(model) == json.loads(kept(repo)[0].read_text())
        assert view.worktree.check == "python3 -m unittest" and view.worktree.check_timeout == 1800
        assert view.worktree.protect == ("tests/**",) and view.balanced.cap == 4
        assert view.balanced.model is None and view.landing.max_file_mb == 10
        assert view.ladder() == model.ladder() == ("small", "large")
        assert view.ladder("claude") == model.ladder("claude") == ("haiku", "sonnet", "opus")
        assert view.stronger_model("small") == "large" and view.stronger_model("large") is None
        assert view.agents.model_fields_set == model.agents.model_fields_set == {"codex"}
        assert view.agents.shell is None
    off = again.model_copy(update={"pr": again.pr.model_copy(update={"fix": True})})
    assert off.pr.fix is True and again.pr.fix is False and off.balanced.cap == 4
    assert off.pr.model_fields_set == {"fix"}
    with pytest.raises(AttributeError):
        again.balanced.cap = 5  # type: ignore[misc]
    with pytest.raises(AttributeError):
        _ = again.balanced.no_such_key


def test_a_changed_file_is_checked_again_and_a_bad_one_refused_as_before(tmp_path: Path) -> None:
    path = make_repo(tmp_path / "r", {SETTINGS_PATH: TEXT})
    repo = Repo.discover(path)
    assert settings_at(repo, "main").balanced.cap == 4
    commit(path, {SETTINGS_PATH: "[balanced]\ncap = 0\n"}, "no workers")
    forget_process_state()
    with pytest.raises(SettingsError) as got:
        settings_at(repo, "main")
    with pytest.raises(SettingsError) as direct:
        load_settings_text("[balanced]\ncap = 0\n", f"{SETTINGS_PATH} at main")
    assert got.value.message == direct.value.message and "cap" in got.value.message
    assert len(kept(repo)) == 1, "a refused file is not kept"


def test_a_kept_read_imports_no_pydantic(tmp_path: Path) -> None:
    path = make_repo(tmp_path / "r", {SETTINGS_PATH: TEXT})
    settings_at(Repo.discover(path), "main")
    code = ("import sys; from git_balanced.git import Repo; from git_balanced.lead import settings_at; "
            "s = settings_at(Repo.discover('.'), 'main'); "
            "print(s.balanced.cap, 'pydantic' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=path, capture_output=True, text=True, check=True).stdout
    assert out.split() == ["4", "False"]
