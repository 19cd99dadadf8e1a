"""What `ready` installs on an SSH machine when you say so: git, Node.js where an agent needs it, and the agent
CLIs at the versions of pins.py, into the user's prefix `~/.local` (no root needed).

git and Node.js come from the machine's package manager when `sudo -n` works there without a password; Node.js
otherwise from the npm registry's prebuilt `node-linux-<arch>` package, fetched here and unpacked into the
prefix; else the words name the exact command to run. The agents come from the machine's own npm
(`npm install -g --prefix ~/.local`); a machine whose npm cannot reach its registry gets the same packages
fetched here with `npm pack` and copied over the SSH connection, or, for a package with dependencies of its
own (Pi), the tree npm installs here (carry.py).
"""

from __future__ import annotations

import json
import shlex
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from git_balanced import proc
from git_balanced.machines.inventory import pins
from git_balanced.machines.prepare import carry
from git_balanced.machines.prepare.agents_probe import NAMES
from git_balanced.machines.reach.transport import Transport

PREFIX = "~/.local"  # npm's -g prefix there: the CLIs in ~/.local/bin, their packages in ~/.local/lib
PACKS = ".balanced/packs"  # under the home there: packages copied from here, removed once installed
NPM_TIMEOUT = 900.0
ARCH = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64", "armv7l": "armv7l",
        "ppc64le": "ppc64le", "s390x": "s390x"}
INSTALL_WORDS = {"apt-get": "apt-get install -y", "dnf": "dnf install -y", "yum": "yum install -y",
                 "zypper": "zypper --non-interactive install", "apk": "apk add", "pacman": "pacman -S --noconfirm"}
NODE_PACKAGES = ["nodejs", "npm"]  # the same names in each of those managers
# npm's words for a registry it could not reach (as opposed to a package it could not install).
_OFFLINE = ("ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "ETIMEDOUT", "ECONNRESET", "ENETUNREACH", "EHOSTUNREACH",
            "network request", "request to http")

# Runs there with python3 (stdlib only): what an install needs to know. The request comes on stdin.
FACTS = r'''
import glob, json, os, platform, shutil, subprocess, sys
req = json.loads(sys.stdin.read())
home = os.path.expanduser("~")
path = os.path.join(home, ".local", "bin") + os.pathsep + os.environ.get("PATH", os.defpath)
env = dict(os.environ, PATH=path)

def out(argv, timeout=30):
    try:
        p = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return p.stdout.decode("utf-8", "replace").strip() if p.returncode == 0 else None

node = shutil.which("node", path=path)
npm = shutil.which("npm", path=path)
ans = {"home": home, "arch": platform.machine(), "system": platform.system(),
       "musl": bool(glob.glob("/lib/ld-musl-*")), "git": bool(shutil.which("git", path=path)),
       "node": (out([node, "--version"]) or "").lstrip("v") or None if node else None,
       "npm": out([npm, "--version"]) if npm else None,
       "agents": {a: shutil.which(a, path=path) for a in req["agents"]},
       "sudo": bool(shutil.which("sudo", path=path)) and out(["sudo", "-n", "true"], 10) is not None,
       "pkg": next((m for m in req["managers"] if shutil.which(m, path=path)), None)}
if req.get("ping") and npm:
    ans["registry"] = out([npm, "ping", "--fetch-retries=0", "--fetch-timeout=20000"], 60) is not None
print(json.dumps(ans))
'''

# Runs there: writes the bytes on stdin to ~/<PACKS>/<name>, private to the user.
RECEIVE = r'''
import os, sys
folder = os.path.join(os.path.expanduser("~"), sys.argv[2])
os.makedirs(folder, mode=0o700, exist_ok=True)
path = os.path.join(folder, os.path.basename(sys.argv[1]))
with open(path + ".part", "wb") as fh:
    while True:
        chunk = sys.stdin.buffer.read(1 << 20)
        if not chunk:
            break
        fh.write(chunk)
os.replace(path + ".part", path)
print(path)
'''

