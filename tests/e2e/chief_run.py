"""The chief, whole: real Claude Code (then Pi) as the headless chief over two projects, one here and one on an sshd
machine, each with a headless Claude Code lead the chief starts, against scripted model servers (each session
takes the turns of its own script). Each lead plans shell pieces that ask; it passes their questions on; the chief
answers one (its worker reads `Your chief says: …`) and hands the others to the person; the chief notes a review;
the person sees every project's Now in one list and allows four at once; the chief's `land` and `ship` through
its shell are refused with the reason."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import agent_home
from tests.support.builders import git, make_repo
from tests.support.cli import balanced
from tests.support.model_server import call_tool, run_shell, say
from tests.support.real_agents import LEAD_POLL
from tests.support.routed import Each, Routed, Script
from tests.support.sshd import Machine, known_in
from tests.support.wait import wait_until

# The two runs (tests/e2e/test_chief_claude.py, test_chief_pi.py) are two modules, so two test processes take them.
MARKS = [pytest.mark.sshd, pytest.mark.agents, pytest.mark.timeout(900)]  # three agent sessions at once

ROOT = Path(__file__).resolve().parents[2]
SITE = Path(sys.prefix) / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
SETTINGS = '[worktree]\ncheck = "true"\n[balanced]\nagent = "shell"\n'
CHIEF = "You are the chief for git balanced"
SHOP_TASK = "Shop: name the module and ready the migrations."
IOS_TASK = "Ios: ready the app's caches."
ASKS = r"asks \((?P<key>q[a-z0-9]{5})\)"
PASSED = (r"(?P<project>shop|ios): (?P<piece>[a-z-]+) asks \((?P<key>q[a-z0-9]{5})\), passed on by its lead: "
          r"(?P<text>[^·]*)")
REVIEW = r"shop: its lead put work to the person, row (?P<row>\d+) \((?P<key>r[a-z0-9]{5})\)"
NOTE = "ship this one first: ios builds on it"


def asking(pid: str, question: str) -> dict[str, object]:
    return {"id": pid, "task": f"Do {pid}.", "agent": "shell",
            "run": f"git balanced ask '{question}' > {pid}.txt"}


SHOP = [asking("namer", "Which name should the module have?"), asking("migrate", "May I run the migration?"),
        asking("seed", "May I load the seed data?")]
IOS = [asking("cache", "May I clear the cache?"), asking("assets", "May I rebuild the assets?")]
# With Pi as the chief, only what the chief does is run again: one question, and a piece that lands without asking.
PLAIN = [{"id": "icons", "task": "Do icons.", "agent": "shell", "run": "echo ok > icons.txt"}]


def lead_script(pieces: list[dict[str, object]], task: str) -> Script:
    return Script([(None, [call_tool("plan", {"task": task, "pieces": pieces}), say("Planned.")]),
                   ("asks \\(q", [Each(ASKS, lambda m: call_tool("pass", {"id": m["key"]})),
                                  say("Passed them on.")]),
                   ("landed in main", [call_tool("put_to_you", {"summary": f"{task} Done, as far as it landed."}),
                                       say("Put to the person.")])])


def chief_script() -> Script:
    def settle(m: object) -> object:
        g = m  # a re.Match
        if "Which name" in g["text"]:  # type: ignore[index]
            return call_tool("answer", {"project": g["project"], "question": g["key"],  # type: ignore[index]
                                        "text": "Call it calc."})
        return call_tool("pass_on", {"project": g["project"], "question": g["key"]})  # type: ignore[index]

    start = [call_tool("start_lead", {"project": "shop", "task": SHOP_TASK, "agent": "claude"}),
             call_tool("start_lead", {"project": "ios", "task": IOS_TASK, "agent": "claude"}),
             run_shell("git balanced land --all"), run_shell("git -C ../shop balanced ship --yes"),
             say("Both leads run.")]
    note = Each(REVIEW, lambda m: call_tool("note", {"project": "shop", "row": m["row"], "text": NOTE}))
    return Script([(None, start), (None, [Each(PASSED, settle), note, say("Settled what came.")])])  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, agent_bin: str
          ) -> Iterator[tuple[Routed, Routed, Machine, Path]]:
    """(A module fixture of each test module that imports it.) The scripted servers (Claude Code's, Pi's) and
    the sshd machine `box`, whose sessions run this checkout's
    git balanced on the system's Python and Claude Code against the server."""
    with Routed() as server, Routed() as pi:
        env = {k: v for k, v in agent_home.claude_env(Path("/nonexistent"), server.url).items()
               if k.startswith(("ANTHROPIC_", "DISABLE_", "CLAUDE_"))}
        node = os.path.dirname(agent_home.claude_env(Path("/x"), server.url)["PATH"].split(os.pathsep)[0])
        env.update(PATH=os.pathsep.join([agent_bin, node, "/usr/local/bin", "/usr/bin", "/bin"]),
                   PYTHONPATH=f"{ROOT}{os.pathsep}{SITE}", GIT_BALANCED_LEAD_POLL=LEAD_POLL)  # ios's lead too
        base = tmp_path_factory.mktemp("chief")
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("GIT_BALANCED_SSH_CONFIG", str(base / "ssh_config"))
            from tests.support.sshd import sshd_machines

            with sshd_machines(base, ["box"], {"box": env}) as ms:
                box = ms[0]
                _install_there(box)
                yield server, pi, box, base / "ssh_config"


