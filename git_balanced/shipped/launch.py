"""Starting one worker: the run folder, the detached runner, and what it does (worktree, setup, files, agent,
the commit of what the agent left) until it writes result.json. Stdlib only, Python 3.9+: part of the runner's
source (runner.py).

The request is a messages.StartRequest and the result a messages.Result, whose `reason` says how the run ended
as far as the runner knows it; the engine reads that code, not the words of an error.
"""

from __future__ import annotations

import dataclasses
import json
import os
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
    except ImportError:  # a source without it (machines/prepare/leftovers.py): it never starts a worker
        Meter = None  # type: ignore[assignment,misc]
if "StartRequest" not in globals():  # likewise messages.py, runfiles.py, worktrees.py, workenv.py and pen.py
    from git_balanced.shipped.messages import MessageError, Reason, Result, StartRequest
if "_git" not in globals():
    from git_balanced.shipped.runfiles import (
        GRACE,
        RequestError,
        RunError,
        _base_env,
        _git,
        _note,
        _parsed,
        _path,
        _read,
        _read_pid,
        _run_dir,
        _signal_group,
        _write_atomic,
        _write_pid,
    )
if "_worktree" not in globals():
    from git_balanced.shipped.worktrees import _install_guard, _own_copy, _worktree
if "readonly_acquire" not in globals():
    from git_balanced.shipped.readonly import readonly_acquire
if "worker_env" not in globals():
    from git_balanced.shipped import pen
    from git_balanced.shipped.workenv import worker_env
else:  # pen.py's functions are this script's own globals there
    pen = types.SimpleNamespace(  # type: ignore[assignment]
        **{n: globals()[n] for n in ("available", "probe", "preexec", "LIBC", "wrap", "agent_state", "folders")})
if "_reap" not in globals():
    from git_balanced.shipped.reap import _reap
# seats.py (a machine's check seats) is not part of this script, which must stay one argument long: the engine
# sends its source with each request that needs it, as the file the workers' script loads (bin/seats.py).
SEATS_FILE = "bin/seats.py"


def seats_module(source: str | None) -> dict | None:
    """seats.py's functions from the source the engine sent (never from a file a worker could have changed)."""
    if not source:
        return None
    mine = _package_seats(source)
    if mine is not None:
        return mine
    found: dict = {"__name__": "balanced_seats"}
    exec(compile(source, "seats.py", "exec"), found)
    return found


def _package_seats(source: str) -> dict | None:
    """This package's seats.py as imported (its bytecode compiled once, not for each worker), when this runner
    runs from the package, as it does on the lead's machine, and the source sent is that very file's text;
    None otherwise (the one script on another machine compiles what was sent)."""
    if __name__ != "git_balanced.shipped.launch":
        return None
    try:
        from git_balanced.shipped import pids, seats
    except ImportError:  # a package without them: compile what was sent
        return None
    # What the engine sends (machines/placing/check_seats.source): pids.py's text, then seats.py's.
    texts = [_read(str(m.__file__)) or "" for m in (pids, seats)]
    sent = texts[0] + texts[1].replace("\nfrom __future__ import annotations\n", "\n")
    return dict(vars(seats)) if all(texts) and sent == source else None


def seats_answer(req: dict) -> dict:
    """The `seats` action: this machine's check seats (`budget`: the setting, 0 for its cores; `source`: seats.py)."""
    seats = seats_module(req.get("source") if isinstance(req.get("source"), str) else None)
    if seats is None:
        raise RequestError("the request's 'source' (seats.py) is missing")
    return seats["seats_state"](seats["seat_budget"](req.get("budget")))

ASK_MARGIN = 600.0  # seconds `ask` waits past ask_timeout: by then the question came to you as well
# `git balanced` on another machine: `ask`, through files in the run folder (the script lives in
# {run_dir}/bin), which the lead's engine reads and answers on its passes; and the agents' PreToolUse hook,
# judged by pretool.py (next to the script) with the rules the lead sent (bin/hook.json, wiring.hook_rules)
# and the guard the runner installed (hooks/pre-commit is guard.py, next to its guard.json), a command for the
# lead going the way of `ask`. Anything else goes to a git balanced installed there, or is refused.
ASK_SHIM_FILES = {"git-balanced": "worker_shim.py", "pretool.py": "pretool.py",  # in bin/: from shipped/
                  "permit.py": "permit.py"}
