"""The README's walk from the demo to a first plan, run as written on a fresh repository: the console blocks
and files marked `<!-- walk -->` in README.md, in order, each command's output as the README shows it (plan
ids, commit ids and times aside)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from tests.support.builders import make_repo

ROOT = Path(__file__).resolve().parents[1]
MARK = re.compile(r"^<!-- walk(?::\s*(\S+))?.*?-->\n```(\w+)\n(.*?)^```", re.M | re.S)
VARYING = [(re.compile(r"\b[0-9a-z]{15}\b"), "PLAN"), (re.compile(r"\b[0-9a-f]{7}\b"), "COMMIT"),
           (re.compile(r"^\d\d:\d\d(:\d\d)?\b"), "HH:MM")]
# The engine's lines on a check under way come when it looks while the check runs: a check as quick as the walk's
# may end between two looks.
SOMETIMES = re.compile(r"^HH:MM  (checking \(|check ended after )")


def walk() -> list[tuple[str, str, str]]:
    """The marked blocks of the README: (file to write or "", kind, text)."""
    return [(m[1] or "", m[2], m[3]) for m in MARK.finditer((ROOT / "README.md").read_text())]


def steps(console: str) -> list[tuple[str, list[str]]]:
    """Each `$ command` of a console block with the lines shown after it."""
    out: list[tuple[str, list[str]]] = []
    for line in console.splitlines():
        if line.startswith("$ "):
            out.append((line[2:], []))
        else:
            out[-1][1].append(line)
    return out


def masked(lines: list[str]) -> list[str]:
    out = []
    for line in lines:
        for pattern, word in VARYING:
            line = pattern.sub(word, line)
        if not SOMETIMES.match(line):
            out.append(line)
    return out


def test_the_readme_walk_runs_as_written(tmp_path: Path) -> None:
    blocks = walk()
    assert [k for _, k, _ in blocks] == ["console", "yaml", "console"], "the walk's marked blocks"
    repo = make_repo(tmp_path / "project", {"Makefile": "test:\n\ttrue\n", "README.md": "A project.\n"})
    for target, _kind, text in blocks:
        if target:
            Path(os.path.expanduser(target)).write_text(text)
            continue
        for command, shown in steps(text):
            cp = subprocess.run(["bash", "-c", command], cwd=repo, capture_output=True, text=True, timeout=300,
                                stdin=subprocess.DEVNULL)
            assert cp.returncode == 0, (command, cp.stdout, cp.stderr)
            assert masked(cp.stdout.splitlines()) == masked(shown), (command, cp.stdout, cp.stderr)
    assert (repo / "NOTES.md").read_text() == "# Notes\n", "the piece landed in the reader's branch"
