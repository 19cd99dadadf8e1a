"""Careless workers that reach past their own things, as real shell pieces run by the real engine: the user's
files and other jobs' worktrees (closed by the fence), another piece's branch and the lead's secrets (closed
with or without it)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from git_balanced import fence as fencing
from tests.support.builders import git
from tests.support.plans import engine, jobs_of, lead_repo, piece, plan

NO_NAMESPACES = ("this machine does not let a process make a folder read-only for its children (no user "
                 "namespaces; tests/test_fence.py says whether it should)")


@pytest.fixture(params=["fenced", "unfenced"])
def fence(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run the test with the fence, and as on a machine without namespaces."""
    if request.param == "unfenced":
        monkeypatch.setenv("GIT_BALANCED_NO_FENCE", "1")
    elif not fencing.available():
        pytest.skip(NO_NAMESPACES)
    return str(request.param)


def fenced_only() -> None:
    if not fencing.available():
        pytest.skip(NO_NAMESPACES)


def landed(repo: Path, pid: str) -> None:
    assert [j["state"] for j in jobs_of(repo, pid)] == ["landed"], jobs_of(repo, pid)


def test_a_fenced_worker_writes_none_of_the_users_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """git config --global (a hooksPath the lead's own next fetch would run), shell start files, ~/.ssh, a
    folder on PATH, git balanced's own approvals and settings: each write is refused, and its own files are
    written."""
    fenced_only()
    home = Path(os.environ["HOME"])
    for folder in (".ssh", ".local/bin", ".config/git", ".local/state/git-balanced/trust"):
        (home / folder).mkdir(parents=True, exist_ok=True)
    for name in (".bashrc", ".profile", ".ssh/authorized_keys", ".config/git/config"):
        (home / name).write_text("# the user's\n")
    monkeypatch.setenv("PATH", f"{home / '.local' / 'bin'}{os.pathsep}{os.environ['PATH']}")
    repo = lead_repo(tmp_path)
    targets = ["~/.bashrc", "~/.profile", "~/.ssh/authorized_keys", "~/.config/git/config", "~/.local/bin/git",
               "$XDG_STATE_HOME/git-balanced/trust/planted", "$XDG_CONFIG_HOME/git-balanced.toml"]
    files = [home / t.removeprefix("~/") for t in targets[:5]] + [
        home / ".local/state/git-balanced/trust/planted", home / ".config/git-balanced.toml", home / ".gitconfig"]
    before = {p: p.read_bytes() if p.exists() else None for p in files}
    hook = "$HOME/.hooks/reference-transaction"
    run = (f'{{ mkdir -p $HOME/.hooks && printf "#!/bin/sh\\ntouch $HOME/hook-ran\\n" > {hook} && '
           f'chmod +x {hook}; }} 2>> src/refused.txt; '
           'git config --global core.hooksPath "$HOME/.hooks" 2>> src/refused.txt || echo gitconfig >> src/kept.txt; '
           + "".join(f'{{ echo planted >> {t}; }} 2>> src/refused.txt || echo \'{t}\' >> src/kept.txt; '
                     for t in targets)
           + 'echo mine > src/mine.txt && echo tmp > "$TMPDIR/t" && cat "$TMPDIR/t" >> src/mine.txt')
    assert plan(repo, [piece("reacher", run)], "--start").code == 0
    assert engine(repo, "--until-idle").code == 0
    landed(repo, "reacher")
    kept = git(repo, "show", "main:src/kept.txt").split("\n")
    assert kept == ["gitconfig", *targets], "every write outside its own things was refused"
    assert git(repo, "show", "main:src/refused.txt").count("Read-only file system") >= len(kept)
    assert git(repo, "show", "main:src/mine.txt") == "mine\ntmp", "its worktree and its temporary folder are its own"
    assert {p: p.read_bytes() if p.exists() else None for p in files} == before, "none of the user's files changed"
    git(repo, "fetch", "-q", str(repo), "main:refs/remotes/self/main")
    assert not (home / "hook-ran").exists(), "the lead's own fetch ran no hook of the worker's"
    assert not (home / ".hooks").exists() and "hookspath" not in git(repo, "config", "--list").lower()


