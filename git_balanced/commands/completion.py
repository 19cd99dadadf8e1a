"""`git balanced completion`: `git balanced <TAB>` in bash and zsh, through git's own completion.

git's completion (git-completion.bash, and git-completion.zsh built on it) completes `git balanced ...` by
calling a function `_git_balanced`; bash-completion loads it on first use from a file named `git-balanced`
in its completions folder, which is where `--install` puts it. zsh's own `_git` calls `_git-balanced`.
Both ask `git-balanced __complete -- WORD...` for the words that fit; cli.py walks the commands and options,
and the values of an argument (jobs, machines, plans, agents, files) come from here.
"""

from __future__ import annotations

import os
from pathlib import Path

from git_balanced import files, ui
from git_balanced.errors import BalancedError

SHELLS = ("bash", "zsh")

BASH = r"""# git balanced: `git balanced <TAB>` through git's own completion (git-completion.bash).
# Written by `git balanced completion bash`; git's completion calls _git_balanced for `git balanced`.
_git_balanced ()
{
	local start=$(( ${__git_cmd_idx:-1} + 1 ))
	local IFS=$'\n'
	local found
	found=$(git-balanced __complete -- "${words[@]:start:cword-start}" "$cur" 2>/dev/null)
	__gitcomp_nl "$found"
}
"""

ZSH = r"""# git balanced: `git balanced <TAB>` in zsh, through zsh's own _git (it calls _git-balanced) or git's
# git-completion.zsh (it calls the bash-style _git_balanced). Written by `git balanced completion zsh`.
_git-balanced () {
	local -a found
	found=("${(@f)$(git-balanced __complete -- "${(@)words[2,CURRENT-1]}" "${words[CURRENT]}" 2>/dev/null)}")
	compadd -Q -- "${(@)found:#}"
}

_git_balanced () {
	local start=$(( ${__git_cmd_idx:-1} + 1 ))
	local IFS=$'\n'
	__gitcomp_nl "$(git-balanced __complete -- "${(@)words[start+1,cword]}" "$cur" 2>/dev/null)"
}

zstyle ':completion:*:*:git:*' user-commands balanced:'hand pieces of a task to coding agents'
"""


def script(shell: str) -> str:
    """The completion script for `shell`."""
    return {"bash": BASH, "zsh": ZSH}[shell]


def install_path(shell: str) -> Path:
    """Where `--install` writes the script: bash-completion's own folder for bash (git's completion loads
    `git-balanced` from there on the first `git balanced <TAB>`); a file to source from ~/.zshrc for zsh."""
    data = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    if shell == "bash":
        return Path(os.environ.get("BASH_COMPLETION_USER_DIR") or data / "bash-completion") / "completions" / \
            "git-balanced"
    return data / "git-balanced" / "completion.zsh"


def completion_command(shell: str, *, install: bool) -> int:
    """Print the script for `shell`, or write it where the shell finds it and say what is left to do."""
    if shell not in SHELLS:
        raise BalancedError(f"There is no completion for {shell!r}.", hint=f"name one of {', '.join(SHELLS)}.")
    if not install:
        ui.say(script(shell).rstrip("\n"))
        return 0
    target = install_path(shell)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        files.write_atomic(target, script(shell))
    except OSError as exc:
        raise BalancedError(f"Cannot write {target}: {exc.strerror}.",
                            hint=f"`git balanced completion {shell} > FILE` and source FILE yourself.") from exc
    ui.say(f"Wrote {target}.")
    if shell == "bash":
        ui.say("A new bash with bash-completion loads it on the first `git balanced <TAB>`. Without "
               f"bash-completion, add `source {target}` to ~/.bashrc, after git's own completion.")
    else:
        ui.say(f"Add `source {target}` to ~/.zshrc, after `compinit`; a new zsh then completes "
               "`git balanced <TAB>`.")
    return 0


# -- the values of an argument or option, by the kind cli.py found ------------------------------------------
def values(kind: str, prefix: str) -> list[str]:
    """The words of `kind` (jobs, machines, plans, agents, revs, files) starting with `prefix`; none when the
    repository or its state cannot be read (completion never fails loudly)."""
    try:
        found = _VALUES[kind](prefix) if kind in _VALUES else []
    except (BalancedError, OSError):
        return []
    return [w for w in found if w.startswith(prefix)]


def _jobs(prefix: str) -> list[str]:
    """The live jobs' short handles (`e3`), branches (`balanced/<piece>`), then their ids: what `stop`, `retry`,
    `land`, `logs` and `tell` take."""
    from git_balanced import handles
    from git_balanced.jobs import all_jobs
    from git_balanced.lead import open_checkout
    from git_balanced.vocab import ENDED_BADLY, LIVE, NEEDS_YOU

    repo = open_checkout()
    jobs = all_jobs(repo)
    live = sorted((j for j in jobs.values() if j.state in LIVE | NEEDS_YOU | ENDED_BADLY),
                  key=lambda j: -j.created)
    named = handles.handles(repo, jobs, repo.current_branch())
    return list(dict.fromkeys([*(named[j.id] for j in live if j.id in named), *(j.branch for j in live if j.branch),
                               *(j.id for j in live)]))


def _machines(prefix: str) -> list[str]:
    from git_balanced.machines.inventory.records import known

    return sorted(known())


def _plans(prefix: str) -> list[str]:
    from git_balanced.jobs import all_plans
    from git_balanced.lead import open_checkout

    return sorted(all_plans(open_checkout()), reverse=True)


def _agents(prefix: str) -> list[str]:
    from git_balanced.settings import AGENTS

    return list(AGENTS)


def _revs(prefix: str) -> list[str]:
    from git_balanced.lead import open_checkout

    refs = open_checkout().list_refs("refs/heads/")
    return sorted(name.removeprefix("refs/heads/") for name in refs) + ["HEAD"]


def _files(prefix: str) -> list[str]:
    """Files and folders (a folder with its /) next to what is typed so far."""
    folder, _, _ = prefix.rpartition("/")
    where = Path(folder or ".")
    out = []
    for entry in sorted(where.iterdir()):
        shown = f"{folder}/{entry.name}" if folder else entry.name
        out.append(shown + "/" if entry.is_dir() else shown)
    return out + (["-"] if not prefix else [])


def _projects(prefix: str) -> list[str]:
    """The chief's projects' names, when the chief's folder is there (completion never makes it)."""
    from git_balanced.chief import home
    from git_balanced.chief.projects import list_projects

    return [p.name for p in list_projects()] if (home.folder() / ".git").is_dir() else []


_VALUES = {"jobs": _jobs, "machines": _machines, "plans": _plans, "agents": _agents, "revs": _revs,
           "files": _files, "projects": _projects}