# Runs there: unpacks the prebuilt Node.js package (its `bin/node`) into the prefix, and npm's own package
# when the machine has no npm, linked as npm and npx.
UNPACK_NODE = r'''
import json, os, shutil, sys, tarfile
req = json.loads(sys.stdin.read())
prefix = os.path.join(os.path.expanduser("~"), ".local")
bin_dir = os.path.join(prefix, "bin")
os.makedirs(bin_dir, exist_ok=True)
with tarfile.open(req["node"]) as tar:
    member = tar.getmember("package/bin/node")
    src = tar.extractfile(member)
    tmp = os.path.join(bin_dir, ".node.part")
    with open(tmp, "wb") as fh:
        shutil.copyfileobj(src, fh)
    os.chmod(tmp, 0o755)
    os.replace(tmp, os.path.join(bin_dir, "node"))
if req.get("npm"):
    target = os.path.join(prefix, "lib", "node_modules", "npm")
    shutil.rmtree(target, ignore_errors=True)
    with tarfile.open(req["npm"]) as tar:
        for m in tar.getmembers():
            parts = m.name.split("/", 1)
            if len(parts) < 2 or not (m.isfile() or m.isdir()) or ".." in parts[1].split("/"):
                continue
            dest = os.path.join(target, parts[1])
            if m.isdir():
                os.makedirs(dest, exist_ok=True)
                continue
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            with tar.extractfile(m) as src, open(dest, "wb") as fh:
                shutil.copyfileobj(src, fh)
            os.chmod(dest, 0o755 if m.mode & 0o111 else 0o644)
    for name, script in (("npm", "npm-cli.js"), ("npx", "npx-cli.js")):
        link = os.path.join(bin_dir, name)
        if os.path.lexists(link):
            os.remove(link)
        os.symlink(os.path.join("..", "lib", "node_modules", "npm", "bin", script), link)
print(json.dumps({"ok": True}))
'''


class CannotInstall(Exception):
    """What could not be installed there, and the command that would do it."""

    def __init__(self, why: str, hint: str = "") -> None:
        super().__init__(why)
        self.why, self.hint = why, hint


@dataclass
class Facts:
    """What a machine has, as FACTS found it."""

    raw: dict[str, Any]

    @property
    def agents(self) -> dict[str, str | None]:
        return dict(self.raw.get("agents") or {})

    @property
    def node(self) -> tuple[int, ...] | None:
        return version_tuple(self.raw.get("node"))

    @property
    def arch(self) -> str | None:
        return ARCH.get(str(self.raw.get("arch")))


def version_tuple(text: str | None) -> tuple[int, ...] | None:
    """`22.19.0` as (22, 19, 0); None for no version."""
    if not text:
        return None
    nums = []
    for part in text.strip().lstrip("v").split(".")[:3]:
        digits = "".join(c for c in part if c.isdigit())
        nums.append(int(digits or 0))
    return tuple(nums + [0] * (3 - len(nums)))


def dotted(v: tuple[int, ...]) -> str:
    return ".".join(str(n) for n in v)


def described(agents: list[str]) -> str:
    """`Claude Code 2.1.332 and Codex 0.171.0`."""
    words = [f"{NAMES.get(a, a)} {pins.AGENTS[a][1]}" for a in agents]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def facts(t: Transport, agents: list[str], *, ping: bool = False) -> Facts:
    """What the machine has for installing `agents` (with `ping`: whether its npm reaches its registry)."""
    req = {"agents": agents, "managers": list(INSTALL_WORDS), "ping": ping}
    res = t.run_python(FACTS, [], input=json.dumps(req), timeout=120)
    try:
        return Facts(json.loads(res.out.strip().splitlines()[-1]))
    except (ValueError, IndexError):
        raise CannotInstall(f"it did not say what it has: {(res.err or res.out).strip()[-300:]}",
                            f"try `ssh {t.name} python3 --version`") from None


