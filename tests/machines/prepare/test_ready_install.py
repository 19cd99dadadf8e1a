"""`git balanced ready --yes` installs what a machine lacks: the pinned agent CLIs from the npm registry, or packed
here when the machine's npm cannot reach it; `--share-sign-in` copies this machine's sign-in; agents left
running by killed workers are stopped. One real sshd machine serves the whole module."""

from __future__ import annotations

import json
import os
import pwd
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest

from git_balanced.machines.inventory import pins
from git_balanced.machines.reach.transport import Transport
from git_balanced.shipped import runfiles, runner
from tests.support import agent_home
from tests.support.builders import git, make_repo
from tests.support.cli import balanced
from tests.support.model_server import ModelServer, say
from tests.support.plans import board, engine, plan
from tests.support.real_agents import agent_piece, commit_turn
from tests.support.sshd import Machine, sshd_machines
from tests.support.wait import wait_until

pytestmark = [pytest.mark.sshd, pytest.mark.agents]  # installs and runs the real agent CLIs there

CODEX = '[worktree]\ncheck = "true"\n\n[balanced]\nagent = "codex"\n'
CLAUDE = '[worktree]\ncheck = "true"\n\n[balanced]\nagent = "claude"\n'
PI = '[worktree]\ncheck = "true"\n\n[balanced]\nagent = "pi"\n'
SHELL = '[worktree]\ncheck = "true"\n\n[balanced]\nagent = "shell"\n'


def _npm_cache() -> str:
    """npm's cache of the real user, warm for the pinned versions (scripts/install-agents.sh filled it)."""
    home = pwd.getpwuid(os.getuid()).pw_dir
    out = subprocess.run(["npm", "config", "get", "cache"], env={**os.environ, "HOME": home},
                         capture_output=True, text=True, check=True).stdout.strip()
    return out or os.path.join(home, ".npm")


def _warm(m: Machine, cache: str) -> None:
    """Give the machine's npm the same warm cache, so an install there takes seconds: as its own user, a tree
    of hard links (the files stay read-only to it, the folders are its own); else the cache itself."""
    if not m.own_user:
        (m.home / ".npmrc").write_text(f"cache={cache}\n")
        return
    target = m.home / ".npm"
    if subprocess.run(["cp", "-al", cache, str(target)], capture_output=True).returncode != 0:
        subprocess.run(["rm", "-rf", str(target)], check=True)  # another file system: a copy, then
        subprocess.run(["cp", "-a", cache, str(target)], check=True)
    subprocess.run(["find", str(target), "-type", "d", "-exec", "chown", f"{m.user}:{m.user}", "{}", "+"],
                   check=True)


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Machine, Path, str]]:
    base = tmp_path_factory.mktemp("box")
    config = base / "ssh_config"
    cache = _npm_cache()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GIT_BALANCED_SSH_CONFIG", str(config))
        with sshd_machines(base, ["box"]) as ms:
            _warm(ms[0], cache)
            yield ms[0], config, cache


@pytest.fixture
def machine(box: tuple[Machine, Path, str], sealed: Path, monkeypatch: pytest.MonkeyPatch) -> Machine:
    """The module's machine, known to this test's private HOME; npm here uses the warm cache."""
    m, config, cache = box
    mine = Path(os.environ["GIT_BALANCED_SSH_CONFIG"])
    mine.parent.mkdir(parents=True, exist_ok=True)
    mine.write_text(config.read_text())
    monkeypatch.setenv("npm_config_cache", cache)
    return m


def there(*argv: str, input: str | None = None) -> str:
    res = Transport("box").run(list(argv), input=input, timeout=120)
    assert res.ok, f"{argv} on box: {res.err}"
    return res.out.strip()


def project(tmp_path: Path, settings: str) -> Path:
    repo = make_repo(tmp_path / "proj", {"README.md": "sample\n", ".magnum/settings.toml": settings})
    assert balanced(repo, "tick", "box").code == 0
    return repo


