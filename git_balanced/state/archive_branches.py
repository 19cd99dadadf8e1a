"""The branches landed jobs left in the lead, removed when their plan is archived (state/archive.py), so that the
refs of the lead (which every `git fetch` into it reads) grow with what is live, not with history.

A branch goes only when all of these hold:

- it is a landed job's own: the job's branch (`refs/heads/<branch>`, under `balanced/`, where workers' branches
  are made) or where the job's branch came back from another machine (`refs/remotes/<machine>/<branch>`); never
  a lead's branch, never one a job that is not being archived names;
- everything on it is in the lead's branch the job landed in (its tip is that branch's tip or an ancestor of
  it), asked of git once for all of them (`for-each-ref --merged`);
- no checkout of the lead has it checked out (or is rebasing it).

Each one removed is written into its plan's archive (`branches.jsonl`: its ref, the id it pointed at, its job), so
`git branch <name> <id>` brings it back; it is removed in the archive's one transaction, only while it still
points there. The others stay, each with why (`Kept`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from git_balanced.git import Repo
from git_balanced.git.contains import checked_out, merged
from git_balanced.vocab import JobState

BRANCHES_FILE = "branches.jsonl"
WORKER = "balanced/"  # workers' branches are made under it (machines/reach/workcopy.fetch_branches)
ASKED = ("refs/heads/" + WORKER, "refs/remotes/")


@dataclass
class Chosen:
    """The branches to remove with the plans being archived, by plan: {ref: (its id, its job)}; and those kept."""

    gone: dict[str, dict[str, tuple[str, str]]] = field(default_factory=dict)
    kept: list[dict[str, str]] = field(default_factory=list)  # each {branch, job, why}


def own_refs(fields: dict[str, Any]) -> list[str]:
    """The refs a job made for its branch in the lead: its branch, and where it came back from a machine."""
    branch = str(fields.get("branch") or "")
    out = [f"refs/heads/{branch}"] if branch else []
    fetched = str(fields.get("fetched_ref") or "")
    if fetched.startswith("refs/remotes/") and fetched.endswith("/" + branch) and fetched not in out:
        out.append(fetched)
    return out


def _why_not_own(ref: str, leads: set[str]) -> str | None:
    """Why `ref` is not a worker's branch to remove (None when it is one)."""
    name = ref.split("/", 3)[3] if ref.startswith("refs/remotes/") else ref.removeprefix("refs/heads/")
    if ref.removeprefix("refs/heads/") in leads or name in leads:
        return "it is named as a lead's branch"
    if not name.startswith(WORKER):
        return f"it is not a worker's branch (outside {WORKER})"
    return None


def choose(repo: Repo, jobs: dict[str, dict[str, Any]], folding: dict[str, str]) -> Chosen:
    """Which refs the landed jobs of `folding` ({job: its plan}) left that go with their archive, and which stay
    and why. `jobs` is every job's folded state (the cache's)."""
    leads, used, wanted = _asked(jobs, folding)
    leads |= {repo.current_branch() or ""} - {""}
    out = Chosen()
    if not wanted:
        return out
    there = {**repo.list_refs(ASKED[0]), **repo.list_refs(ASKED[1])}
    held = checked_out(repo)
    into: dict[str, dict[str, str] | None] = {}
    for lead in sorted({w[2] for w in wanted.values()}):
        tip = repo.read_ref(f"refs/heads/{lead}") if lead else None
        into[lead] = merged(repo, tip, ASKED) if tip else None  # one git process a lead branch: all of its at once
    for ref, (jid, pid, lead) in sorted(wanted.items()):
        if (there.get(ref) if ref.startswith(ASKED) else repo.read_ref(ref)) is None:
            continue  # gone already: nothing to remove, nothing to say
        why = _why_not_own(ref, leads)
        ok = into.get(lead) or {}
        if why is None and ref in used:
            why = "a job not archived works on it"
        elif why is None and (held is None or ref in held):
            why = "it is checked out in a worktree" if held is not None else "the checkouts could not be read"
        elif why is None and ref not in ok:
            why = f"not merged, it has commits {lead or 'the lead'} lacks (`git log {lead}..{ref}` lists them)"
        if why is None:
            out.gone.setdefault(pid, {})[ref] = (ok[ref], jid)
        else:
            out.kept.append({"branch": ref, "job": jid, "why": why})
    return out


def _asked(jobs: dict[str, dict[str, Any]], folding: dict[str, str],
           ) -> tuple[set[str], set[str], dict[str, tuple[str, str, str]]]:
    """The lead branches the jobs name; the refs of the jobs that stay; and the refs of the landed jobs of
    `folding`, each with (its job, its plan, the lead branch it landed in)."""
    leads: set[str] = set()
    used: set[str] = set()
    wanted: dict[str, tuple[str, str, str]] = {}
    for jid, st in jobs.items():
        f = st["fields"]
        leads |= {str(f.get(k) or "") for k in ("lead", "landed_in")} - {""}
        if jid not in folding:
            used.update(own_refs(f))
        elif st["state"] == JobState.LANDED:
            for ref in own_refs(f):
                wanted.setdefault(ref, (jid, folding[jid], str(f.get("landed_in") or f.get("lead") or "")))
    return leads, used, wanted


def lines(old: bytes, gone: dict[str, tuple[str, str]]) -> bytes:
    """BRANCHES_FILE with `gone` added to what it held (`old`), a line a ref and id, sorted."""
    rows = {(r["ref"], r["sha"]): r for r in parse(old)}
    for ref, (sha, jid) in gone.items():
        rows[(ref, sha)] = {"ref": ref, "sha": sha, "job": jid}
    return b"".join(json.dumps(rows[k], sort_keys=True).encode() + b"\n" for k in sorted(rows))


def parse(data: bytes) -> list[dict[str, str]]:
    """The rows of a BRANCHES_FILE."""
    return [json.loads(line) for line in data.splitlines() if line.strip()]


def restore_command(ref: str, sha: str) -> str:
    """The command that puts back a ref the archive removed: `git branch` for a branch, `git update-ref` for a
    ref fetched back from a machine."""
    if ref.startswith("refs/heads/"):
        return f"git branch {ref.removeprefix('refs/heads/')} {sha}"
    return f"git update-ref {ref} {sha}"
