"""History for the engine benchmark: a repository that already holds many landed jobs.

    python bench/history.py REPO JOBS [DAYS]   # in the repository's environment (its HOME and identity)

What a lead has after running plans for a while, written straight into the repository in one pack by
`git fast-import`, rather than by running them (1,000 jobs would take minutes): plans of 20 pieces,
started and done; for each piece a job of the five events a landed shell piece has (placed, claimed,
started, finished, landed, with the fields the engine writes), its branch `balanced/hNNNN` holding one
commit on the lead's branch as it was then, the merge that landed it into main (as the landing queue merges: the
lead's tip and the branch's), the landing note on that merge, and an inbox message. Each piece writes
`history.txt`; a last commit on main removes it, so main's tree is what it was, and a run after it checks out
and checks the same files as a run in a fresh repository; only the history differs (and every landed branch is
merged into main, as in a lead whose pieces landed).
The caches are warmed, as any command would have. Its events and commits are dated DAYS ago (default 1): older
than `[balanced] archive_after_days` (30), they are what `git balanced gc` folds into the archive.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout without installing

from git_balanced.git import Repo  # noqa: E402
from git_balanced.state import cache  # noqa: E402
from git_balanced.state.events import Event, message, new_id, node_id  # noqa: E402

PER_PLAN = 20
TASK = "Old shell pieces, already landed"


class Stream:
    """A `git fast-import` stream: the old jobs' commits and notes, and the event commits of their chains,
    exactly as `state.refs.append` writes them (`event.json` in the tree, the trailers), in one pack."""

    def __init__(self, repo: Repo, age: float = 86400.0) -> None:
        self.repo = repo
        self.age = age  # how long ago its events happened, in seconds
        self.parts: list[bytes] = []
        self.marks = 0
        self.tips: dict[str, tuple[str, int]] = {}  # ref -> (its tip's mark, its lamport)
        self.who = repo.identity_line
        self.node = node_id(repo)

    def commit(self, ref: str, message: str, files: dict[str, bytes | None], parent: str | None, when: float,
               merge: str | None = None) -> str:
        """A commit on `ref` (a file of None removed), with `merge` as its second parent when given; its mark."""
        self.marks += 1
        mark = f":{self.marks}"
        msg = message.encode()
        out = [f"commit {ref}\nmark {mark}\ncommitter {self.who} {int(when)} +0000\ndata {len(msg)}\n".encode(),
               msg, b"\n"]
        if parent:
            out.append(f"from {parent}\n".encode())
        if merge:
            out.append(f"merge {merge}\n".encode())
        for path, data in files.items():
            out += [f"D {path}\n".encode()] if data is None else [
                f"M 100644 inline {path}\ndata {len(data)}\n".encode(), data, b"\n"]
        self.parts.append(b"".join(out) + b"\n")
        return mark

    def event(self, ref: str, event: str, subject: str, data: dict[str, Any], state: str | None = None) -> None:
        """One event on a chain, after the ones already written to it."""
        parent, lamport = self.tips.get(ref, (None, 0))
        ev = Event(event=event, data=data, state=state, lamport=lamport + 1, node=self.node,
                   time=time.time() - self.age)
        self.tips[ref] = (self.commit(ref, message(ev, subject), {"event.json": ev.to_json()}, parent, ev.time),
                          lamport + 1)

    def run(self) -> dict[str, str]:
        """Feed the stream to git; the commits' ids by mark."""
        marks = self.repo.state_dir / "history-marks"
        res = subprocess.run(["git", "fast-import", "--quiet", f"--export-marks={marks}"], cwd=self.repo.root,
                             input=b"".join(self.parts), capture_output=True, check=False)
        if res.returncode != 0:
            sys.exit(f"git fast-import failed: {res.stderr.decode().strip()}")
        by_mark = dict(line.split() for line in marks.read_text().splitlines())
        marks.unlink()
        return by_mark


