"""An agent whose package has dependencies of its own (Pi), carried to a machine whose npm cannot reach its
registry: installed here with npm into a temporary prefix, for that machine's system and architecture, and the
installed tree (the package with its node_modules) copied over the SSH connection into `~/.local/lib/
node_modules` there, with its commands linked into `~/.local/bin`. `npm pack` of the package alone would leave
its dependencies behind.

The packed tree is kept in the cache of carried trees (`~/.cache/git-balanced/trees`, by package, version and
platform), so the next machine of that platform gets it without another install here.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from git_balanced import proc
from git_balanced.files import write_json

if TYPE_CHECKING:
    from git_balanced.machines.reach.transport import Transport

NPM_TIMEOUT = 900.0

# Runs there: unpacks the tree sent (a tarball whose top folder is `package`) as ~/.local/lib/node_modules/
# <name>, replacing what was there, and links each command of its `bin` into ~/.local/bin.
UNPACK_TREE = r'''
import json, os, shutil, sys, tarfile
req = json.loads(sys.stdin.read())
prefix = os.path.join(os.path.expanduser("~"), ".local")
modules = os.path.join(prefix, "lib", "node_modules")
target = os.path.join(modules, *req["name"].split("/"))
part = target + ".balanced-part"
shutil.rmtree(part, ignore_errors=True)
os.makedirs(part)
base = os.path.realpath(part)
with tarfile.open(req["tree"]) as tar:
    for m in tar.getmembers():
        parts = m.name.split("/")
        if parts[0] != "package" or ".." in parts or m.name.startswith("/"):
            raise SystemExit("refused a path outside the package: " + m.name)
        if m.issym() and (m.linkname.startswith("/") or
                          not os.path.realpath(os.path.join(base, *parts[:-1], m.linkname)).startswith(base + os.sep)):
            raise SystemExit("refused a link outside the package: " + m.name)
    tar.extractall(part, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
shutil.rmtree(target, ignore_errors=True)
os.replace(os.path.join(part, "package"), target)
shutil.rmtree(part, ignore_errors=True)
bin_dir = os.path.join(prefix, "bin")
os.makedirs(bin_dir, exist_ok=True)
for cmd, rel in req["bin"].items():
    link = os.path.join(bin_dir, cmd)
    if os.path.lexists(link):
        os.remove(link)
    os.symlink(os.path.relpath(os.path.join(target, rel), bin_dir), link)
    os.chmod(os.path.join(target, rel), 0o755)
print(json.dumps({"ok": True}))
'''


class CarryFailed(Exception):
    """What went wrong carrying a tree, in words."""


def dependencies(spec: str) -> dict[str, str]:
    """The regular dependencies of the package `spec` (npm's cache serves what it holds)."""
    res = proc.run(["npm", "view", "--json", "--prefer-offline", spec, "dependencies"], timeout=120)
    try:
        found = json.loads(res.out or "{}") if res.ok else {}
    except ValueError:
        found = {}
    return found if isinstance(found, dict) else {}


def platform_args(system: str, arch: str, musl: bool) -> list[str]:
    """npm's words for installing for that machine: its system (`Linux`), npm's architecture (`x64`), C library."""
    os_name = {"Linux": "linux", "Darwin": "darwin"}.get(system, "linux")
    return [f"--os={os_name}", f"--cpu={arch}"] + (["--libc=musl"] if musl else [])


def cache_dir() -> Path:
    """The cache of carried trees: `$XDG_CACHE_HOME/git-balanced/trees` (`~/.cache/git-balanced/trees`)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "git-balanced" / "trees"


def _key(name: str, version: str, platform: list[str]) -> str:
    """`mariozechner-pi-coding-agent-0.73.1-linux-x64`: a cached tree's file name, without its suffix."""
    words = [name.replace("@", "").replace("/", "-"), version, *(a.split("=", 1)[-1] for a in platform)]
    return "-".join(re.sub(r"[^A-Za-z0-9._-]", "_", w) for w in words)


def cached(name: str, version: str, platform: list[str]) -> tuple[Path, dict[str, str]] | None:
    """The tree of `name` `version` for `platform` packed before, and its commands; None when there is none.
    Its record is written after its tarball, so a record means a whole tarball."""
    folder = cache_dir()
    key = _key(name, version, platform)
    tree = folder / f"{key}.tgz"
    try:
        bins = json.loads((folder / f"{key}.json").read_text())["bin"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(bins, dict) or not tree.is_file():
        return None
    return tree, {str(k): str(v) for k, v in bins.items()}


def tree_for(spec: str, name: str, version: str, platform: list[str]) -> tuple[Path, dict[str, str], bool]:
    """The packed tree of the package `name` at `version` (installed from `spec`) for that machine's `platform`:
    from the cache of carried trees, or installed and packed here now and kept there for the next machine.
    Returns the tarball, its commands and whether it came from the cache. The trees of other versions of the
    package are removed from the cache once a new one is kept."""
    found = cached(name, version, platform)
    if found is not None:
        return found[0], found[1], True
    folder = cache_dir()
    key = _key(name, version, platform)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=".balanced-tree-", dir=folder) as tmp:
            built, bins = bundle(spec, name, platform, Path(tmp))
            os.replace(built, folder / f"{key}.tgz")
        write_json(folder / f"{key}.json", {"name": name, "version": version, "platform": platform, "bin": bins})
    except OSError as exc:
        raise CarryFailed(f"the cache of carried trees, {folder}, cannot be written ({exc.strerror or exc}); "
                          "set XDG_CACHE_HOME to a folder you can write") from None
    for record in folder.glob("*.json"):  # a tree of another version of the same package is not wanted again
        try:
            old = json.loads(record.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(old, dict) and old.get("name") == name and old.get("version") != version:
            record.unlink(missing_ok=True)
            record.with_suffix(".tgz").unlink(missing_ok=True)
    return folder / f"{key}.tgz", bins, False


def bundle(spec: str, name: str, platform: list[str], dest: Path) -> tuple[Path, dict[str, str]]:
    """Install `spec` (the package `name`) here into a temporary prefix for that machine's `platform` and pack
    its installed tree into `dest`: the tarball, and the package's commands ({command: path in the package})."""
    prefix = dest / "prefix"
    res = proc.run(["npm", "install", "-g", "--prefix", str(prefix), "--prefer-offline", "--no-audit", "--no-fund",
                    "--loglevel=error", *platform, spec], timeout=NPM_TIMEOUT)
    top = prefix / "lib" / "node_modules" / name
    if not res.ok or not (top / "package.json").is_file():
        words = (res.err.strip() or res.out.strip()).splitlines()
        raise CarryFailed(f"`npm install -g {spec}` into a folder here failed: {' '.join(words[-3:])[-300:]}")
    meta = json.loads((top / "package.json").read_text())
    bins = meta.get("bin") or {}
    if isinstance(bins, str):  # a lone command named after the package
        bins = {name.rsplit("/", 1)[-1]: bins}
    tree = dest / "tree.tgz"  # named for the cache by tree_for
    with tarfile.open(tree, "w:gz", compresslevel=1) as tar:  # a few times smaller, at little cost here
        tar.add(str(top), arcname="package")
    shutil.rmtree(prefix, ignore_errors=True)
    return tree, {str(k): str(v) for k, v in bins.items()}


def carry(t: Transport, spec: str, name: str, version: str, platform: list[str],
          send: Callable[[Path], str]) -> bool:
    """Copy the tree of `spec` (the package `name` at `version`) for that machine's `platform` (platform_args)
    there with `send` (a path here -> its path there) and unpack it into ~/.local there. The tree comes from
    the cache of carried trees, or is installed here first (tree_for); True when it came from the cache."""
    tree, bins, from_cache = tree_for(spec, name, version, platform)
    there = send(tree)
    res = t.run_python(UNPACK_TREE, [], input=json.dumps({"tree": there, "name": name, "bin": bins}), timeout=300)
    if not res.ok:
        words = (res.err.strip() or res.out.strip()).splitlines()
        raise CarryFailed(f"unpacking {name} there failed: {' '.join(words[-3:])[-300:]}")
    return from_cache
