"""The runner: starts one worker on this machine and watches it (DESIGN §5). Stdlib only, Python 3.9+.

Run it as `python3 runner.py ACTION` with a JSON request on stdin, or send `source()` (meter.py and this
file as one script) to another machine. It prints one JSON line; `serve` answers many requests, a line
each, over one process (a session kept open by the lead). Nothing a user wrote travels in argv: the
action word is the only argument. Actions: start, status, stop, log, cleanup, forwarded, answer.

A worker on another machine asks its lead by store and forward: `git balanced ask` there is a small script
the runner writes (ASK_SHIM), which leaves the question in the run folder; `status` hands it to the engine,
`forwarded` marks it carried, and `answer` leaves the lead's answer where the script waits for it. The same
script is the agents' `git balanced hook pre-tool-use` there: the guard, and commands asked of the lead.
"""

from __future__ import annotations

import codecs
import contextlib
import fcntl
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time
import traceback
import types
from typing import Any

if "Meter" not in globals():  # sent to another machine, meter.py's source comes first and defines Meter
    try:
        from git_balanced.shipped.meter import Meter
    except ImportError:
        Meter = None  # type: ignore[assignment,misc]
if "worker_env" not in globals():  # sent to another machine, workenv.py and pen.py come first, as meter.py
    def _sibling(name: str) -> Any:
        """A stdlib-only module next to this file, loaded by its path: the package may not be importable."""
        import importlib.util

        here = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{name}.py")
        spec = importlib.util.spec_from_file_location(f"git_balanced_runner_{name}", here)
        module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        spec.loader.exec_module(module)  # type: ignore[union-attr]
        return module

    pen = _sibling("pen")
    branchcopy = _sibling("branchcopy")
    worker_env = _sibling("workenv").worker_env
else:  # their functions are this script's own globals there
    _PEN_NAMES = ("available", "wrap", "agent_state", "folders")
    pen = types.SimpleNamespace(**{n: globals()[n] for n in _PEN_NAMES})  # type: ignore[assignment]
    _COPY_NAMES = {"path": "own_copy_path", "ensure": "own_copy_ensure", "remove": "own_copy_remove"}
    branchcopy = types.SimpleNamespace(**{k: globals()[n] for k, n in _COPY_NAMES.items()})  # type: ignore[assignment]

RUNS_DIR = "~/.balanced/runs"
GRACE = 10.0  # seconds between SIGTERM and SIGKILL
TAIL_LINES = 20
START_WINDOW = 60.0  # a run folder with no pid file after this long lost its starter
SERVE_IDLE = 60.0  # seconds a session (`serve`) waits for its next request before it ends
JOB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
# Of the GIT_* variables, only these describe the user rather than point git at some other repository.
KEEP_GIT = {"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE", "GIT_COMMITTER_NAME",
            "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE", "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL",
            "GIT_TEMPLATE_DIR", "GIT_EDITOR", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_TERMINAL_PROMPT"}
ASK_MARGIN = 600.0  # seconds `ask` waits past ask_timeout: by then the question came to you as well
# The detached runner's state for its SIGTERM handler: the process group it waits on, and whether to stop.
_live = {"pgid": 0, "stop": False}


class RequestError(Exception):
    """A request the runner cannot act on; the message names the key."""


class RunError(Exception):
    """A step of the run that failed (worktree, files, agent start); result.json's `error`."""


# `git balanced` on another machine: `ask`, through files in the run folder (the script lives in
# {run_dir}/bin), which the lead's engine reads and answers on its passes; and the agents' PreToolUse hook,
# judged by pretool.py (next to the script) with the rules the lead sent (bin/hook.json, wiring.hook_rules)
# and the guard the runner installed (hooks/pre-commit is guard.py, next to its guard.json), a command for the
# lead going the way of `ask`. Anything else goes to a git balanced installed there, or is refused.
ASK_SHIM_FILES = {"git-balanced": "worker_shim.py", "pretool.py": "pretool.py",  # in bin/: from shipped/
                  "permit.py": "permit.py"}
if "safe_argv" not in globals():  # sent to another machine, untrusted.py's source comes first and defines it
    try:
        from git_balanced.untrusted import safe_argv, safe_env, safe_listing
    except ImportError:  # run as a file beside an uninstalled copy of the package
        sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
        from git_balanced.untrusted import safe_argv, safe_env, safe_listing

if "ASK_SHIM" not in globals():  # sent to another machine, source() defines it from the files themselves
    ASK_SHIM = {}
    for _name, _file in ASK_SHIM_FILES.items():
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), _file), encoding="utf-8") as _f:
            ASK_SHIM[_name] = _f.read()


def _field(req: dict, key: str, kind: type, default: Any = ...) -> Any:
    value = req.get(key)
    if value is None:
        if default is ...:
            raise RequestError(f"the request has no {key!r}")
        return default
    if kind is float and isinstance(value, int):
        value = float(value)
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        raise RequestError(f"the request's {key!r} must be a {kind.__name__}, not {type(value).__name__}")
    return value


def _path(text: str) -> str:
    return os.path.abspath(os.path.expanduser(text))


def _run_dir(req: dict, job: str | None = None) -> str:
    job = _field(req, "job", str) if job is None else job
    if not JOB_ID.match(job):
        raise RequestError(f"the job id {job!r} is not a plain name ([A-Za-z0-9._-], no leading dot)")
    return os.path.join(_path(_field(req, "runs_dir", str, RUNS_DIR)), job)