def write(repo: Repo, jobs: int, days: float = 1.0) -> None:
    """The plans, jobs, branches, notes and inbox messages of `jobs` landed pieces, `days` ago."""
    base = repo.rev_parse("main") or ""
    first = Stream(repo, days * 86400)
    when = time.time() - days * 86400
    pieces, merges = [], []
    lead = base  # each piece forks from main as it was, and is merged into it: every landed branch is in main
    for k in range(jobs):
        branch = f"balanced/h{k:04d}"
        pieces.append(first.commit(f"refs/heads/{branch}", "old piece\n",
                                   {"history.txt": f"piece {k}\n".encode()}, lead, when))
        lead = first.commit("refs/heads/main", f"Land {branch} (h{k:04d}, attempt 1)\n",
                            {"history.txt": f"piece {k}\n".encode()}, lead, when, merge=pieces[-1])
        merges.append(lead)
    if jobs:
        first.commit("refs/heads/main", "Remove history.txt\n", {"history.txt": None}, lead, when)
    notes = {}
    for k, mark in enumerate(merges):
        note = {"branch": f"balanced/h{k:04d}", "check": "python3 -m unittest discover -q -s tests", "into": "main",
                "piece": f"h{k:04d}", "result": "pass", "seconds": 0.1}
        notes[mark] = (json.dumps(note) + "\n").encode()
    first.parts.append(b"commit refs/notes/balanced\ncommitter " + first.who.encode()
                       + f" {int(when)} +0000\ndata 17\nNotes of landing\n".encode()
                       + b"".join(f"N inline {m}\ndata {len(n)}\n".encode() + n + b"\n" for m, n in notes.items())
                       + b"\n")
    shas = first.run()
    heads, landed = [shas[m] for m in pieces], [shas[m] for m in merges]
    chains = Stream(repo, days * 86400)
    me = chains.node
    inbox = "refs/balanced/inbox/main"
    for start in range(0, jobs, PER_PLAN):
        ks = range(start, min(jobs, start + PER_PLAN))
        plan = new_id()
        stored = [{"after": [], "after_words": "", "agent": "shell", "branch": f"balanced/h{k:04d}",
                   "budget_usd": None, "id": f"h{k:04d}", "machine": None, "model": None, "paths": [],
                   "placed": "local", "run": f"echo 'piece {k}' > history/h{k:04d}.txt", "size": 1.0,
                   "task": f"Write history/h{k:04d}.txt.", "why": "local: the only ticked machine"} for k in ks]
        pref = f"refs/balanced/plans/{plan}"
        chains.event(pref, "created", f"Plan: {TASK}", {"id": plan, "lead": "main", "task": TASK, "budget_usd": None,
                                                        "pieces": stored, "source": "plan.yaml"}, state="created")
        chains.event(pref, "started", "Plan started", {"node": me, "started_by": "lead"}, state="started")
        for k, piece in zip(ks, stored, strict=True):
            job = new_id()
            jref = f"refs/balanced/jobs/{job}"
            chains.event(jref, "placed", f"{piece['id']}: placed on local (attempt 1)", {
                "after": [], "agent": "shell", "attempt": 1, "base": base, "branch": piece["branch"],
                "budget_usd": None, "job": job, "lead": "main", "machine": "local", "model": None,
                "paths": [], "piece": piece["id"], "placed_at": time.time(), "plan": plan, "plan_task": TASK,
                "run": piece["run"], "run_no": 1, "task": piece["task"], "title": piece["task"],
                "why": piece["why"]}, state="queued")
            chains.event(jref, "claimed", f"{piece['id']}: claimed", {"claimed_at": time.time(), "node": me})
            chains.event(jref, "started", f"{piece['id']}: started on local", {
                "node": me, "pid": 1, "started_at": time.time(), "worktree": f"/nonexistent/{job}"},
                state="running")
            chains.event(jref, "finished", f"{piece['id']}: finished with 1 commit", {
                "commits": 1, "cost_usd": None, "dirty": False, "exit_code": 0, "head": heads[k],
                "outcome": "success", "seconds": 0.05, "summary": "the agent printed nothing", "tokens": {},
                "windows": []}, state="finished")
            chains.event(jref, "landed", f"{piece['id']}: landed", {"landed": landed[k], "landed_in": "main"},
                         state="landed")
            words = f"Its check passed, so {piece['branch']} landed in main as {landed[k][:7]}"
            chains.event(inbox, "info", words, {"text": words, "kind": "info", "job": job})
            time.sleep(0.001)  # ids sort by milliseconds: one apart, as jobs placed one after another are
        chains.event(pref, "done", f"Plan done: {len(stored)} landed", {"summary": f"{len(stored)} landed"},
                     state="done")
        words = f"Plan {TASK!r} is done: {len(stored)} landed"
        chains.event(inbox, "info", words, {"text": words, "kind": "info", "plan": plan})
    chains.run()
    for kind in ("jobs", "plans"):
        cache.read_all(repo, kind)


def main(argv: list[str]) -> int:
    """Write the history into the repository named on the command line."""
    where, jobs = Path(argv[0]), int(argv[1])
    write(Repo.discover(where), jobs, float(argv[2]) if len(argv) > 2 else 1.0)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
