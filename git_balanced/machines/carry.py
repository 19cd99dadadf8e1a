"""An agent whose package has dependencies of its own (Pi), carried to a machine whose npm cannot reach its
registry: installed here with npm into a temporary prefix, for that machine's system and architecture, and the
installed tree (the package with its node_modules) copied over the SSH connection into `~/.local/lib/
node_modules` there, with its commands linked into `~/.local/bin`. `npm pack` of the package alone would leave
its dependencies behind.
"""

from __future__ import annotations

import json
import shutil
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from git_balanced import proc

if TYPE_CHECKING:
    from git_balanced.machines.transport import Transport

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


def bundle(spec: str, platform: list[str], dest: Path) -> tuple[Path, str, dict[str, str]]:
    """Install `spec` here into a temporary prefix for that machine's `platform` and pack its installed tree into
    `dest`: the tarball, the package's name, and its commands ({command: path in the package})."""
    prefix = dest / "prefix"
    res = proc.run(["npm", "install", "-g", "--prefix", str(prefix), "--prefer-offline", "--no-audit", "--no-fund",
                    "--loglevel=error", *platform, spec], timeout=NPM_TIMEOUT)
    name = spec.rsplit("@", 1)[0]
    top = prefix / "lib" / "node_modules" / name
    if not res.ok or not (top / "package.json").is_file():
        words = (res.err.strip() or res.out.strip()).splitlines()
        raise CarryFailed(f"`npm install -g {spec}` into a folder here failed: {' '.join(words[-3:])[-300:]}")
    meta = json.loads((top / "package.json").read_text())
    bins = meta.get("bin") or {}
    if isinstance(bins, str):  # a lone command named after the package
        bins = {name.rsplit("/", 1)[-1]: bins}
    tree = dest / (name.replace("@", "").replace("/", "-") + "-tree.tgz")
    with tarfile.open(tree, "w:gz", compresslevel=1) as tar:  # a few times smaller, at little cost here
        tar.add(str(top), arcname="package")
    return tree, name, {str(k): str(v) for k, v in bins.items()}


def carry(t: Transport, spec: str, platform: list[str], send: Callable[[Path], str]) -> None:
    """Install `spec` here for that machine's `platform` (platform_args), copy its tree there with `send` (a path
    here -> its path there) and unpack it into ~/.local there."""
    with tempfile.TemporaryDirectory(prefix="balanced-tree-") as tmp:
        tree, name, bins = bundle(spec, platform, Path(tmp))
        there = send(tree)
        shutil.rmtree(Path(tmp) / "prefix", ignore_errors=True)
    res = t.run_python(UNPACK_TREE, [], input=json.dumps({"tree": there, "name": name, "bin": bins}), timeout=300)
    if not res.ok:
        words = (res.err.strip() or res.out.strip()).splitlines()
        raise CarryFailed(f"unpacking {name} there failed: {' '.join(words[-3:])[-300:]}")
