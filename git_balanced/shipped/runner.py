"""The runner: starts one worker on this machine and watches it (DESIGN §5). Stdlib only, Python 3.9+.

Run it as `python3 runner.py ACTION` with a JSON request on stdin, or send `source()` (its parts as one script)
to another machine. It prints one JSON line; `serve` answers many requests, a line each, over one process (a
session kept open by the lead). Nothing a user wrote travels in argv: the action word is the only argument.
Actions: start, status, stop, log, cleanup, forwarded, answer, tell, seats, landcheck.

This module is the wire protocol: the actions by name, one request in and one answer out, and the one script
that carries the runner elsewhere. Its parts, each stdlib only: pids.py (a process by pid and start tick),
messages.py (the start request and the result, as types), runfiles.py (run folders, pid files, git), worktrees.py,
asked.py (a worker's questions, by store and forward: `git balanced ask` there is a small script the runner writes,
ASK_SHIM, which leaves the question in the run folder), reap.py (status, log, stop, cleanup, and what a worker left
running), launch.py (starting a worker and the detached runner that watches it) and landcheck.py (a landing check
the lead asks of an idle machine).
"""

from __future__ import annotations

import json
import os
import select
import sys

if __name__ == "__main__" and "__file__" in globals():  # run as a file: its parts come from the package beside it
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
if "start" not in globals():  # sent to another machine, its parts' source comes first and defines these
    from git_balanced.shipped.asked import answer_question, forwarded, told
    from git_balanced.shipped.landcheck import landcheck
    from git_balanced.shipped.launch import ASK_SHIM_FILES, seats_answer, start
    from git_balanced.shipped.reap import cleanup, log, status, stop
    from git_balanced.shipped.runfiles import RequestError, _read
SERVE_IDLE = 60.0  # seconds a session (`serve`) waits for its next request before it ends
ACTIONS = {"start": start, "status": status, "stop": stop, "log": log, "cleanup": cleanup,
           "forwarded": forwarded, "answer": answer_question, "tell": told, "seats": seats_answer,
           "landcheck": landcheck}
# The runner's parts in the order the one script defines them: each finds what it needs already there.
PARTS = ("pids.py", "workenv.py", "pen.py", "branchcopy.py", "meter.py", "messages.py", "runfiles.py", "worktrees.py",
         "readonly.py", "asked.py", "reap.py", "launch.py", "landcheck.py")


def source(with_meter: bool = True) -> str:
    """untrusted.py, the runner's parts (PARTS; meter.py only `with_meter`) and this module as one script for
    another machine's python3, one __future__ line first, ASK_SHIM from the files the workers' script is."""
    here = os.path.abspath(__file__)
    folder = os.path.dirname(here)
    paths = [os.path.join(os.path.dirname(folder), "untrusted.py")]
    paths += [os.path.join(folder, name) for name in PARTS if with_meter or name != "meter.py"]
    parts = [_read(path) or "" for path in [*paths, here]]
    shim = {name: _read(os.path.join(folder, file)) or "" for name, file in ASK_SHIM_FILES.items()}
    return "\n".join(["from __future__ import annotations\n", f"ASK_SHIM = {shim!r}\n"] + [
        part.replace("\nfrom __future__ import annotations\n", "\n") for part in parts])


def _act(action: str, request: dict, session: dict | None = None) -> dict:
    try:
        if action == "start":  # what a session keeps between its requests: the way to pen a worker
            return start(request, session)
        return ACTIONS[action](request)
    except Exception as exc:
        return {"error": str(exc) if isinstance(exc, RequestError) else f"{type(exc).__name__}: {exc}"}


def serve(idle: float = SERVE_IDLE) -> int:
    """A session: after a `{"ready": ...}` line, answer one JSON line per request line (`{"action", "request"}`)
    until stdin ends or stays quiet for `idle` seconds. The caller sends nothing before the ready line, so
    nothing it sends sits in sys.stdin's buffer: from here on the descriptor is read directly."""
    fd = sys.stdin.fileno()
    try:  # the workers' pens use it (pen.enter): imported once here, not by each runner forked from this one
        import ctypes  # noqa: F401
    except ImportError:
        pass
    print(json.dumps({"ready": True, "pid": os.getpid()}), flush=True)
    pending = b""
    session: dict = {}  # kept from one request to the next of this session (launch.start)
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
            answer = _act(action, request, session)
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
