"""`allow`, `deny` and `trust`: the user's word on the setup and check commands."""

from __future__ import annotations

from git_balanced import trust, ui
from git_balanced.errors import TrustError
from git_balanced.git import Repo
from git_balanced.lead import commands_of, open_checkout, settings_at


def _commands(repo: Repo) -> trust.Commands:
    return commands_of(settings_at(repo, None))


NOTHING = ("There is no setup or check command in .magnum/settings.toml: nothing to approve. "
           "`git balanced init --check 'CMD'` sets a check.")
NOTHING_TO_DENY = ("There is no setup or check command in .magnum/settings.toml: nothing to deny. "
                   "`git balanced init --check 'CMD'` sets a check.")
WORDS = {"allowed": "allowed", "denied": "denied (run `git balanced allow` to approve)",
         "changed": "changed since you approved them (run `git balanced allow`)",
         "unknown": "not approved yet (run `git balanced allow`)",
         trust.NOT_NOW: "refused for this run of the engine (`deny --for-now`; run `git balanced allow` to approve)"}
# The same, in a sentence that goes on to say what to run.
BARE_WORDS = {"allowed": "allowed", "denied": "denied", "changed": "changed since you approved them",
              "unknown": "not approved yet", trust.NOT_NOW: "refused for this run of the engine"}


def state_of(repo: Repo, cmds: trust.Commands) -> str:
    """Where the commands stand, as `allow`, `trust` and `check` all say it: `none` (nothing to approve),
    `unknown` (never approved), `allowed`, `denied` or `changed` (approved once, different now)."""
    if not cmds.setup and not cmds.check:
        return "none"
    return trust.status(repo, cmds)


def allow_command(*, yes: bool) -> int:
    """Approve the commands as they are now, after showing them."""
    repo = open_checkout()
    cmds = _commands(repo)
    state = state_of(repo, cmds)
    if state == "none":
        ui.say(NOTHING)
        return 0
    if state == "allowed" and not yes:
        ui.say("Allowed already, as they are now:\n" + "\n".join(cmds.lines()))
        return 0
    if yes:
        trust.allow(repo, cmds)
    elif trust.interactive():
        if not trust.ask(repo, cmds):
            ui.say("Refused: nothing will run them. `git balanced allow` asks again.")
            return 1
    else:
        raise TrustError(f"These commands are {BARE_WORDS[state]} and need your approval:\n"
                         + "\n".join(cmds.lines()),
                         hint="run `git balanced allow --yes` to approve them without a terminal.")
    ui.say("Allowed:\n" + "\n".join(cmds.lines()))
    return 0


def deny_command(for_now: bool = False) -> int:
    repo = open_checkout()
    cmds = _commands(repo)
    if state_of(repo, cmds) == "none":
        ui.say(NOTHING_TO_DENY)
        return 0
    if for_now:
        return _deny_for_now(repo, cmds)
    trust.deny(repo, cmds)
    ui.say("Denied: nothing will run these until you run `git balanced allow`:\n" + "\n".join(cmds.lines()))
    return 0


def _deny_for_now(repo: Repo, cmds: trust.Commands) -> int:
    """Not now: refused for the engine run going on (or, when none runs, the next one), asked again after it."""
    from git_balanced.engine.shown import engine_running
    from git_balanced.lead import Lead

    pid = engine_running(Lead(repo, repo.current_branch() or "HEAD"))
    before = state_of(repo, cmds)
    trust.deny_for_now(repo, cmds, pid)
    run = f"the engine run going on (pid {pid})" if pid else "the next engine run"
    after = {"allowed": "they are allowed again", "denied": "they stay denied"}.get(before, "they are asked for again")
    ui.say(f"Not now: nothing runs these for {run}; after it {after} (`git balanced allow` approves them now):\n"
           + "\n".join(cmds.lines()))
    return 0


def trust_command(*, as_json: bool) -> int:
    repo = open_checkout()
    cmds = _commands(repo)
    state = state_of(repo, cmds)
    if as_json:
        ui.emit_json({"setup": cmds.setup, "check": cmds.check, "state": state,
                      "fingerprint": trust.fingerprint(repo, cmds)})
        return 0
    if state == "none":
        ui.say(NOTHING)
        return 0
    ui.say("\n".join(cmds.lines()))
    ui.say(f"These commands are {WORDS[state]}.")
    return 0
