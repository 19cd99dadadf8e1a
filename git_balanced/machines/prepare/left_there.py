"""What workers left on a ticked SSH machine once their jobs were done: their worktrees in this repository's copy
there and their run folders, listed (and removed when you say so) through the transport, as leftovers.py does
on this machine. One that holds work nothing else keeps (uncommitted changes, a commit on no branch) is listed
and kept."""

from __future__ import annotations

import json
from typing import Any

from git_balanced.git import Repo
from git_balanced.jobs import LIVE, Job
from git_balanced.machines.prepare import leftovers
from git_balanced.machines.prepare.leftovers import Leftover
from git_balanced.machines.reach.copies import worktrees_folder
from git_balanced.machines.reach.transport import Transport
from git_balanced.shipped import runner

# Runs there (python3, stdlib only) after the runner's source (RUNNER). The request names the copy, its worktrees'
# folder, the words for this repository's done jobs and their branches, and the ids of its live ones; with "remove",
# the paths to remove (each found again first: only what is still a leftover and not kept goes).
LEFT_THERE = r"""
import json, os, shutil, sys
ns = {"__name__": "balanced_runner"}
exec(compile(RUNNER, "<runner>", "exec"), ns)
req = json.loads(sys.stdin.read())
folder, copy, done, live = req["folder"], req["copy"], req["done"], set(req["live"])
branches = req.get("branches", {})
runs = os.path.abspath(os.path.expanduser(ns["RUNS_DIR"]))

def git(*args, cwd):
    # The runner's own door to git: a worker wrote in these folders, and nothing it planted there runs.
    return ns["_git"](list(args), cwd)

def running(key):
    return ns["_job_status"](os.path.join(runs, key))["state"] == "running"

def copy_of(name):
    # The repository the worktree is registered in: its job's branch's own copy (branchcopy.py) where that is
    # there, or the copy itself. Found from the job's branch, as the runner does: not from anything the worker
    # could have written in the worktree.
    branch = branches.get(name)
    own = ns["own_copy_path"](copy, branch) if branch else ""
    return own if own and os.path.isdir(own) else copy

def worktree(path, whose):
    item = {"kind": "worktree", "path": path, "what": "the worktree " + whose, "kept": "",
            "copy": copy_of(os.path.basename(path))}
    if not os.path.exists(os.path.join(path, ".git")):
        full = bool(os.listdir(path))
        item["what"] = ("a folder " + whose + " that holds files but no git checkout") if full else \
            ("an empty folder " + whose)
        item["kept"] = "it holds files, and is no checkout git could restore them from" if full else ""
        return item
    code, out = git("status", "--porcelain", "--untracked-files=normal", cwd=path)
    if code != 0:
        item["kept"] = "git status failed there: " + out[:200]
    elif out:
        n = len(out.splitlines())
        item["kept"] = "%d uncommitted change%s in it" % (n, "s" if n != 1 else "")
    else:
        branch = git("symbolic-ref", "-q", "--short", "HEAD", cwd=path)[1]
        head = git("rev-parse", "-q", "--verify", "HEAD", cwd=path)[1]
        if branch:
            item["what"] += ", on " + branch + " (the branch stays)"
        elif head and not git("for-each-ref", "--count=1", "--contains", head, "refs/heads/", cwd=item["copy"])[1]:
            item["kept"] = "its commit " + head[:12] + " is on no branch there"
    return item

found = []
for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
    path = os.path.join(folder, name)
    if name in live or running(name) or not os.path.isdir(path):
        continue
    found.append(worktree(path, done.get(name, "of no job this repository knows")))
for name in sorted(os.listdir(runs)) if os.path.isdir(runs) else []:
    job = name.split("-r", 1)[0]
    if job in done and not running(name) and os.path.isdir(os.path.join(runs, name)):
        found.append({"kind": "run folder", "path": os.path.join(runs, name), "kept": "",
                      "what": "the run folder " + done[job] + ": its log and result"})
removed, failed = [], []
for item in found:
    if item["path"] not in req.get("remove", []) or item["kept"]:
        continue
    if item["kind"] == "worktree" and os.path.exists(os.path.join(item["path"], ".git")):
        code, out = git("worktree", "remove", item["path"], cwd=item["copy"])  # no --force: refused if it changed
        if code == 0 and item["copy"] != copy:  # a branch's own copy goes with its worktree
            git("worktree", "prune", cwd=item["copy"])
            ns["own_copy_remove"](item["copy"])
    else:
        shutil.rmtree(item["path"], ignore_errors=True)
        code, out = (0, "") if not os.path.exists(item["path"]) else (1, item["path"] + " is still there")
    (removed if code == 0 else failed).append({"what": item["path"], "why": out})
if removed:
    git("worktree", "prune", cwd=copy)
print(json.dumps({"found": found, "removed": [r["what"] for r in removed], "failed": failed}))
"""