def test_ready_installs_the_pinned_codex_from_the_registry(machine: Machine, tmp_path: Path) -> None:
    repo = project(tmp_path, CODEX)
    ran = balanced(repo, "ready", "box")
    assert ran.code == 1 and "box  not ready: codex, the agent of this repository's settings, is not " \
                              "installed there" in ran.out, ran.out
    assert "`git balanced ready box --yes` installs Codex 0.171.0 into ~/.local" in ran.out, ran.out

    ran = balanced(repo, "ready", "box", "--yes")
    assert ran.code == 0, ran
    assert "box: installing Codex 0.171.0 into ~/.local with npm" in ran.out, ran.out
    assert "Codex 0.171.0 installed into ~/.local from the npm registry" in ran.out
    assert "agents: codex 0.171.0" in ran.out, ran.out
    home = machine.home
    assert pins.AGENTS["codex"][1] in there(f"{home}/.local/bin/codex", "--version")
    assert not (home / ".balanced" / "packs").exists(), "from the registry: nothing was copied over"
    # Sign-in is never faked: the machine says how to sign in there, and the facts say it is not.
    assert "not signed in to Codex: run `ssh -t box 'PATH=$HOME/.local/bin:$PATH codex login'`" in ran.out
    hinted = there("sh", "-c", "PATH=$HOME/.local/bin:$PATH codex --version")
    assert hinted.endswith("0.171.0"), "the hint's PATH works there"
    rows = {r["name"]: r for r in json.loads(balanced(repo, "machines", "--json").out)}
    assert rows["box"]["ready"] and "codex" in rows["box"]["agents"], rows["box"]
    shown = rows["box"]["facts"]["agents"]
    assert shown["codex"]["version"] == "0.171.0" and not shown["codex"]["signed_in"], shown
    facts = json.loads((repo / ".git" / "balanced" / "ready.json").read_text())["box"]["agent_facts"]
    assert facts["codex"]["version"] == "0.171.0" and facts["codex"]["signed_in"] is False


class socket_closed:
    """A port on 127.0.0.1 that nothing listens on (bound, never listening: refused at once)."""

    def __enter__(self) -> int:
        import socket

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        return int(self.sock.getsockname()[1])

    def __exit__(self, *exc: object) -> None:
        self.sock.close()


@contextmanager
def closed_registry() -> Iterator[None]:
    """The machine's npm points at a port on 127.0.0.1 that nothing listens on."""
    with socket_closed() as port:
        there("sh", "-c", f"printf 'registry=http://127.0.0.1:{port}/\\n' >> ~/.npmrc")
        try:
            yield
        finally:
            there("sh", "-c", "sed -i '/^registry=/d' ~/.npmrc")


def test_a_machine_whose_npm_cannot_reach_its_registry_gets_packages_packed_here(machine: Machine,
                                                                                  tmp_path: Path) -> None:
    with closed_registry():
        repo = project(tmp_path, CLAUDE)
        ran = balanced(repo, "ready", "box")
        assert ran.code == 1 and "`git balanced ready box --yes` installs Claude Code 2.1.332 into ~/.local" \
            in ran.out, ran.out
        ran = balanced(repo, "ready", "box", "--yes")
    assert ran.code == 0, ran
    assert "box: its npm cannot reach its registry; fetching Claude Code 2.1.332 here and copying it over" in ran.out
    assert "Claude Code 2.1.332 installed into ~/.local (fetched here: its npm cannot reach its registry)" in ran.out
    assert "claude 2.1.332" in ran.out.split("agents: ", 1)[1].split(" free")[0], ran.out
    assert there(f"{machine.home}/.local/bin/claude", "--version").startswith(pins.AGENTS["claude"][1])
    assert "not signed in to Claude Code: run `ssh -t box 'PATH=$HOME/.local/bin:$PATH claude /login'`" in ran.out
    facts = json.loads((repo / ".git" / "balanced" / "ready.json").read_text())["box"]["agent_facts"]
    assert facts["claude"]["version"] == "2.1.332" and facts["claude"]["signed_in"] is False
    installs = [c for c in machine.commands() if " install -g " in c]
    assert installs and "--offline" in installs[-1] and "anthropic-ai-claude-code-2.1.332.tgz" in installs[-1]
    assert not (machine.home / ".balanced" / "packs").exists(), "the copied packages are removed once installed"