def node_needed(f: Facts, agents: list[str], todo: list[str]) -> tuple[int, ...] | None:
    """The Node.js version to install there, or None when the one there will do. npm needs Node for any
    install; an agent that runs on Node needs its own minimum (Pi 22.19) whether it is new or already there."""
    runs_on_node = [a for a in agents if a in pins.NODE_NEEDED and (a in todo or a == "pi")]
    if not runs_on_node:
        return None
    need = max(pins.NODE_NEEDED[a] for a in runs_on_node)
    have = f.node
    if have is not None and have >= need and (f.raw.get("npm") or not todo):
        return None
    return need


def git_command(f: Facts) -> str:
    """The command that installs git there."""
    pkg = f.raw.get("pkg") or "apt-get"
    return f"sudo {INSTALL_WORDS[pkg]} git"


def install_git(t: Transport, f: Facts, say: Callable[[str], None]) -> str:
    """Install git with the package manager through `sudo -n`; the words of what was done."""
    pkg = f.raw.get("pkg")
    if not (f.raw.get("sudo") and pkg):
        raise CannotInstall("git is not installed there, and `sudo -n` does not work there to install it",
                            f"install it there: `ssh -t {t.name} {git_command(f)}`, then `git balanced ready`")
    say(f"{t.name}: installing git with {pkg}")
    res = _sudo_install(t, pkg, ["git"])
    if not res.ok:
        raise CannotInstall(f"`sudo {INSTALL_WORDS[pkg]} git` failed there: {_last(res)}",
                            f"install it there: `ssh -t {t.name} {git_command(f)}`")
    return f"git installed with {pkg}"


def _sudo_install(t: Transport, pkg: str, packages: list[str]) -> proc.Result:
    argv = ["sudo", "-n", *INSTALL_WORDS[pkg].split(), *packages]
    if pkg == "apt-get":  # its package lists may be old or absent on a fresh machine
        argv = ["sh", "-c", "sudo -n apt-get update -q >/dev/null 2>&1; exec \"$@\"", "sh", *argv]
    return t.run(argv, timeout=NPM_TIMEOUT)


def node_command(f: Facts) -> str:
    """The exact command that puts a Node.js new enough into ~/.local there."""
    v = pins.NODE_VERSION
    arch = f.arch or "x64"
    return (f"mkdir -p ~/.local && curl -fsSL https://nodejs.org/dist/v{v}/node-v{v}-linux-{arch}.tar.xz "
            f"| tar -xJ -C ~/.local --strip-components=1")


def install_node(t: Transport, f: Facts, need: tuple[int, ...], agents: list[str],
                 say: Callable[[str], None]) -> tuple[Facts, str]:
    """Put a Node.js of at least `need` (and npm) there; the machine's facts after, and words of what was done."""
    have = f.raw.get("node")
    why = f"Node.js {dotted(need)} or newer is needed there" + (f" (it has {have})" if have else " (it has none)")
    pkg = f.raw.get("pkg")
    if f.raw.get("sudo") and pkg:
        say(f"{t.name}: installing Node.js with {pkg}")
        if _sudo_install(t, pkg, NODE_PACKAGES).ok:
            after = facts(t, agents)
            after.raw.update({k: f.raw[k] for k in ("registry",) if k in f.raw})
            if after.node is not None and after.node >= need and after.raw.get("npm"):
                return after, f"Node.js {after.raw['node']} installed with {pkg}"
    arch = f.arch
    if f.raw.get("system") != "Linux" or arch is None or f.raw.get("musl") or shutil.which("npm") is None:
        raise CannotInstall(why, f"install it there: `ssh {t.name} {shlex.quote(node_command(f))}`, "
                                 f"then `git balanced ready`")
    specs = [f"node-linux-{arch}@{pins.NODE_VERSION}"] + ([] if f.raw.get("npm") else [f"npm@{pins.NPM_VERSION}"])
    say(f"{t.name}: installing Node.js {pins.NODE_VERSION} into {PREFIX} (node-linux-{arch}, fetched here)")
    with tempfile.TemporaryDirectory(prefix="balanced-pack-") as tmp:
        files = pack_here(specs, Path(tmp))
        sent = [send(t, p) for p in files]
    req = {"node": sent[0], "npm": sent[1] if len(sent) > 1 else None}
    res = t.run_python(UNPACK_NODE, [], input=json.dumps(req), timeout=300)
    _remove_packs(t)
    after = facts(t, agents)
    # Whether its npm reaches its registry was asked before: not asked again, to time out on a closed one.
    after.raw.update({k: f.raw[k] for k in ("registry",) if k in f.raw})
    if not res.ok or after.node is None or after.node < need:
        raise CannotInstall(f"{why}, and unpacking node-linux-{arch} there did not give it: {_last(res)}",
                            f"install it there: `ssh {t.name} {shlex.quote(node_command(f))}`")
    return after, f"Node.js {pins.NODE_VERSION} in {PREFIX}"