def _write_atomic(path: str, text: str) -> None:
    tmp = f"{path}.tmp{os.getpid()}"
    with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _read(path: str, binary: bool = False, start: int = 0, size: int = -1) -> Any:
    """A file's text (or bytes) from `start` (from the end when negative); None when it is missing."""
    try:
        with open(path, "rb") as f:
            f.seek(start if start >= 0 else max(0, os.fstat(f.fileno()).st_size + start))
            data = f.read(size)
    except OSError:
        return None
    return data if binary else data.decode("utf-8", "replace")


def _stat(pid: int) -> list[str]:
    """Fields of /proc/<pid>/stat after the name, state first (index 19 the start tick); [] without /proc."""
    text = _read(f"/proc/{pid}/stat")
    return text.rsplit(")", 1)[1].split() if text and ")" in text else []


def _read_pid(path: str) -> tuple[int | None, str]:
    """A pid file's pid and start tick: the tick tells a reused pid from the process that was written."""
    words = (_read(path) or "").split() + ["", ""]
    return (int(words[0]), words[1]) if words[0].isdigit() else (None, "")


def _write_pid(path: str, pid: int) -> None:
    _write_atomic(path, f"{pid}\n{(_stat(pid) + [''] * 20)[19]}\n")


def _alive(pid: int | None, tick: str = "") -> bool:
    """Whether the process runs; a zombie (an init that never reaps leaves them) counts as gone."""
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    fields = _stat(pid)
    return not fields or (fields[0] not in ("Z", "X") and (not tick or fields[19] == tick))


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _base_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or k in KEEP_GIT}


