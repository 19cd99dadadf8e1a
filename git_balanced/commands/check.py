"""`git balanced check [REV]`."""

from __future__ import annotations

from git_balanced import fence, trust, ui
from git_balanced.errors import BalancedError
from git_balanced.landing import checks
from git_balanced.lead import commands_of, open_checkout, settings_at


def check_command(rev: str, *, force: bool, as_json: bool) -> int:
    """Check REV's tree (from its note when it was checked before) and exit with the check's status."""
    repo = open_checkout()
    cmds = commands_of(settings_at(repo, None))
    if not cmds.check:
        raise BalancedError("There is no check command in .magnum/settings.toml.",
                            hint="set one: `git balanced init --check 'pytest -q'`, or add `check = ...` "
                                 "under [worktree].")
    commit = repo.rev_parse(rev)
    if commit is None:
        raise BalancedError(f"{rev!r} names no commit here.", hint="name a branch, tag or commit id.")
    unfenced = fence.unfenced_words()
    if unfenced and not as_json:
        ui.note(f"[balanced] {unfenced}")
    hit = None if force else checks.cached(repo, repo.tree_of(commit), cmds.check)
    if hit is None:
        trust.ensure_allowed(repo, cmds)
        if not as_json:
            ui.note(f"Checking {rev} ({commit[:7]}) with `{cmds.check}`…")
        result = checks.check_rev(repo, commit, cmds.check, cmds.setup, use_cache=False)
    else:
        result = hit
    if as_json:
        ui.emit_json({**result.record(), "cached": result.cached, "rev": rev, "commit": commit,
                      "fenced": unfenced is None, "unfenced_why": fence.why_unavailable()})
    else:
        verdict = "passed" if result.passed else f"failed (exit {result.code})"
        where = " (answered from its note: this tree was checked before)" if result.cached else ""
        ui.say(f"Check {verdict} on {rev} ({commit[:7]}, tree {result.tree[:7]}) in {result.seconds:.1f}s{where}.")
        if not result.passed and result.tail:
            ui.say(ui.tail(result.tail))
    return 0 if result.passed else (result.code or 1)
