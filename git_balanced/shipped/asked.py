"""A worker's questions to its lead, by store and forward: the worker's script (worker_shim.py) leaves each in the run
folder, `status` hands the unsent ones to the engine, `forwarded` marks them carried, and `answer` leaves the lead's
answer where the script waits for it. Stdlib only, Python 3.9+: part of the runner's source (runner.py)."""

from __future__ import annotations

import json
import os
import time
from typing import Any

if "_run_dir" not in globals():  # sent to another machine, runfiles.py's source comes first and defines these
    from git_balanced.shipped.runfiles import RequestError, _parsed, _read, _run_dir, _write_atomic
if "AnswerRequest" not in globals():  # likewise messages.py
    from git_balanced.shipped.messages import AnswerRequest, ForwardedRequest, TellRequest


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
    got = _parsed(ForwardedRequest, req)
    run_dir = _run_dir(got.runs_dir, got.job)
    ns = [_question_number(n, got.job, run_dir) for n in got.ns]
    for n in ns:
        _write_atomic(os.path.join(run_dir, "questions", f"{n}.sent"), f"{time.time()}\n")
    return {"job": got.job, "forwarded": ns}


def answer_question(req: dict) -> dict:
    """Leave the lead's answer to question `n` (and its id there, `qid`) where the worker's script waits."""
    got = _parsed(AnswerRequest, req)
    run_dir = _run_dir(got.runs_dir, got.job)
    n = _question_number(got.n, got.job, run_dir)
    os.makedirs(os.path.join(run_dir, "answers"), exist_ok=True)
    _write_atomic(os.path.join(run_dir, "answers", f"{n}.json"),
                  json.dumps({"text": got.text or "", "decision": got.decision, "qid": got.qid,
                              "answered_at": time.time()}))
    _write_atomic(os.path.join(run_dir, "questions", f"{n}.sent"), f"{time.time()}\n")  # settled: never again
    return {"job": got.job, "n": n, "answered": True}


def told(req: dict) -> dict:
    """Leave a line from the lead in the run folder (`told/<time>.txt`), for the worker's PreToolUse hook to hand
    its agent at its next tool call (pretool.take_told); refused when the worker runs no more."""
    got = _parsed(TellRequest, req)
    run_dir = _run_dir(got.runs_dir, got.job)
    if not os.path.isdir(run_dir):
        raise RequestError(f"the job {got.job} has no run folder here")
    folder = os.path.join(run_dir, "told")
    os.makedirs(folder, exist_ok=True)
    name = f"{time.time_ns()}.txt"
    _write_atomic(os.path.join(folder, name), got.text.strip() + "\n")
    return {"job": got.job, "told": name}
