"""Watching and reaping: each run's state and result, its log, stopping it, and ending what a worker left running
(`setsid`, `nohup … &`) before its folders go. Stdlib only, Python 3.9+: part of the runner's source (runner.py)."""

from __future__ import annotations

import codecs
import contextlib
import json
import os
import shutil
import signal
import time
from typing import Any

if "_run_dir" not in globals():  # sent to another machine, runfiles.py's source comes first and defines these
    from git_balanced.shipped.runfiles import (
        GRACE,
        RUNS_DIR,
        RequestError,
        _git,
        _parsed,
        _path,
        _read,
        _read_pid,
        _run_dir,
        _signal_group,
        _write_atomic,
        alive,
        stat_fields,
    )
if "RunState" not in globals():  # likewise messages.py, worktrees.py, branchcopy.py and asked.py
    from git_balanced.shipped.messages import CleanupRequest, LogRequest, RunState, StatusRequest, StopRequest
if "_lock_worktrees" not in globals():
    from git_balanced.shipped.worktrees import _lock_worktrees
if "own_copy_path" not in globals():
    from git_balanced.shipped.branchcopy import own_copy_path, own_copy_remove
if "readonly_release" not in globals():
    from git_balanced.shipped.readonly import readonly_release
if "_unsent" not in globals():
    from git_balanced.shipped.asked import _unsent

TAIL_LINES = 20
START_WINDOW = 60.0  # a run folder with no pid file after this long lost its starter


def status(req: dict) -> dict:
    """The state of each job (every job of runs_dir when `jobs` is null), in one answer."""
    got = _parsed(StatusRequest, req)
    runs, jobs = _path(got.runs_dir or RUNS_DIR), got.jobs
    if jobs is None:
        names = os.listdir(runs) if os.path.isdir(runs) else []
        jobs = sorted(n for n in names if os.path.isdir(os.path.join(runs, n)))
    answer = {}
    for job in map(str, jobs):
        try:
            answer[job] = _job_status(_run_dir(got.runs_dir, job))
        except RequestError as exc:
            answer[job] = {**_job_status(""), "error": str(exc)}
    return {"jobs": answer}


def _result(run_dir: str) -> Any:
    """The run's result.json, or None while it has none."""
    try:
        return json.loads(_read(os.path.join(run_dir, "result.json")) or "null")
    except ValueError:  # written by rename, so never half: a hand-edited file at worst
        return None


def _job_status(run_dir: str) -> dict:
    if not run_dir or not os.path.isdir(run_dir):
        return {"state": RunState.MISSING, "pid": None, "result": None, "log_tail": "", "log_size": 0}
    result = _result(run_dir)
    pid, tick = _read_pid(os.path.join(run_dir, "pid"))
    if result is not None:
        state = RunState.FINISHED
    elif pid is None:
        state = RunState.RUNNING if time.time() - os.path.getmtime(run_dir) < START_WINDOW else RunState.DEAD
    else:
        state = RunState.RUNNING if alive(pid, tick) else RunState.DEAD
    if state == RunState.DEAD:  # a runner that wrote its result and ended just after the first read is not dead
        result = _result(run_dir)
        state = RunState.FINISHED if result is not None else state
    log = os.path.join(run_dir, "log")
    tail = b"\n".join((_read(log, True, -65536) or b"").splitlines()[-TAIL_LINES:]).decode("utf-8", "replace")
    answer = {"state": state, "pid": pid, "result": result, "log_tail": tail,
              "log_size": os.path.getsize(log) if os.path.exists(log) else 0,
              "agent_alive": alive(*_read_pid(os.path.join(run_dir, "agent_pid")))}
    asked = _unsent(run_dir)
    if asked:
        answer["questions"] = asked
    return answer


def stop(req: dict) -> dict:
    """SIGTERM the agent's group; the runner sends SIGKILL after the grace and writes the result."""
    got = _parsed(StopRequest, req)
    run_dir, grace = _run_dir(got.runs_dir, got.job), got.grace if got.grace is not None else GRACE
    if _job_status(run_dir)["state"] in (RunState.RUNNING, RunState.DEAD):
        _write_atomic(os.path.join(run_dir, "stop"), f"{time.time()}\n")
        agent, agent_tick = _read_pid(os.path.join(run_dir, "agent_pid"))
        if agent and alive(agent, agent_tick):
            _signal_group(agent, signal.SIGTERM)
        pid, tick = _read_pid(os.path.join(run_dir, "pid"))
        if pid and alive(pid, tick):
            os.kill(pid, signal.SIGTERM)  # it passes it on to setup too, and escalates after the grace
        elif agent:  # no runner left to escalate: wait out the grace here
            deadline = time.monotonic() + grace
            while alive(agent, agent_tick) and time.monotonic() < deadline:
                time.sleep(0.1)
            if alive(agent, agent_tick):
                _signal_group(agent, signal.SIGKILL)
    deadline = time.monotonic() + (got.wait or 0.0)
    while time.monotonic() < deadline and _job_status(run_dir)["state"] == RunState.RUNNING:
        time.sleep(0.1)
    st = _job_status(run_dir)
    # What the worker started outside its group (`setsid`, `nohup … &`) ends with it: at once once its runner is
    # gone; while the runner still winds down, a SIGTERM now, and the cleanup makes sure.
    done = st["state"] != RunState.RUNNING
    reaped = _reap(run_dir, grace if done else 0.0, wait=done)
    state = RunState.STOPPING if st["state"] == RunState.RUNNING else st["state"]
    return {"job": got.job, "state": state, "result": st["result"], "reaped": reaped}


