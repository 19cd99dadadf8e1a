"""`ship --pr`: what would go into a pull request from the lead's branch, its title and body from the review,
and opening it (or taking on the one open for the branch) once the branch is pushed to its own branch."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from git_balanced.errors import BalancedError
from git_balanced.forge.base import Forge, PullRequest
from git_balanced.forge.events import Opened, Pushed, record, ref_of
from git_balanced.landing.review import Review, corrections, landed_pieces, run_check
from git_balanced.lead import Lead

TITLE_MOST = 72


@dataclass(frozen=True)
class Shipping:
    """The lead's branch going to its own branch on `remote`, for a pull request into `base`."""

    remote: str
    base: str
    review: Review

    @property
    def spec(self) -> str:
        return f"refs/heads/{self.review.branch}:refs/heads/{self.review.branch}"


def _remote_and_base(lead: Lead, base: str | None) -> tuple[str, str]:
    repo, b = lead.repo, lead.branch
    remotes = repo.remotes()
    remote = repo.config_value(f"branch.{b}.remote") or ("origin" if "origin" in remotes else
                                                         (remotes[0] if remotes else ""))
    if not remote or remote == ".":
        raise BalancedError(f"{b} has no remote to push to, so no pull request can be opened.",
                            hint="add one: `git remote add origin URL`, then `git balanced ship --pr` again.")
    if base is None:
        merge = repo.config_value(f"branch.{b}.merge") or ""
        base = merge.removeprefix("refs/heads/") if merge.removeprefix("refs/heads/") not in ("", b) else "main"
    if base == b:
        raise BalancedError(f"{b} would be its own base: a pull request goes from the lead's branch into another.",
                            hint=f"lead on a branch of its own (`git switch -c feature` from {b}), or name the "
                                 "branch it goes into: `git balanced ship --pr --base BRANCH`.")
    if repo.rev_parse(f"refs/remotes/{remote}/{base}") is None:
        raise BalancedError(f"{remote} has no branch {base} here, so there is nothing to open a pull request into.",
                            hint=f"`git fetch {remote}` first, or name the base: `git balanced ship --pr --base "
                                 "BRANCH`.")
    return remote, base


def measure(lead: Lead, base: str | None) -> Shipping:
    """What a pull request from the lead's branch into `base` (default: its upstream's branch, or main) holds."""
    remote, base = _remote_and_base(lead, base)
    repo, upstream = lead.repo, f"{remote}/{base}"
    files = ins = dels = 0
    for added, removed, _ in repo.numstat(upstream, lead.branch):
        files, ins, dels = files + 1, ins + (added or 0), dels + (removed or 0)
    commits = repo.count_commits(upstream, lead.branch)
    r = Review(lead.branch, upstream, remote, f"refs/heads/{lead.branch}", commits,
               repo.count_commits(lead.branch, upstream), files, ins, dels, landed_pieces(lead, upstream), {},
               corrections(lead))
    r.check = run_check(lead) if commits else {"words": "nothing to check: nothing would ship"}
    return Shipping(remote, base, r)


def title_and_body(lead: Lead, sh: Shipping, row: dict[str, Any] | None) -> tuple[str, str]:
    """The title (the lead's summary's first line, else the newest commit's subject) and the body: the lead's
    summary, what landed, the check run again, the attachments."""
    r = sh.review
    summary = str((row or {}).get("summary") or "").strip()
    title = (summary.splitlines()[0] if summary else lead.repo.subject(lead.branch))[:TITLE_MOST]
    lines = [summary, ""] if summary else []
    lines += [f"{r.summary} from `{r.branch}` into `{sh.base}`.", ""]
    if r.pieces:
        lines.append("What landed:")
        lines += [f"- `{p['commit'][:7]}` {p['piece']}" + (f" ({p['agent']})" if p.get("agent") else "")
                  for p in r.pieces]
        lines.append("")
    lines.append(f"Check: {r.check.get('words')}")
    names = [a["name"] for a in (row or {}).get("attachments") or []]
    if names:
        lines += ["", "Attached to the review (`git balanced show` in a clone that synced it): "
                  + ", ".join(f"`{n}`" for n in names)]
    return title, "\n".join(lines).strip() + "\n"


def open_or_reuse(lead: Lead, sh: Shipping, forge: Forge, *, draft: bool, title: str, body: str
                  ) -> tuple[PullRequest, bool]:
    """After the push: the open pull request for the branch (its title and body brought up to date) or a new
    one; its chain records it opened (the first time this clone sees it) or pushed."""
    found = forge.find_open(lead.branch)
    pr = forge.update(found.number, title=title, body=body) if found else \
        forge.open(head=lead.branch, base=sh.base, title=title, body=body, draft=draft)
    if lead.repo.read_ref(ref_of(pr.number)) is None:  # the first time this clone sees it
        record(lead.repo, pr.number, Opened(number=pr.number, url=pr.url, repository=forge.repository,
                                            lead=lead.branch, branch=lead.branch, base=pr.base_ref or sh.base,
                                            remote=sh.remote, head_sha=pr.head_sha, title=pr.title, draft=pr.draft,
                                            reused=found is not None),
               f"Pull request #{pr.number} {'taken on' if found else 'opened'}: {pr.title}")
    else:
        record(lead.repo, pr.number, Pushed(head_sha=lead.repo.rev_parse(lead.ref) or ""),
               f"Pull request #{pr.number}: pushed {lead.branch} again")
    return pr, found is not None