def test_a_claude_piece_then_runs_there_against_the_scripted_server_and_lands(machine: Machine,
                                                                              tmp_path: Path) -> None:
    # Signed in as a user would be with an API key, kept in Claude Code's own settings there (`env`), pointed at
    # the scripted server on this host's loopback; this machine is unticked, so the piece can go only there.
    with ModelServer([commit_turn("landed.txt", "from box"), say("Done.")]) as server:
        settings = {"env": {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "sk-ant-api03-scripted",
                            "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1", "CLAUDE_CODE_MAX_RETRIES": "0",
                            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}}
        there("sh", "-c", "mkdir -p ~/.claude && cat > ~/.claude/settings.json", input=json.dumps(settings))
        try:
            repo = project(tmp_path, CLAUDE)
            assert balanced(repo, "allow", "--yes").code == 0
            assert balanced(repo, "untick", "local").code == 0
            ran = balanced(repo, "ready", "box", "--yes")  # installed already by the test before: nothing to do
            assert ran.code == 0 and "installing" not in ran.out, ran.out
            ran = plan(repo, [agent_piece("landed", "claude")], "--start")
            assert ran.code == 0 and " box: " in ran.out, ran.out
            assert engine(repo, "--until-idle").code == 0
        finally:
            there("rm", "-f", f"{machine.home}/.claude/settings.json")
    rows = board(repo)["jobs"]
    assert [(r["piece"], r["machine"], r["state"]) for r in rows] == [  # type: ignore[union-attr]
        ("landed", "box", "landed")], rows
    assert git(repo, "show", "main:landed.txt") == "from box"
    assert server.main_requests(), "the machine's Claude Code asked the scripted server"


# Pi's tree is installed and packed here on the first run only, then kept in a cache of carried trees that
# outlives the run (tests/machines/prepare/test_carry.py packs one every run).
TREES = agent_home.XDG_CACHE
PI_VERSION = pins.AGENTS["pi"][1]
PI_TREE = pins.AGENTS["pi"][0].replace("@", "").replace("/", "-") + f"-{PI_VERSION}-linux-x64"


