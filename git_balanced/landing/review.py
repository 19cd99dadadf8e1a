"""`review`, `correct` and `ship`: what would ship from the lead's branch, a correction for the lead, and a
push that happens only when you say so."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from git_balanced import trust, ui
from git_balanced.channel import inbox, now
from git_balanced.errors import BalancedError
from git_balanced.landing import checks
from git_balanced.lead import Lead, commands_of, settings_at
from git_balanced.state import cache, notes
from git_balanced.ui import clock
from git_balanced.vocab import CheckState

CORRECTIONS = "corrections"
MINUS = "\u2212"


@dataclass
class Review:
    branch: str
    upstream: str
    remote: str
    remote_ref: str
    commits: int
    behind: int
    files: int
    insertions: int
    deletions: int
    pieces: list[dict[str, Any]] = field(default_factory=list)
    check: dict[str, Any] = field(default_factory=dict)
    corrections: int = 0

    @property
    def summary(self) -> str:
        def n(count: int, word: str) -> str:
            return f"{count} {word}{'' if count == 1 else 's'}"

        return f"{n(self.commits, 'commit')} · {n(self.files, 'file')} · +{self.insertions} {MINUS}{self.deletions}"

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "summary": self.summary}


def upstream_of(lead: Lead) -> tuple[str, str, str]:
    """The lead's upstream as (`origin/main`, remote, remote ref); refuses a branch without one."""
    repo, b = lead.repo, lead.branch
    remote = repo.config_value(f"branch.{b}.remote") or ""
    merge = repo.config_value(f"branch.{b}.merge") or ""
    short = repo.upstream(b)
    if not remote or not merge or short is None or remote == ".":
        remotes = repo.remotes()
        target = "origin" if "origin" in remotes else (remotes[0] if remotes else "origin")
        raise BalancedError(f"{b} has no upstream on a remote, so there is nothing to compare it with.",
                            hint=f"set one: `git branch --set-upstream-to={target}/{b}` (fetch first if "
                                 f"{target}/{b} is not there yet).")
    return short, remote, merge


def _numstat(lead: Lead, upstream: str) -> tuple[int, int, int]:
    files = ins = dels = 0
    for added, removed, _path in lead.repo.numstat(upstream, lead.branch):
        files += 1
        ins += added or 0  # None for a binary file
        dels += removed or 0
    return files, ins, dels


def landed_pieces(lead: Lead, upstream: str) -> list[dict[str, Any]]:
    """The pieces landed in the lead's branch since its upstream, from their landing notes, oldest first."""
    return [{"commit": x.commit, "piece": rec["piece"], "attempt": rec.get("attempt"), "agent": rec.get("agent"),
             "machine": rec.get("machine"), "cost_usd": rec.get("cost_usd")}
            for x in notes.landings(lead.repo, f"{upstream}..{lead.branch}", oldest_first=True)
            for rec in x.records if rec.get("piece")]


def run_check(lead: Lead) -> dict[str, Any]:
    """The check on the branch's tree: its note when that tree was checked with this command, else run now."""
    repo = lead.repo
    cmds = commands_of(settings_at(repo, lead.branch))
    if not cmds.check:
        return {"state": CheckState.NONE, "words": "no check is set ([worktree] check in .magnum/settings.toml)"}
    tree = repo.tree_of(lead.branch)
    hit = checks.cached(repo, tree, cmds.check)
    ran = hit is None
    if hit is None:
        trust.ensure_allowed(repo, cmds)
        ui.note(f"Running `{cmds.check}` on {lead.branch}'s tree…")
        hit = checks.check_rev(repo, lead.branch, cmds.check, cmds.setup, scratch="review")
    state = CheckState.PASSED if hit.passed else CheckState.FAILED
    how = "ran now" if ran else f"from its note of {clock(hit.at)}"
    return {"state": state, "command": cmds.check, "code": hit.code, "seconds": hit.seconds, "tree": tree,
            "ran": ran, "tail": hit.tail, "words": f"{state} (`{cmds.check}`, {hit.seconds:.1f}s, {how})"}


