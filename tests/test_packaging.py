"""What `pip install .` ships: every package, templates/ and hooks/ inside the wheel, the man page where
`git balanced --help` finds it; checked by building and installing the wheel into a new virtualenv."""

from __future__ import annotations

import fnmatch
import os
import shutil
import stat
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest

from tests.support.builders import git, make_repo

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
SHIPPED_FOLDERS = {"git_balanced.templates": "templates", "git_balanced.hook_scripts": "hooks"}


def test_every_package_is_listed() -> None:
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "git_balanced").rglob("__init__.py")}
    listed = set(PYPROJECT["packages"])
    assert listed - set(SHIPPED_FOLDERS) == found, "a package of git_balanced/ missing from (or extra in) " \
        "[tool.setuptools] packages in pyproject.toml: the wheel would leave it out"
    assert PYPROJECT["package-dir"] == SHIPPED_FOLDERS


@pytest.mark.parametrize("package", sorted(SHIPPED_FOLDERS))
def test_every_file_of_the_shipped_folders_is_package_data(package: str) -> None:
    folder = ROOT / SHIPPED_FOLDERS[package]
    patterns = PYPROJECT["package-data"][package]
    tracked = git(ROOT, "ls-files", "--", SHIPPED_FOLDERS[package]).splitlines()
    files = [Path(f).relative_to(SHIPPED_FOLDERS[package]).as_posix() for f in tracked]
    assert files and all((folder / f).is_file() for f in files)
    left_out = [f for f in files if f != "__init__.py" and not any(fnmatch.fnmatch(f, p) for p in patterns)]
    assert left_out == [], f"add a pattern for these to [tool.setuptools.package-data] {package}"


def source_copy(dest: Path) -> Path:
    """The checkout's files as git sees them (tracked, and new ones not ignored), so a build leaves the
    checkout itself alone."""
    names = git(ROOT, "ls-files", "-co", "--exclude-standard").splitlines()
    for name in names:
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    return dest


def pip(*args: str) -> None:
    cp = subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", *args],
                        capture_output=True, text=True)
    assert cp.returncode == 0, f"pip {' '.join(args)} failed:\n{cp.stdout}\n{cp.stderr}"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel of this checkout, built once for every install test of this module."""
    where = tmp_path_factory.mktemp("wheel")
    src = source_copy(where / "src")
    pip("wheel", "--no-deps", "-q", "-w", str(where / "dist"), str(src))
    return next((where / "dist").glob("git_balanced-*.whl"))


@pytest.fixture(scope="module")
def tools(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv holding the installers the tests run, from the cached wheels: uv, and pipx (with uv as its
    installer, `pipx[uv]`) when its wheels are there too. Beside it, the uv cache they share."""
    wheels = ROOT / ".cache" / "wheels"
    if not wheels.is_dir() or not any(wheels.glob("uv-*.whl")):
        pytest.skip("needs uv's wheel in .cache/wheels (`make test` keeps it there)")
    venv = tmp_path_factory.mktemp("tools") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    wanted = "pipx[uv]" if any(wheels.glob("pipx-*.whl")) else "uv"
    pip("--python", str(venv / "bin" / "python"), "install", "--no-index", "--find-links", str(wheels), "-q", wanted)
    return venv


