"""A scripted forge for the tests of this folder (one server per module), and a lead's repository whose
remote is the forge's bare repository."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support import forge as forge_mod
from tests.support.builders import commit, git, make_remote, make_repo
from tests.support.cli import balanced

SETTINGS = ('[worktree]\ncheck = "test ! -e broken.txt"\n[balanced]\nagent = "shell"\n'
            '[pr]\nrepository = "ada/widgets"\n')


@pytest.fixture(scope="module")
def forge_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[forge_mod.Forge]:
    """One forge for the module; `project` points it at each test's own bare remote."""
    bare = tmp_path_factory.mktemp("forge") / "widgets.git"
    forge, server = forge_mod.start(bare, "ada/widgets")
    yield forge
    server.shutdown()
    server.server_close()


@dataclass
class Project:
    repo: Path
    bare: Path
    forge: forge_mod.Forge


@pytest.fixture
def project(tmp_path: Path, forge_server: forge_mod.Forge, monkeypatch: pytest.MonkeyPatch) -> Project:
    """A lead's branch `feature` (upstream origin/main) with one commit the remote lacks; the forge over its
    remote, the token and the API base in the environment."""
    repo = make_repo(tmp_path / "lead", {"README.md": "sample\n", ".magnum/settings.toml": SETTINGS})
    bare = make_remote(tmp_path, repo)
    forge_server.reset(bare)
    git(repo, "switch", "-q", "-c", "feature")
    git(repo, "branch", "--set-upstream-to=origin/main")
    commit(repo, {"widget.py": "def widget():\n    return 1\n"}, "Add the widget")
    monkeypatch.setenv("GITHUB_API_URL", forge_server.url)
    monkeypatch.setenv("GH_TOKEN", forge_mod.TOKEN)
    assert balanced(repo, "allow", "--yes").code == 0
    return Project(repo, bare, forge_server)