# The file the guard leaves next to its guard.json when it refuses a commit (guard.py REFUSED_MARK): the runner
# tells the guard's refusal of its commit from another failure by it, not by the words git printed.
GUARD_REFUSED = "guard.refused"
if "ASK_SHIM" not in globals():  # sent to another machine, source() defines it from the files themselves
    ASK_SHIM = {}
    for _name, _file in ASK_SHIM_FILES.items():
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), _file), encoding="utf-8") as _f:
            ASK_SHIM[_name] = _f.read()

class Live:
    """What the detached runner holds for its one worker, made in `_runner_main` and passed down: the process
    group it waits on (its SIGTERM handler passes the signal on), whether it was asked to stop, and the way to pen
    its worker that its session found (`start`), or None to probe it here."""

    def __init__(self, pen_way: str | None = None, probed: bool = False) -> None:
        self.pgid = 0
        self.stop = False
        self.pen_way, self.probed = pen_way, probed  # probed: by the session, None included (no pen here)


def start(req: dict, session: dict | None = None) -> dict:
    """Make the run folder, fork the detached runner, and answer with its pid at once. `session`: what a runner
    session (runner.serve) keeps between its requests; the way to pen a worker is probed there once, and each
    runner forked after is handed it, where each would probe a folder of its own (a temporary folder, a child forked
    into namespaces of its own, three files and folders made and removed a worker).
    A None is kept too: its runners run unpenned without asking again."""
    request = _parsed(StartRequest, req)
    run_dir, job = _run_dir(request.runs_dir, request.job), request.job
    pid_file = os.path.join(run_dir, "pid")
    pid, _ = _read_pid(pid_file)
    if pid is not None:  # a retried call: it started already, so the same answer again
        return {"job": job, "pid": pid, "run_dir": run_dir, "existing": True}
    os.makedirs(run_dir, mode=0o700, exist_ok=True)
    _write_atomic(os.path.join(run_dir, "request.json"), json.dumps(request.to_json(), indent=1))
    way, probed = None, False
    if session is not None and isinstance(request.worker, dict) and request.worker.get("fence"):
        if "pen_way" not in session:  # once a session, a None too: a machine without namespaces gets none meanwhile
            session["pen_way"] = pen.probe()
        way, probed = session["pen_way"], True
    sys.stdout.flush()
    sys.stderr.flush()
    middle = os.fork()
    if middle == 0:  # a new session, the runner forked from it, then gone: init adopts the runner
        try:
            os.setsid()
            runner = os.fork()
            if runner == 0:
                _runner_main(request, run_dir, way, probed)
            _write_pid(pid_file, runner)
        finally:
            os._exit(0)
    os.waitpid(middle, 0)
    pid, _ = _read_pid(pid_file)
    if pid is None:
        raise RequestError(f"the runner of {job} did not start (no pid file in {run_dir})")
    return {"job": job, "pid": pid, "run_dir": run_dir}


