"""A scripted forge for the tests of this folder: one server per module, its bare remote made fresh."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support import forge as forge_mod


@pytest.fixture(scope="module")
def forge_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[forge_mod.Forge]:
    """One forge for the module, its remote a bare repository; tests reset it with `fresh_forge`."""
    bare = tmp_path_factory.mktemp("forge") / "widgets.git"
    forge, server = forge_mod.start(bare, "ada/widgets")
    yield forge
    server.shutdown()
    server.server_close()
