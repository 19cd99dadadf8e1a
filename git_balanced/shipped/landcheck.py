"""A landing check on an idle SSH machine (landing/machine_checks.py), run by the runner there. Stdlib only,
Python 3.9+: part of the runner's source (runner.py).

The lead pushes a candidate commit into the machine's copy and asks for `landcheck`: the runner makes a scratch
repository of its own that borrows the copy's objects (as a branch's copy does, branchcopy.py), checks that commit
out there with git that runs nothing it finds (untrusted.py), runs the lead's check command in it, penned where
the machine allows (pen.py: only that scratch folder is writable), and removes it, and the ref the commit came
under (`ref`, when named) while it still names that commit: the copy keeps no landing's candidate. The answer is
pass or fail, the exit code and the tail of the output. The lead takes it as a hint, never as a verdict: the copy
is one a worker may have written, and so may be the machine.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import signal
import subprocess
import time
import types

if "_git" not in globals():  # sent to another machine, runfiles.py's source comes first and defines these
    from git_balanced.shipped.runfiles import KEEP_GIT, RequestError, _git, _path
if "own_copy_objects" not in globals():
    from git_balanced.shipped.branchcopy import own_copy_objects
# Named apart from launch.py's `pen`: sent to another machine, both are one script's globals, and this one's
# namespace must not take the place of that one's.
if "folders" not in globals():
    from git_balanced.shipped import pen as check_pen
else:  # pen.py's functions are this script's own globals there
    check_pen = types.SimpleNamespace(  # type: ignore[assignment]
        **{n: globals()[n] for n in ("probe", "preexec", "LIBC", "wrap", "folders")})

LANDCHECK_TAIL = 30  # lines of the output sent back
LANDCHECK_SLOT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
LANDCHECK_COMMIT = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")
LANDCHECK_REF = re.compile(r"^refs/balanced/landing-checks/[\w-]{1,64}$")  # a word of the lead's branch


def landcheck_folder(copy: str, slot: str) -> str:
    """Where the check of `slot` runs for the machine copy `copy`: beside its branches' copies, under its home."""
    copy = copy.rstrip("/")
    short = hashlib.sha256(f"{copy}/.git".encode()).hexdigest()[:8]
    return f"{os.path.dirname(copy)}/.balanced/landing/{os.path.basename(copy)}-{short}/{slot}"


def landcheck(request: dict) -> dict:
    """Run `command` on exactly the tree of `commit` (in the copy `copy`), after `setup` when there is one, each
    within `timeout` seconds, in a scratch folder of its own (`slot`); {"commit", "tree", "passed", "code", "tail",
    "seconds", "penned"}."""
    copy, commit = _path(str(request.get("copy") or "")), str(request.get("commit") or "")
    command, slot = str(request.get("command") or ""), str(request.get("slot") or "0")
    if not LANDCHECK_COMMIT.match(commit):
        raise RequestError(f"`commit` must be a full commit id, not {commit!r}")
    if not LANDCHECK_SLOT.match(slot):
        raise RequestError(f"`slot` must be a plain name ([A-Za-z0-9_-]), not {slot!r}")
    ref = str(request.get("ref") or "")
    if ref and not LANDCHECK_REF.match(ref):
        raise RequestError(f"`ref` must be refs/balanced/landing-checks/<one word>, not {ref!r}")
    if not command.strip():
        raise RequestError("`command` is empty: there is no check to run")
    try:
        timeout = float(request.get("timeout") or 600)
    except (TypeError, ValueError):
        raise RequestError(f"`timeout` must be a number of seconds, not {request.get('timeout')!r}") from None
    setup = str(request.get("setup") or "")
    where = landcheck_folder(copy, slot)
    try:
        tree = _landcheck_scratch(copy, commit, where)
        if setup.strip():  # the scratch folder is new: its setup runs first, as in a new scratch worktree here
            ran = _landcheck_run(setup, where, timeout)
            if ran["code"] != 0:
                return {"commit": commit, "tree": tree, **ran, "tail": "setup failed:\n" + ran["tail"]}
        return {"commit": commit, "tree": tree, **_landcheck_run(command, where, timeout)}
    finally:
        shutil.rmtree(where, ignore_errors=True)
        if ref:  # only while it names this commit: a later push under it is another check's
            _git(["update-ref", "-d", ref, commit], copy)


def _landcheck_scratch(copy: str, commit: str, where: str) -> str:
    """A fresh repository at `where`/tree borrowing the copy's objects, with `commit` checked out; its tree's id."""
    shutil.rmtree(where, ignore_errors=True)
    os.makedirs(os.path.join(where, "tmp"), mode=0o700)
    scratch = os.path.join(where, "tree")
    code, out = _git(["init", "-q", scratch], where)
    if code != 0:
        raise RequestError(f"could not make the scratch repository {scratch}: {out}")
    with open(os.path.join(scratch, ".git", "objects", "info", "alternates"), "w", encoding="utf-8") as f:
        f.write(own_copy_objects(copy, _git) + "\n")
    code, out = _git(["-c", "advice.detachedHead=false", "checkout", "-q", "--detach", commit], scratch)
    if code != 0:
        raise RequestError(f"could not check out {commit[:12]} from {copy}: {out}")
    code, tree = _git(["rev-parse", f"{commit}^{{tree}}"], scratch)
    if code != 0:
        raise RequestError(f"could not read the tree of {commit[:12]}: {tree}")
    return tree


def _landcheck_run(command: str, where: str, timeout: float) -> dict:
    """`sh -c command` in `where`/tree, penned when the machine allows, its output merged; stopped (exit 124)
    past `timeout`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or k in KEEP_GIT}
    env["TMPDIR"] = os.path.join(where, "tmp")
    argv, first, way = ["sh", "-c", command], None, check_pen.probe()
    if way is not None:
        readonly, writable = check_pen.folders(env, [where])
        if way == check_pen.LIBC:
            first = check_pen.preexec(readonly, writable)
        else:
            argv = list(check_pen.wrap(argv, readonly, writable))
    start = time.time()
    p = subprocess.Popen(argv, cwd=os.path.join(where, "tree"), env=env, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True, preexec_fn=first)
    try:
        raw, _ = p.communicate(timeout=timeout)
        code = p.returncode
    except subprocess.TimeoutExpired:
        _landcheck_end(p.pid)
        try:  # a process of its own session may still hold the pipe: what came is enough then
            raw, _ = p.communicate(timeout=5)
        except subprocess.TimeoutExpired as late:
            p.kill()
            raw = late.stdout or b""
        raw += f"\nthe check ran past its {timeout:g} s timeout there and was stopped".encode()
        code = 124
    _landcheck_end(p.pid)  # what it left running in its group
    out = raw.decode("utf-8", "replace").rstrip()
    return {"passed": code == 0, "code": code, "tail": "\n".join(out.splitlines()[-LANDCHECK_TAIL:]),
            "seconds": round(time.time() - start, 3), "penned": way is not None}


def _landcheck_end(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