def _git(args: list[str], cwd: str, worker: dict | None = None) -> tuple[int, str]:
    """git in the copy or a worktree, which workers write: nothing found there runs (untrusted.py). With
    `worker` (marks for its environment), git as the worker would run it, for a read of where its own commits
    find their hooks."""
    env = {**_base_env(), **(worker or {})}
    argv = ["git", *args]
    if worker is None:
        env = safe_env(env)
        argv = safe_argv(args, cwd, lambda a, c: safe_listing(a, c, env))
    try:
        cp = subprocess.run(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    except OSError as exc:
        return 127, f"git: {exc}"
    return cp.returncode, cp.stdout.decode("utf-8", "replace").strip()


def _note(text: str) -> None:
    print(f"[balanced runner] {text}", file=sys.stderr, flush=True)  # the detached runner's stderr is the log


def start(req: dict) -> dict:
    """Make the run folder, fork the detached runner, and answer with its pid at once."""
    run_dir, job = _run_dir(req), req["job"]
    kinds: dict[str, type] = {"repo": str, "worktree": str, "branch": str, "base": str, "argv": list,
                              "env": dict, "files": dict, "meter": dict, "setup": str, "commit_message": str,
                              "guard": dict, "ask": bool, "ask_timeout": float, "hook": dict, "worker": dict,
                              "start_at": str, "own_copy": bool}
    for key, kind in kinds.items():
        _field(req, key, kind, ... if key in ("repo", "worktree", "branch", "base", "argv") else None)
    if any(not req[k].strip() or req[k].startswith("-") for k in ("branch", "base")):
        raise RequestError(f"the request's branch {req['branch']!r} or base {req['base']!r} is not a name")
    strings = [*req["argv"], *[x for k in ("env", "files") for kv in (req.get(k) or {}).items() for x in kv]]
    if not req["argv"] or not all(isinstance(x, str) for x in strings):
        raise RequestError("the request's 'argv' must be a non-empty list of strings, and 'env' and "
                           "'files' must map strings to strings")
    pid_file = os.path.join(run_dir, "pid")
    pid, _ = _read_pid(pid_file)
    if pid is not None:  # a retried call: it started already, so the same answer again
        return {"job": job, "pid": pid, "run_dir": run_dir, "existing": True}
    os.makedirs(run_dir, mode=0o700, exist_ok=True)
    _write_atomic(os.path.join(run_dir, "request.json"), json.dumps(req, indent=1))
    sys.stdout.flush()
    sys.stderr.flush()
    middle = os.fork()
    if middle == 0:  # a new session, the runner forked from it, then gone: init adopts the runner
        try:
            os.setsid()
            runner = os.fork()
            if runner == 0:
                _runner_main(req, run_dir)
            _write_pid(pid_file, runner)
        finally:
            os._exit(0)
    os.waitpid(middle, 0)
    pid, _ = _read_pid(pid_file)
    if pid is None:
        raise RequestError(f"the runner of {job} did not start (no pid file in {run_dir})")
    return {"job": job, "pid": pid, "run_dir": run_dir}


def _runner_main(req: dict, run_dir: str) -> None:
    """The detached runner: stdin /dev/null, output to the log, no inherited descriptors; never returns."""
    code = 1
    try:
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        log = os.open(os.path.join(run_dir, "log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.dup2(log, 1)
        os.dup2(log, 2)
        # Inherited descriptors (an SSH channel, a caller's lock files) must not live as long as the worker.
        os.closerange(3, 65536)

        def on_term(signum: int, frame: object) -> None:
            _live["stop"] = True
            if _live["pgid"]:
                _signal_group(_live["pgid"], signal.SIGTERM)

        signal.signal(signal.SIGTERM, on_term)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        _work(req, run_dir)
        code = 0
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _work(req: dict, run_dir: str) -> None:
    """Worktree, setup, files, agent, leftovers commit; then result.json, whatever happened."""
    repo, wt, branch, base = _path(req["repo"]), _path(req["worktree"]), req["branch"], req["base"]
    res: dict = {"job": req["job"], "exit_code": None, "signal": None, "started": round(time.time(), 3),
                 "ended": None, "seconds": None, "head": None, "base": base, "commits": 0, "dirty": False,
                 "stopped_by_budget": False, "stopped": False, "cost_usd": None, "commit_error": None,
                 "setup_failed": False, "setup_exit_code": None, "error": None, "fenced": False}
    grace = float(req.get("grace") or GRACE)
    made = clean = False
    try:
        if req.get("own_copy"):  # `repo` is the machine's shared copy: the worker gets its branch's own
            repo = _own_copy(repo, wt, branch, base, os.path.dirname(run_dir), req.get("start_at"))
        else:
            _worktree(repo, wt, branch, base, os.path.dirname(run_dir), req.get("start_at"))
        made = True
        if req.get("guard"):
            _install_guard(req["guard"], run_dir, repo, wt)
        penned = _penned(req, run_dir, repo, wt)
        res["fenced"] = penned[1] is not None
        if req.get("setup") and not _stopping(run_dir):
            marked = {**penned[0], "BALANCED_RUN_DIR": run_dir}  # what the setup leaves running is the worker's
            setup = _in_pen(penned, ["sh", "-c", req["setup"]], marked)
            code, sig, _ = _run_group(setup, wt, marked, None, None, grace)
            res.update(setup_exit_code=code, signal=sig, setup_failed=code != 0 and not _stopping(run_dir))
            if res["setup_failed"]:
                _note(f"setup {'was killed' if code is None else f'exited {code}'}: {req['setup']}")
        ran = not res["setup_failed"] and not _stopping(run_dir)
        if ran:
            _agent(req, run_dir, wt, grace, res, penned)
        # No process outlives its worker: what its setup or agent left running (a daemon that escaped with
        # setsid included) ends with it, before the commit of what it left, which nothing may still be writing.
        res["ended_left_running"] = len(_reap(run_dir, min(grace, 5.0)))
        if ran and req.get("commit_leftovers"):
            res["commit_error"], clean = _commit(wt, req.get("commit_message") or f"{req['job']}: work",
                                                 {"BALANCED_JOB": req["job"], "BALANCED_RUN_DIR": run_dir}, penned)
    except RunError as exc:
        res["error"] = str(exc)
        _note(str(exc))
    except Exception as exc:  # still write a result: a runner without one reads as killed
        res["error"] = f"the runner failed: {type(exc).__name__}: {exc}"
        traceback.print_exc()
    res["stopped"] = _stopping(run_dir)
    if made:
        code, head = _git(["rev-parse", "--verify", "-q", f"refs/heads/{branch}^{{commit}}"], repo)
        res["head"] = head if code == 0 else None
        code, count = _git(["rev-list", "--count", f"{base}..{head}"], repo) if code == 0 else (1, "")
        res["commits"] = int(count) if code == 0 and count.isdigit() else 0
        if not clean:
            code, status = _git(["status", "--porcelain", "--untracked-files=all"], wt)
            res["dirty"] = code != 0 or bool(status)
    res["ended"] = round(time.time(), 3)
    res["seconds"] = round(res["ended"] - res["started"], 3)
    _write_atomic(os.path.join(run_dir, "result.json"), json.dumps(res, indent=1))


def _stopping(run_dir: str) -> bool:
    return bool(_live["stop"]) or os.path.exists(os.path.join(run_dir, "stop"))


def _lock_worktrees(repo: str) -> int:
    """Take the repository's lock on making and removing worktrees (the landing queue takes the same one) and
    return its descriptor, to close: a prune or an add reads every registration, and one half made or half
    removed by another process makes it fail (a cleanup of an earlier attempt racing the next one's add)."""
    common_dir = os.path.join(repo, ".git")  # a plain clone's; a worktree or a bare repository asks git
    if not os.path.isdir(os.path.join(common_dir, "objects")):
        common_dir = os.path.join(repo, _git(["rev-parse", "--git-common-dir"], repo)[1])
    os.makedirs(os.path.join(common_dir, "balanced"), exist_ok=True)
    fd = os.open(os.path.join(common_dir, "balanced", "worktrees.lock"), os.O_CREAT | os.O_RDWR, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def _own_copy(shared: str, wt: str, branch: str, base: str, runs: str, start_at: str | None) -> str:
    """Make (or find) the branch's own copy of the machine's copy `shared` (branchcopy.py) and the job's
    worktree in it, under the shared copy's lock, which a cleanup removing that copy takes too; the copy."""
    if not os.path.isdir(shared):
        raise RunError(f"the repository {shared} does not exist on this machine")
    fd = _lock_worktrees(shared)
    try:
        try:
            repo = branchcopy.ensure(shared, branch, _git)
        except OSError as exc:
            raise RunError(str(exc)) from exc
        _worktree(repo, wt, branch, base, runs, start_at)
    finally:
        os.close(fd)
    return repo


def _worktree(repo: str, wt: str, branch: str, base: str, runs: str | None = None,
              start_at: str | None = None) -> None:
    """Reuse a valid worktree of this repository on `branch`, else add one (of the branch, or new at base); a
    worktree an earlier job left on `branch` when its runner died (in `runs`) is removed first. With
    `start_at` (what the lead recorded for the branch), a new worktree's branch is set there first, whatever
    the copy held: another worker may have planted it."""
    if not os.path.isdir(repo):
        raise RunError(f"the repository {repo} does not exist on this machine")
    if os.path.isdir(wt) and os.listdir(wt):
        code, top = _git(["rev-parse", "--show-toplevel"], wt)
        common = {os.path.realpath(os.path.join(d, _git(["rev-parse", "--git-common-dir"], d)[1]))
                  for d in (wt, repo)}  # one shared git folder: a worktree of this very repository
        if code != 0 or os.path.realpath(top) != os.path.realpath(wt) or len(common) != 1:
            raise RunError(f"{wt} exists and is not a worktree of {repo}; remove it or use another job id")
        head = _git(["symbolic-ref", "-q", "--short", "HEAD"], wt)[1]
        if head != branch:
            raise RunError(f"the worktree {wt} is on {head or 'a detached HEAD'}, not on {branch}")
        return
    os.makedirs(os.path.dirname(wt), exist_ok=True)

    def add_args() -> list[str]:
        exists = _git(["rev-parse", "--verify", "-q", f"refs/heads/{branch}"], repo)[0] == 0
        return ["worktree", "add", wt, branch] if exists else ["worktree", "add", "-b", branch, wt, base]

    fd = _lock_worktrees(repo)
    try:
        if runs:
            _free_branch(repo, wt, branch, runs)
        if isinstance(start_at, str) and start_at and not _held(repo, branch):
            code, out = _git(["update-ref", f"refs/heads/{branch}", start_at], repo)
            if code != 0:
                raise RunError(f"could not set {branch} to {start_at} in {repo}: {out}")
        args = add_args()
        code, out = _git(args, repo)
        if code != 0:  # a registration whose folder was deleted blocks adding it again: prune, then again
            _git(["worktree", "prune"], repo)
            args = add_args()  # the failed add may have made the branch already
            code, out = _git(args, repo)
    finally:
        os.close(fd)
    if code != 0:
        raise RunError(f"`git {' '.join(args)}` failed in {repo}: {out}")


def _held(repo: str, branch: str) -> bool:
    """Whether a worktree of the repository whose folder exists has `branch` checked out."""
    code, out = _git(["worktree", "list", "--porcelain"], repo)
    for block in out.split("\n\n") if code == 0 else []:
        lines = block.splitlines()
        path = lines[0][len("worktree "):] if lines and lines[0].startswith("worktree ") else ""
        if f"branch refs/heads/{branch}" in lines and path and os.path.isdir(path):
            return True
    return False


def _free_branch(repo: str, wt: str, branch: str, runs: str) -> None:
    """Remove the worktree that holds `branch` elsewhere when the job that made it (its run folder in `runs`)
    has neither runner nor agent alive: a machine killed and back, its worker tried again. Its commits are on
    the branch already. A worktree no job of `runs` made, or whose job still runs, is left as it is."""
    code, out = _git(["worktree", "list", "--porcelain"], repo)
    holder = None
    for block in out.split("\n\n") if code == 0 else []:
        lines = block.splitlines()
        path = lines[0][len("worktree "):] if lines and lines[0].startswith("worktree ") else ""
        if f"branch refs/heads/{branch}" in lines and path and os.path.realpath(path) != os.path.realpath(wt):
            holder = path
    if holder is None:
        return
    try:
        names = os.listdir(runs)
    except OSError:
        names = []
    for job in names:
        req = _read(os.path.join(runs, job, "request.json"))
        try:
            made = json.loads(req).get("worktree") if req else None
        except ValueError:
            made = None
        if not isinstance(made, str) or os.path.realpath(_path(made)) != os.path.realpath(holder):
            continue
        for name in ("pid", "agent_pid"):
            pid, tick = _read_pid(os.path.join(runs, job, name))
            if _alive(pid, tick):
                raise RunError(f"{branch} is checked out at {holder} by job {job}, which still runs (pid {pid})")
        code, out = _git(["worktree", "remove", "--force", "--force", holder], repo)
        _note(f"removed {holder}, left on {branch} by job {job} whose runner is gone"
              + ("" if code == 0 else f" (git said: {out})"))
        if code != 0:
            shutil.rmtree(holder, ignore_errors=True)
            _git(["worktree", "prune"], repo)
        return


def _install_guard(guard: dict, run_dir: str, repo: str, wt: str) -> None:
    """Make the guard this worktree's pre-commit hook (git_balanced/guard.py, sent in the request), through
    a hooks folder of its own set in the worktree's own config: the lead's checkout and the other workers
    keep their hooks. The repository's own hooks still run, behind the guard or through a wrapper."""
    script, spec = guard.get("script"), guard.get("spec")
    if not isinstance(script, str) or not isinstance(spec, dict):
        raise RunError("the request's 'guard' needs a 'script' and a 'spec'")
    # The extension first: without it `--worktree` means the shared config, the user's own hooksPath.
    code, out = _git(["config", "extensions.worktreeConfig", "true"], repo)
    if code != 0:
        raise RunError(f"could not install the guard: `git config extensions.worktreeConfig true` failed: {out}")
    _git(["config", "--worktree", "--unset", "core.hooksPath"], wt)  # an earlier attempt's folder
    # Where the worker's own commits find their hooks (asked as the worker would ask: only a path is read).
    code, theirs = _git(["rev-parse", "--path-format=absolute", "--git-path", "hooks"], wt, {})
    hooks = os.path.join(run_dir, "hooks")
    os.makedirs(hooks, exist_ok=True)
    names = sorted(os.listdir(theirs)) if code == 0 and os.path.isdir(theirs) else []
    for name in names:
        path = os.path.join(theirs, name)
        if name.endswith(".sample") or name == "pre-commit" or not os.access(path, os.X_OK):
            continue
        quoted = "'" + path.replace("'", "'\\''") + "'"
        _write_atomic(os.path.join(hooks, name), f'#!/bin/sh\nexec {quoted} "$@"\n')
        os.chmod(os.path.join(hooks, name), 0o755)
    chain = os.path.join(theirs, "pre-commit") if "pre-commit" in names else None
    _write_atomic(os.path.join(hooks, "guard.json"), json.dumps({**spec, "chain": chain}, indent=1))
    _write_atomic(os.path.join(hooks, "pre-commit"), script)
    os.chmod(os.path.join(hooks, "pre-commit"), 0o755)
    code, out = _git(["config", "--worktree", "core.hooksPath", hooks], wt)
    if code != 0:
        raise RunError(f"could not install the guard: `git config --worktree core.hooksPath` failed: {out}")


def _penned(req: dict, run_dir: str, repo: str, wt: str) -> tuple[dict, tuple[list, list] | None]:
    """The environment of the worker's setup and agent, and its pen's (read-only, writable) folders, or None
    where it runs unpenned: a request without `worker` (as before there was one), or a machine without
    namespaces. A worker gets the environment its agent needs (workenv.py), a temporary folder of its own,
    and, penned, caches of its own: the user's are read-only to it."""
    spec = req.get("worker")
    env = _base_env()
    if not isinstance(spec, dict):
        return env, None
    agent, names = str(spec.get("agent") or ""), [str(n) for n in spec.get("env") or []]
    env = worker_env(env, agent, names)
    env["TMPDIR"] = os.path.join(run_dir, "tmp")
    os.makedirs(env["TMPDIR"], mode=0o700, exist_ok=True)
    if not spec.get("fence") or not pen.available():
        return env, None
    own = [wt, run_dir, repo, *pen.agent_state(agent, env)]
    readonly, writable = pen.folders(env, own)
    env["XDG_CACHE_HOME"] = os.path.join(run_dir, "cache")
    env["PRE_COMMIT_HOME"] = os.path.join(run_dir, "cache", "pre-commit")
    os.makedirs(env["PRE_COMMIT_HOME"], exist_ok=True)
    return env, (readonly, writable)


def _in_pen(penned: tuple[dict, tuple[list, list] | None], argv: list[str], env: dict) -> list[str]:
    """`argv` in the worker's pen, when it has one. Its program is found here first, so that a missing agent
    reads as one (the engine asks the machine again), not as the pen's failure to run it."""
    if penned[1] is None:
        return argv
    found = shutil.which(argv[0], path=env.get("PATH", os.defpath)) if os.sep not in argv[0] else argv[0]
    if not found:
        raise RunError(f"could not start {argv[0]}: [Errno 2] No such file or directory: {argv[0]!r}")
    return pen.wrap([found, *argv[1:]], *penned[1])


def _agent(req: dict, run_dir: str, wt: str, grace: float, res: dict,
           penned: tuple[dict, tuple[list, list] | None] = ({}, None)) -> None:
    """Write the files, start the agent in its own group (in its pen, when it has one) and watch it."""
    for rel, content in (req.get("files") or {}).items():
        target = os.path.normpath(os.path.join(run_dir, rel))
        if os.path.isabs(rel) or not target.startswith(run_dir + os.sep):
            raise RunError(f"the file {rel!r} would land outside the run folder")
        os.makedirs(os.path.dirname(target), exist_ok=True)
        _write_atomic(target, content)
    argv = [a.replace("{run_dir}", run_dir).replace("{worktree}", wt) for a in req["argv"]]
    env = {**(penned[0] or _base_env()), **(req.get("env") or {}), "BALANCED_JOB": req["job"],
           "BALANCED_RUN_DIR": run_dir}
    prefix_bin = os.path.expanduser("~/.local/bin")  # where `ready` installs agents; a login's PATH has it first
    if os.path.isdir(prefix_bin) and prefix_bin not in env.get("PATH", "").split(os.pathsep):
        env["PATH"] = prefix_bin + os.pathsep + env.get("PATH", os.defpath)
    if req.get("ask"):  # a machine without git balanced: its `ask` comes first on the agent's PATH
        env["PATH"] = _write_ask_shim(run_dir, req.get("hook")) + os.pathsep + env.get("PATH", os.defpath)
        if req.get("ask_timeout"):
            env["GIT_BALANCED_ASK_TIMEOUT"] = str(float(req["ask_timeout"]) + ASK_MARGIN)
    if req.get("meter") and Meter is None:  # money: never run an agent whose budget nobody watches
        raise RunError("a budget meter was asked for, but meter.py is not here: run the script of source()")
    meter = Meter(req["meter"]) if req.get("meter") else None
    code, sig, by_budget = _run_group(_in_pen(penned, argv, env), wt, env, meter, os.path.join(run_dir, "agent_pid"),
                                      grace)
    res.update(exit_code=code, signal=sig, stopped_by_budget=by_budget)
    if meter is not None:
        res["cost_usd"] = round(float(meter.cost_usd), 6)
        # The adapters read how the run ended from the log alone: the meter's last word goes there too.
        sys.stdout.write(meter.summary_line() + "\n")
        sys.stdout.flush()


def _write_ask_shim(run_dir: str, hook: dict | None = None) -> str:
    """Write `{run_dir}/bin/git-balanced` and the decision its PreToolUse hook loads (ASK_SHIM), and the rules
    it judges by next to them (`hook.json`, the request's `hook`); return the folder, for the agent's PATH."""
    folder = os.path.join(run_dir, "bin")
    os.makedirs(folder, exist_ok=True)
    if hook is not None:
        _write_atomic(os.path.join(folder, "hook.json"), json.dumps(hook, indent=1))
    for name, text in ASK_SHIM.items():
        _write_atomic(os.path.join(folder, name), text)
    os.chmod(os.path.join(folder, "git-balanced"), 0o755)
    return folder


def _run_group(argv: list[str], cwd: str, env: dict, meter: Any, pid_file: str | None,
               grace: float) -> tuple[int | None, int | None, bool]:
    """Run argv in a process group of its own, output to the log (teed through the meter when there is
    one), stopping the group when asked or over budget: (exit code, signal, stopped by budget)."""
    try:
        p = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, start_new_session=True,
                             stdout=subprocess.PIPE if meter is not None else None, stderr=subprocess.STDOUT)
    except OSError as exc:
        raise RunError(f"could not start {argv[0]}: {exc}") from exc
    _live["pgid"] = p.pid
    if pid_file:
        _write_pid(pid_file, p.pid)
    fd = p.stdout.fileno() if p.stdout is not None else None
    partial, by_budget, kill_at, exited_at = b"", False, 0.0, 0.0
    while True:
        if fd is not None and select.select([fd], [], [], 0.25)[0]:
            chunk = out = os.read(fd, 65536)
            while out:
                out = out[os.write(1, out):]
            if chunk:
                *lines, partial = (partial + chunk).split(b"\n")
            else:
                fd, lines, partial = None, [partial], b""
            by_budget = _feed(meter, lines) or by_budget
        elif fd is None:
            try:
                p.wait(0.25)
            except subprocess.TimeoutExpired:
                pass
        elif meter is not None:  # a quiet agent spends too: Codex's cost grows in its session file
            by_budget = _feed(meter, []) or by_budget
        now = time.monotonic()
        if not kill_at and (by_budget or _live["stop"]):
            _signal_group(p.pid, signal.SIGTERM)
            kill_at = now + grace
        if kill_at and now >= kill_at and p.poll() is None:
            _signal_group(p.pid, signal.SIGKILL)
        if p.poll() is not None:
            exited_at = exited_at or now
            # Done at the end of its output, or soon after it exits when a leftover child holds the pipe.
            if fd is None or now - exited_at > 1.0:
                break
    _signal_group(p.pid, signal.SIGTERM)  # what it left running in its group goes with it
    if p.stdout is not None:
        p.stdout.close()
    _live["pgid"] = 0
    return (p.returncode, None, by_budget) if p.returncode >= 0 else (None, -p.returncode, by_budget)


def _feed(meter: Any, lines: list[bytes]) -> bool:
    """Feed lines to the meter; True once it says the budget is spent. A meter bug never stops the agent."""
    try:
        for line in lines:
            meter.feed(line.decode("utf-8", "replace"))
        return bool(meter.over_budget)
    except Exception as exc:
        _note(f"the budget meter failed: {type(exc).__name__}: {exc}")
        return False


def _commit(wt: str, message: str, worker: dict,
            penned: tuple[dict, tuple[list, list] | None] = ({}, None)) -> tuple[str | None, bool]:
    """Commit what the agent left uncommitted as the worker would, hooks (the guard) and all: the worker's act,
    so in its pen, with its environment and marks (`worker`). Returns (the refusal text when that fails, whether
    the worktree was clean already, so that nobody need ask git again)."""
    code, out = _git(["status", "--porcelain", "--untracked-files=all"], wt)
    clean = code == 0 and not out
    if code == 0 and out:
        code, out = _git(["add", "-A"], wt)
        if code == 0:
            # No `git maintenance run --auto` after it: a gc of the shared objects while other workers commit.
            env = {**(penned[0] or _base_env()), **worker}
            argv = _in_pen(penned, ["git", "-c", "maintenance.auto=false", "commit", "-q", "-m", message], env)
            try:
                cp = subprocess.run(argv, cwd=wt, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT)
                code, out = cp.returncode, cp.stdout.decode("utf-8", "replace").strip()
            except (OSError, RunError) as exc:
                code, out = 127, f"git: {exc}"
    return (None if code == 0 else (out or f"git exited {code}")), clean


def status(req: dict) -> dict:
    """The state of each job (every job of runs_dir when `jobs` is null), in one answer."""
    runs = _path(_field(req, "runs_dir", str, RUNS_DIR))
    jobs = _field(req, "jobs", list, None)
    if jobs is None:
        names = os.listdir(runs) if os.path.isdir(runs) else []
        jobs = sorted(n for n in names if os.path.isdir(os.path.join(runs, n)))
    answer = {}
    for job in map(str, jobs):
        try:
            answer[job] = _job_status(_run_dir(req, job))
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
        return {"state": "missing", "pid": None, "result": None, "log_tail": "", "log_size": 0}
    result = _result(run_dir)
    pid, tick = _read_pid(os.path.join(run_dir, "pid"))
    if result is not None:
        state = "finished"
    elif pid is None:
        state = "running" if time.time() - os.path.getmtime(run_dir) < START_WINDOW else "dead"
    else:
        state = "running" if _alive(pid, tick) else "dead"
    if state == "dead":  # a runner that wrote its result and ended just after the first read is not dead
        result = _result(run_dir)
        state = "finished" if result is not None else state
    log = os.path.join(run_dir, "log")
    tail = b"\n".join((_read(log, True, -65536) or b"").splitlines()[-TAIL_LINES:]).decode("utf-8", "replace")
    answer = {"state": state, "pid": pid, "result": result, "log_tail": tail,
              "log_size": os.path.getsize(log) if os.path.exists(log) else 0,
              "agent_alive": _alive(*_read_pid(os.path.join(run_dir, "agent_pid")))}
    asked = _unsent(run_dir)
    if asked:
        answer["questions"] = asked
    return answer


def _unsent(run_dir: str) -> list:
    """The questions the worker asked that were not carried to the lead yet, oldest first."""
    folder = os.path.join(run_dir, "questions")
    names = os.listdir(folder) if os.path.isdir(folder) else []
    out = []
    for n in sorted(int(name[:-5]) for name in names if name.endswith(".json") and name[:-5].isdigit()):
        if os.path.exists(os.path.join(folder, f"{n}.sent")):
            continue
        try:
            asked = json.loads(_read(os.path.join(folder, f"{n}.json")) or "null")
        except ValueError:
            continue  # linked whole by the shim, so never half: a hand-edited file at worst
        if isinstance(asked, dict) and str(asked.get("text") or "").strip():
            kind = asked.get("kind") if asked.get("kind") in ("command", "edit", "plan") else "question"
            out.append({"n": n, "text": str(asked["text"]), "asked_at": asked.get("asked_at"), "kind": kind,
                        "tool": str(asked["tool"]) if asked.get("tool") else None})
    return out


def _question_number(value: Any, job: str, run_dir: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise RequestError(f"a question's number must be a whole number from 1, not {value!r}")
    if not os.path.exists(os.path.join(run_dir, "questions", f"{value}.json")):
        raise RequestError(f"the job {job} asked no question {value}")
    return value


def forwarded(req: dict) -> dict:
    """Mark questions (`ns`) as carried to the lead, so `status` does not hand them over again."""
    run_dir = _run_dir(req)
    ns = [_question_number(n, req["job"], run_dir) for n in _field(req, "ns", list)]
    for n in ns:
        _write_atomic(os.path.join(run_dir, "questions", f"{n}.sent"), f"{time.time()}\n")
    return {"job": req["job"], "forwarded": ns}


def answer_question(req: dict) -> dict:
    """Leave the lead's answer to question `n` (and its id there, `qid`) where the worker's script waits."""
    run_dir = _run_dir(req)
    n = _question_number(_field(req, "n", int), req["job"], run_dir)
    decision = _field(req, "decision", str, None)
    if decision not in (None, "allow", "deny"):
        raise RequestError(f"the request's 'decision' must be allow, deny or null, not {decision!r}")
    os.makedirs(os.path.join(run_dir, "answers"), exist_ok=True)
    _write_atomic(os.path.join(run_dir, "answers", f"{n}.json"),
                  json.dumps({"text": _field(req, "text", str, ""), "decision": decision,
                              "qid": _field(req, "qid", str, None), "answered_at": time.time()}))
    _write_atomic(os.path.join(run_dir, "questions", f"{n}.sent"), f"{time.time()}\n")  # settled: never again
    return {"job": req["job"], "n": n, "answered": True}


def stop(req: dict) -> dict:
    """SIGTERM the agent's group; the runner sends SIGKILL after the grace and writes the result."""
    run_dir = _run_dir(req)
    if _job_status(run_dir)["state"] in ("running", "dead"):
        _write_atomic(os.path.join(run_dir, "stop"), f"{time.time()}\n")
        agent, agent_tick = _read_pid(os.path.join(run_dir, "agent_pid"))
        if agent and _alive(agent, agent_tick):
            _signal_group(agent, signal.SIGTERM)
        pid, tick = _read_pid(os.path.join(run_dir, "pid"))
        if pid and _alive(pid, tick):
            os.kill(pid, signal.SIGTERM)  # it passes it on to setup too, and escalates after the grace
        elif agent:  # no runner left to escalate: wait out the grace here
            deadline = time.monotonic() + _field(req, "grace", float, GRACE)
            while _alive(agent, agent_tick) and time.monotonic() < deadline:
                time.sleep(0.1)
            if _alive(agent, agent_tick):
                _signal_group(agent, signal.SIGKILL)
    deadline = time.monotonic() + _field(req, "wait", float, 0.0)
    while time.monotonic() < deadline and _job_status(run_dir)["state"] == "running":
        time.sleep(0.1)
    st = _job_status(run_dir)
    # What the worker started outside its group (`setsid`, `nohup … &`) ends with it: at once once its runner is
    # gone; while the runner still winds down, a SIGTERM now, and the cleanup makes sure.
    done = st["state"] != "running"
    reaped = _reap(run_dir, _field(req, "grace", float, GRACE) if done else 0.0, wait=done)
    return {"job": req["job"], "state": st["state"].replace("running", "stopping"), "result": st["result"],
            "reaped": reaped}


def log(req: dict) -> dict:
    """The log from `offset` (at most `limit` bytes), ending before a partial UTF-8 character."""
    offset, limit = _field(req, "offset", int, 0), _field(req, "limit", int, 1 << 20)
    path = os.path.join(_run_dir(req), "log")
    chunk = _read(path, True, offset, limit) or b""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    text = decoder.decode(chunk)  # holds back the bytes of a character cut in two: they come next time
    size = os.path.getsize(path) if os.path.exists(path) else 0
    return {"job": req["job"], "offset": offset, "size": size, "data": text,
            "next_offset": offset + len(chunk) - len(decoder.getstate()[0])}


def cleanup(req: dict) -> dict:
    """Remove the worktree and the run folder of a job that no longer runs, and with `own_copy` its branch's
    copy after them (the lead fetched the branch back already); the lead's branch stays."""
    run_dir = _run_dir(req)
    repo, wt = _path(_field(req, "repo", str)), _path(_field(req, "worktree", str))
    if _job_status(run_dir)["state"] == "running":
        raise RequestError(f"the job {req['job']} is still running; stop it first")
    answer: dict = {"job": req["job"], "worktree_removed": False, "run_dir_removed": False, "error": None}
    # Whatever the worker left running goes first: it may hold the worktree, and nobody would watch it after.
    answer["reaped"] = _reap(run_dir, _field(req, "grace", float, 5.0))
    shared = None
    if req.get("own_copy"):  # the worktree is in its branch's own copy, which goes after it
        shared, repo = repo, branchcopy.path(repo, _field(req, "branch", str))
    outer = _lock_worktrees(shared) if shared and os.path.isdir(shared) else None
    try:
        if os.path.isdir(repo):
            fd = _lock_worktrees(repo)
            try:
                if os.path.exists(wt):
                    code, out = _git(["worktree", "remove", "--force", wt], repo)
                    answer.update(worktree_removed=code == 0, error=None if code == 0 else out)
                if req.get("prune", True) or shared:  # one prune after a batch of cleanups does for a shared one
                    _git(["worktree", "prune"], repo)
            finally:
                os.close(fd)
        if shared:
            answer["copy_removed"] = branchcopy.remove(repo)
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
        pid = int((_stat(pid) + ["0", "0"])[1])
    found = []
    for name in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not name.isdigit() or int(name) in skip:
            continue
        try:
            if os.stat(f"/proc/{name}").st_uid != me:
                continue
            with open(f"/proc/{name}/environ", "rb") as f:
                env = f.read().split(b"\0")
        except OSError:
            continue
        fields = _stat(int(name))
        if len(fields) < 20 or fields[0] in ("Z", "X"):
            continue
        mark = next((v[17:].decode("utf-8", "replace") for v in env if v.startswith(b"BALANCED_RUN_DIR=")), "")
        found.append((int(name), fields[19], int(fields[2]), int(fields[3]), mark))
    return found


def _left(run_dir: str, scan: list) -> list:
    """Of `scan`, what the worker of `run_dir` started: marked with its run folder, or in its agent's process
    group or session (a pid the kernel does not hand out again while a group or session of that id lives)."""
    agent, tick = _read_pid(os.path.join(run_dir, "agent_pid"))
    own = agent and (not _stat(agent) or _alive(agent, tick))  # else the pid is another process's now
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
    while wait and procs and time.monotonic() < deadline and any(_alive(p[0], p[1]) for p in procs):
        time.sleep(0.05)
    out = []
    for pid, tick, _, _, _ in procs:
        if wait and _alive(pid, tick):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
            time.sleep(0.05)
        out.append({"pid": pid, "command": names[pid], "stopped": not _alive(pid, tick)})
    return out


ACTIONS = {"start": start, "status": status, "stop": stop, "log": log, "cleanup": cleanup,
           "forwarded": forwarded, "answer": answer_question}


def source(with_meter: bool = True) -> str:
    """untrusted.py, workenv.py, pen.py, branchcopy.py, meter.py and this module as one script for another
    machine's python3 (one __future__ line first)."""
    here = os.path.abspath(__file__)
    paths = [os.path.join(os.path.dirname(os.path.dirname(here)), "untrusted.py")]
    paths += [os.path.join(os.path.dirname(here), name) for name in ("workenv.py", "pen.py", "branchcopy.py")]
    paths += [os.path.join(os.path.dirname(here), "meter.py")] if with_meter else []
    parts = [_read(path) or "" for path in [*paths, here]]
    shim = {name: _read(os.path.join(os.path.dirname(here), file)) or "" for name, file in ASK_SHIM_FILES.items()}
    return "\n".join(["from __future__ import annotations\n", f"ASK_SHIM = {shim!r}\n"] + [
        part.replace("\nfrom __future__ import annotations\n", "\n") for part in parts])


def _act(action: str, request: dict) -> dict:
    try:
        return ACTIONS[action](request)
    except Exception as exc:
        return {"error": str(exc) if isinstance(exc, RequestError) else f"{type(exc).__name__}: {exc}"}


def serve(idle: float = SERVE_IDLE) -> int:
    """A session: after a `{"ready": ...}` line, answer one JSON line per request line (`{"action", "request"}`)
    until stdin ends or stays quiet for `idle` seconds. The caller sends nothing before the ready line, so
    nothing it sends sits in sys.stdin's buffer: from here on the descriptor is read directly."""
    fd = sys.stdin.fileno()
    print(json.dumps({"ready": True, "pid": os.getpid()}), flush=True)
    pending = b""
    while True:
        while b"\n" not in pending:
            if not select.select([fd], [], [], idle)[0]:
                return 0
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return 0
            pending += chunk
        line, _, pending = pending.partition(b"\n")
        try:
            message = json.loads(line.decode("utf-8"))
            action, request = message["action"], message["request"]
            if action not in ACTIONS or not isinstance(request, dict):
                raise ValueError(f"no action {action!r} with a JSON object as its request")
        except (ValueError, KeyError, TypeError) as exc:
            answer = {"error": f"could not read the request: {exc}"}
        else:
            answer = _act(action, request)
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


def main(argv: list[str] | None = None) -> int:
    """Read the request, act, print one JSON line; exit 2 only when the request could not be read.
    `serve` keeps answering requests instead, one per line, for as long as the caller keeps it open."""
    args = sys.argv[1:] if argv is None else argv
    if args == ["serve"]:
        return serve()
    if len(args) != 1 or args[0] not in ACTIONS:
        print(json.dumps({"error": f"usage: runner.py {'|'.join(ACTIONS)}|serve < request.json"}))
        return 2
    try:
        raw = sys.stdin.buffer.read().decode("utf-8")
        request = json.loads(raw) if raw.strip() else {}
        if not isinstance(request, dict):
            raise ValueError("it is not a JSON object")
    except ValueError as exc:
        print(json.dumps({"error": f"could not read the request: {exc}"}))
        return 2
    print(json.dumps(_act(args[0], request)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
