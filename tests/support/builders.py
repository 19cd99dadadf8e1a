"""Builders for real repositories in temporary folders."""

from __future__ import annotations

import subprocess
from pathlib import Path


def git(cwd: Path | str, *args: str, input: str | None = None) -> str:
    """Run git in `cwd` and return its stdout; fail the test with both streams on error."""
    cp = subprocess.run(["git", *args], cwd=cwd, input=input, capture_output=True, text=True)
    assert cp.returncode == 0, f"git {' '.join(args)} failed: {cp.stdout}\n{cp.stderr}"
    return cp.stdout.strip()


def make_repo(path: Path, files: dict[str, str] | None = None) -> Path:
    """A fresh repository on branch main with one commit holding `files` (a README by default)."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    commit(path, files or {"README.md": "sample\n"}, "initial")
    return path


def commit(repo: Path, files: dict[str, str], message: str = "change") -> str:
    """Write `files` (None content deletes) and commit them; returns the new commit id."""
    for name, content in files.items():
        p = repo / name
        if content is None:
            p.unlink()
            continue
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(content)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return head_of(repo)


def head_of(repo: Path) -> str:
    """The commit the checked-out branch of `repo` points at, read from its files (as `git rev-parse HEAD`
    would say, without starting git: the builders commit hundreds of times a run)."""
    git_dir = repo / ".git"
    if git_dir.is_file():  # a linked worktree: its own HEAD, the branches in the common folder
        git_dir = (repo / git_dir.read_text().split("gitdir: ", 1)[1].strip()).resolve()
    head = (git_dir / "HEAD").read_text().strip()
    if not head.startswith("ref: "):
        return head
    common = (git_dir / (git_dir / "commondir").read_text().strip()).resolve() \
        if (git_dir / "commondir").is_file() else git_dir
    ref = head[len("ref: "):]
    try:
        return (common / ref).read_text().strip()
    except FileNotFoundError:  # packed
        return git(repo, "rev-parse", "HEAD")


def make_remote(tmp: Path, repo: Path, name: str = "origin") -> Path:
    """A bare repository wired as `name` of `repo`, with main pushed."""
    bare = tmp / f"{name}.git"
    git(tmp, "init", "-q", "--bare", str(bare))
    git(repo, "remote", "add", name, str(bare))
    git(repo, "push", "-q", name, "main")
    return bare