def pack_here(specs: list[str], dest: Path) -> list[Path]:
    """`npm pack` each spec here into `dest` (npm's cache serves what it holds); the tarballs, in order."""
    if shutil.which("npm") is None:
        raise CannotInstall("npm is not installed here, to fetch the packages for that machine",
                            "install Node.js and npm here, or give that machine a way to its npm registry")
    res = proc.run(["npm", "pack", "--json", "--prefer-offline", "--pack-destination", str(dest), *specs],
                   timeout=NPM_TIMEOUT)
    try:
        names = [str(x["filename"]) for x in json.loads(res.out)]
    except (ValueError, KeyError, TypeError):
        names = []
    if not res.ok or len(names) != len(specs):
        raise CannotInstall(f"`npm pack {' '.join(specs)}` failed here: {_last(res)}",
                            "check that this machine reaches its npm registry (`npm ping`)")
    # npm names a scoped package's tarball without its @ and with - for /.
    return [dest / n for n in names]


def send(t: Transport, path: Path) -> str:
    """Copy one file to ~/<PACKS>/ there over the SSH connection; its path there."""
    res = t.run_python(RECEIVE, [path.name, PACKS], input=path.read_bytes(), timeout=NPM_TIMEOUT)
    there = res.out.strip().splitlines()[-1] if res.ok and res.out.strip() else ""
    if not there:
        raise CannotInstall(f"copying {path.name} there failed: {_last(res)}", f"try `ssh {t.name} df -h ~`")
    return there


def _remove_packs(t: Transport) -> None:
    t.run(["sh", "-c", f'rm -rf "$HOME/{PACKS}"'], timeout=60)


def _npm(t: Transport, args: list[str]) -> proc.Result:
    """npm there, with ~/.local/bin first on its PATH (a Node.js installed there comes first)."""
    script = 'PATH="$HOME/.local/bin:$PATH"; export PATH; exec npm "$@"'
    return t.run(["sh", "-c", script, "sh", *args], timeout=NPM_TIMEOUT)


