"""The cache of carried trees: a package with dependencies of its own is installed here with the real npm
once per version and platform, packed, and kept for the next machine. The package is a tiny one made here
with a dependency of its own (npm installs both from their tarballs, offline), so every run installs and packs
anew, whatever the cache of the real agents' trees holds."""

from __future__ import annotations

import io
import json
import os
import tarfile
from pathlib import Path

import pytest

from git_balanced.machines.prepare import carry

PLATFORM = ["--os=linux", "--cpu=x64"]


def _packed(where: Path, manifest: dict[str, object], files: dict[str, str]) -> Path:
    """A package tarball as `npm pack` makes one (its files under `package/`), of `manifest` and `files`."""
    where.mkdir(parents=True, exist_ok=True)
    tarball = where / f"{str(manifest['name']).replace('@', '').replace('/', '-')}-{manifest['version']}.tgz"
    with tarfile.open(tarball, "w:gz") as tar:
        for name, text in {"package.json": json.dumps(manifest), **files}.items():
            data = text.encode()
            info = tarfile.TarInfo(f"package/{name}")
            info.size, info.mode = len(data), 0o755 if name.startswith("bin/") else 0o644
            tar.addfile(info, io.BytesIO(data))
    return tarball


def _tiny(tmp: Path, version: str) -> str:
    """The tarball of `@balanced-test/tiny` at `version`, whose command prints what its dependency exports."""
    dep = _packed(tmp, {"name": "tiny-dep", "version": "1.0.0", "main": "index.js"},
                  {"index.js": 'module.exports = "from the dependency";\n'})
    return str(_packed(tmp, {
        "name": "@balanced-test/tiny", "version": version, "bin": {"tiny": "bin/tiny.js"},
        "dependencies": {"tiny-dep": f"file:{dep}"}},
        {"bin/tiny.js": '#!/usr/bin/env node\nconsole.log(require("tiny-dep"));\n'}))


def test_a_tree_is_installed_and_packed_once_then_served_from_the_cache(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    spec = _tiny(tmp_path, "2.0.0")
    tree, bins, from_cache = carry.tree_for(spec, "@balanced-test/tiny", "2.0.0", PLATFORM)
    assert not from_cache and bins == {"tiny": "bin/tiny.js"}
    assert tree == carry.cache_dir() / "balanced-test-tiny-2.0.0-linux-x64.tgz"
    assert str(carry.cache_dir()).startswith(os.environ["XDG_CACHE_HOME"]), "under the XDG cache folder"
    with tarfile.open(tree) as tar:
        names = set(tar.getnames())
    assert {"package/package.json", "package/bin/tiny.js", "package/node_modules/tiny-dep/index.js"} <= names, \
        "the package goes with the dependencies npm installed into it"
    assert not [p for p in carry.cache_dir().iterdir() if p.name.startswith(".")], "no install folder is left"

    # The next machine of that platform: no npm is run at all (none can be found now).
    monkeypatch.setenv("PATH", str(tmp_path / "no-npm"))
    again, bins, from_cache = carry.tree_for(spec, "@balanced-test/tiny", "2.0.0", PLATFORM)
    assert from_cache and again == tree and bins == {"tiny": "bin/tiny.js"}
    # Another platform is another tree: installing it would need npm, and says so.
    with pytest.raises(carry.CarryFailed, match="npm install -g"):
        carry.tree_for(spec, "@balanced-test/tiny", "2.0.0", ["--os=linux", "--cpu=arm64"])


def test_a_new_version_replaces_the_old_ones_tree_and_a_tree_without_its_record_is_made_again(
        tmp_path: Path) -> None:
    old = carry.tree_for(_tiny(tmp_path, "2.0.0"), "@balanced-test/tiny", "2.0.0", PLATFORM)[0]
    new, _, from_cache = carry.tree_for(_tiny(tmp_path, "2.1.0"), "@balanced-test/tiny", "2.1.0", PLATFORM)
    assert not from_cache and new.is_file()
    assert not old.exists() and not old.with_suffix(".json").exists(), "the old version's tree is gone"

    # A record is written after its tarball: a tarball without one (a run killed in between) is not trusted.
    new.with_suffix(".json").unlink()
    assert carry.cached("@balanced-test/tiny", "2.1.0", PLATFORM) is None
    again, _, from_cache = carry.tree_for(_tiny(tmp_path, "2.1.0"), "@balanced-test/tiny", "2.1.0", PLATFORM)
    assert not from_cache and again == new and new.with_suffix(".json").is_file()


def test_a_cache_folder_that_cannot_be_written_is_named_with_what_to_do(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache's folder would go\n")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    with pytest.raises(carry.CarryFailed) as err:
        carry.tree_for(_tiny(tmp_path, "2.0.0"), "@balanced-test/tiny", "2.0.0", PLATFORM)
    assert f"the cache of carried trees, {blocked}/git-balanced/trees, cannot be written" in str(err.value)
    assert "set XDG_CACHE_HOME to a folder you can write" in str(err.value)
