"""A project whose check fails when any file under src/ says BAD, and branches that break it or not."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.builders import commit, git, make_repo
from tests.support.cli import balanced

CHECK = '! grep -rq BAD src && echo run >> "$HOME/check-runs"'


def project(tmp: Path, check: str = CHECK, extra: str = "") -> Path:
    """A lead with the check committed and allowed; one check slot (the serial queue) unless `extra` names them."""
    if "check_slots" not in extra:  # the default is this machine's cores: the counts below assume one slot
        extra = extra.replace("[balanced]\n", "[balanced]\ncheck_slots = 1\n", 1) if "[balanced]\n" in extra \
            else f"{extra}\n[balanced]\ncheck_slots = 1\n"
    settings = f"[worktree]\ncheck = {json.dumps(check)}\n{extra}"
    repo = make_repo(tmp / "lead", {"src/base.txt": "ok\n", ".magnum/settings.toml": settings})
    assert balanced(repo, "allow", "--yes").code == 0
    return repo


def branch(repo: Path, name: str, files: dict[str, str], base: str = "main") -> str:
    git(repo, "branch", name, base)
    git(repo, "switch", "-q", name)
    sha = commit(repo, files, name)
    git(repo, "switch", "-q", "main")
    return sha


def branches(repo: Path, n: int, bad: set[int] = frozenset()) -> list[str]:  # type: ignore[assignment]
    names = []
    for i in range(1, n + 1):
        names.append(f"f{i}")
        branch(repo, f"f{i}", {f"src/f{i}.txt": "BAD\n" if i in bad else f"good {i}\n"})
    return names


def check_runs(home: Path) -> int:
    p = home / "check-runs"
    return len(p.read_text().splitlines()) if p.exists() else 0


def landed_subjects(repo: Path) -> list[str]:
    return git(repo, "log", "--first-parent", "--format=%s", "main").splitlines()


def tip_passed(repo: Path) -> bool:
    """The lead's tip is the first commit or its tree has a passing check note."""
    if git(repo, "rev-list", "--count", "main") == "1":
        return True
    tree = git(repo, "rev-parse", "main^{tree}")
    res = git(repo, "notes", "--ref=balanced-checks", "list")
    if tree not in res:
        return False
    note = git(repo, "notes", "--ref=balanced-checks", "show", tree)
    return any(json.loads(x).get("result") == "pass" for x in note.splitlines())