def install_agents(t: Transport, f: Facts, todo: list[str], say: Callable[[str], None]) -> str:
    """Install the agents of `todo` at their pinned versions into ~/.local there; words of how."""
    specs = [pins.spec(a) for a in todo]
    home = str(f.raw.get("home") or "~")
    prefix = f"{home}/.local"
    retired = [old for a in todo for old in pins.RETIRED.get(a, ())]
    if retired:  # an agent's package under its old name holds the binary the new one installs
        _npm(t, ["uninstall", "-g", "--prefix", prefix, "--offline", "--no-audit", "--no-fund", "--loglevel=error",
                 *retired])
    if f.raw.get("registry", True):
        say(f"{t.name}: installing {described(todo)} into {PREFIX} with npm")
        res = _npm(t, _install_args(prefix, specs, offline=False))
        if res.ok:
            return f"{described(todo)} installed into {PREFIX} from the npm registry"
        if not any(w in res.err + res.out for w in _OFFLINE):
            raise CannotInstall(f"`npm install -g {' '.join(specs)}` failed there: {_last(res)}",
                                f"see `ssh {t.name} npm install -g --prefix ~/.local {' '.join(specs)}`")
    say(f"{t.name}: its npm cannot reach its registry; fetching {described(todo)} here and copying it over")
    # A package with dependencies of its own (Pi) goes over as the tree npm installs here; the others packed.
    platform = carry.platform_args(str(f.raw.get("system")), f.arch or "x64", bool(f.raw.get("musl")))
    trees = [a for a in todo if carry.cached(*pins.AGENTS[a], platform) or carry.dependencies(pins.spec(a))]
    for a in trees:
        try:
            if carry.carry(t, pins.spec(a), *pins.AGENTS[a], platform, lambda p: send(t, p)):
                say(f"{t.name}: {described([a])} came from the cache of carried trees ({carry.cache_dir()})")
        except carry.CarryFailed as exc:
            raise CannotInstall(f"installing {described([a])} from the tree copied there failed: {exc}",
                                f"give {t.name} a way to its npm registry (`ssh {t.name} npm ping`)") from None
        finally:
            _remove_packs(t)
    packed = [a for a in todo if a not in trees]
    if packed:
        _install_packed(t, f, packed, prefix, home)
    return f"{described(todo)} installed into {PREFIX} (fetched here: its npm cannot reach its registry)"


def _install_packed(t: Transport, f: Facts, todo: list[str], prefix: str, home: str) -> None:
    """`npm pack` the agents of `todo` here (with their native binary's package), copy them over and install
    them there with its npm, offline."""
    wanted = packed_specs(todo, f)
    with tempfile.TemporaryDirectory(prefix="balanced-pack-") as tmp:
        files = pack_here([spec for spec, _ in wanted], Path(tmp))
        sent = [send(t, p) for p in files]
    # A native binary's package goes in under the name its agent asks for (Codex's is an alias).
    sources = [f"{name}@file:{path}" if name else path for (_, name), path in zip(wanted, sent, strict=True)]
    # Its own cache for these, removed with them: what was copied is not kept twice there.
    res = _npm(t, _install_args(prefix, sources, offline=True) + ["--cache", f"{home}/{PACKS}/npm-cache"])
    _remove_packs(t)
    if not res.ok:
        raise CannotInstall(f"installing {described(todo)} from the packages copied there failed: {_last(res)}",
                            f"give {t.name} a way to its npm registry (`ssh {t.name} npm ping`)")


def _install_args(prefix: str, sources: list[str], *, offline: bool) -> list[str]:
    return ["install", "-g", "--prefix", prefix, "--no-audit", "--no-fund", "--loglevel=error",
            "--offline" if offline else "--prefer-offline", *sources]


def packed_specs(agents: list[str], f: Facts) -> list[tuple[str, str | None]]:
    """What to fetch here for `agents` on that machine: each package, then the package of its native binary
    for that machine's architecture among its optional dependencies (`…-linux-x64`, `…-linux-arm64-musl`),
    with the name it is installed under."""
    arch = f.arch or "x64"
    system = {"Linux": "linux", "Darwin": "darwin"}.get(str(f.raw.get("system")), "linux")
    want = f"-{system}-{arch}" + ("-musl" if f.raw.get("musl") else "")
    out: list[tuple[str, str | None]] = []
    for a in agents:
        spec = pins.spec(a)
        out.append((spec, None))
        res = proc.run(["npm", "view", "--json", "--prefer-offline", spec, "optionalDependencies"], timeout=120)
        try:
            optional = json.loads(res.out or "{}") if res.ok else {}
        except ValueError:
            optional = {}
        for name, wanted in (optional or {}).items():
            if name.endswith(want):
                out.append((wanted[4:] if str(wanted).startswith("npm:") else f"{name}@{wanted}", name))
    return out


def _last(res: proc.Result) -> str:
    text = (res.err.strip() or res.out.strip()).splitlines()
    return " ".join(text[-3:])[-400:] if text else f"exit {res.code}"
