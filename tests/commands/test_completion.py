"""`git balanced <TAB>` through git's own bash completion, for real: commands, options, job handles,
machines, plans and agents; `completion --install` puts the script where bash-completion loads it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from git_balanced.cli import completions
from tests.support.cli import balanced
from tests.support.plans import engine, lead_repo, piece, plan

GIT_COMPLETION = Path("/usr/share/bash-completion/completions/git")
BASH_COMPLETION = Path("/usr/share/bash-completion/bash_completion")

# The words typed after `git balanced`, as bash hands them to git's completion.
TAB = """
if [ -f {loader} ]; then source {loader}; else source "$1"; fi
source {git}
line="git balanced $2"
COMP_LINE=$line; COMP_POINT=${{#line}}
read -r -a COMP_WORDS <<< "$line"
case $line in *" ") COMP_WORDS+=("");; esac
COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))
$(complete -p git | sed 's/.* -F \\([^ ]*\\) git$/\\1/')
printf '%s\\n' "${{COMPREPLY[@]}}"
"""


def tab(repo: Path, script: Path, typed: str) -> list[str]:
    env = dict(os.environ, PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"])
    cp = subprocess.run(["bash", "-c", TAB.format(loader=BASH_COMPLETION, git=GIT_COMPLETION), "tab", str(script),
                         typed], cwd=repo, env=env, capture_output=True, text=True, timeout=60)
    assert cp.returncode == 0, cp.stderr
    return [w.strip() for w in cp.stdout.splitlines() if w.strip()]


@pytest.mark.skipif(not GIT_COMPLETION.is_file() or shutil.which("bash") is None,
                    reason="needs bash and git's bash completion")
def test_git_balanced_tab_in_bash(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    assert plan(repo, [piece("broken", "echo nope; exit 4")], "--start").code == 0
    engine(repo, "--until-idle")
    r = balanced(repo, "completion", "bash", "--install")
    assert r.code == 0, r
    script = Path(os.environ["XDG_DATA_HOME"]) / "bash-completion" / "completions" / "git-balanced"
    assert script.is_file() and f"Wrote {script}." in r.out, r.out
    assert {"plan", "plans"} <= set(tab(repo, script, "pl")), "commands"
    assert "--wait" in tab(repo, script, "plan --"), "options"
    assert "balanced/broken" in tab(repo, script, "retry "), "job handles: the pieces' branches"
    assert tab(repo, script, "logs e") == ["e1.3"], "and the short handle of the piece's last attempt"
    assert tab(repo, script, "tick ") == ["local"], "machines"
    assert tab(repo, script, "init --agent s") == ["shell"], "agents"


def test_the_words_that_may_come_next(tmp_path: Path) -> None:
    assert "__complete" not in completions([""]), "the hidden command stays hidden"
    assert completions(["machines", ""]) == ["add", "rm"]
    assert completions(["init", "--hooks", ""]) == ["pre-commit", "git"]
    assert completions(["init", "--hooks=git", "--ag"]) == ["--agent"]
    assert completions(["nonsense", ""]) == []
    assert completions(["board", ""]) == [], "no argument: nothing to offer"


def test_an_argument_s_values_follow_the_command_s_full_words(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """`rm` of `machines rm` takes a machine, `rm` of `schedule rm` a schedule: not machine names."""
    monkeypatch.chdir(lead_repo(tmp_path))
    assert completions(["machines", "rm", ""]) == ["local"]
    assert "local" not in completions(["schedule", "rm", ""])


def test_completion_prints_the_script_for_each_shell(tmp_path: Path) -> None:
    bash = balanced(tmp_path, "completion", "bash")
    assert bash.code == 0 and "_git_balanced ()" in bash.out and "git-balanced __complete --" in bash.out
    zsh = balanced(tmp_path, "completion", "zsh")
    assert zsh.code == 0 and "_git-balanced ()" in zsh.out and "_git_balanced ()" in zsh.out
    r = balanced(tmp_path, "completion", "zsh", "--install")
    assert r.code == 0 and "to ~/.zshrc" in r.out, r
    assert (Path(os.environ["XDG_DATA_HOME"]) / "git-balanced" / "completion.zsh").read_text() == zsh.out


@pytest.mark.skipif(shutil.which("zsh") is None, reason="needs zsh")
def test_the_zsh_function_offers_the_words(tmp_path: Path) -> None:
    """zsh's _git calls _git-balanced with `words` from the subcommand on; compadd (a stand-in here, as it
    works only inside a completion widget) gets the words that fit."""
    script = tmp_path / "completion.zsh"
    script.write_text(balanced(tmp_path, "completion", "zsh").out)
    assert subprocess.run(["zsh", "-n", str(script)], capture_output=True).returncode == 0
    repo = lead_repo(tmp_path)
    run = (f"source {script}; compadd() {{ shift $(( ${{@[(i)--]}} )); print -l -- \"$@\"; }}; "
           "words=(balanced $=1 ''); CURRENT=${#words}; _git-balanced")
    env = dict(os.environ, PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"])

    def offered(typed: str) -> list[str]:
        cp = subprocess.run(["zsh", "-f", "-c", run, "zsh", typed], cwd=repo, env=env, capture_output=True,
                            text=True, timeout=60)
        assert cp.returncode == 0, cp.stderr
        return cp.stdout.split()

    assert offered("tick") == ["local"]
    assert offered("init --agent") == ["claude", "codex", "pi", "shell"]
    assert "plan" in offered("")
