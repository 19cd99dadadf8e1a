"""`ready --share-sign-in AGENT`: this machine's own sign-in for an agent, copied to another machine.

What is copied is the credentials file the CLI itself reads: Claude Code's `~/.claude/.credentials.json`
(`$CLAUDE_CONFIG_DIR`), Codex's `~/.codex/auth.json` (`$CODEX_HOME`), Pi's `~/.pi/agent/auth.json`
(`$PI_CODING_AGENT_DIR`). It travels on the SSH connection's stdin, is written there with mode 600, and is
never printed, logged or kept: only the account's name is said. Claude Code names its account from
`oauthAccount` in `~/.claude.json`, which is not copied: only its account fields (PROFILE_FIELDS, no token) go
into that file there, so that `claude auth status` there says who it is. A machine signed in to another account
keeps its own unless `replace`.
"""

from __future__ import annotations

import base64
import json
import os
from dataclasses import dataclass
from pathlib import Path

from git_balanced.errors import BalancedError
from git_balanced.machines.reach.transport import Transport

# agent -> (the variable that moves its folder, the folder by default, the file in it)
FILES = {"claude": ("CLAUDE_CONFIG_DIR", "~/.claude", ".credentials.json"),
         "codex": ("CODEX_HOME", "~/.codex", "auth.json"),
         "pi": ("PI_CODING_AGENT_DIR", "~/.pi/agent", "auth.json")}

# Who a credentials file signs in as, without a token: run here (exec'd) and there (after PUT's preamble).
# Claude Code keeps the account's address next to its credentials, in `.claude.json`; Codex's ID token
# carries it; Pi's file names the providers it holds a key or login for.
ACCOUNT = r'''
import base64, json, os

def account(agent, data, folder, home):
    try:
        doc = json.loads(data.decode("utf-8"))
    except ValueError:
        return None
    if not isinstance(doc, dict):
        return None
    if agent == "claude":
        for path in (os.path.join(folder, ".claude.json"), os.path.join(home, ".claude.json")):
            try:
                with open(path) as fh:
                    who = (json.load(fh).get("oauthAccount") or {}).get("emailAddress")
            except (OSError, ValueError, AttributeError):
                continue
            if who:
                return who
        return None
    if agent == "codex":
        tokens = doc.get("tokens") or {}
        try:
            part = str(tokens.get("id_token") or "").split(".")[1]
            claims = json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))
            if claims.get("email"):
                return claims["email"]
        except (IndexError, ValueError, AttributeError):
            pass
        if tokens.get("account_id"):
            return "ChatGPT account " + str(tokens["account_id"])
        return "an API key" if doc.get("OPENAI_API_KEY") else None
    if agent == "pi":
        return ("providers " + ", ".join(sorted(doc))) if doc else None
    return None

# Claude Code's account, as its `auth status` names it: these fields of `oauthAccount` in `.claude.json` (who,
# and of which organization; no token is kept there).
PROFILE_FIELDS = ("accountUuid", "emailAddress", "displayName", "organizationUuid", "organizationName",
                  "organizationRole", "workspaceRole")

def profile_file(folder, home):
    """Claude Code's `.claude.json`: in its folder when that was moved ($CLAUDE_CONFIG_DIR), else in the home."""
    moved = os.path.realpath(folder) != os.path.realpath(os.path.join(home, ".claude"))
    return os.path.join(folder if moved else home, ".claude.json")

def profile(agent, folder, home):
    if agent != "claude":
        return None
    try:
        with open(profile_file(folder, home)) as fh:
            account = json.load(fh).get("oauthAccount") or {}
    except (OSError, ValueError, AttributeError):
        return None
    kept = {k: account[k] for k in PROFILE_FIELDS if isinstance(account.get(k), str)}
    return kept or None
'''