@pytest.mark.install
def test_the_wheel_installs_templates_hooks_and_the_man_page(tmp_path: Path, wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as zf:
        infos = {i.filename: i for i in zf.infolist()}
    for name in ("settings.toml", "worker.md", "lead.md", "plan.yaml", "settings/python.toml",
                 "settings/node.toml", "settings/go.toml", "claude-settings.json", "pi-balanced.ts"):
        assert f"git_balanced/templates/{name}" in infos, f"templates/{name} is in the wheel"
    for name in ("pre-merge-commit", "pre-push"):
        mode = infos[f"git_balanced/hook_scripts/{name}"].external_attr >> 16
        assert mode & stat.S_IXUSR, f"hooks/{name} is in the wheel, executable"
    assert any(n.endswith(".data/data/share/man/man1/git-balanced.1") for n in infos), "the man page"
    assert not any("__pycache__" in n for n in infos)

    venv = tmp_path / "venv"
    # A venv without its own pip (ensurepip alone costs seconds): this pip installs into it.
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    bindir = venv / "bin"
    pip("--python", str(bindir / "python"), "install", "--no-deps", "-q", str(wheel))
    site = Path(subprocess.run([bindir / "python", "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                               capture_output=True, text=True, check=True).stdout.strip())
    # The dependencies come from this test's environment, after the new venv's own site-packages (a path
    # a .pth file adds is searched, its own .pth files are not run: this environment's editable install
    # of git balanced stays out).
    (site / "deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    git_dir = Path(shutil.which("git") or "/usr/bin/git").parent
    env = dict(os.environ, PATH=os.pathsep.join([str(bindir), str(git_dir), "/usr/bin", "/bin"]),
               MANPAGER="cat", PAGER="cat")

    repo = make_repo(tmp_path / "shop", {"package.json": "{}\n"})
    cp = subprocess.run(["git", "balanced", "init", "--hooks", "git"], cwd=repo, env=env, capture_output=True,
                        text=True)
    assert cp.returncode == 0 and "(from templates/settings/node.toml" in cp.stdout, cp.stdout + cp.stderr
    assert (repo / ".git" / "hooks" / "pre-push").read_text() == (ROOT / "hooks" / "pre-push").read_text()
    where = subprocess.run([str(bindir / "python"), "-c", "from git_balanced import bundled; "
                            "print(bundled.template('worker.md')); print(bundled.hook_script('pre-push'))"],
                           cwd=tmp_path, env=env, capture_output=True, text=True)
    assert where.stdout.splitlines() == [str(site / "git_balanced" / "templates" / "worker.md"),
                                         str(site / "git_balanced" / "hook_scripts" / "pre-push")], where

    page = venv / "share" / "man" / "man1" / "git-balanced.1"
    assert page.read_text() == (ROOT / "man" / "git-balanced.1").read_text()
    if shutil.which("man", path=env["PATH"]) is None:
        pytest.skip("needs man(1) to show the page")
    found = subprocess.run(["man", "-w", "git-balanced"], env=env, capture_output=True, text=True)
    assert found.stdout.strip() == str(page), "man finds the page the wheel installed, beside its bin"
    cp = subprocess.run(["git", "balanced", "--help"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert cp.returncode == 0 and "GIT-BALANCED(1)" in cp.stdout and "git balanced land" in cp.stdout, cp


def _help_shows_the_page(env: dict[str, str], cwd: Path) -> None:
    """`git balanced --help` shows the man page, as git runs it: `man git-balanced`."""
    cp = subprocess.run(["git", "balanced", "--help"], cwd=cwd, env=env, capture_output=True, text=True)
    assert cp.returncode == 0 and "GIT-BALANCED(1)" in cp.stdout and "git balanced land" in cp.stdout, cp


@pytest.mark.install
@pytest.mark.skipif(shutil.which("man") is None, reason="needs man(1) to show the page")
def test_pip_install_user_puts_the_man_page_where_man_finds_it(tmp_path: Path, wheel: Path) -> None:
    """`pip install --user .`: the command in ~/.local/bin, the page in ~/.local/share/man, which man finds
    beside that bin folder on PATH."""
    base = Path(sys.base_prefix) / "bin" / "python3"
    if not base.is_file():
        pytest.skip("needs the Python this venv was made from, for a --user install")
    user = tmp_path / "home" / ".local"
    env = dict(os.environ, PYTHONUSERBASE=str(user), PIP_BREAK_SYSTEM_PACKAGES="1", MANPAGER="cat", PAGER="cat")
    cp = subprocess.run([str(base), "-m", "pip", "--disable-pip-version-check", "install", "--user", "--no-deps",
                         "-q", str(wheel)], env=env, capture_output=True, text=True)
    if cp.returncode != 0 and "No module named pip" in cp.stderr:
        pytest.skip("the base Python has no pip")
    assert cp.returncode == 0, cp.stderr
    site = Path(subprocess.run([str(base), "-c", "import site; print(site.getusersitepackages())"], env=env,
                               capture_output=True, text=True, check=True).stdout.strip())
    (site / "deps.pth").write_text(sysconfig.get_path("purelib") + "\n")  # the dependencies, from here
    git_dir = Path(shutil.which("git") or "/usr/bin/git").parent
    env["PATH"] = os.pathsep.join([str(user / "bin"), str(git_dir), "/usr/bin", "/bin"])
    page = user / "share" / "man" / "man1" / "git-balanced.1"
    assert page.is_file(), "pip --user puts the data files under the user base"
    found = subprocess.run(["man", "-w", "git-balanced"], env=env, capture_output=True, text=True)
    assert found.stdout.strip() == str(page), found
    _help_shows_the_page(env, tmp_path)


@pytest.mark.install
@pytest.mark.skipif(shutil.which("man") is None, reason="needs man(1) to show the page")
def test_uv_tool_install_and_init_link_the_man_page(tmp_path: Path, wheel: Path, tools: Path) -> None:
    """`uv tool install .` keeps the page in the tool's environment, where man does not look; the first
    `git balanced init` links it beside the bin folder git found `git-balanced` in, and --help shows it."""
    wheels = ROOT / ".cache" / "wheels"
    home = tmp_path / "home"
    env = dict(os.environ, HOME=str(home), UV_TOOL_DIR=str(home / ".local" / "share" / "uv" / "tools"),
               UV_TOOL_BIN_DIR=str(home / ".local" / "bin"), UV_CACHE_DIR=str(tools.parent / "uv-cache"),
               MANPAGER="cat", PAGER="cat")
    cp = subprocess.run([str(tools / "bin" / "uv"), "tool", "install", "--offline", "--no-index", "--find-links",
                         str(wheels), "-q", str(wheel)], env=env, capture_output=True, text=True)
    assert cp.returncode == 0, cp.stderr
    git_dir = Path(shutil.which("git") or "/usr/bin/git").parent
    env["PATH"] = os.pathsep.join([str(home / ".local" / "bin"), str(git_dir), "/usr/bin", "/bin"])
    assert subprocess.run(["man", "-w", "git-balanced"], env=env, capture_output=True).returncode != 0, \
        "uv leaves the page where man does not look"
    repo = make_repo(tmp_path / "shop")
    cp = subprocess.run(["git", "balanced", "init", "--hooks", "git"], cwd=repo, env=env, capture_output=True,
                        text=True)
    assert cp.returncode == 0 and "so `git balanced --help` finds it" in cp.stdout, cp.stdout + cp.stderr
    _help_shows_the_page(env, tmp_path)


@pytest.mark.install
@pytest.mark.skipif(shutil.which("man") is None, reason="needs man(1) to show the page")
def test_pipx_install_puts_the_man_page_where_man_finds_it(tmp_path: Path, wheel: Path, tools: Path) -> None:
    """`pipx install .`: the command linked into PIPX_BIN_DIR (~/.local/bin), the page the wheel carries as
    data linked into PIPX_MAN_DIR (~/.local/share/man), beside that bin folder, where man finds it. pipx
    installs with uv here (`pipx[uv]`), offline from the cached wheels: pip would take half a minute."""
    wheels = ROOT / ".cache" / "wheels"
    if not (tools / "bin" / "pipx").is_file():
        pytest.skip("needs the wheels of pipx and its dependencies in .cache/wheels")
    home = tmp_path / "home"
    git_dir = Path(shutil.which("git") or "/usr/bin/git").parent
    env = dict(os.environ, HOME=str(home), PIPX_HOME=str(home / ".local" / "share" / "pipx"),
               PIPX_BIN_DIR=str(home / ".local" / "bin"), PIPX_MAN_DIR=str(home / ".local" / "share" / "man"),
               PIPX_DEFAULT_BACKEND="uv", UV_CACHE_DIR=str(tools.parent / "uv-cache"), MANPAGER="cat", PAGER="cat",
               PATH=os.pathsep.join([str(home / ".local" / "bin"), str(git_dir), "/usr/bin", "/bin"]))
    cp = subprocess.run([str(tools / "bin" / "pipx"), "install", f"--pip-args=--offline --no-index --find-links "
                         f"{wheels}", str(wheel)], env=env, capture_output=True, text=True)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    cp = subprocess.run(["git", "balanced", "--version"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert cp.returncode == 0 and cp.stdout.startswith("git balanced "), cp
    page = home / ".local" / "share" / "man" / "man1" / "git-balanced.1"
    venv = home / ".local" / "share" / "pipx" / "venvs" / "git-balanced"
    assert page.resolve() == venv / "share" / "man" / "man1" / "git-balanced.1", "pipx links the wheel's page"
    found = subprocess.run(["man", "-w", "git-balanced"], env=env, capture_output=True, text=True)
    assert found.returncode == 0 and Path(found.stdout.strip()).resolve() == page.resolve(), found  # man-db says
    _help_shows_the_page(env, tmp_path)                                          # where the link leads
