"""What workers on this machine left behind once their jobs were done: worktrees, run folders, and worktree
registrations whose folder is gone. Each is listed with what it is and the command that removes it; one that
holds work nothing else keeps (uncommitted changes, commits on no branch) is listed and kept. And, on any
machine, the processes workers left running once their runner was gone: agents, and what they started
(`ready` and `doctor` find and stop them)."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from git_balanced import proc
from git_balanced.git import Repo
from git_balanced.jobs import LIVE, Job
from git_balanced.machines.reach import workcopy
from git_balanced.machines.reach.transport import Transport
from git_balanced.shipped import runner
from git_balanced.shipped.readonly import READONLY_DIR
from git_balanced.shipped.runfiles import RUNS_DIR
from git_balanced.vocab import RunState


@dataclass(frozen=True)
class Leftover:
    """One thing left behind; `kept` says why it stays (and `fix` is then the command to look at it)."""

    kind: str  # worktree, run folder, registration
    path: str
    what: str
    fix: str
    kept: str = ""
    machine: str = "local"  # or the ticked SSH machine it is on (left_there.py)

    def as_json(self) -> dict[str, str]:
        return {"kind": self.kind, "path": self.path, "what": self.what, "fix": self.fix, "kept": self.kept,
                "machine": self.machine}

    @property
    def where(self) -> str:
        """The path, with its machine's name before it when that is not this one."""
        return self.path if self.machine == "local" else f"{self.machine}:{self.path}"


def find(repo: Repo, jobs: dict[str, Job]) -> list[Leftover]:
    """Every leftover of this repository's workers on this machine."""
    return _worktrees(repo, jobs) + _registrations(repo) + _run_folders(jobs)


def _about(jobs: dict[str, Job], name: str) -> tuple[bool, str]:
    """Whether the job named `name` still needs its things, and words for whose they are."""
    job = jobs.get(name)
    if job is None:
        return False, "of no job this repository knows"
    return job.state in LIVE, f"of job {job.id} ({job.piece}, {job.state})"


def _worktrees(repo: Repo, jobs: dict[str, Job]) -> list[Leftover]:
    home = repo.worktrees_home()
    out = []
    for path in sorted(home.iterdir()):
        if not path.is_dir() or path.name.startswith("scratch-") or path.name == READONLY_DIR:
            continue  # the landing's scratch worktrees are reused; a shared read-only checkout goes with its last job
        live, whose = _about(jobs, path.name)
        if live or _running(path.name):
            continue
        out.append(_worktree(repo, path, whose))
    return out


def _running(key: str) -> bool:
    """Whether a worker process of that name still runs here, whatever the refs say (or fail to say)."""
    runs = os.path.expanduser(RUNS_DIR)
    answer = runner.ACTIONS["status"]({"jobs": [key], "runs_dir": runs})["jobs"][key]
    return bool(answer.get("state") == RunState.RUNNING)


def _worktree(repo: Repo, path: Path, whose: str) -> Leftover:
    look = f"git -C {path} status"
    if not (path / ".git").exists():
        if any(path.iterdir()):
            return Leftover("worktree", str(path), f"a folder {whose} that holds files but no git checkout",
                            f"ls -la {path}", kept="it holds files, and is no checkout git could restore them from")
        return Leftover("worktree", str(path), f"an empty folder {whose}", f"rmdir {path}")
    status = repo.status_at(path)
    if status.code != 0:
        return Leftover("worktree", str(path), f"a worktree {whose} git cannot read", look,
                        kept=f"git status failed there: {status.err.strip()[:200]}")
    if status.out.strip():
        n = len(status.out.splitlines())
        return Leftover("worktree", str(path), f"the worktree {whose}", look,
                        kept=f"{n} uncommitted change{'s' if n != 1 else ''} in it")
    head, branch = repo.head_at(path)
    mine = _linked_here(repo, path)
    if head and not (mine and branch) and not repo.kept_by_a_ref(head):
        return Leftover("worktree", str(path), f"the worktree {whose}", f"git -C {path} log -3",
                        kept=f"its commit {head[:12]} is on no branch of this repository")
    if not mine:  # a copy of its own: every branch in it must be kept here too, or its commits go with it
        for sha, name in repo.branch_tips_at(path):
            if not repo.kept_by_a_ref(sha):
                return Leftover("worktree", str(path), f"the copy {whose}", f"git -C {path} log -3 {name}",
                                kept=f"its branch {name} has commits this repository does not keep")
    on = f", on {branch} (the branch stays)" if branch else ""
    copy = workcopy.copy_of(repo, path)  # a worker on this machine works in a worktree of its branch's copy
    if mine:
        fix = f"git worktree remove {path}"
    elif copy is not None and _linked_to(repo, path, workcopy.git_dir(copy)):
        fix = f"git -C {copy} worktree remove {path}"
    else:
        fix = f"rm -rf {path}"
    return Leftover("worktree", str(path), f"the worktree {whose}{on}", fix)


