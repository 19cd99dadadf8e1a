"""`git balanced review`, `correct` and `ship`."""

from __future__ import annotations

from git_balanced import trust, ui
from git_balanced.channel import inbox, now
from git_balanced.errors import BalancedError
from git_balanced.landing.review import (
    CORRECTIONS,
    Review,
    corrections,
    corrections_name,
    corrections_words,
    push_reviewed,
    push_step,
    refuse_to_ship,
    review,
)
from git_balanced.lead import Lead, open_lead
from git_balanced.models import utf8_arguments
from git_balanced.state import refs
from git_balanced.vocab import CheckState


def _show(r: Review) -> None:
    ui.say(f"{r.branch} against {r.upstream}: {r.summary}")
    if r.behind:
        ui.say(f"  {r.upstream} has {r.behind} commit{'s' if r.behind != 1 else ''} that {r.branch} lacks.")
    if r.pieces:
        ui.say("Landed pieces:")
        rows = []
        for p in r.pieces:
            bits = [f"attempt {p['attempt']}" if p.get("attempt") else "", p.get("agent") or "",
                    p.get("machine") or "", f"${p['cost_usd']:.2f}" if p.get("cost_usd") else ""]
            rows.append((f"● {p['piece']}", f"{p['commit'][:7]} · " + " · ".join(b for b in bits if b)))
        ui.table(rows, indent=2)
    ui.say(f"Check: {r.check['words']}")
    if r.check.get("state") == CheckState.FAILED and r.check.get("tail"):
        ui.say(ui.tail(r.check["tail"]))
    if r.corrections:
        ui.say(corrections_words(r.corrections) + ".")


def review_command(*, as_json: bool) -> int:
    """Sum up what would ship and check it; exit 1 when the check fails."""
    from git_balanced.commands import prs

    lead = open_lead()
    r = review(lead)
    if as_json:
        ui.emit_json({**r.to_json(), "prs": prs.pr_json(lead)})
    else:
        _show(r)
        for line in prs.pr_lines(lead):
            ui.say(line)
    return 1 if r.check.get("state") == CheckState.FAILED else 0


def correct_command(text: str, name: str | None = None) -> int:
    """Record a correction of the lead; the lead hears it, and the board counts it. A review or idea waiting
    under Now (the one named, or the only one) goes back to the lead with it."""
    utf8_arguments("correct", text)
    text = " ".join(text.split())
    if not text:
        raise BalancedError("A correction needs some text.", hint='git balanced correct "Ask before adding a '
                                                                  'dependency"')
    lead = open_lead()
    row = now.pick(lead, name, ("review", "idea"), "correct") if name or now.rows(lead) else None
    ref = f"refs/balanced/{CORRECTIONS}/{corrections_name(lead.branch)}"
    refs.append(lead.repo, ref, "corrected", f"Corrected: {text}", {"text": text, "lead": lead.branch})
    if row is None:
        inbox.post(lead.repo, lead.branch, f"You were corrected: {text}", kind="correction")
        ui.say(f"Recorded. {corrections_words(corrections(lead))}; the lead hears it in its inbox.")
        return 0
    now.correct(lead, text, row["id"])
    ui.say(f"Recorded. {corrections_words(corrections(lead))}; {row['kind']} {row['id']} goes back to the lead, "
           "which hears it in its inbox and puts the work to you again once fixed.")
    return 0


def ship_command(*, yes: bool, name: str | None = None) -> int:
    """Show what would ship and the step, ask, and push only on a yes; a review waiting under Now (the one
    named, or the only one) is answered `shipped` once pushed."""
    lead = open_lead()
    waiting = now.pick(lead, name, ("review",), "ship") if name or _reviews(lead) else None
    r = review(lead)
    _show(r)
    if waiting and waiting.get("commit") and waiting["commit"] != lead.repo.rev_parse(lead.branch):
        ui.say(f"{r.branch} moved since {waiting['id']} was put to you (it was {str(waiting['commit'])[:7]}); "
               "what ships is what is shown above.")
    if not r.commits:
        ui.say(f"Nothing to ship: {r.upstream} has everything {r.branch} has.")
        return 0
    refuse_to_ship(r)
    ui.say("Steps:")
    ui.say(f"  1. {' '.join(push_step(r))}   ({r.summary})")
    if not yes:
        if not trust.interactive():
            raise BalancedError("Nothing was pushed: there is no terminal to ask on, and --yes was not given.",
                                hint="run `git balanced ship --yes` to push.")
        if input(f"Push {r.branch} to {r.upstream}? [y/N] ").strip().lower() not in ("y", "yes"):
            ui.say("Nothing was pushed.")
            return 1
    ui.say(push_reviewed(lead, r, waiting))
    return 0


def _reviews(lead: Lead) -> bool:
    return any(r["kind"] == "review" for r in now.rows(lead))