def _install_there(box: Machine) -> None:
    """git balanced in the machine's ~/.local/bin (this checkout, on the system's Python), and a git identity."""
    bin_dir = box.home / ".local" / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    (bin_dir / "git-balanced").write_text('#!/bin/sh\nexec /usr/bin/python3 -m git_balanced.cli "$@"\n')
    (bin_dir / "git-balanced").chmod(0o755)
    (box.home / ".gitconfig").write_text("[user]\n\tname = Box\n\temail = box@example.com\n")
    _own(box, box.home / ".local", box.home / ".gitconfig")


def _own(box: Machine, *paths: Path) -> None:
    if not box.own_user:
        return
    uid = pwd.getpwnam(box.user).pw_uid
    for top in paths:
        for p in [top, *top.rglob("*")] if top.is_dir() else [top]:
            os.chown(p, uid, uid)


def there(box: Machine, config: Path, command: str) -> str:
    cp = subprocess.run(["ssh", "-F", str(config), box.name, f'PATH="$HOME/.local/bin:$PATH"; {command}'],
                        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert cp.returncode == 0, f"{command}: {cp.stdout}\n{cp.stderr}"
    return cp.stdout


def run_the_chief(
        agent: str, world: tuple[Routed, Routed, Machine, Path], tmp_path: Path, agent_bin: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    server, pi, box, config = world
    home = Path(os.environ["HOME"])
    known_in(config, home)
    env = agent_home.claude_env(home, server.url)
    env.update(agent_home.pi_env(home, pi.url))
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("PATH", agent_bin + os.pathsep + os.environ["PATH"])
    # The chief looks over the projects every second, not every 5 s: each news hop (questions passed on, the
    # ios thread's answers, a review) waited up to a look for it.
    monkeypatch.setenv("GIT_BALANCED_CHIEF_LOOK", "1")
    monkeypatch.setenv("GIT_BALANCED_LEAD_POLL", LEAD_POLL)  # the leads' drivers, as tests/support/real_agents.py
    whole = agent == "claude"  # the person's side (four allowed at once) is the same whoever the chief is
    chief_server = server if whole else pi
    chief_server.scripts = [(CHIEF, chief_script())]
    leads = [(SHOP_TASK, lead_script(SHOP if whole else SHOP[:1], SHOP_TASK)),
             (IOS_TASK, lead_script(IOS if whole else PLAIN, IOS_TASK))]
    server.scripts = [*chief_server.scripts, *leads] if whole else leads

    shop = make_repo(tmp_path / "shop", {"README.md": "shop\n", ".magnum/settings.toml": SETTINGS})
    assert balanced(shop, "allow", "--yes").code == 0
    ios = box.home / f"ios-{tmp_path.name}"
    make_repo(ios, {"README.md": "ios\n", ".magnum/settings.toml": SETTINGS})
    _own(box, ios)
    there(box, config, f"cd {ios.name} && git balanced allow --yes")
    for args in (["machines", "add", "box"], ["projects", "add", str(shop), "--name", "shop"],
                 ["projects", "add", f"box:{ios.name}", "--name", "ios"]):
        ran = balanced(shop, *args)
        assert ran.code == 0, f"{args}: {ran.out}{ran.err}"

    started = balanced(shop, "chief", "start", "--agent", agent, "Start a lead in shop and one in ios.")
    assert started.code == 0, started.err
    try:
        def chief() -> dict[str, object]:
            return json.loads(balanced(shop, "chief", "status", "--json").out)

        wait_until(lambda: _file(shop, "namer.txt") == "Your chief says: Call it calc.\n",
                   600, "the chief's answer to reach the worker", every=1,
                   said=lambda: (chief(), chief_server.bodies(CHIEF)[-1:]))
        refusals = "\n".join(chief_server.bodies(CHIEF))
        assert "`git balanced land` is refused" in refusals, "the chief's land through its shell is refused"
        assert "`git balanced ship` is refused" in refusals, "and its ship"
        board = balanced(shop, "board")
        assert "Lead, started by the chief" in board.out, board.out
        # Each wait on every project's Now first waits on shop's own (read here, in this process): `now --all`
        # reads ios's board through ssh and a start of git balanced on the machine, most of a second of CPU a look.
        if whole:
            wait_until(lambda: _kinds(shop, "question") >= 2, 300, "shop's two questions under its Now", every=1,
                       said=lambda: balanced(shop, "now").out)
            questions = wait_until(lambda: _person_questions(shop), 300, "four questions under the person's Now",
                                   every=1, said=lambda: balanced(shop, "now", "--all").out)
            ran = balanced(shop, "answer", "--allow", *questions)
            assert ran.code == 0, ran.out + ran.err
        wait_until(lambda: _kinds(shop, "review") >= 1, 300, "shop's review", every=1,
                   said=lambda: balanced(shop, "now").out)
        wait_until(lambda: _reviews(shop) == 2, 300, "both leads' reviews", every=1,
                   said=lambda: balanced(shop, "now", "--all").out)
        wait_until(lambda: f"Chief: {NOTE}" in balanced(shop, "now").out, 300, "the chief's note in shop", every=1,
                   said=lambda: balanced(shop, "now").out)
        wait_until(lambda: f"Chief: {NOTE}" in balanced(shop, "now", "--all").out, 300, "the chief's note", every=1,
                   said=lambda: balanced(shop, "now", "--all").out)
        if whole:
            assert git(shop, "show", "main:migrate.txt") == "allowed"
            assert there(box, config, f"cd {ios.name} && git show main:cache.txt").strip() == "allowed"
    finally:
        balanced(shop, "chief", "stop")
        balanced(shop, "lead", "stop")
        balanced(shop, "engine", "--stop")
        subprocess.run(["ssh", "-F", str(config), box.name, f'PATH="$HOME/.local/bin:$PATH"; cd {ios.name} && '
                        "git balanced lead stop; git balanced engine --stop"], capture_output=True, timeout=120)
        shutil.rmtree(ios, ignore_errors=True)


def _file(repo: Path, path: str) -> str | None:
    cp = subprocess.run(["git", "show", f"main:{path}"], cwd=repo, capture_output=True, text=True)
    return cp.stdout if cp.returncode == 0 else None


def _now_all(shop: Path) -> list[dict[str, object]]:
    ran = balanced(shop, "now", "--all", "--json")
    assert ran.code == 0, ran.err
    return list(json.loads(ran.out)["now"])


def _kinds(shop: Path, kind: str) -> int:
    """How many rows of `kind` shop's own Now has (read here, in this process)."""
    ran = balanced(shop, "now", "--json")
    assert ran.code == 0, ran.err
    return sum(1 for r in json.loads(ran.out)["now"] if r.get("kind") == kind)


def _person_questions(shop: Path) -> list[str] | None:
    found = [str(r["name"]) for r in _now_all(shop) if r.get("kind") == "question"]
    return found if len(found) == 4 else None


def _reviews(shop: Path) -> int:
    return sum(1 for r in _now_all(shop) if r.get("kind") == "review")
