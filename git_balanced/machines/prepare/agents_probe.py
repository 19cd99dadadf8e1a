"""What agents a machine has: each CLI's version, whether it is signed in, Node.js's and git's versions.

One stdlib script (LOOK) runs there with the machine's python3 (or here with this one) and answers one JSON
line. A CLI's version is read from the package.json of the npm package its command links into (as npm
installs all three), else asked of `CLI --version`. Sign-in is asked of each CLI's own non-interactive status
command, never of a model: `claude auth status` (JSON, exit 0 when signed in), `codex login status` (exit
0), `pi --offline --list-models` (lists only the models of providers it has a key or login for). Codex
pointed at a provider of its own `config.toml` (`model_provider` with an `env_key`) is signed in when that
variable is set.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from git_balanced import proc
from git_balanced.files import Flock, write_json

if TYPE_CHECKING:
    from git_balanced.machines.reach.boxdoor import Shell
    from git_balanced.machines.reach.transport import Transport
    from git_balanced.settings import Settings

AGENTS = ("claude", "codex", "pi")
NAMES = {"claude": "Claude Code", "codex": "Codex", "pi": "Pi"}
# Pi's package declares `engines.node >= 22.19`; the other two bring their own binary behind a small shim.
NODE_NEEDED = {"pi": "22.19"}
PROBE_TIMEOUT = 60.0
PREFIX_BIN = ("~/.local/bin",)  # always searched before the PATH there
FRESH_SECONDS = 300.0  # facts older than this are asked again; a failed worker forgets them at once

# Runs there (or here) with python3, stdlib only. The request comes on stdin; it answers one JSON line.
LOOK = r'''
import json, os, re, shutil, subprocess, sys, threading
req = json.loads(sys.stdin.read() or "{}")
extra = [os.path.expanduser(d) for d in req.get("path", [])]
if extra:
    os.environ["PATH"] = os.pathsep.join(extra + [os.environ.get("PATH", "")])

def run(argv, timeout=30):
    try:
        p = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=timeout)
    except (OSError, subprocess.SubprocessError) as exc:
        return 127, "", str(exc)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")

def version(text):
    m = re.search(r"(\d+\.\d+(?:\.\d+)?)", text)
    return m.group(1) if m else None

def claude(path):
    code, out, err = run([path, "auth", "status"])
    try:
        st = json.loads(out)
    except ValueError:
        return {"signed_in": False, "said": (err or out).strip()[-200:]}
    who = st.get("email") or st.get("orgId") or None
    return {"signed_in": bool(st.get("loggedIn")), "account": who, "method": st.get("authMethod")}

def codex_provider():
    home = os.environ.get("CODEX_HOME") or os.path.expanduser("~/.codex")
    try:
        import tomllib
        with open(os.path.join(home, "config.toml"), "rb") as fh:
            cfg = tomllib.load(fh)
    except Exception:
        return None
    name = cfg.get("model_provider")
    spec = (cfg.get("model_providers") or {}).get(name) if name and name != "openai" else None
    if not isinstance(spec, dict) or spec.get("requires_openai_auth"):
        return None
    key = spec.get("env_key")
    return {"signed_in": not key or bool(os.environ.get(key)), "account": None, "method": "provider " + name}

def codex(path):
    code, out, err = run([path, "login", "status"])
    if code == 0:
        who = None
        home = os.environ.get("CODEX_HOME") or os.path.expanduser("~/.codex")
        try:  # the account's id, never a token
            with open(os.path.join(home, "auth.json")) as fh:
                who = (json.load(fh).get("tokens") or {}).get("account_id")
        except (OSError, ValueError, AttributeError):
            pass
        return {"signed_in": True, "account": who, "method": (out + err).strip().splitlines()[-1][:80]}
    return codex_provider() or {"signed_in": False}

def pi(path):
    code, out, err = run([path, "--offline", "--list-models"])
    rows = [l for l in (out + "\n" + err).splitlines() if l.strip()]
    has = code == 0 and bool(rows) and rows[0].split()[:2] == ["provider", "model"] and len(rows) > 1
    return {"signed_in": has, "account": None}

SIGNED = {"claude": claude, "codex": codex, "pi": pi}
ans = {"agents": {}, "python": sys.version.split()[0]}

def packaged(path, agent):
    """The version in the package.json of the npm package whose bin `path` is, or None. Reading it spares a
    start of the CLI: Pi's costs 2 CPU seconds."""
    folder = os.path.dirname(os.path.realpath(path))
    for _ in range(4):
        try:
            with open(os.path.join(folder, "package.json")) as fh:
                meta = json.load(fh)
        except FileNotFoundError:
            folder = os.path.dirname(folder)
            continue
        except (OSError, ValueError):
            return None
        bins = meta.get("bin") if isinstance(meta, dict) else None
        found = isinstance(bins, dict) and agent in bins and isinstance(meta.get("version"), str)
        return version(meta["version"]) if found else None
    return None