def _script() -> str:
    return f"RUNNER = {runner.source(with_meter=False)!r}\n{LEFT_THERE}"


def _request(record: dict[str, Any], repo_name: str, jobs: dict[str, Job], remove: list[str]) -> dict[str, Any]:
    copy = str(record["repo_path"])
    return {"folder": worktrees_folder(str(record["home"]), copy, repo_name), "copy": copy,
            "done": {j.id: f"of job {j.id} ({j.piece}, {j.state})" for j in jobs.values() if j.state not in LIVE},
            "branches": {j.id: j.branch for j in jobs.values() if j.state not in LIVE},
            "live": [j.id for j in jobs.values() if j.state in LIVE], "remove": remove}


def _ask(t: Transport, request: dict[str, Any]) -> dict[str, Any]:
    res = t.run_python(_script(), [], input=json.dumps(request), timeout=120)
    try:
        answer = json.loads(res.out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise ValueError((res.err or res.out).strip()[-300:] or f"exit {res.code}") from None
    if not isinstance(answer, dict):
        raise ValueError(f"it answered {answer!r}")
    return answer


def find(machine: str, t: Transport, record: dict[str, Any], repo_name: str, jobs: dict[str, Job]) -> list[Leftover]:
    """What this repository's workers left on `machine` (its readiness record says where its copy is).
    ValueError when the machine could not say."""
    answer = _ask(t, _request(record, repo_name, jobs, []))
    out = []
    for item in answer.get("found", []):
        path = str(item["path"])
        checkout = item["kind"] == "worktree" and "git checkout" not in item["what"] \
            and "empty folder" not in item["what"]
        fix = f"ssh {t.name} git -C {item.get('copy') or record['repo_path']} worktree remove {path}" if checkout else \
            f"ssh {t.name} rm -rf {path}"
        if item["kept"]:
            fix = f"ssh {t.name} git -C {path} status"
        out.append(Leftover(str(item["kind"]), path, str(item["what"]), fix, str(item["kept"]), machine))
    return out


def remove(t: Transport, record: dict[str, Any], repo_name: str, jobs: dict[str, Job],
           items: list[Leftover]) -> tuple[list[str], list[dict[str, str]]]:
    """Remove those of `items` that are still leftovers there and not kept: (removed paths, what was not, why)."""
    answer = _ask(t, _request(record, repo_name, jobs, [x.path for x in items if not x.kept]))
    failed = [{"what": str(f["what"]), "why": str(f["why"])} for f in answer.get("failed", [])]
    return [str(p) for p in answer.get("removed", [])], failed


def tidy(machine: str, t: Transport | None, record: dict[str, Any], repo: Repo, jobs: dict[str, Job], *,
         yes: bool) -> str | None:
    """`ready`'s line on what this repository's done workers left on a machine (this one when `t` is None):
    how many, and the command that removes them; with `yes`, removed (never what holds work). None: nothing."""
    try:
        found = leftovers.find(repo, jobs) if t is None else find(machine, t, record, repo.name, jobs)
    except ValueError:
        return None  # a machine that could not say: `doctor` names it
    items = [x for x in found if not x.kept]
    if not items:
        return None
    what = _count(items)
    if not yes:
        return (f"left behind by workers whose jobs are done: {what}; `git balanced ready {machine} --yes` "
                "removes them (`git balanced doctor` lists them)")
    if t is None:
        failed = [{"what": x.path, "why": why} for x in items if (why := leftovers.remove(repo, x)) is not None]
    else:
        failed = remove(t, record, repo.name, jobs, items)[1]
    return f"removed {what} left behind by workers whose jobs are done" + (
        f"; could not remove {', '.join(b['what'] + ' (' + b['why'] + ')' for b in failed)}" if failed else "")


def _count(items: list[Leftover]) -> str:
    """`2 worktrees and 1 run folder`."""
    kinds: dict[str, int] = {}
    for x in items:
        kinds[x.kind] = kinds.get(x.kind, 0) + 1
    words = [f"{n} {k}{'s' if n != 1 else ''}" for k, n in kinds.items()]
    return " and ".join([", ".join(words[:-1]), words[-1]]) if len(words) > 1 else words[0]
