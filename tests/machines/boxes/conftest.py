"""Real containers for the box tests: podman from Debian's packages (scripts/ensure-podman.sh), the settings a
sandboxed host needs of it (docs/machines.md), and one image with git, python3 and Claude Code, built once with
`git balanced image build` and kept in .cache/images as the agent CLIs are kept in .cache/agents.

The host settings are the tests' alone: they reach podman through CONTAINERS_CONF in this process's environment
(the engine and the runners inherit it), never through a file of the host's.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from git_balanced.files import Flock
from git_balanced.machines.prepare import image

TOP = Path(__file__).resolve().parents[3]
IMAGES = TOP / ".cache" / "images"
# What this sandbox's podman needs to run a container at all (MACHINE-FACTS): runc rather than crun, which
# refuses its cgroups, and no ulimits, which it may not set.
SANDBOX_CONF = '[containers]\ndefault_ulimits = []\n\n[engine]\ncgroup_manager = "cgroupfs"\nruntime = "runc"\n'
AGENT = "claude"


def image_tag(agent: str | None = AGENT) -> str:
    """The tests' image, named by what goes into it (image.contents: the recipe, the pinned agent; None: git
    and python3 only, the small image an SSH machine's engine loads)."""
    return f"balanced-test:{hashlib.sha256(image.contents(agent).encode()).hexdigest()[:12]}"


def kept_image(tag: str) -> Path:
    """Where the image is kept, as `podman save` writes it."""
    return IMAGES / f"{tag.replace(':', '-')}.tar"


def _podman(*args: str, env: dict[str, str], timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["podman", *args], env={**os.environ, **env}, capture_output=True, text=True,
                          timeout=timeout)


def _ensure_image(tag: str, agent: str | None, env: dict[str, str]) -> None:
    """The image in podman: there already, loaded from .cache/images, or built (once, for every clone that
    shares the cache) and saved there."""
    IMAGES.mkdir(parents=True, exist_ok=True)
    kept = kept_image(tag)
    with Flock(IMAGES / "build.lock"):  # the test processes build it once between them
        if _podman("image", "exists", tag, env=env).returncode == 0:
            return
        if kept.exists():
            done = _podman("load", "-q", "-i", str(kept), env=env)
            assert done.returncode == 0, f"podman could not load {kept}: {done.stderr}"
            return
        build = [sys.executable, "-m", "git_balanced.cli", "image", "build", "--tag", tag,
                 *(["--agent", agent] if agent else [])]
        built = subprocess.run(build, env={**os.environ, **env}, capture_output=True, text=True, timeout=1800)
        assert built.returncode == 0, f"`git balanced image build` failed:\n{built.stdout}\n{built.stderr}"
        _save(tag, kept, env)


def _save(tag: str, kept: Path, env: dict[str, str]) -> None:
    """The image written to .cache/images whole, or not at all."""
    part = kept.with_suffix(".part")
    saved = _podman("save", "-q", "-o", str(part), tag, env=env)
    assert saved.returncode == 0, f"podman could not save {tag}: {saved.stderr}"
    part.rename(kept)


@pytest.fixture(scope="session")
def engine_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Podman installed, its sandbox settings written, and the tests' image in it: the environment to run it
    with (CONTAINERS_CONF)."""
    ensured = subprocess.run(["sh", str(TOP / "scripts" / "ensure-podman.sh")], capture_output=True, text=True,
                             timeout=900)
    assert ensured.returncode == 0, f"podman could not be installed:\n{ensured.stderr}"
    conf = tmp_path_factory.mktemp("podman") / "containers.conf"
    conf.write_text(SANDBOX_CONF)
    env = {"CONTAINERS_CONF": str(conf)}
    _ensure_image(image_tag(), AGENT, env)
    return env


@pytest.fixture
def podman(engine_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The tests' image, with this test's environment (and so its engine and runners) set to run podman here."""
    for key, value in engine_env.items():
        monkeypatch.setenv(key, value)
    ssh = Path(os.environ["HOME"]) / ".ssh"  # the sealed HOME's SSH config: no hosts, only the box machine
    ssh.mkdir(exist_ok=True)
    (ssh / "config").touch()
    yield image_tag()


@pytest.fixture(scope="session")
def small_image(engine_env: dict[str, str]) -> Path:
    """The image without an agent, kept in .cache/images: the tar an SSH machine's own engine loads."""
    tag = image_tag(None)
    _ensure_image(tag, None, engine_env)
    kept = kept_image(tag)
    with Flock(IMAGES / "build.lock"):
        if not kept.exists():  # in podman's storage (another clone built it) but not yet in this clone's cache
            _save(tag, kept, engine_env)
    return kept