# Runs there: the request (with the file, base64) on stdin; answers what it did, never the file.
PUT = ACCOUNT + r'''
import sys
req = json.loads(sys.stdin.read())
home = os.path.expanduser("~")
folder = os.path.join(home, req["folder"])
path = os.path.join(folder, req["file"])
data = base64.b64decode(req["data"])
ans = {"path": path}
try:
    with open(path, "rb") as fh:
        had = fh.read()
except OSError:
    had = None
if had == data:
    os.chmod(path, 0o600)
    ans["same"] = True
else:
    theirs = account(req["agent"], had, folder, home) if had is not None else None
    if had is not None and (theirs is None or theirs != req["account"]) and not req["replace"]:
        ans["kept"] = theirs or "an account it cannot name"
    else:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        tmp = path + ".balanced-tmp"
        if os.path.lexists(tmp):
            os.remove(tmp)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
        os.chmod(path, 0o600)
        ans["written"] = True
        if had is not None:
            ans["replaced"] = theirs or "an account it could not name"
if req.get("profile") and "kept" not in ans:
    # The account's name next to the credentials, merged into what the CLI keeps there; the rest stays.
    where = profile_file(folder, home)
    try:
        with open(where) as fh:
            doc = json.load(fh)
    except (OSError, ValueError):
        doc = {}
    if not isinstance(doc, dict):
        doc = {}
    doc["oauthAccount"] = req["profile"]
    tmp = where + ".balanced-tmp"
    if os.path.lexists(tmp):
        os.remove(tmp)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        json.dump(doc, fh, indent=2)
    os.replace(tmp, where)
    os.chmod(where, 0o600)
    ans["profile"] = os.path.relpath(where, home)
print(json.dumps(ans))
'''


@dataclass(frozen=True)
class Shared:
    """What sharing did on one machine, in words: the account, and whether the file was written."""

    words: str
    written: bool


def local_file(agent: str) -> Path:
    """The credentials file of `agent` on this machine."""
    if agent not in FILES:
        raise BalancedError(f"There is no sign-in to share for {agent!r}.",
                            hint=f"name one of {', '.join(FILES)}.")
    var, default, name = FILES[agent]
    return Path(os.path.expanduser(os.environ.get(var) or default)) / name


def local_account(agent: str, data: bytes) -> str | None:
    """Who this machine's credentials file for `agent` signs in as."""
    space: dict[str, object] = {}
    exec(compile(ACCOUNT, "<account>", "exec"), space)  # the same words there and here
    folder = str(local_file(agent).parent)
    who = space["account"](agent, data, folder, os.path.expanduser("~"))  # type: ignore[operator]
    return str(who) if who else None


def local_profile(agent: str) -> dict[str, str] | None:
    """The account fields this machine's CLI keeps beside its credentials (Claude Code's `oauthAccount`), none of
    them a token; None for an agent that has none."""
    space: dict[str, object] = {}
    exec(compile(ACCOUNT, "<account>", "exec"), space)
    got = space["profile"](agent, str(local_file(agent).parent), os.path.expanduser("~"))  # type: ignore[operator]
    return dict(got) if got else None


def share(t: Transport, agent: str, *, replace: bool) -> Shared:
    """Copy this machine's sign-in for `agent` to the machine of `t`, mode 600."""
    path = local_file(agent)
    try:
        data = path.read_bytes()
    except OSError:
        raise BalancedError(f"This machine is not signed in to {agent}: there is no {path}.",
                            hint=f"sign in here first (`{_login(agent)}`), then share it.") from None
    who = local_account(agent, data)
    _, default, name = FILES[agent]
    folder = default.removeprefix("~/")
    req = {"agent": agent, "folder": folder, "file": name, "data": base64.b64encode(data).decode(),
           "account": who, "replace": replace, "profile": local_profile(agent)}
    res = t.run_python(PUT, [], input=json.dumps(req), timeout=60)
    try:
        ans = json.loads(res.out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise BalancedError(f"Could not write the sign-in on {t.name}: {(res.err or 'no answer').strip()[-300:]}",
                            hint=f"try `ssh {t.name} ls -la ~/{folder}`") from None
    account = who or "an account this machine cannot name"
    where = f"~/{folder}/{name}"
    if ans.get("same"):
        return Shared(f"already signed in to {agent} as {account} (the same {where})", False)
    if "kept" in ans:
        return Shared(f"kept its own {agent} sign-in ({ans['kept']}); `--replace` puts {account}'s there", False)
    replaced = f", replacing {ans['replaced']}" if ans.get("replaced") else ""
    named = f"; its account's name in ~/{ans['profile']}" if ans.get("profile") else ""
    return Shared(f"{agent} sign-in of {account} copied to {where} (mode 600){replaced}{named}", True)


def _login(agent: str) -> str:
    return {"claude": "claude /login", "codex": "codex login", "pi": "pi, then /login"}.get(agent, agent)
