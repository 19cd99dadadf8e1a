"""`git balanced ready [NAME...] [--yes]`: prepare ticked machines to take this repository's workers.

For each machine: connect; find git, python3 and the agents; make the copy `~/<repository>` the first
time (`git init` there, then `git push`), later push only the new base; check free room and that git knows
who commits there. Setting that identity to yours is yours to decide: asked on a terminal, or done with
`--yes`; so is installing what is missing there (install.py: git, Node.js, the agents the settings and plans
use) and stopping the agents earlier workers left running. Each agent's version and sign-in are then asked of
the machine (agents_probe.py). What was found is kept in `.git/balanced/ready.json` for placement and the
remote workers.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field
from typing import Any

from git_balanced import ui
from git_balanced.errors import BalancedError
from git_balanced.jobs import all_jobs, all_plans
from git_balanced.lead import Lead, settings_at
from git_balanced.machines.inventory import pins
from git_balanced.machines.inventory import records as inventory
from git_balanced.machines.inventory.records import LOCAL, host_alias
from git_balanced.machines.prepare import agents_probe, boxready, install, left_there, leftovers, signin
from git_balanced.machines.reach import copies
from git_balanced.machines.reach.copies import copy_path
from git_balanced.machines.reach.remote import GIT_TIMEOUT, transport_for
from git_balanced.machines.reach.transport import MachineUnreachable, Transport
from git_balanced.untrusted import machine_program

MIN_FREE_BYTES = 1 << 30  # a worktree per worker, and agents that install packages
AGENTS = tuple(pins.AGENTS)
PREFIX_PATH = ["~/.local/bin"]  # where `ready` installs the agents there, searched before the PATH

# Runs there with the machine's python3 (stdlib only). The request comes on stdin; it answers one JSON line.
LOOK = r'''
import json, os, shutil, subprocess, sys
req = json.loads(sys.stdin.read())
home = os.path.expanduser("~")
path = os.path.join(home, ".local", "bin") + os.pathsep + os.environ.get("PATH", os.defpath)
ans = {"home": home, "python": sys.version.split()[0], "created": False,
       "agents": {a: shutil.which(a, path=path) for a in req["agents"]},
       "on_path": [a for a in req["agents"] if shutil.which(a)], "free": shutil.disk_usage(home).free}

def git(*args):
    # A folder there may hold anyone's repository: none of its hooks or commands it configures run here.
    safe = ["-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null"]
    try:
        p = subprocess.run(["git"] + safe + list(args), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
    except OSError as exc:
        return 127, str(exc)
    return p.returncode, p.stdout.decode("utf-8", "replace").strip()

code, out = git("--version")
ans["git"] = out.split()[-1] if code == 0 else None
''' + copies.CHOOSE + r'''
ans["repo_path"] = copy
if ans["git"] and "problem" not in ans:
    if kind == "free":
        code, out = git("init", "-q", copy)
        if code == 0:
            git("-C", copy, "symbolic-ref", "HEAD", "refs/heads/" + req["branch"])
            git("-C", copy, "config", "balanced.copy", "true")
            ans["created"] = True
        else:
            ans["problem"] = "`git init " + copy + "` failed there: " + out
    if "problem" not in ans and kind in ("free", "older"):  # this repository's from now on
        git("-C", copy, "config", "balanced.repository", req["id"])
        git("-C", copy, "config", "balanced.root", req["root"])
        ans["claimed"] = kind == "older"
    if "problem" not in ans:
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
    notes: list[str] = field(default_factory=list)  # lines under the machine's: what was stopped, sign-in


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
    ident = lead.repo.committer_ident()
    m = re.match(r"^(.*?) <([^>]*)>", ident) if ident else None
    return (m.group(1), m.group(2)) if m and m.group(1) and m.group(2) else None


@dataclass(frozen=True)
class Options:
    """What `ready` was asked to do besides looking: yes to all, and a sign-in to share."""

    yes: bool = False
    share: str | None = None
    replace: bool = False


def wanted_agents(lead: Lead) -> list[str]:
    """The agent CLIs this repository uses: its settings' (`[balanced] agent`, `[agents.*]`) and its plans'."""
    names = agents_probe.configured_agents(settings_at(lead.repo, lead.branch))
    for plan in all_plans(lead.repo).values():
        if plan.state in ("created", "started"):
            names += [p.agent for p in plan.pieces if p.agent in pins.AGENTS]
    return [a for a in dict.fromkeys(names) if a in pins.AGENTS]


def prepare(lead: Lead, name: str, *, yes: bool, agent: str, options: Options | None = None,
            say: Any = ui.say) -> Found:
    """Prepare one machine and record what was found; never raises for what is wrong there."""
    options = options or Options(yes=yes)
    found = Found(name)
    if name == LOCAL:
        found.ready = True
        found.words = ["this machine"]
        _stop_left_agents(found, None, options.yes)
        _left_behind(lead, found, None, options.yes)
        return found
    try:
        spec = inventory.box_of(name)
        if spec is not None:
            _prepare_box(lead, found, spec, agent)
        else:
            _prepare(lead, found, yes=options.yes, agent=agent, options=options, say=say)
        found.ready = True
    except NotReady as exc:
        found.why, found.hint = exc.why, exc.hint
    except MachineUnreachable as exc:
        found.why, found.hint = f"it cannot be reached: {exc.detail or exc.message}", exc.hint or ""
    except BalancedError as exc:
        found.why, found.hint = exc.message, exc.hint or ""
    inventory.set_readiness(lead.repo, name, {**found.record, "ready": found.ready, "why": found.why})
    return found


def _look(lead: Lead, t: Transport, name: str, alias: str) -> dict[str, Any]:
    ident = copies.identity(lead.repo, lead.ref)
    req = {"name": lead.repo.name, "branch": lead.branch, "agents": list(AGENTS), "id": ident.id, "root": ident.root}
    res = t.run_python(LOOK, [], input=json.dumps(req), timeout=60)
    if res.code == 127 or "python3: not found" in res.err or "python3: command not found" in res.err:
        raise NotReady("python3 is not installed there (or not on the PATH of a command run over SSH)",
                       f"install python3 on {name}, then `git balanced ready {name}`")
    try:
        got: dict[str, Any] = json.loads(res.out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise NotReady(f"it did not answer as expected: {(res.err or res.out).strip()[-300:]}",
                       f"try `ssh {alias} python3 --version`") from None
    return got


def _prepare_box(lead: Lead, found: Found, spec: Any, agent: str) -> None:
    """A box machine: its engine, its image and what a box of it has (boxready.py); the boxes of jobs that
    ended are removed (ours alone: labelled with this repository and a job no longer live)."""
    wanted = [a for a in dict.fromkeys([*wanted_agents(lead), agent]) if a in AGENTS]
    found.record = boxready.check(lead, found.name, spec, wanted)
    found.words += [spec.words(), f"git {found.record['git']}", f"python {found.record['python']}",
                    "agents: " + (", ".join(wanted) or "none needed")]
    left = boxready.leftovers(lead.repo, found.name, spec)
    if left:
        boxready.remove(found.name, spec, left)
        found.notes.append(f"removed {len(left)} boxes of jobs that ended: {', '.join(f.name for f in left)}")


def _prepare(lead: Lead, found: Found, *, yes: bool, agent: str, options: Options, say: Any) -> None:
    name = found.name
    alias = host_alias(name)
    t = transport_for(alias)
    copy_path("/", lead.repo.name)  # refuses a folder name that cannot be one there
    got = _look(lead, t, name, alias)
    if not got.get("git"):
        if not (yes or ask(f"git is not installed on {name}. Install it?")):
            raise NotReady("git is not installed there (or not on the PATH of a command run over SSH)",
                           f"`git balanced ready {name} --yes` installs it (with `sudo -n`), or install it "
                           f"there yourself, then `git balanced ready {name}`")
        try:
            found.words.append(install.install_git(t, install.facts(t, []), say))
        except install.CannotInstall as exc:
            raise NotReady(exc.why, exc.hint) from None
        got = _look(lead, t, name, alias)
    found.record = _record(got, alias)
    if not got.get("git"):
        raise NotReady("git is not installed there (or not on the PATH of a command run over SSH)",
                       f"install git on {name}, then `git balanced ready {name}`")
    if got.get("elsewhere"):  # `~/<repository>` there is not this repository's: it is never used
        found.notes.append(f"{got['elsewhere']}: this repository's copy there is {got['repo_path']}")
    if got.get("problem"):
        raise NotReady(got["problem"], f"move one aside on {name}, then `git balanced ready {name}`")
    if got["free"] < MIN_FREE_BYTES:
        raise NotReady(f"only {_size(got['free'])} is free in {got['home']} there, less than "
                       f"{_size(MIN_FREE_BYTES)}", f"make room on {name}, then `git balanced ready {name}`")
    wanted = wanted_agents(lead)
    todo = [a for a in wanted if not got["agents"].get(a)]
    if todo:
        if yes or ask(f"Install {install.described(todo)} on {name} (into {install.PREFIX}, with npm)?"):
            _install(found, t, wanted, todo, agent, say)
            got = _look(lead, t, name, alias)
            found.record = _record(got, alias)
        elif agent in todo:
            raise NotReady(f"{agent}, the agent of this repository's settings, is not installed there",
                           f"`git balanced ready {name} --yes` installs {install.described(todo)} into "
                           f"{install.PREFIX} there (with npm)")
    agents = found.record["agents"]
    if agent != "shell" and agent not in agents:
        raise NotReady(f"{agent}, the agent of this repository's settings, is not installed there",
                       f"`git balanced ready {name} --yes` installs it into {install.PREFIX} there (with npm)")
    _stop_left_agents(found, t, yes)
    _left_behind(lead, found, t, yes)
    if options.share:
        shared = signin.share(t, options.share, replace=options.replace)
        found.words.append(shared.words)
    # Asked again now, and kept for placement: what was installed or shared counts at once.
    asked = list(dict.fromkeys(wanted + ([options.share] if options.share else [])))
    facts = agents_probe.ask(name, t, asked, path=PREFIX_PATH) if asked else None
    old_node = [a for a, f in (facts or {}).get("agents", {}).items() if f.get("installed") and f.get("node_too_old")]
    if old_node and (yes or ask(f"{install.described(old_node)} needs a newer Node.js on {name}. Install it?")):
        _install(found, t, wanted, [], agent, say)
        facts = agents_probe.ask(name, t, asked, path=PREFIX_PATH)
    _identity(lead, found, t, got, yes=yes)
    tip = _push(lead, t, got)
    found.record["base"] = tip
    had = got.get("had_base")
    copied = "copied now" if not had else f"up to date at {tip[:7]}" if had == tip else \
        f"base moved from {had[:7]} to {tip[:7]}"
    owner = copies.identity(lead.repo, lead.ref)
    found.record["repository"] = owner.id
    found.words[:0] = [f"git {got['git']}", f"python {got['python']}", "agents: " + _agent_words(agents, facts),
                       f"{_size(got['free'])} free", f"{got['repo_path']} ({copied}; repository {owner.short})"]
    if facts is not None:
        found.record["agent_facts"] = facts["agents"]
        found.record["node"] = facts.get("node")
        found.notes += _sign_in_notes(facts, alias, set(got.get("on_path") or []))


def _record(got: dict[str, Any], alias: str) -> dict[str, Any]:
    """What `ready.json` keeps of what LOOK found."""
    return {"home": got["home"], "repo_path": got["repo_path"], "git": got.get("git"), "python": got["python"],
            "agents": sorted(a for a, path in got["agents"].items() if path), "free_bytes": got["free"],
            "host": alias}


def _install(found: Found, t: Transport, wanted: list[str], todo: list[str], agent: str, say: Any) -> None:
    """Install the agents of `todo` there: those the Node.js there runs first, then Node.js where an agent
    needs a newer one (or has none), then the rest. What cannot be installed is noted with the command to run;
    NotReady when it is the settings' agent."""
    try:
        f = install.facts(t, wanted, ping=True)
    except install.CannotInstall as exc:
        raise NotReady(exc.why, exc.hint) from None
    now = [a for a in todo if install.node_needed(f, [a], [a]) is None]
    later = [a for a in todo if a not in now]
    steps: list[tuple[list[str], Any]] = []
    if now:
        steps.append((now, lambda f: (f, install.install_agents(t, f, now, say))))
    need = install.node_needed(f, wanted, later)
    if need is not None:
        short = [a for a in wanted if f.node is None or f.node < pins.NODE_NEEDED.get(a, (0, 0, 0))]
        steps.append((later or short, lambda f: install.install_node(t, f, need, wanted, say)))
    if later:
        steps.append((later, lambda f: (f, install.install_agents(t, f, later, say))))
    failed: set[str] = set()
    for group, step in steps:
        if failed & set(group):
            continue  # Node.js could not be had: its agents are not tried
        try:
            f, words = step(f)
            found.words.append(words)
        except install.CannotInstall as exc:
            if agent in group:
                raise NotReady(exc.why, exc.hint) from None
            failed |= set(group)
            found.notes.append(f"{', '.join(group)} not installed: {exc.why}" + (f"; {exc.hint}" if exc.hint else ""))


