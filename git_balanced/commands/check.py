"""`git balanced check [REV]`."""

from __future__ import annotations

from git_balanced import fence, trust, ui
from git_balanced.errors import BalancedError
from git_balanced.git import Repo
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
    rev, commit, below = _tip_of(repo, rev)
    if below is not None and not as_json:
        ui.note(f"[balanced] The tip decides (docs/hooks.md): {rev} is checked, and the {below} commit(s) below it "
                "in the range go out with it.")
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
                      "range_commits": below,
                      "fenced": unfenced is None, "unfenced_why": fence.why_unavailable()})
    else:
        verdict = "passed" if result.passed else f"failed (exit {result.code})"
        where = " (answered from its note: this tree was checked before)" if result.cached else ""
        ui.say(f"Check {verdict} on {rev} ({commit[:7]}, tree {result.tree[:7]}) in {result.seconds:.1f}s{where}.")
        if not result.passed and result.tail:
            ui.say(ui.tail(result.tail))
    return 0 if result.passed else (result.code or 1)


def _tip_of(repo: Repo, rev: str) -> tuple[str, str, int | None]:
    """REV, or the tip of a range `A..B` (what a push of it makes the branch), with its commit and how many
    commits of the range lie below that tip (None for a single revision); each name is resolved once. A push
    is judged by its tip, so the range's tip is what is checked."""
    if ".." not in rev:
        commit = repo.rev_parse(rev)
        if commit is None:
            raise BalancedError(f"{rev!r} names no commit here.", hint="name a branch, tag or commit id.")
        return rev, commit, None
    base, _, tip = rev.partition("..")
    tip, base = tip.lstrip(".") or "HEAD", base or "HEAD"
    shas: dict[str, str] = {}
    for name in dict.fromkeys((base, tip)):
        sha = repo.rev_parse(name)
        if sha is None:
            raise BalancedError(f"{name!r} in {rev!r} names no commit here.",
                                hint="name a range of branches, tags or commit ids, such as `origin/main..main`.")
        shas[name] = sha
    tip_sha, base_sha = shas[tip], shas[base]
    return tip, tip_sha, max(0, len(repo.commits(tip_sha, base_sha, first_parent=True)) - 1)