def review(lead: Lead) -> Review:
    """What would ship: commits, files and lines against the upstream, the landed pieces, the check."""
    upstream, remote, merge = upstream_of(lead)
    repo = lead.repo
    commits = repo.count_commits(upstream, lead.branch)
    behind = repo.count_commits(lead.branch, upstream)
    files, ins, dels = _numstat(lead, upstream)
    r = Review(lead.branch, upstream, remote, merge, commits, behind, files, ins, dels,
               landed_pieces(lead, upstream), {}, corrections(lead))
    r.check = run_check(lead) if commits else {"state": CheckState.NONE,
                                               "words": "nothing to check: nothing would ship"}
    return r


# -- corrections ----------------------------------------------------------------------------------------
def corrections_name(branch: str) -> str:
    return inbox.inbox_ref(branch)[len("refs/balanced/inbox/"):]


def corrections(lead: Lead) -> int:
    st = cache.read_all(lead.repo, CORRECTIONS).get(corrections_name(lead.branch))
    return int(st.get("events") or 0) if st else 0


def corrections_words(n: int) -> str:
    return "Corrected once" if n == 1 else "Corrected twice" if n == 2 else f"Corrected {n} times"


def corrections_line(lead: Lead) -> str | None:
    """`Corrected once`, for the board; None while the lead was never corrected."""
    n = corrections(lead)
    return corrections_words(n) if n else None


# -- shipping -------------------------------------------------------------------------------------------


def push_step(r: Review) -> list[str]:
    """The push that ships `r`."""
    return ["git", "push", r.remote, f"refs/heads/{r.branch}:{r.remote_ref}"]


def refuse_to_ship(r: Review) -> None:
    """Refuse, saying why and what to do, what must not be pushed: a branch behind its upstream, a failing check."""
    if r.behind:
        raise BalancedError(f"{r.upstream} has {r.behind} commit{'s' if r.behind != 1 else ''} that {r.branch} "
                            "lacks, so the push would be refused; nothing was pushed.",
                            hint=f"bring them in first (`git pull` on {r.branch}), then `git balanced ship`.")
    if r.check.get("state") == CheckState.FAILED:
        raise BalancedError(f"The check fails on {r.branch}'s tree, so it is not shipped.",
                            hint="fix it and land the fix, then `git balanced review`.")


def push_reviewed(lead: Lead, r: Review, waiting: dict[str, Any] | None) -> str:
    """Push what `r` shows (the person said yes), answer the review `waiting` under Now (or tell the lead), and
    say what was done; `ship` and the board's app both ship through here."""
    refuse_to_ship(r)
    res = lead.repo.push_as_user(r.remote, push_step(r)[-1])
    if res.code != 0:
        raise BalancedError(f"The push to {r.remote} failed; nothing was shipped:\n{push_said(res.out, res.err)}",
                            hint=f"see what the hooks or {r.remote} said above, then `git balanced ship` again.")
    if waiting:
        now.ship(lead, waiting["id"], pushed=f"pushed {r.branch} to {r.upstream}, {r.summary}")
    else:
        inbox.post(lead.repo, lead.branch, f"Shipped {r.branch} to {r.upstream}: {r.summary}", kind="shipped")
    return f"Pushed {r.branch} to {r.upstream}: {r.summary}." + (
        f" Answered {waiting['id']}: shipped; the lead hears it in its inbox." if waiting else "")


def push_said(out: str, err: str, most: int = 40) -> str:
    """What a refused push printed: a pre-push hook's own words (pre-commit prints them on stdout) before
    git's, every line of both up to `most`, so the reason is never cut off by git's last lines."""
    lines = (out.rstrip() + "\n" + err.rstrip()).strip("\n").splitlines()
    if len(lines) > most:
        lines = lines[:most // 2] + [f"… {len(lines) - most} lines …"] + lines[-(most // 2):]
    return "\n".join("    " + x for x in lines)