def _agent_words(agents: list[str], facts: dict[str, Any] | None) -> str:
    """`claude 2.1.332, codex 0.171.0`: each agent there, with its version when it was asked."""
    if not agents:
        return "none"
    known = (facts or {}).get("agents", {})
    return ", ".join(f"{a} {known[a]['version']}" if known.get(a, {}).get("version") else a for a in agents)


def _sign_in_notes(facts: dict[str, Any], alias: str, on_path: set[str]) -> list[str]:
    """A line for each agent there that is not signed in, with the command to run there; never faked."""
    notes = []
    for a, f in facts["agents"].items():
        if f.get("installed") and not f.get("signed_in"):
            run = agents_probe.sign_in_hint(a, alias)
            if a not in on_path:  # in ~/.local/bin, with the Node.js there: put it first, as a login would
                run = re.sub(rf"{re.escape(alias)} ({re.escape(a)}[^`]*)`",
                             lambda m: f"{alias} 'PATH=$HOME/.local/bin:$PATH {m.group(1)}'`", run, count=1)
            notes.append(f"not signed in to {agents_probe.NAMES.get(a, a)}: {run}")
    return notes


def _stop_left_agents(found: Found, t: Transport | None, yes: bool) -> None:
    """Find what earlier workers left running there (agents, and what they started) and, when you say so,
    stop it by pid; each is named."""
    left = leftovers.processes(t, stop=yes) or []
    if left and not yes:
        names = "; ".join(x.words() for x in left)
        if not ask(f"Left running on {found.name} by earlier workers: {names}. Stop them?"):
            found.notes.append(f"left running by earlier workers: {names}; `git balanced ready {found.name} "
                               "--yes` stops them")
            return
        left = leftovers.processes(t, stop=True) or []
    for x in left:
        found.notes.append(("stopped " if x.stopped else "could not stop ") + x.words() +
                           ", left running by an earlier worker")


