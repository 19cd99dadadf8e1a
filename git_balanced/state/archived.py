"""Reading the archive of done work (state/archive.py writes it): an archived plan's lines, a job's, a job found
by its id.

An archive commit's tree holds `plan.jsonl` (the plan's events) and `jobs.jsonl` (every archived job's events,
one a line, each naming its job in `job`, grouped by job in the order of their ids): one blob a plan, however
many jobs it had. Archives written before hold a job's lines in a blob of its own, `jobs/<job>.jsonl`; they are
read the same way, and a plan archived again gets the new layout, its old lines moved into it.
"""

from __future__ import annotations

from git_balanced.errors import BalancedError
from git_balanced.files import dumps, loads  # json's, without importing json (and re)
from git_balanced.git import Repo
from git_balanced.state.events import Event, parse_event
from git_balanced.state.fold import JOB_RANK, fold

TYPE_CHECKING = False  # typing is not imported for this: the board and the inbox start without it
if TYPE_CHECKING:
    from typing import Any

ARCHIVE = "refs/balanced/archive/"
INBOX_MARKS = ARCHIVE + "inbox/"
PLAN_FILE = "plan.jsonl"
JOBS_FILE = "jobs.jsonl"
JOBS_DIR = "jobs"  # the layout before JOBS_FILE: `jobs/<job>.jsonl`, one blob a job
CHAIN = "job"  # the key of a line of JOBS_FILE naming its job: its first, so the ids are read without parsing
LINE_HEAD = f'{{"{CHAIN}": "'


def archive_ref(plan_id: str) -> str:
    return ARCHIVE + plan_id


def tree_entries(repo: Repo, tree_id: str | None) -> dict[bytes, tuple[int, bytes]]:
    if not tree_id:
        return {}
    return {e.path: (e.mode, e.sha) for e in repo.store[tree_id.encode()].items()}


def top_of(repo: Repo, tip: str | None) -> dict[bytes, tuple[int, bytes]]:
    """The entries of an archive commit's tree (none when there is no commit)."""
    return tree_entries(repo, repo.store[tip.encode()].tree.decode() if tip else None)


def _rows(data: bytes) -> list[dict[str, Any]]:
    return [loads(line) for line in data.splitlines() if line.strip()]


def jobs_of(repo: Repo, top: dict[bytes, tuple[int, bytes]]) -> dict[str, list[dict[str, Any]]]:
    """Every archived job's lines in an archive tree, by job id, from both layouts (the file's lines without the
    `job` key they carry there, as they were)."""
    out: dict[str, list[dict[str, Any]]] = {}
    if JOBS_DIR.encode() in top:
        for name, (_, sha) in tree_entries(repo, top[JOBS_DIR.encode()][1].decode()).items():
            out[name.decode().removesuffix(".jsonl")] = _rows(repo.store[sha].data)
    if JOBS_FILE.encode() in top:
        for row in _rows(repo.store[top[JOBS_FILE.encode()][1]].data):
            out.setdefault(str(row.pop(CHAIN, "")), []).append(row)
    return out


def job_ids(repo: Repo, top: dict[bytes, tuple[int, bytes]]) -> list[str]:
    """The ids of the jobs an archive tree holds, without parsing their lines where the layout allows it."""
    ids = [n.decode().removesuffix(".jsonl") for n in tree_entries(repo, top[JOBS_DIR.encode()][1].decode())] \
        if JOBS_DIR.encode() in top else []
    if JOBS_FILE.encode() in top:
        head = LINE_HEAD.encode()
        for line in repo.store[top[JOBS_FILE.encode()][1]].data.splitlines():
            if line.startswith(head):
                ids.append(line[len(head):line.find(b'"', len(head))].decode())
    return list(dict.fromkeys(ids))


def job_lines(rows: list[dict[str, Any]], job_id: str) -> bytes:
    """A job's lines as JOBS_FILE holds them: each naming the job first (LINE_HEAD), then its keys sorted."""
    return b"".join(dumps({CHAIN: job_id, **dict(sorted(row.items()))}, ensure_ascii=False).encode() + b"\n"
                    for row in rows)


def archived_lines(repo: Repo, pid: str, job_id: str | None) -> list[dict[str, Any]] | None:
    """The archived lines of one job of plan `pid` (or, with None, of the plan itself), or None when not there."""
    tip = repo.read_ref(archive_ref(pid))
    if tip is None:
        return None
    top = top_of(repo, tip)
    if job_id is not None:
        return jobs_of(repo, top).get(job_id)
    if PLAN_FILE.encode() not in top:
        return None
    return _rows(repo.store[top[PLAN_FILE.encode()][1]].data)


def count_jobs(repo: Repo) -> int:
    """How many jobs the archive holds, over every plan."""
    return sum(len(job_ids(repo, top_of(repo, tip))) for ref, tip in repo.list_refs(ARCHIVE).items()
               if not ref.startswith(INBOX_MARKS))


def find_job(repo: Repo, name: str) -> tuple[str, dict[str, Any], list[dict[str, Any]]] | None:
    """An archived job by its id or a unique start of it: (its id, its folded state, its archived lines)."""
    hits = []
    for ref, tip in repo.list_refs(ARCHIVE).items():
        if ref.startswith(INBOX_MARKS):
            continue
        for jid in job_ids(repo, top_of(repo, tip)):
            if jid == name or jid.startswith(name.lower()):
                hits.append((jid, ref[len(ARCHIVE):]))
    exact = [h for h in hits if h[0] == name]
    if not exact and len(hits) > 1:
        shown = ", ".join(sorted(h[0] for h in hits)[:10])
        raise BalancedError(f"{name!r} is the start of {len(hits)} archived job ids: {shown}.",
                            hint="give more of the id, enough to name one job.")
    if not exact and not hits:
        return None
    jid, pid = (exact or hits)[0]
    lines = archived_lines(repo, pid, jid) or []
    return jid, fold(as_events(lines), JOB_RANK, owners=True), lines


def as_events(lines: list[dict[str, Any]]) -> list[Event]:
    """The events of archived lines."""
    return [parse_event(dumps({k: v for k, v in row.items() if k not in ("sha", "subject")}).encode(),
                        sha=row.get("sha", "")) for row in lines]


def inbox_mark(repo: Repo, inbox_ref: str) -> str | None:
    """The newest message of the inbox at `inbox_ref` that was folded away (its readers read what came after)."""
    return repo.read_ref(INBOX_MARKS + inbox_ref.rsplit("/", 1)[1])
