"""`git balanced demo`: a whole plan on a sample project in a temporary folder, with no account.

Every step is a real `git balanced` command, shown before it runs, in a private HOME so nothing of
yours is touched.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
import tempfile
from pathlib import Path

from git_balanced import proc, ui
from git_balanced.settings import settings_path

SETTINGS = """\
[worktree]
check = "python3 -m unittest discover -q -s tests"

[balanced]
agent = "shell"
"""

PLAN = """\
task: A tiny calculator, built by three workers
pieces:
  - id: add
    task: Add calc.add with a test.
    agent: shell
    run: >-
      printf 'def add(a, b):\\n    return a + b\\n' > calc/add.py &&
      printf 'import unittest\\nfrom calc.add import add\\n\\n\\nclass T(unittest.TestCase):\\n    def test_add(self):\\n        self.assertEqual(add(2, 3), 5)\\n' > tests/test_add.py
  - id: mul
    task: Add calc.mul with a test.
    agent: shell
    run: >-
      printf 'def mul(a, b):\\n    return a * b\\n' > calc/mul.py &&
      printf 'import unittest\\nfrom calc.mul import mul\\n\\n\\nclass T(unittest.TestCase):\\n    def test_mul(self):\\n        self.assertEqual(mul(4, 5), 20)\\n' > tests/test_mul.py
  - id: docs
    task: List the calculator's functions in the README, once both have landed.
    agent: shell
    after: [add, mul]
    run: "ls calc | grep -v __init__ | sed 's/.py$//; s/^/- calc./' >> README.md"
"""


def _step(cmd: list[str], cwd: Path, env: dict[str, str], show: bool = True) -> proc.Result:
    if show:
        ui.say(f"\n$ {shlex.join(cmd)}")
    res = proc.run(cmd, cwd=cwd, env=env)
    text = (res.out + res.err).rstrip()
    if show and text:
        ui.say(text)
    return res


def demo_command(*, keep: bool) -> int:
    top = Path(tempfile.mkdtemp(prefix="git-balanced-demo-"))
    home = top / "home"
    repo = top / "calc"
    home.mkdir()
    repo.mkdir()
    env = proc.no_git_env()
    env.update(HOME=str(home), XDG_STATE_HOME=str(home / ".local/state"), XDG_CONFIG_HOME=str(home / ".config"),
               GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="Demo Lead", GIT_AUTHOR_EMAIL="lead@example.com",
               GIT_COMMITTER_NAME="Demo Lead", GIT_COMMITTER_EMAIL="lead@example.com")
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    me = proc.ours("git_balanced.cli")
    try:
        (repo / "calc").mkdir()
        (repo / "tests").mkdir()
        (repo / "calc" / "__init__.py").write_text("")
        (repo / "tests" / "__init__.py").write_text("")
        (repo / "README.md").write_text("# calc\n\nFunctions:\n")
        settings_path(repo).parent.mkdir()
        settings_path(repo).write_text(SETTINGS)
        (top / "plan.yaml").write_text(PLAN)
        for cmd in (["git", "init", "-q", "-b", "main"], ["git", "add", "-A"],
                    ["git", "commit", "-q", "-m", "A sample project"]):
            if not _step(cmd, repo, env, show=False).ok:
                ui.say(f"Could not build the sample repository with `{shlex.join(cmd)}`.")
                return 1
        ui.say(f"A sample project in {repo}, with the check `python3 -m unittest discover -q -s tests` in .magnum/settings.toml.")
        steps = [me + ["allow", "--yes"], me + ["plan", str(top / "plan.yaml"), "--start"],
                 me + ["engine", "--until-idle"], me + ["board"], me + ["inbox"],
                 ["git", "log", "--first-parent", "--notes=balanced", "--format=%h %s%n%N", "main"]]
        for cmd in steps:
            shown = ["git", "balanced", *cmd[len(me):]] if cmd[:len(me)] == me else cmd
            ui.say(f"\n$ {shlex.join(shown)}")
            res = proc.run(cmd, cwd=repo, env=env)
            text = (res.out + res.err).rstrip()
            if text:
                ui.say(text)
            if not res.ok:
                ui.say(f"\nThat step failed (exit {res.code}).")
                return 1
        ui.say("\nThree workers, each in its own worktree and branch; every landing passed the check.")
        if keep:
            ui.say(f"The sample is kept in {top}.")
        return 0
    finally:
        if not keep:
            shutil.rmtree(top, ignore_errors=True)