def _linked_here(repo: Repo, path: Path) -> bool:
    """Whether `path` is a linked worktree of this repository (not a copy of its own)."""
    return _linked_to(repo, path, repo.common_dir)


def _linked_to(repo: Repo, path: Path, common_dir: Path) -> bool:
    """Whether `path` is a worktree whose git folder is `common_dir`."""
    found = repo.common_dir_at(path)
    return found is not None and found.resolve() == common_dir.resolve()


def _registrations(repo: Repo) -> list[Leftover]:
    """Worktree registrations in `.git/worktrees/` whose folder is gone (what `git worktree prune` removes)."""
    res = repo.prune_worktrees(dry_run=True)
    out = []
    for line in (res.out + res.err).splitlines():
        # "Removing worktrees/NAME: gitdir file points to non-existent location"
        if not line.startswith("Removing "):
            continue
        where, _, why = line[len("Removing "):].partition(": ")
        out.append(Leftover("registration", str(repo.common_dir / where),
                            f"a worktree registration whose folder is gone ({why.strip() or 'stale'})",
                            "git worktree prune"))
    return out


def _run_folders(jobs: dict[str, Job]) -> list[Leftover]:
    """The run folders (`~/.balanced/runs/<job>`) of this repository's jobs that are done. Folders of jobs
    this repository does not know are left alone: they may be another repository's."""
    runs = Path(os.path.expanduser(RUNS_DIR))
    if not runs.is_dir():
        return []
    out = []
    for path in sorted(runs.iterdir()):
        job_id = path.name.split("-r", 1)[0]
        job = jobs.get(job_id)
        if job is None or job.state in LIVE or not path.is_dir():
            continue
        if _running(path.name):
            continue  # its process still runs, whatever the job's events say
        out.append(Leftover("run folder", str(path), f"the run folder of job {job.id} ({job.piece}, {job.state}): "
                            "its log and result", f"rm -rf {path}"))
    return out


def remove(repo: Repo, item: Leftover) -> str | None:
    """Remove one leftover that is not kept; None when done, else what stopped it."""
    if item.kept:
        return item.kept
    if item.kind == "registration":
        res = repo.prune_worktrees()
        return None if res.code == 0 else res.err.strip() or res.out.strip()
    path = Path(item.path)
    if item.kind == "worktree" and item.fix.startswith(("git worktree remove", "git -C ")):
        # no --force: git refuses if anything changed since; a worker's worktree is the worker copy's
        where = workcopy.copy_of(repo, path) if item.fix.startswith("git -C ") else None
        res = repo.remove_worktree(path, copy=where)
        return None if res.code == 0 else res.err.strip() or res.out.strip()
    if item.fix.startswith("rmdir"):
        try:
            path.rmdir()
        except OSError as exc:
            return str(exc)
        return None
    shutil.rmtree(path, ignore_errors=True)
    return None if not path.exists() else f"{path} is still there"


# -- processes left running --------------------------------------------------------------------------------------