def log(req: dict) -> dict:
    """The log from `offset` (at most `limit` bytes), ending before a partial UTF-8 character."""
    got = _parsed(LogRequest, req)
    offset, limit = got.offset or 0, got.limit if got.limit is not None else 1 << 20
    path = os.path.join(_run_dir(got.runs_dir, got.job), "log")
    chunk = _read(path, True, offset, limit) or b""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    text = decoder.decode(chunk)  # holds back the bytes of a character cut in two: they come next time
    size = os.path.getsize(path) if os.path.exists(path) else 0
    return {"job": got.job, "offset": offset, "size": size, "data": text,
            "next_offset": offset + len(chunk) - len(decoder.getstate()[0])}


def cleanup(req: dict) -> dict:
    """Remove the worktree and the run folder of a job that no longer runs, and with `own_copy` its branch's
    copy after them (the lead fetched the branch back already); the lead's branch stays."""
    got = _parsed(CleanupRequest, req)
    run_dir, repo, wt = _run_dir(got.runs_dir, got.job), _path(got.repo), _path(got.worktree)
    if _job_status(run_dir)["state"] == RunState.RUNNING:
        raise RequestError(f"the job {got.job} is still running; stop it first")
    answer: dict = {"job": got.job, "worktree_removed": False, "run_dir_removed": False, "error": None}
    # Whatever the worker left running goes first: it may hold the worktree, and nobody would watch it after.
    answer["reaped"] = _reap(run_dir, got.grace if got.grace is not None else 5.0)
    if got.readonly:  # a shared checkout, not a worktree: the job's mark goes, and the checkout with the last
        answer["worktree_removed"] = readonly_release(wt, got.job, os.path.dirname(run_dir))
        if os.path.isdir(run_dir):
            shutil.rmtree(run_dir, ignore_errors=True)
            answer["run_dir_removed"] = not os.path.exists(run_dir)
        return answer
    shared = None
    if got.own_copy and got.branch:  # the worktree is in its branch's own copy, which goes after it
        shared, repo = repo, own_copy_path(repo, got.branch)
    outer = _lock_worktrees(shared) if shared and os.path.isdir(shared) else None
    try:
        if os.path.isdir(repo):
            fd = _lock_worktrees(repo)
            try:
                if os.path.exists(wt) and got.copy_goes:  # no git: the copy, registration and all, goes next
                    shutil.rmtree(wt, ignore_errors=True)
                    answer["worktree_removed"] = not os.path.exists(wt)
                elif os.path.exists(wt):
                    code, out = _git(["worktree", "remove", "--force", wt], repo)
                    answer.update(worktree_removed=code == 0, error=None if code == 0 else out)
                if got.prune or shared:  # one prune after a batch of cleanups does for a shared one
                    _git(["worktree", "prune"], repo)
            finally:
                os.close(fd)
        if shared:
            answer["copy_removed"] = own_copy_remove(repo)
    finally:
        if outer is not None:
            os.close(outer)
    if os.path.isdir(run_dir):
        shutil.rmtree(run_dir, ignore_errors=True)
        answer["run_dir_removed"] = not os.path.exists(run_dir)
    return answer


def _scan() -> list:
    """This user's processes but this one and its ancestors, as (pid, start tick, process group, session, the
    run folder of the worker that started it: its BALANCED_RUN_DIR, which the runner sets for the agent and
    every process it starts inherits, `setsid` or not). [] without /proc."""
    me, skip, pid = os.getuid(), set(), os.getpid()
    while pid > 1 and pid not in skip:
        skip.add(pid)
        pid = int((stat_fields(pid) + ["0", "0"])[1])
    found = []
    for name in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not name.isdigit() or int(name) in skip:
            continue
        try:
            if os.stat(f"/proc/{name}").st_uid != me:
                continue
            with open(f"/proc/{name}/environ", "rb") as f:
                env = b"\0" + f.read()
        except OSError:
            continue
        fields = stat_fields(int(name))
        if len(fields) < 20 or fields[0] in ("Z", "X"):
            continue
        at = env.find(b"\0BALANCED_RUN_DIR=")  # the first such variable, found by one search of the whole block
        end = env.find(b"\0", at + 1) if at >= 0 else -1
        mark = env[at + 18:end if end >= 0 else len(env)].decode("utf-8", "replace") if at >= 0 else ""
        found.append((int(name), fields[19], int(fields[2]), int(fields[3]), mark))
    return found


def _left(run_dir: str, scan: list) -> list:
    """Of `scan`, what the worker of `run_dir` started: marked with its run folder, or in its agent's process
    group or session (a pid the kernel does not hand out again while a group or session of that id lives)."""
    agent, tick = _read_pid(os.path.join(run_dir, "agent_pid"))
    own = agent and (not stat_fields(agent) or alive(agent, tick))  # else the pid is another process's now
    return [p for p in scan if p[4] == run_dir or (own and agent in (p[0], p[2], p[3]))]


def _reap(run_dir: str, grace: float, wait: bool = True, scan: list | None = None) -> list:
    """End what the worker of `run_dir` left running: SIGTERM, then SIGKILL after `grace` (with `wait`), each
    checked by pid and start tick so a reused pid is never signalled. What was found, with whether it ended."""
    procs = _left(run_dir, _scan() if scan is None else scan)
    names = {p[0]: (_read(f"/proc/{p[0]}/comm") or "?").strip() for p in procs}  # before they go
    for pid, _, _, _, _ in procs:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while wait and procs and time.monotonic() < deadline and any(alive(p[0], p[1]) for p in procs):
        time.sleep(0.05)
    out = []
    for pid, tick, _, _, _ in procs:
        if wait and alive(pid, tick):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
            time.sleep(0.05)
        out.append({"pid": pid, "command": names[pid], "stopped": not alive(pid, tick)})
    return out
