"""`git balanced ready [NAME...] [--yes]`: prepare ticked machines to take this repository's workers.

For each machine: connect; find git, python3 and the agents; make the copy `~/<repository>` the first
time (`git init` there, then `git push`), later push only the new base; check free room and that git knows
who commits there. Setting that identity to yours is yours to decide: asked on a terminal, or done with
`--yes`. What was found is kept in `.git/balanced/ready.json` for placement and the remote workers.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field
from typing import Any

from git_balanced.errors import BalancedError
from git_balanced.lead import Lead
from git_balanced.machines import inventory
from git_balanced.machines.inventory import LOCAL
from git_balanced.machines.remote import GIT_TIMEOUT, copy_path, host_alias, transport_for
from git_balanced.machines.transport import MachineUnreachable, Transport

MIN_FREE_BYTES = 1 << 30  # a worktree per worker, and agents that install packages
AGENTS = ("claude", "codex", "pi")
INSTALL = {"claude": "npm install -g @anthropic-ai/claude-code", "codex": "npm install -g @openai/codex",
           "pi": "npm install -g @mariozechner/pi-coding-agent"}

# Runs there with the machine's python3 (stdlib only). The request comes on stdin; it answers one JSON line.
LOOK = r'''
import json, os, shutil, subprocess, sys
req = json.loads(sys.stdin.read())
home = os.path.expanduser("~")
copy = os.path.join(home, req["name"])
ans = {"home": home, "repo_path": copy, "python": sys.version.split()[0], "created": False,
       "agents": {a: shutil.which(a) for a in req["agents"]}, "free": shutil.disk_usage(home).free}

def git(*args):
    try:
        p = subprocess.run(["git"] + list(args), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
    except OSError as exc:
        return 127, str(exc)
    return p.returncode, p.stdout.decode("utf-8", "replace").strip()

code, out = git("--version")
ans["git"] = out.split()[-1] if code == 0 else None
if ans["git"]:
    if not os.path.exists(copy):
        code, out = git("init", "-q", copy)
        if code == 0:
            git("-C", copy, "symbolic-ref", "HEAD", "refs/heads/" + req["branch"])
            # The copy's checkout follows the lead's pushes while nobody edits it there.
            git("-C", copy, "config", "receive.denyCurrentBranch", "updateInstead")
            git("-C", copy, "config", "balanced.copy", "true")
            ans["created"] = True
        else:
            ans["problem"] = "`git init " + copy + "` failed there: " + out
    if "problem" not in ans:
        code, top = git("-C", copy, "rev-parse", "--show-toplevel")
        if code != 0 or os.path.realpath(top) != os.path.realpath(copy):
            ans["problem"] = copy + " exists there and is not a git repository of its own"
        else:
            ans["ours"] = git("-C", copy, "config", "--bool", "balanced.copy")[1] == "true"
            ans["user_name"] = git("-C", copy, "config", "user.name")[1]
            ans["user_email"] = git("-C", copy, "config", "user.email")[1]
            code, had = git("-C", copy, "rev-parse", "-q", "--verify", "refs/balanced/base/" + req["branch"])
            ans["had_base"] = had if code == 0 else None
print(json.dumps(ans))
'''


@dataclass
class Found:
    """What `ready` found on one machine."""

    name: str
    ready: bool = False
    why: str = ""
    hint: str = ""
    words: list[str] = field(default_factory=list)
    record: dict[str, Any] = field(default_factory=dict)


class NotReady(Exception):
    def __init__(self, why: str, hint: str = "") -> None:
        super().__init__(why)
        self.why, self.hint = why, hint


def ask(question: str) -> bool:
    """A yes/no question on the terminal; without one, the answer is no."""
    if not sys.stdin.isatty():
        return False
    try:
        return input(f"{question} [y/N] ").strip().lower() in ("y", "yes")
    except EOFError:
        return False


def lead_identity(lead: Lead) -> tuple[str, str] | None:
    """The name and email git commits with here."""
    res = lead.repo.run("var", "GIT_COMMITTER_IDENT")
    m = re.match(r"^(.*?) <([^>]*)>", res.out.strip()) if res.ok else None
    return (m.group(1), m.group(2)) if m and m.group(1) and m.group(2) else None


def prepare(lead: Lead, name: str, *, yes: bool, agent: str) -> Found:
    """Prepare one machine and record what was found; never raises for what is wrong there."""
    found = Found(name)
    if name == LOCAL:
        found.ready = True
        found.words = ["this machine"]
        return found
    try:
        _prepare(lead, found, yes=yes, agent=agent)
        found.ready = True
    except NotReady as exc:
        found.why, found.hint = exc.why, exc.hint
    except MachineUnreachable as exc:
        found.why, found.hint = f"it cannot be reached: {exc.detail or exc.message}", exc.hint or ""
    except BalancedError as exc:
        found.why, found.hint = exc.message, exc.hint or ""
    inventory.set_readiness(lead.repo, name, {**found.record, "ready": found.ready, "why": found.why})
    return found


def _prepare(lead: Lead, found: Found, *, yes: bool, agent: str) -> None:
    name = found.name
    alias = host_alias(name)
    t = transport_for(alias)
    copy_path("/", lead.repo.name)  # refuses a folder name that cannot be one there
    req = {"name": lead.repo.name, "branch": lead.branch, "agents": list(AGENTS)}
    res = t.run_python(LOOK, [], input=json.dumps(req), timeout=60)
    if res.code == 127 or "python3: not found" in res.err or "python3: command not found" in res.err:
        raise NotReady("python3 is not installed there (or not on the PATH of a command run over SSH)",
                       f"install python3 on {name}, then `git balanced ready {name}`")
    try:
        got = json.loads(res.out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise NotReady(f"it did not answer as expected: {(res.err or res.out).strip()[-300:]}",
                       f"try `ssh {alias} python3 --version`") from None
    agents = sorted(a for a, path in got["agents"].items() if path)
    found.record = {"home": got["home"], "repo_path": got["repo_path"], "git": got.get("git"),
                    "python": got["python"], "agents": agents, "free_bytes": got["free"], "host": alias}
    if not got.get("git"):
        raise NotReady("git is not installed there (or not on the PATH of a command run over SSH)",
                       f"install git on {name}, then `git balanced ready {name}`")
    if got.get("problem"):
        raise NotReady(got["problem"], f"move it aside on {name}, then `git balanced ready {name}`")
    if agent != "shell" and agent not in agents:
        raise NotReady(f"{agent}, the agent of this repository's settings, is not on the PATH there",
                       f"install it on {name} (`{INSTALL.get(agent, agent)}`), or make sure a command run "
                       f"over SSH finds it (`ssh {alias} {agent} --version`), then `git balanced ready {name}`")
    if got["free"] < MIN_FREE_BYTES:
        raise NotReady(f"only {_size(got['free'])} is free in {got['home']} there, less than "
                       f"{_size(MIN_FREE_BYTES)}", f"make room on {name}, then `git balanced ready {name}`")
    _identity(lead, found, t, got, yes=yes)
    tip = _push(lead, found, t, got)
    found.record["base"] = tip
    had = got.get("had_base")
    copied = "copied now" if not had else f"up to date at {tip[:7]}" if had == tip else \
        f"base moved from {had[:7]} to {tip[:7]}"
    found.words[:0] = [f"git {got['git']}", f"python {got['python']}",
                       "agents: " + (", ".join(agents) or "none"), f"{_size(got['free'])} free",
                       f"{got['repo_path']} ({copied})"]


def _identity(lead: Lead, found: Found, t: Transport, got: dict[str, Any], *, yes: bool) -> None:
    if got.get("user_name") and got.get("user_email"):
        found.record["identity"] = f"{got['user_name']} <{got['user_email']}>"
        return
    mine = lead_identity(lead)
    copy = got["repo_path"]
    if mine is None:
        raise NotReady("git does not know who commits there, nor here",
                       f"set it there: `ssh {t.name} git config --global user.name 'Your Name'` and "
                       f"`... user.email you@example.com`, then `git balanced ready {found.name}`")
    who = f"{mine[0]} <{mine[1]}>"
    if not (yes or ask(f"git does not know who commits on {found.name}. Commit there as {who}?")):
        raise NotReady("git does not know who commits there",
                       f"`git balanced ready {found.name} --yes` sets it to {who} in {copy} there")
    with t.machine() as there:
        git = there["git"]
        for key, value in (("user.name", mine[0]), ("user.email", mine[1])):
            res = t.run_command(git["-C", copy, "config", key, value])
            if not res.ok:
                raise NotReady(f"could not set git's {key} there: {res.err.strip()}")
    found.record["identity"] = who


def _push(lead: Lead, found: Found, t: Transport, got: dict[str, Any]) -> str:
    """Push the lead's tip as the base; into a copy made by `ready`, onto its branch too (its checkout)."""
    tip = lead.repo.rev_parse(lead.ref)
    if tip is None:
        raise BalancedError(f"The lead's branch {lead.branch} has no commits yet.", hint="make a first commit.")
    specs = [f"+{tip}:refs/balanced/base/{lead.branch}"]
    if got.get("ours"):
        specs.append(f"{tip}:refs/heads/{lead.branch}")
    env = t.git_env()
    with t.slot(GIT_TIMEOUT):
        res = lead.repo.run("push", "--porcelain", "--no-verify", t.git_url(got["repo_path"]), *specs, env=env,
                            timeout=GIT_TIMEOUT)
    lines = res.out.splitlines()
    if any(line.startswith("!") and "refs/balanced/base/" in line for line in lines) or \
            (res.code != 0 and not any(line.startswith("!") for line in lines)):
        raise NotReady(f"could not push {lead.branch} there: {(res.err or res.out).strip()[-300:]}",
                       f"try `git push {t.git_url(got['repo_path'])} {lead.branch}` to see why")
    if res.code != 0:  # only the copy's checkout refused (edited there): workers start from the base all the same
        found.words.append(f"its checkout of {lead.branch} was left as it is (changed there)")
    return tip


def _size(n: int) -> str:
    return f"{n / (1 << 30):.1f} GB" if n >= 1 << 30 else f"{n / (1 << 20):.0f} MB"
