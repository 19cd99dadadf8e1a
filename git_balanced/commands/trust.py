"""`allow`, `deny` and `trust`: the user's word on the setup and check commands."""

from __future__ import annotations

from git_balanced import trust, ui
from git_balanced.errors import TrustError
from git_balanced.git import Repo
from git_balanced.lead import commands_of, open_checkout, settings_at


def _commands(repo: Repo) -> trust.Commands:
    return commands_of(settings_at(repo, None))


def allow_command(*, yes: bool) -> int:
    """Approve the commands as they are now, after showing them."""
    repo = open_checkout()
    cmds = _commands(repo)
    if not cmds.setup and not cmds.check:
        ui.say("There is no setup or check command in .magnum/settings.toml: nothing to approve.")
        return 0
    if yes:
        trust.allow(repo, cmds)
    elif trust.interactive():
        if not trust.ask(repo, cmds):
            ui.say("Refused: nothing will run them. `git balanced allow` asks again.")
            return 1
    else:
        raise TrustError("These commands need your approval:\n" + "\n".join(cmds.lines()),
                         hint="run `git balanced allow --yes` to approve them without a terminal.")
    ui.say("Allowed:\n" + "\n".join(cmds.lines()))
    return 0


def deny_command() -> int:
    repo = open_checkout()
    cmds = _commands(repo)
    trust.deny(repo, cmds)
    ui.say("Denied: nothing will run these until you run `git balanced allow`:\n" + "\n".join(cmds.lines()))
    return 0


def trust_command(*, as_json: bool) -> int:
    repo = open_checkout()
    cmds = _commands(repo)
    state = trust.status(repo, cmds)
    if as_json:
        ui.emit_json({"setup": cmds.setup, "check": cmds.check, "state": state,
                      "fingerprint": trust.fingerprint(repo, cmds)})
        return 0
    words = {"allowed": "allowed", "denied": "denied (run `git balanced allow` to approve)",
             "changed": "changed since you approved them (run `git balanced allow`)",
             "unknown": "not approved yet (run `git balanced allow`)"}
    ui.say("\n".join(cmds.lines()))
    ui.say(f"These commands are {words[state]}.")
    return 0