def test_a_fenced_worker_cannot_write_another_jobs_worktree(tmp_path: Path) -> None:
    """A worker writes into each other worktree beside its own while the other job still runs: refused, and
    the other job's commit holds only its own work."""
    fenced_only()
    repo = lead_repo(tmp_path)
    # Only checked-out worktrees (their src/ there): a folder beside them may be one still being made, or one a
    # landed worker left that is being removed.
    intruder = ('for i in $(seq 100); do [ "$(ls -d ../*/src/ | wc -l)" -ge 2 ] && break; sleep 0.1; done; '
                'for d in ../*/; do [ "$(cd "$d" && pwd)" = "$PWD" ] && continue; [ -d "$d/src" ] || continue; '
                '{ echo planted > "$d/src/planted.txt"; } 2>> src/refused.txt || echo "$d" >> src/kept.txt; done; '
                'echo mine > src/intruder.txt')
    victim = 'for i in $(seq 50); do [ -f "$TMPDIR/never" ] && break; sleep 0.1; done; echo fine > src/victim.txt'
    assert plan(repo, [piece("intruder", intruder), piece("victim", victim)], "--start").code == 0
    assert engine(repo, "--until-idle").code == 0
    landed(repo, "intruder")
    landed(repo, "victim")
    assert git(repo, "ls-tree", "--name-only", "balanced/victim", "src/").split() == ["src/base.txt",
                                                                                     "src/victim.txt"]
    assert "Read-only file system" in git(repo, "show", "main:src/refused.txt")
    assert git(repo, "show", "main:src/kept.txt").startswith("../"), "it found the other worktree"


def test_a_piece_never_starts_from_a_branch_another_worker_planted(tmp_path: Path, fence: str) -> None:
    """A worker makes `balanced/victim` in its copy and in every copy it can find, at a commit of its own; the
    piece `victim`, which runs after it, starts from the lead's base all the same."""
    repo = lead_repo(tmp_path)
    plant = ('echo planted > src/planted.txt && git add src/planted.txt && '
             'c=$(git commit-tree "$(git write-tree)" -p HEAD -m planted) && git reset -q && rm src/planted.txt && '
             'git update-ref refs/heads/balanced/victim "$c" && echo "$c" > src/planted-at.txt; '
             'for g in $HOME/.balanced/copies/*/ $HOME/.balanced/copies/*/*/; do '
             'git -C "$g" update-ref refs/heads/balanced/victim "$c" 2>/dev/null; done; echo ok > src/planter.txt')
    pieces = [piece("planter", plant), piece("victim", "echo fine > src/victim.txt", after=["planter"])]
    assert plan(repo, pieces, "--start").code == 0
    assert engine(repo, "--until-idle").code == 0
    landed(repo, "planter")
    landed(repo, "victim")
    planted = git(repo, "show", "main:src/planted-at.txt")
    assert len(planted) == 40, "the worker did make its commit, and pointed balanced/victim at it"
    assert "planted" not in git(repo, "log", "--format=%s", "main")
    assert git(repo, "ls-tree", "--name-only", "main", "src/").split() == [
        "src/base.txt", "src/planted-at.txt", "src/planter.txt", "src/victim.txt"]


SECRETS = {"GITHUB_TOKEN": "ghp_lead", "OPENAI_API_KEY": "sk-openai-lead", "ANTHROPIC_API_KEY": "sk-ant-lead",
           "CODEX_API_KEY": "codex-lead", "AWS_SECRET_ACCESS_KEY": "aws-lead", "NPM_TOKEN": "npm-lead"}


def env_seen(repo: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """What a shell worker's environment holds when the lead's holds SECRETS."""
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("LANG", "C.UTF-8")
    assert plan(repo, [piece("reader", "env | sort > src/env.txt")], "--start").code == 0
    assert engine(repo, "--until-idle").code == 0
    landed(repo, "reader")
    return dict(line.split("=", 1) for line in git(repo, "show", "main:src/env.txt").splitlines() if "=" in line)


def test_a_worker_gets_none_of_the_leads_secrets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fence: str) -> None:
    """The lead's environment holds tokens and agents' keys; a shell worker sees the basics, none of them."""
    seen = env_seen(lead_repo(tmp_path), monkeypatch)
    leaked = sorted(set(SECRETS) & set(seen))
    assert not leaked, f"the worker saw {leaked}"
    for basic in ("PATH", "HOME", "LANG", "TMPDIR", "GIT_AUTHOR_NAME"):
        assert basic in seen, f"{basic} is kept"
    assert seen["HOME"] == os.environ["HOME"] and seen["LANG"] == "C.UTF-8"
    assert seen["TMPDIR"].startswith(str(Path(os.environ["HOME"]) / ".balanced" / "runs")), "a folder of its own"


def test_a_variable_the_settings_name_is_passed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fence: str) -> None:
    repo = lead_repo(tmp_path)
    settings = repo / ".magnum" / "settings.toml"
    settings.write_text(settings.read_text().replace("[worktree]\n", '[worktree]\nenv = ["NPM_TOKEN"]\n'))
    git(repo, "commit", "-qam", "workers get NPM_TOKEN")
    seen = env_seen(repo, monkeypatch)
    assert seen.get("NPM_TOKEN") == "npm-lead", "a variable the settings name is passed"
    assert not (set(SECRETS) - {"NPM_TOKEN"}) & set(seen), "and only that one"