# Runs on the machine (python3, stdlib only) after the runner's source (RUNNER): every process a worker started
# that still runs while no runner watches it: the agent of a runner killed with its machine's engine, or a daemon
# a worker left behind (`setsid sleep 600 &`), found by the run folder the runner marks in the agent's environment
# (BALANCED_RUN_DIR, inherited by all it starts) or by its agent's process group and session. Those hold the
# machine's room and nobody watches them. With "stop", each is ended as the runner ends them (reap._reap: TERM,
# KILL after the grace), checked by pid and start tick so a reused pid is never signalled.
PROCESSES_LEFT = r"""
import json, os, sys
ns = {"__name__": "balanced_runner"}
exec(compile(RUNNER, "<runner>", "exec"), ns)
req = json.loads(sys.stdin.read() or "{}")
runs = os.path.abspath(os.path.expanduser(req.get("runs_dir") or ns["RUNS_DIR"]))

def command(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as fh:
            argv = [a.decode("utf-8", "replace") for a in fh.read().split(b"\0") if a]
    except OSError:
        return "?"
    names = [os.path.basename(a) for a in argv[:2]]
    if len(names) > 1 and names[0].startswith(("node", "python", "bun")):
        return names[1]
    return names[0] if names else "?"

scan = ns["_scan"]()
folders = {p[4] for p in scan if p[4] and os.path.dirname(p[4]) == runs}  # the run folder may be gone
folders |= {os.path.join(runs, j) for j in (os.listdir(runs) if os.path.isdir(runs) else [])}
found = []
for run_dir in sorted(folders):
    if ns["_job_status"](run_dir)["state"] == "running":
        continue  # its runner still watches it: a worker at work
    procs = ns["_left"](run_dir, scan)
    if not procs:
        continue
    names = {p[0]: command(p[0]) for p in procs}
    ended = {d["pid"]: d["stopped"] for d in ns["_reap"](run_dir, float(req.get("grace", 5.0)), scan=procs)} \
        if req.get("stop") else {}
    found += [{"job": os.path.basename(run_dir), "pid": p[0], "command": names[p[0]], "run_dir": run_dir,
               "stopped": ended.get(p[0], False)} for p in procs]
print(json.dumps({"processes": found}))
"""


@dataclass(frozen=True)
class LeftProcess:
    """A process a worker started that outlived it: its run folder's job, pid and command."""

    job: str
    pid: int
    command: str
    stopped: bool = False

    def words(self) -> str:
        return f"{self.command} (pid {self.pid}) of job {self.job}"

    def as_json(self) -> dict[str, object]:
        return {"job": self.job, "pid": self.pid, "command": self.command, "stopped": self.stopped}


def processes_script() -> str:
    """The script that finds (and with "stop" in its request, ends) the processes workers left on a machine."""
    return f"RUNNER = {runner.source(with_meter=False)!r}\n{PROCESSES_LEFT}"


def read_processes(out: str) -> list[LeftProcess]:
    """The processes of the script's answer."""
    data = json.loads(out.strip().splitlines()[-1])
    return [LeftProcess(str(a["job"]), int(a["pid"]), str(a["command"]), bool(a.get("stopped")))
            for a in data.get("processes", [])]


def processes(t: Transport | None, *, stop: bool) -> list[LeftProcess] | None:
    """The processes workers left running on the machine of `t` (this one when None), ended with `stop`;
    None when the machine could not say (nothing is stopped on a guess)."""
    req = json.dumps({"stop": stop})
    if t is not None:
        res = t.run_python(processes_script(), [], input=req, timeout=120)
    else:  # from a file: the runner's source is larger than one argument may be (128 KiB on Linux)
        with tempfile.TemporaryDirectory(prefix="balanced-left-") as folder:
            script = Path(folder) / "left.py"
            script.write_text(processes_script(), encoding="utf-8")
            res = proc.run([sys.executable, str(script)], input=req, timeout=120)
    try:
        return read_processes(res.out)
    except (ValueError, IndexError, KeyError, TypeError):
        return None