def one(agent):
    path = shutil.which(agent)
    if not path:
        ans["agents"][agent] = {"installed": False}
        return
    said = packaged(path, agent)
    if said is None:
        code, out, err = run([path, "--version"])
        said = version(out + " " + err)
    facts = {"installed": True, "path": path, "version": said}
    facts.update(SIGNED[agent](path) if agent in SIGNED else {"signed_in": True})
    ans["agents"][agent] = facts

def tool(name, key):
    path = shutil.which(name)
    if path:
        code, out, err = run([path, "--version"])
        ans[key] = version(out + " " + err) if code == 0 else None
    else:
        ans[key] = None

threads = [threading.Thread(target=one, args=(a,)) for a in req.get("agents", [])]
threads += [threading.Thread(target=tool, args=("git", "git")), threading.Thread(target=tool, args=("node", "node"))]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(json.dumps(ans))
'''


def _older(have: str | None, need: str) -> bool:
    """Whether version `have` is older than `need` (both dotted numbers); a missing one is older."""
    if not have:
        return True
    parts = [int(x) for x in have.split(".") if x.isdigit()]
    return parts < [int(x) for x in need.split(".")]


def sign_in_hint(agent: str, host: str | None) -> str:
    """How to sign the agent in there, on a terminal: "run `ssh -t box claude /login`"."""
    cmd = {"claude": "claude /login", "codex": "codex login", "pi": "pi"}.get(agent, agent)
    where = f"ssh -t {shlex.quote(host)} {cmd}" if host else cmd
    return f"run `{where}`" + (" and type /login" if agent == "pi" else "")


def shape(raw: dict[str, Any], agents: Sequence[str], host: str | None) -> dict[str, Any]:
    """The script's answer as the facts callers keep: per agent {installed, version, signed_in, sign_in_hint,
    node_version, account}, and git's and Node.js's versions."""
    node = raw.get("node")
    out: dict[str, Any] = {}
    for a in agents:
        got = raw.get("agents", {}).get(a) or {"installed": False}
        facts = {"installed": bool(got.get("installed")), "version": got.get("version"),
                 "signed_in": bool(got.get("installed") and got.get("signed_in")),
                 "account": got.get("account"), "node_version": node, "sign_in_hint": ""}
        if a in NODE_NEEDED:
            facts["node_needed"] = NODE_NEEDED[a]
            facts["node_too_old"] = _older(node, NODE_NEEDED[a])
        if facts["installed"] and not facts["signed_in"]:
            facts["sign_in_hint"] = sign_in_hint(a, host)
        out[a] = facts
    return {"git": raw.get("git"), "node": node, "python": raw.get("python"), "agents": out, "at": time.time()}


def probe(transport: Transport | Shell | None, agents: Sequence[str] = AGENTS, *, path: Sequence[str] = (),
          timeout: float = PROBE_TIMEOUT) -> dict[str, Any]:
    """The facts of the agents on a machine (`transport`), or on this one (None).

    `path` lists folders (`~` allowed) searched before the PATH there, for CLIs installed into a user's prefix.
    Returns {"git", "node", "python", "agents": {agent: {installed, version, signed_in, sign_in_hint,
    node_version, account, ...}}, "at"}; a probe that could not run answers every agent not installed, with
    "error". MachineUnreachable passes through."""
    # `ready` installs agents into ~/.local/bin (install.py), and the runner puts it first on their PATH too.
    req = json.dumps({"agents": list(agents), "path": [*path, *(p for p in PREFIX_BIN if p not in path)]})
    if transport is None:
        # -P: the folder this runs in (a lead's checkout, where a worker's branch could land a json.py) is not
        # first on the script's import path, as the machines' BOOTSTRAP drops it there.
        res = proc.run([sys.executable, "-P", "-c", LOOK], input=req, timeout=timeout)
    else:
        res = transport.run_python(LOOK, [], input=req, timeout=timeout)
    try:
        raw = json.loads(res.out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raw = {"error": (res.err or res.out).strip()[-300:] or f"exit {res.code}"}
    facts = shape(raw if isinstance(raw, dict) else {}, agents, transport.name if transport else None)
    boxed = getattr(transport, "sign_in_words", None)  # a box: signed in by the variables it is given
    if boxed is not None:
        for f in facts["agents"].values():
            if f.get("sign_in_hint"):
                f["sign_in_hint"] = boxed
    if "error" in raw:  # nothing is known of its agents: say so rather than "not installed"
        facts["error"] = raw["error"]
        for f in facts["agents"].values():
            f["error"] = raw["error"]
    return facts


def missing_words(agent: str, facts: dict[str, Any] | None) -> str:
    """Why the agent cannot take a piece there, in words ("Claude Code is not installed there"), or ""."""
    name = NAMES.get(agent, agent)
    if agent == "shell" or facts is None:
        return ""
    if facts.get("error"):
        return f"its agents could not be asked ({facts['error'][-120:]})"
    if not facts.get("installed"):
        return f"{name} is not installed there"
    if not facts.get("signed_in"):
        return f"not signed in to {name}"
    return ""


# -- kept per machine, for every repository of this user ---------------------------------------------------

def _file() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    d = Path(base) / "git-balanced"
    d.mkdir(parents=True, exist_ok=True)
    return d / "agents.json"


def kept() -> dict[str, dict[str, Any]]:
    """Every machine's facts as last probed: {machine: {"git", "node", "agents": {agent: facts}, ...}}."""
    try:
        data = json.loads(_file().read_text())
    except (FileNotFoundError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def keep(machine: str, facts: dict[str, Any]) -> None:
    """Remember a machine's facts (merged per agent: a probe of one agent keeps what is known of the others)."""
    with Flock(f"{_file()}.lock"):  # probes keep their facts from threads, other processes too
        data = kept()
        old = data.get(machine) or {}
        agents = {**(old.get("agents") or {}), **{a: {**f, "at": facts.get("at", time.time())}
                                                  for a, f in (facts.get("agents") or {}).items()}}
        data[machine] = {**old, **{k: v for k, v in facts.items() if k != "agents"}, "agents": agents}
        write_json(_file(), data, indent=1, sort_keys=True)


def forget(machine: str, agent: str | None = None) -> None:
    """Drop what is known of an agent on a machine (of all of them without `agent`): asked again next time."""
    with Flock(f"{_file()}.lock"):
        data = kept()
        if machine not in data:
            return
        if agent is None:
            del data[machine]
        else:
            (data[machine].get("agents") or {}).pop(agent, None)
        write_json(_file(), data, indent=1, sort_keys=True)


def _fresh(facts: dict[str, Any] | None, now: float) -> bool:
    return bool(facts) and now - float((facts or {}).get("at") or 0) < FRESH_SECONDS


def ask(machine: str, transport: Transport | None, agents: Sequence[str] = AGENTS, *,
        path: Sequence[str] = ()) -> dict[str, Any]:
    """Probe a machine now (after `ready` installed or signed in something) and keep what it said."""
    facts = probe(transport, agents, path=path)
    keep(machine, facts)
    return facts


def refresh(machines: Iterable[str], agents: Sequence[str], path: Sequence[str] = ()) -> dict[str, dict[str, Any]]:
    """The facts of `agents` on each machine (`local`, or an added one, reached as `records.host_alias` says),
    probed (all machines at once) where what is kept is older than a few minutes. A machine that cannot be
    reached, is no longer added or whose host is refused is left out of the answer (placement skips it for
    that already). {machine: {agent: facts}}."""
    from git_balanced.errors import BalancedError
    from git_balanced.machines.inventory.records import LOCAL, box_of, host_alias
    from git_balanced.machines.reach.boxdoor import Shell
    from git_balanced.machines.reach.boxhost import door_for
    from git_balanced.machines.reach.remote import transport_for
    from git_balanced.machines.reach.transport import MachineUnreachable

    wanted = [a for a in agents if a in AGENTS]
    now = time.time()
    have = kept()
    todo = [m for m in machines
            if any(not _fresh((have.get(m, {}).get("agents") or {}).get(a), now) for a in wanted)]

    def ask(m: str) -> None:
        try:
            spec = None if m == LOCAL else box_of(m)
            t = None if m == LOCAL else Shell(door_for(m, spec)) if spec else transport_for(host_alias(m))
        except BalancedError:
            return
        try:
            keep(m, probe(t, wanted, path=path))
        except MachineUnreachable:
            pass

    if todo:
        from concurrent.futures import ThreadPoolExecutor  # here: a command that asks no machine starts no pool

        with ThreadPoolExecutor(max_workers=min(8, len(todo))) as pool:
            list(pool.map(ask, todo))
        have = kept()
    return {m: {a: f for a, f in (have.get(m, {}).get("agents") or {}).items() if a in wanted}
            for m in machines if m in have}


def configured_agents(settings: Settings) -> list[str]:
    """The agents the lead's settings name: `[balanced] agent` and every `[agents.<name>]` table written."""
    names: list[str] = [settings.balanced.agent]
    for name in sorted(settings.agents.model_fields_set):
        if getattr(settings.agents, name, None) is not None and name not in names:
            names.append(name)
    return [n for n in names if n != "shell"]
