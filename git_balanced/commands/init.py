"""`git balanced init`: the settings file, the balanced hooks in pre-commit's config, installed."""

from __future__ import annotations

from git_balanced import ui
from git_balanced.errors import BalancedError
from git_balanced.lead import open_checkout
from git_balanced.settings import SETTINGS_PATH


def init_command(*, check: str | None, setup: str | None, agent: str | None) -> int:
    """Write the settings (never over existing ones), add the hooks to pre-commit's config, install them."""
    from git_balanced.hooks.precommit import add_balanced_hooks, install_hooks
    from git_balanced.settings import write_settings

    repo = open_checkout()
    target = repo.root / SETTINGS_PATH
    if target.exists():
        given = [f"--{n}" for n, v in (("check", check), ("setup", setup), ("agent", agent)) if v]
        if given:
            raise BalancedError(f"{SETTINGS_PATH} exists already, so {', '.join(given)} would be lost.",
                                hint=f"edit {SETTINGS_PATH} instead, or remove it and run init again.")
        ui.say(f"Kept {SETTINGS_PATH} as it is.")
    else:
        write_settings(repo.root, check=check, setup=setup, agent=agent)
        ui.say(f"Wrote {SETTINGS_PATH}.")
    changed = add_balanced_hooks(repo.root)
    ui.say("Added the balanced hooks to .pre-commit-config.yaml." if changed
           else ".pre-commit-config.yaml has the balanced hooks already.")
    install_hooks(repo.root)
    ui.say("Installed the pre-merge-commit and pre-push hooks.")
    ui.say("Next: commit .magnum/ and .pre-commit-config.yaml, then `git balanced allow` to approve the "
           "setup and check commands.")
    return 0
