"""The archive's layout: one blob of every job's lines a plan (`jobs.jsonl`), however many jobs it had; an archive
written before (a blob a job, `jobs/<job>.jsonl`) read the same, and moved into the new layout when its plan is
archived again; the cache left without the archived entries."""

from __future__ import annotations

import json

from git_balanced import process
from git_balanced.git import Repo
from git_balanced.state import archive, archived, cachefile, refs
from tests.state.test_archive import history  # noqa: F401  (the fixture: a lead with an old, a new and a live plan)
from tests.support.cli import balanced


def _top(repo: Repo, pid: str) -> dict[str, bytes]:
    tip = repo.read_ref(archive.archive_ref(pid))
    return {k.decode(): sha for k, (_, sha) in archived.top_of(repo, tip).items()}


def _as_before(repo: Repo, pid: str) -> None:
    """Rewrite the plan's archive commit in the layout written before: `jobs/<job>.jsonl`, a blob a job."""
    ref = archive.archive_ref(pid)
    tip = repo.read_ref(ref)
    top = archived.top_of(repo, tip)
    held = archived.jobs_of(repo, top)
    blobs = [(f"{jid}.jsonl", 0o100644, repo.write_blob(
        ("\n".join(json.dumps(r, sort_keys=True, ensure_ascii=False) for r in rows) + "\n").encode()))
        for jid, rows in sorted(held.items())]
    jobs_tree = repo.write_tree(blobs)
    plan = top[archived.PLAN_FILE.encode()][1].decode()
    tree = repo.write_tree([("jobs", 0o040000, jobs_tree), (archived.PLAN_FILE, 0o100644, plan)])
    assert repo.cas_ref(ref, repo.write_commit(tree, [], "Archived, as before\n"), tip)


def test_a_plan_is_two_blobs_and_its_jobs_read_as_they_were(history) -> None:  # noqa: F811
    repo, plans, between = history
    old_pid, old_jobs = plans["old"]
    chains = {j: [ev.sha for ev in refs.events_of(repo, refs.ref_for("jobs", j))] for j in old_jobs}
    archive.fold_away(repo, 0, now=between)
    assert sorted(_top(repo, old_pid)) == ["jobs.jsonl", "plan.jsonl"], "two blobs, whatever the count of jobs"
    held = archived.jobs_of(repo, archived.top_of(repo, repo.read_ref(archive.archive_ref(old_pid))))
    assert {j: [r["sha"] for r in rows] for j, rows in held.items()} == chains, "each job's events, in order"
    assert all("job" not in r for rows in held.values() for r in rows), "read back as archived, without its key"
    assert archived.count_jobs(repo) == 2
    process.forget()
    for part in ("jobs.done.json", "jobs.brief.json"):
        held_now = cachefile.load(str(repo.state_dir / "cache" / part))
        assert not any(ref.endswith(tuple(old_jobs)) for ref in held_now), "gone from the cache"


def test_an_archive_written_before_is_read_and_moved_into_one_blob(history) -> None:  # noqa: F811
    repo, plans, between = history
    old_pid, old_jobs = plans["old"]
    archive.fold_away(repo, 0, now=between)
    _as_before(repo, old_pid)
    assert "jobs" in _top(repo, old_pid) and "jobs.jsonl" not in _top(repo, old_pid)
    assert archived.count_jobs(repo) == 2
    process.forget()
    shown = balanced(repo.root, "show", old_jobs[1][:12], "--json")
    assert shown.code == 0 and json.loads(shown.out)["id"] == old_jobs[1], shown.err
    new_pid, new_jobs = plans["new"]
    job = refs.ref_for("jobs", new_jobs[0])
    tip = repo.read_ref(job)
    assert tip is not None
    archive._write(repo, old_pid, None, {new_jobs[0]: tip})  # a job of another chain, only to move the layout
    assert sorted(_top(repo, old_pid)) == ["jobs.jsonl", "plan.jsonl"], "archived again: the new layout"
    held = archived.jobs_of(repo, archived.top_of(repo, repo.read_ref(archive.archive_ref(old_pid))))
    assert sorted(held) == sorted([*old_jobs, new_jobs[0]]), "the old jobs' lines moved into it, none lost"
