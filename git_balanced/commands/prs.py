"""`git balanced ship --pr`: push the lead's branch to its own branch and open (or update) its pull request;
and what `review` shows of the lead's pull requests."""

from __future__ import annotations

from typing import Any

from git_balanced import trust, ui
from git_balanced.channel import inbox, now
from git_balanced.errors import BalancedError
from git_balanced.forge import opening, prs, watch, where
from git_balanced.landing.review import push_said
from git_balanced.lead import Lead, open_lead, settings_at
from git_balanced.vocab import CheckState


def pr_lines(lead: Lead) -> list[str]:
    """Each of the lead's open pull requests, as `review` shows it (looked at on the forge first)."""
    watch.refresh(lead)
    out = []
    for p in prs.of_lead(lead, open_only=True):
        status = prs.status_line(p)
        out.append(f"Pull request {p.words()}  {p.fields.get('url')}" + (f"\n  {status}" if status else ""))
    return out


def pr_json(lead: Lead) -> list[dict[str, Any]]:
    watch.refresh(lead)
    return [{"number": p.number, "state": p.state, "status": prs.status_line(p),
             **{k: p.fields.get(k) for k in ("url", "branch", "base", "checks", "decision", "conflicts")}}
            for p in prs.of_lead(lead)]


def _refuse_unshippable(sh: opening.Shipping) -> None:
    r = sh.review
    if not r.commits:
        raise BalancedError(f"Nothing to open a pull request with: {r.upstream} has everything {r.branch} has.",
                            hint="land some work on the lead's branch first.")
    if r.check.get("state") == CheckState.FAILED:
        raise BalancedError(f"The check fails on {r.branch}'s tree, so it is not shipped.",
                            hint="fix it and land the fix, then `git balanced review`.")


def ship_pr_command(*, yes: bool, name: str | None, base: str | None, draft: bool) -> int:
    """Push the lead's branch to its own branch on its remote and open its pull request (or update the one
    open for the branch); a review or a fix waiting under Now (named, or the only one) is answered."""
    lead = open_lead()
    waiting = now.pick(lead, name, ("review",) + now.FIX_KINDS, "ship") if name or _waiting(lead) else None
    sh = opening.measure(lead, base)
    r = sh.review
    ui.say(f"{r.branch} into {r.upstream}: {r.summary}")
    ui.say(f"Check: {r.check['words']}")
    _refuse_unshippable(sh)
    forge = where.open_forge(lead, sh.remote)  # the token is read before anything is pushed
    ui.say("Steps:")
    ui.say(f"  1. git push {sh.remote} {sh.spec}")
    ui.say(f"  2. open a pull request on {forge.repository} from {r.branch} into {sh.base}"
           + (" (a draft)" if draft else "") + ", or update the one open for the branch")
    if not yes:
        if not trust.interactive():
            raise BalancedError("Nothing was pushed: there is no terminal to ask on, and --yes was not given.",
                                hint="run `git balanced ship --pr --yes` to push and open it.")
        if input(f"Push {r.branch} and open its pull request? [y/N] ").strip().lower() not in ("y", "yes"):
            ui.say("Nothing was pushed.")
            return 1
    res = lead.repo.push_as_user(sh.remote, sh.spec)
    if res.code != 0:
        raise BalancedError(f"The push to {sh.remote} failed; no pull request was opened:\n"
                            f"{push_said(res.out, res.err)}",
                            hint="see what the hooks or the remote said above, then `git balanced ship --pr` again.")
    title, body = opening.title_and_body(lead, sh, waiting if waiting and waiting["kind"] == "review" else None)
    pr, reused = opening.open_or_reuse(lead, sh, forge, draft=draft, title=title, body=body)
    what = f"{'updated' if reused else 'opened'} pull request #{pr.number} ({pr.url})"
    if waiting:
        now.ship(lead, waiting["id"], pushed=f"pushed {r.branch} to {sh.remote} and {what}")
    else:
        inbox.post(lead.repo, lead.branch, f"Shipped {r.branch}: {what}, {r.summary}", kind="shipped")
    ui.say(f"Pushed {r.branch} to {sh.remote}/{r.branch} and {what}: {r.summary}."
           + (f" Answered {waiting['id']}: shipped." if waiting else ""))
    ui.say(f"  {_watching(lead)}")
    return 0


def _watching(lead: Lead) -> str:
    """What watches the pull request from now on, and how to change that."""
    from git_balanced.engine.background import EngineLock

    if not settings_at(lead.repo, lead.branch).pr.fix:
        return ("`git balanced review` shows its checks and reviews; with `[pr] fix = true` in "
                ".magnum/settings.toml its failures go to the session that made it.")
    if EngineLock(lead).holder() is None:
        return ("No engine runs, so nothing watches it yet: `git balanced engine --detach` starts one, which "
                "looks at it every 2 minutes.")
    return "The engine looks at it every 2 minutes; its failures go to the session that made it."


def _waiting(lead: Lead) -> bool:
    return any(r["kind"] in ("review",) + now.FIX_KINDS for r in now.rows(lead))


def names_a_fix(name: str | None) -> bool:
    """Whether `ship [ID]` is for a fix ready to push: ID names one, or without ID the only rows waiting are."""
    lead = open_lead()
    if name:
        return now.resolve(lead, name)["kind"] in now.FIX_KINDS
    kinds = {r["kind"] for r in now.rows(lead) if r["kind"] in ("review",) + now.FIX_KINDS}
    return bool(kinds) and kinds <= set(now.FIX_KINDS)