def _runner_main(req: StartRequest, run_dir: str, pen_way: str | None = None, probed: bool = False) -> None:
    """The detached runner: stdin /dev/null, output to the log, no inherited descriptors; never returns."""
    code = 1
    live = Live(pen_way, probed)
    try:
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        log = os.open(os.path.join(run_dir, "log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.dup2(log, 1)
        os.dup2(log, 2)
        # Inherited descriptors (an SSH channel, a caller's lock files) must not live as long as the worker.
        os.closerange(3, 65536)

        def on_term(signum: int, frame: object) -> None:
            live.stop = True
            if live.pgid:
                _signal_group(live.pgid, signal.SIGTERM)

        signal.signal(signal.SIGTERM, on_term)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        _work(req, run_dir, live)
        code = 0
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _work(req: StartRequest, run_dir: str, live: Live) -> None:
    """Worktree, setup, files, agent, leftovers commit; then result.json, whatever happened."""
    repo, wt, branch, base = _path(req.repo), _path(req.worktree), req.branch, req.base
    res = Result(job=req.job, started=round(time.time(), 3), base=base)
    seats = None
    grace = float(req.grace or GRACE)
    made = clean = guarded = False
    error_reason = Reason.CRASHED  # an error's reason, if the run has one
    if req.readonly:
        _write_atomic(os.path.join(run_dir, "result.json"), json.dumps(_read_only_run(req, run_dir, live).to_json(),
                                                                       indent=1))
        return
    try:
        if req.own_copy:  # `repo` is the machine's shared copy: the worker gets its branch's own
            repo = _own_copy(repo, wt, branch, base, os.path.dirname(run_dir), req.start_at)
        else:
            _worktree(repo, wt, branch, base, os.path.dirname(run_dir), req.start_at)
        made = True
        if req.guard:
            _install_guard(req.guard, run_dir, repo, wt)
        penned = _penned(req, run_dir, repo, wt, live)
        res.fenced = penned[1] is not None
        if req.setup and not _stopping(run_dir, live):
            marked = {**penned[0], "BALANCED_RUN_DIR": run_dir}  # what the setup leaves running is the worker's
            setup, pen_me = _in_pen(penned, ["sh", "-c", req.setup], marked)
            code, sig, _ = _run_group(setup, wt, marked, None, None, grace, live, pen_me)
            res.setup_exit_code, res.signal = code, sig
            res.setup_failed = code != 0 and not _stopping(run_dir, live)
            if res.setup_failed:
                _note(f"setup {'was killed' if code is None else f'exited {code}'}: {req.setup}")
        ran = not res.setup_failed and not _stopping(run_dir, live)
        seats = seats_module((req.files or {}).get(SEATS_FILE))  # read before any worker could change it
        if ran:
            _agent(req, run_dir, wt, grace, res, live, penned, seats)
        # No process outlives its worker: what its setup or agent left running (a daemon that escaped with
        # setsid included) ends with it, before the commit of what it left, which nothing may still be writing.
        res.ended_left_running = len(_reap(run_dir, min(grace, 5.0)))
        if ran and req.commit_leftovers:
            res.commit_error, clean, guarded = _commit(wt, req.commit_message or f"{req.job}: work", run_dir,
                                                       {"BALANCED_JOB": req.job, "BALANCED_RUN_DIR": run_dir},
                                                       penned)
    except RunError as exc:
        res.error, error_reason = str(exc), exc.reason
        _note(str(exc))
    except Exception as exc:  # still write a result: a runner without one reads as killed
        res.error = f"the runner failed: {type(exc).__name__}: {exc}"
        traceback.print_exc()
    res.stopped = _stopping(run_dir, live)
    res.reason = _reason(res, error_reason, guarded)
    if made:
        res.head, res.commits = _head_and_commits(repo, branch, base)
        if not clean:
            code, status = _git(["status", "--porcelain", "--untracked-files=all"], wt)
            res.dirty = code != 0 or bool(status)
    res.checks = (seats["seat_checks"](run_dir) if seats else None) or None
    res.ended = round(time.time(), 3)
    res.seconds = round(res.ended - res.started, 3)
    try:
        text = json.dumps(res.to_json(), indent=1)
    except MessageError as exc:  # the runner's own bug: still a result, which says so, not a run that reads as killed
        res.error, res.reason = f"the runner's result was malformed: {exc}", Reason.CRASHED
        text = json.dumps(dataclasses.asdict(res), indent=1)
    _write_atomic(os.path.join(run_dir, "result.json"), text)


def _head_and_commits(repo: str, branch: str, base: str) -> tuple[str | None, int]:
    """The branch's tip and how many commits it has past `base`: one `rev-list` (its tip comes first), and a
    `rev-parse` only for a branch with none past it."""
    code, out = _git(["rev-list", f"{base}..refs/heads/{branch}"], repo)
    shas = out.split() if code == 0 else []
    if shas:
        return shas[0], len(shas)
    code, head = _git(["rev-parse", "--verify", "-q", f"refs/heads/{branch}^{{commit}}"], repo)
    return (head if code == 0 else None), 0


def _read_only_run(req: StartRequest, run_dir: str, live: Live) -> Result:
    """A worker that writes nothing: in the shared read-only checkout of its base (readonly.py), penned with
    only its run folder and its agent's own state writable; no setup, no branch, no commit. Its result has no
    head and no commits: its report is in its agent's log."""
    res = Result(job=req.job, started=round(time.time(), 3), base=req.base)
    error_reason = Reason.CRASHED
    try:
        wt = _path(req.worktree)
        readonly_acquire(_path(req.repo), wt, req.base, req.job)
        penned = _penned(req, run_dir, None, wt, live)
        res.fenced = penned[1] is not None
        if not _stopping(run_dir, live):
            _agent(req, run_dir, wt, float(req.grace or GRACE), res, live, penned)
        res.ended_left_running = len(_reap(run_dir, min(float(req.grace or GRACE), 5.0)))
    except RunError as exc:
        res.error, error_reason = str(exc), exc.reason
        _note(str(exc))
    except Exception as exc:
        res.error = f"the runner failed: {type(exc).__name__}: {exc}"
        traceback.print_exc()
    res.stopped = _stopping(run_dir, live)
    res.reason = _reason(res, error_reason, False)
    res.ended = round(time.time(), 3)
    res.seconds = round(res.ended - res.started, 3)
    return res


def _reason(res: Result, error_reason: str, guarded: bool) -> str:
    """How the run ended, the first that holds: its setup failed, the runner could not do its part (the error's
    reason), its budget stopped it, someone did, its leftovers' commit was refused (by the guard, or failed);
    else the agent ran to its end."""
    if res.setup_failed:
        return Reason.SETUP_FAILED
    if res.error:
        return error_reason
    if res.stopped_by_budget:
        return Reason.BUDGET
    if res.stopped:
        return Reason.STOPPED
    if res.commit_error:
        return Reason.GUARD if guarded else Reason.FAILED
    return Reason.EXITED


def _stopping(run_dir: str, live: Live) -> bool:
    return live.stop or os.path.exists(os.path.join(run_dir, "stop"))


def _penned(req: StartRequest, run_dir: str, repo: str | None, wt: str,
            live: Live) -> tuple[dict, tuple[list, list, str] | None]:
    """The environment of the worker's setup and agent, and its pen (read-only and writable folders, and the way
    `pen.probe` found to make it), or None where it runs unpenned: a request without `worker` (as before there
    was one), or a machine without namespaces. A worker gets the environment its agent needs (workenv.py), a
    temporary folder of its own, and, penned, caches of its own: the user's are read-only to it."""
    spec = req.worker
    env = _base_env()
    if not isinstance(spec, dict):
        return env, None
    agent, names = str(spec.get("agent") or ""), [str(n) for n in spec.get("env") or []]
    env = worker_env(env, agent, names)
    env["TMPDIR"] = os.path.join(run_dir, "tmp")
    os.makedirs(env["TMPDIR"], mode=0o700, exist_ok=True)
    # The session's way (`start`), else a probe here. A way the session found that stops working meanwhile fails
    # the pen as one that cannot be made does (exit 97): the worker never runs unpenned for it.
    fenced = spec.get("fence") and not os.environ.get("GIT_BALANCED_NO_FENCE")
    way = (live.pen_way if live.probed else pen.probe()) if fenced else None
    if way is None:
        return env, None
    # A worker that writes nothing (no `repo`) has only its run folder and its agent's state: its checkout
    # stays read-only, as does everything under the home it lives in.
    own = [wt, run_dir, repo, *pen.agent_state(agent, env)] if repo else [run_dir, *pen.agent_state(agent, env)]
    readonly, writable = pen.folders(env, own)
    if not repo:  # its checkout, wherever it is: read-only in the pen as on disk
        readonly.append(os.path.realpath(wt))
    env["XDG_CACHE_HOME"] = os.path.join(run_dir, "cache")
    env["PRE_COMMIT_HOME"] = os.path.join(run_dir, "cache", "pre-commit")
    os.makedirs(env["PRE_COMMIT_HOME"], exist_ok=True)
    return env, (readonly, writable, way)


def _in_pen(penned: tuple[dict, tuple[list, list, str] | None], argv: list[str],
            env: dict) -> tuple[list[str], Any]:
    """`argv` in the worker's pen, when it has one, and what its child runs before it (`preexec_fn`): the pen made
    in that child (pen.LIBC), or None with the pen's processes around `argv` (pen.SHELL). Its program is found
    here first, so that a missing agent reads as one (the engine asks the machine again), not as the pen's
    failure to run it."""
    if penned[1] is None:
        return argv, None
    found = shutil.which(argv[0], path=env.get("PATH", os.defpath)) if os.sep not in argv[0] else argv[0]
    if not found:
        raise RunError(f"could not start {argv[0]}: [Errno 2] No such file or directory: {argv[0]!r}",
                       Reason.NOT_INSTALLED)
    readonly, writable, way = penned[1]
    if way == pen.LIBC:
        return [found, *argv[1:]], pen.preexec(readonly, writable)
    return list(pen.wrap([found, *argv[1:]], readonly, writable)), None


def _agent(req: StartRequest, run_dir: str, wt: str, grace: float, res: Result, live: Live,
           penned: tuple[dict, tuple[list, list, str] | None] = ({}, None), seats: dict | None = None) -> None:
    """Write the files, start the agent in its own group (in its pen, when it has one) and watch it."""
    for rel, content in (req.files or {}).items():
        target = os.path.normpath(os.path.join(run_dir, rel))
        if os.path.isabs(rel) or not target.startswith(run_dir + os.sep):
            raise RunError(f"the file {rel!r} would land outside the run folder")
        os.makedirs(os.path.dirname(target), exist_ok=True)
        _write_atomic(target, content)
    argv = [a.replace("{run_dir}", run_dir).replace("{worktree}", wt) for a in req.argv]
    env = {**(penned[0] or _base_env()), **(req.env or {}), "BALANCED_JOB": req.job, "BALANCED_RUN_DIR": run_dir}
    prefix_bin = os.path.expanduser("~/.local/bin")  # where `ready` installs agents; a login's PATH has it first
    if os.path.isdir(prefix_bin) and prefix_bin not in env.get("PATH", "").split(os.pathsep):
        env["PATH"] = prefix_bin + os.pathsep + env.get("PATH", os.defpath)
    # Its checks (`git balanced seat`) share this machine's check seats: their budget there, and the seats made
    # beforehand (a fenced worker may open them, not make them).
    if seats is not None:
        n = seats["seat_budget"]((req.env or {}).get(seats["SEAT_ENV_BUDGET"]))
        env[seats["SEAT_ENV_BUDGET"]], env[seats["SEAT_ENV_DIR"]] = str(n), seats["seat_prepare"](n)
    if req.ask:  # a machine without git balanced: its `ask` comes first on the agent's PATH
        env["PATH"] = _write_ask_shim(run_dir, req.hook) + os.pathsep + env.get("PATH", os.defpath)
        if req.ask_timeout:
            env["GIT_BALANCED_ASK_TIMEOUT"] = str(float(req.ask_timeout) + ASK_MARGIN)
    if req.meter and Meter is None:  # money: never run an agent whose budget nobody watches
        raise RunError("a budget meter was asked for, but meter.py is not here: run the script of source()")
    meter = Meter(req.meter) if req.meter else None
    penned_argv, pen_me = _in_pen(penned, argv, env)
    code, sig, by_budget = _run_group(penned_argv, wt, env, meter, os.path.join(run_dir, "agent_pid"), grace, live,
                                      pen_me)
    res.exit_code, res.signal, res.stopped_by_budget = code, sig, by_budget
    if meter is not None:
        res.cost_usd = round(float(meter.cost_usd), 6)
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
               grace: float, live: Live, pen_me: Any = None) -> tuple[int | None, int | None, bool]:
    """Run argv in a process group of its own, output to the log (teed through the meter when there is
    one), stopping the group when asked or over budget: (exit code, signal, stopped by budget). `pen_me`: what
    its child runs first (`_in_pen`)."""
    try:
        p = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, start_new_session=True,
                             stdout=subprocess.PIPE if meter is not None else None, stderr=subprocess.STDOUT,
                             preexec_fn=pen_me)
    except OSError as exc:
        missing = isinstance(exc, FileNotFoundError) and exc.filename in (argv[0], None)
        raise RunError(f"could not start {argv[0]}: {exc}", Reason.NOT_INSTALLED if missing else Reason.CRASHED
                       ) from exc
    live.pgid = p.pid
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
        if not kill_at and (by_budget or live.stop):
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
    live.pgid = 0
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