def _left_behind(lead: Lead, found: Found, t: Transport | None, yes: bool) -> None:
    """What this repository's done workers left there (worktrees, run folders): named, removed with `yes`."""
    line = left_there.tidy(found.name, t, found.record, lead.repo, all_jobs(lead.repo), yes=yes)
    if line:
        found.notes.append(line)


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


def _push(lead: Lead, t: Transport, got: dict[str, Any]) -> str:
    """Push the lead's tip as the base (and the copy's owner mark). Not onto the copy's checked-out branch: that
    would check the tree out there with the filters the copy's own config and attributes name, which a worker
    there could have planted, run by our push (docs/safety/untrusted.md)."""
    tip = lead.repo.rev_parse(lead.ref)
    if tip is None:
        raise BalancedError(f"The lead's branch {lead.branch} has no commits yet.", hint="make a first commit.")
    owner = copies.owner_blob(lead.repo, copies.identity(lead.repo, lead.ref))
    # The copy's owner mark, which the engine's pushes lease: only a copy LOOK found or made ours gets here.
    specs = [f"+{tip}:refs/balanced/base/{lead.branch}", f"+{owner}:{copies.OWNER_REF}"]
    env = t.git_env()
    with t.slot(GIT_TIMEOUT):
        res = lead.repo.push(t.git_url(got["repo_path"]), specs, quiet=False,
                             receive_pack=machine_program("receive-pack"), env=env, timeout=GIT_TIMEOUT)
    if res.code != 0:
        raise NotReady(f"could not push {lead.branch} there: {(res.err or res.out).strip()[-300:]}",
                       f"try `git push {t.git_url(got['repo_path'])} {lead.branch}` to see why")
    return tip


def _size(n: int) -> str:
    return f"{n / (1 << 30):.1f} GB" if n >= 1 << 30 else f"{n / (1 << 20):.0f} MB"