def test_pi_and_its_dependencies_reach_a_machine_whose_npm_cannot_reach_its_registry(
        machine: Machine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Pi needs Node.js 22.19 or newer (the machine has an older one) and has dependencies of its own: its tree,
    # installed here (or kept from an earlier run), goes over.
    monkeypatch.setenv("XDG_CACHE_HOME", str(TREES))
    record = TREES / "git-balanced" / "trees" / f"{PI_TREE}.json"
    kept_before = record.is_file()
    with closed_registry():
        repo = project(tmp_path, PI)
        ran = balanced(repo, "ready", "box", "--yes")
    assert ran.code == 0, ran
    from_cache = f"box: Pi {PI_VERSION} came from the cache of carried trees ({TREES}/git-balanced/trees)"
    assert (from_cache in ran.out) == kept_before, ran.out  # said exactly when a run before kept the tree
    assert f"Node.js {pins.NODE_VERSION} in ~/.local" in ran.out, ran.out
    assert f"box: its npm cannot reach its registry; fetching Pi {PI_VERSION} here and copying it over" in ran.out
    assert f"Pi {PI_VERSION} installed into ~/.local (fetched here: its npm cannot reach its registry)" in ran.out
    assert there("sh", "-c", "PATH=$HOME/.local/bin:$PATH pi --version 2>&1").endswith(pins.AGENTS["pi"][1])
    assert f"pi {PI_VERSION}" in ran.out.split("agents: ", 1)[1].split(" free")[0], ran.out
    assert not [c for c in machine.commands() if " install " in c and "pi-coding-agent" in c], \
        "its own npm was not asked for Pi"
    assert [c for c in machine.commands() if f"{PI_TREE}.tgz" in c], \
        "the tree was copied"
    kept = json.loads(record.read_text())
    assert kept["bin"] == {"pi": "dist/bundle/cli.js"} and kept["version"] == PI_VERSION, "kept for the next machine"
    assert not (machine.home / ".balanced" / "packs").exists(), "the copied tree is removed once unpacked"


SECRET = "sk-ant-oat01-never-shown-" + "7" * 24


def test_share_sign_in_copies_the_credentials_file_and_never_shows_it(machine: Machine, tmp_path: Path) -> None:
    home = Path(os.environ["HOME"])
    (home / ".claude").mkdir()
    creds = json.dumps({"claudeAiOauth": {"accessToken": SECRET, "refreshToken": SECRET + "-r",
                                          "expiresAt": 4102444800000, "scopes": ["user:inference"]}})
    (home / ".claude" / ".credentials.json").write_text(creds)
    # Claude Code keeps the account's name in ~/.claude.json, beside other things of this machine (an API key).
    account = {"accountUuid": "u-ada", "emailAddress": "ada@example.com", "organizationUuid": "o-ada",
               "organizationName": "Ada's Lab"}
    (home / ".claude.json").write_text(json.dumps({"oauthAccount": {**account, "billingType": "stripe"},
                                                   "primaryApiKey": SECRET + "-api", "numStartups": 9}))
    repo = project(tmp_path, SHELL)
    there("sh", "-c", "rm -rf ~/.claude ~/.claude.json")
    outputs = []

    ran = balanced(repo, "ready", "box", "--yes", "--share-sign-in", "claude")
    outputs.append(ran.out + ran.err)
    assert ran.code == 0, ran
    assert "claude sign-in of ada@example.com copied to ~/.claude/.credentials.json (mode 600)" in ran.out, ran.out
    assert there("stat", "-c", "%a", f"{machine.home}/.claude/.credentials.json") == "600"
    assert there("cat", f"{machine.home}/.claude/.credentials.json") == creds
    # Only the account's fields go into its ~/.claude.json there (mode 600), and its Claude Code names it.
    assert "; its account's name in ~/.claude.json" in ran.out, ran.out
    assert there("stat", "-c", "%a", f"{machine.home}/.claude.json") == "600"
    copied = json.loads(there("cat", f"{machine.home}/.claude.json"))  # its CLI adds its own keys when it runs
    assert copied["oauthAccount"] == account and "primaryApiKey" not in copied, copied
    status = json.loads(there("sh", "-c", "PATH=$HOME/.local/bin:$PATH claude auth status"))
    assert status["loggedIn"] and status["email"] == "ada@example.com" and status["orgName"] == "Ada's Lab", status
    outputs.append(json.dumps(status))
    rows = {r["name"]: r for r in json.loads(balanced(repo, "machines", "--json").out)}
    assert rows["box"]["facts"]["agents"]["claude"]["account"] == "ada@example.com", rows["box"]["facts"]

    # Another account there is kept, unless --replace.
    theirs = creds.replace(SECRET, "sk-ant-oat01-theirs")
    there("sh", "-c", "cat > ~/.claude/.credentials.json", input=theirs)
    bob = {"oauthAccount": {"emailAddress": "bob@example.com"}, "numStartups": 5}
    there("sh", "-c", "cat > ~/.claude.json", input=json.dumps(bob))
    ran = balanced(repo, "ready", "box", "--share-sign-in", "claude")
    outputs.append(ran.out + ran.err)
    assert "kept its own claude sign-in (bob@example.com); `--replace` puts ada@example.com's there" in ran.out
    assert there("cat", f"{machine.home}/.claude/.credentials.json") == theirs
    assert json.loads(there("cat", f"{machine.home}/.claude.json"))["oauthAccount"] == bob["oauthAccount"], \
        "its account's name is kept too"
    ran = balanced(repo, "ready", "box", "--share-sign-in", "claude", "--replace")
    outputs.append(ran.out + ran.err)
    assert "copied to ~/.claude/.credentials.json (mode 600), replacing bob@example.com" in ran.out, ran.out
    assert there("cat", f"{machine.home}/.claude/.credentials.json") == creds
    copied = json.loads(there("cat", f"{machine.home}/.claude.json"))
    assert copied["oauthAccount"] == account and copied["numStartups"] >= 5, "the rest of that file stays"

    # Nothing of it in any output, in what the machine logged, in the state files or in any object of the repo.
    objects = subprocess.run(["git", "-C", str(repo), "cat-file", "--batch-all-objects", "--batch"],
                             capture_output=True, check=True).stdout.decode("utf-8", "replace")
    state = "".join(p.read_text(errors="replace") for p in (repo / ".git" / "balanced").rglob("*") if p.is_file())
    for where, text in [("output", "".join(outputs)), ("commands", "\n".join(machine.commands())),
                        ("sshd log", machine.log()), ("objects", objects), ("state files", state),
                        ("refs", git(repo, "for-each-ref"))]:
        assert SECRET not in text and "never-shown" not in text, f"the secret is in the {where}"


def test_an_agent_left_running_by_a_killed_worker_is_stopped_and_nothing_else(machine: Machine,
                                                                               tmp_path: Path) -> None:
    repo = project(tmp_path, SHELL)
    assert balanced(repo, "ready", "box", "--yes").code == 0
    t = Transport("box")
    tip = git(repo, "rev-parse", "HEAD")
    copy = json.loads((repo / ".git" / "balanced" / "ready.json").read_text())["box"]["repo_path"]
    req = {"job": "j-left-1", "repo": copy, "worktree": "~/.balanced/worktrees/j-left-1",
           "branch": "balanced/left", "base": tip, "argv": ["sleep", "3600"], "runs_dir": runfiles.RUNS_DIR}
    res = t.run_python(runner.source(), ["start"], input=json.dumps(req))
    runner_pid = json.loads(res.out.strip().splitlines()[-1])["pid"]
    agent_file = machine.home / ".balanced" / "runs" / "j-left-1" / "agent_pid"
    agent_pid = wait_until(lambda: agent_file.exists() and int(agent_file.read_text().split()[0]), 30,
                           "the worker's agent to start")
    os.kill(runner_pid, signal.SIGKILL)  # the worker dies; its agent, in a session of its own, lives on
    wait_until(lambda: not runfiles.alive(runner_pid), 10, "the runner to die")
    other = int(there("sh", "-c", "setsid sleep 3601 >/dev/null 2>&1 < /dev/null & echo $!"))
    try:
        ran = balanced(repo, "ready", "box")
        assert ran.code == 0 and f"left running by earlier workers: sleep (pid {agent_pid}) of job j-left-1; " \
                                 "`git balanced ready box --yes` stops them" in ran.out, ran.out
        assert runfiles.alive(agent_pid), "without --yes, nothing is stopped"

        ran = balanced(repo, "ready", "box", "--yes")
        assert ran.code == 0, ran
        assert f"stopped sleep (pid {agent_pid}) of job j-left-1, left running by an earlier worker" in ran.out
        wait_until(lambda: not runfiles.alive(agent_pid), 10, "the left agent to be gone")
        assert runfiles.alive(other), "a process of the machine that no worker left is not touched"
        assert agent_file.parent.is_dir(), "the run folder stays, for `doctor` to show"
        assert "stopped" not in balanced(repo, "ready", "box", "--yes").out, "once stopped, nothing more"
    finally:
        with suppress(ProcessLookupError):
            os.kill(other, signal.SIGKILL)


def test_a_piece_tried_again_on_a_machine_killed_and_back_gets_its_branch_back(machine: Machine,
                                                                              tmp_path: Path) -> None:
    repo = project(tmp_path, SHELL)
    assert balanced(repo, "ready", "box", "--yes").code == 0
    tip = git(repo, "rev-parse", "HEAD")
    runs = machine.home / ".balanced" / "runs"
    # The machine serves every test of this module: each project's copy is its own (`proj`, `proj-<id>`).
    copy = json.loads((repo / ".git" / "balanced" / "ready.json").read_text())["box"]["repo_path"]

    def start(job: str, branch: str, script: str) -> None:
        req = {"job": job, "repo": copy, "worktree": f"~/.balanced/worktrees/{job}", "branch": branch,
               "base": tip, "argv": ["sh", "-c", script], "runs_dir": runfiles.RUNS_DIR}
        res = Transport("box").run_python(runner.source(), ["start"], input=json.dumps(req))
        assert res.ok, res.err

    def result(job: str) -> dict[str, object]:
        path = runs / job / "result.json"
        return wait_until(lambda: path.exists() and json.loads(path.read_text()), 60, f"{job} to finish")

    # The first attempt commits, then the machine dies under it, and comes back.
    start("j-stale-1", "balanced/stale", "echo a > a.txt && git add a.txt && git commit -qm a && exec sleep 3600")
    wait_until(lambda: there("git", "-C", copy, "log", "--format=%s", "-1", "balanced/stale") == "a", 30,
               "the first attempt's commit")
    machine.kill()
    machine.restart()
    old = machine.home / ".balanced" / "worktrees" / "j-stale-1"
    assert old.is_dir(), "the killed worker's worktree is still there, holding the branch"

    start("j-stale-2", "balanced/stale", "test -f a.txt && echo b > b.txt && git add b.txt && git commit -qm b")
    got = result("j-stale-2")
    assert got["error"] is None and got["exit_code"] == 0, (got, (runs / "j-stale-2" / "log").read_text())
    assert there("git", "-C", copy, "log", "--format=%s", f"{tip}..balanced/stale") == "b\na", "commits kept"
    assert not old.exists() and str(old) not in there("git", "-C", copy, "worktree", "list")
    assert "removed " in (runs / "j-stale-2" / "log").read_text()

    # A worktree whose job still runs is never taken from it.
    start("j-live-1", "balanced/live", "exec sleep 3600")
    wait_until(lambda: (runs / "j-live-1" / "agent_pid").exists(), 30, "j-live-1's agent to start")
    start("j-live-2", "balanced/live", "true")
    got = result("j-live-2")
    assert "balanced/live is checked out at " in str(got["error"]) and "by job j-live-1, which still runs" \
        in str(got["error"]), got
    assert (machine.home / ".balanced" / "worktrees" / "j-live-1").is_dir()
    assert there("sh", "-c", "kill $(head -1 ~/.balanced/runs/j-live-1/pid)") == ""
    result("j-live-1")