def _commit(wt: str, message: str, run_dir: str, worker: dict,
            penned: tuple[dict, tuple[list, list, str] | None] = ({}, None)) -> tuple[str | None, bool, bool]:
    """Commit what the agent left uncommitted as the worker would, hooks (the guard) and all: the worker's act,
    so in its pen, with its environment and marks (`worker`). Returns (the refusal text when that fails, whether
    the worktree was clean already, so that nobody need ask git again, whether the guard was what refused)."""
    refused = os.path.join(run_dir, "hooks", GUARD_REFUSED)
    code, out = _git(["status", "--porcelain", "--untracked-files=all"], wt)
    clean = code == 0 and not out
    if code == 0 and out:
        code, out = _git(["add", "-A"], wt)
        if code == 0:
            if os.path.exists(refused):  # what the agent's own commits left: only this commit's counts
                os.unlink(refused)
            # No `git maintenance run --auto` after it: a gc of the shared objects while other workers commit.
            env = {**(penned[0] or _base_env()), **worker}
            argv, pen_me = _in_pen(penned, ["git", "-c", "maintenance.auto=false", "commit", "-q", "-m", message], env)
            try:
                cp = subprocess.run(argv, cwd=wt, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, preexec_fn=pen_me)
                code, out = cp.returncode, cp.stdout.decode("utf-8", "replace").strip()
            except (OSError, RunError) as exc:
                code, out = 127, f"git: {exc}"
    failed = None if code == 0 else (out or f"git exited {code}")
    return failed, clean, failed is not None and os.path.exists(refused)
