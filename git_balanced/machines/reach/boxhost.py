"""A box machine as a Host (hosts.py): a fresh box (container or pod, boxdoor.py) per job, made before its
worker starts and removed when the job is cleaned up, after its branch was fetched back.

In the box, the project is a copy made from the lead's objects, never a mount of the lead's repository: git
pushes the base (and what an earlier attempt of the branch committed) into `/root/<repository>`, the runner
makes the branch's own copy beside it and starts the worker there, as on an SSH machine, and the lead fetches
exactly the worker's branch back from that copy. Every runner action goes into the job's own box through the
kind's `reach` command, `python3` fed on stdin. A box that is gone or stopped is a run that died: the engine
tries the piece again.
"""

from __future__ import annotations

import hashlib
import json
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any

from git_balanced import process
from git_balanced.errors import BalancedError
from git_balanced.lead import Lead
from git_balanced.machines.inventory import records
from git_balanced.machines.inventory.boxes import BoxSpec
from git_balanced.machines.reach import copies
from git_balanced.machines.reach.boxdoor import LABEL, Door, Found, Shell
from git_balanced.machines.reach.hosts import negotiation_tips
from git_balanced.machines.reach.routes import Reach
from git_balanced.machines.reach.transport import MachineUnreachable
from git_balanced.shipped import branchcopy
from git_balanced.vocab import RunState

TIMEOUTS = {"start": 120.0, "status": 30.0, "stop": 40.0, "log": 60.0}
GIT_TIMEOUT = 300.0
HOME = "/root"
# Run in a new box before the first push: its copy of the project, with the lead's identity for commits.
INIT = r'''
import json, subprocess, sys
req = json.loads(sys.stdin.read())
def git(*args):
    subprocess.run(["git", "-c", "core.hooksPath=/dev/null"] + list(args), check=True, stdout=subprocess.DEVNULL)
git("init", "-q", req["copy"])
git("-C", req["copy"], "symbolic-ref", "HEAD", "refs/heads/" + req["head"])
for key in ("user.name", "user.email"):
    if req.get(key):
        git("-C", req["copy"], "config", key, req[key])
print(json.dumps({"ok": True}))
'''


def door_for(machine: str, spec: BoxSpec) -> Door:
    """The door to a box machine's engine: here, or through the Transport of the SSH machine it names."""
    on = process.part(Reach).transport(records.host_alias(spec.on)) if spec.on else None
    return Door(machine, spec, on)


def box_labels(repo_id: str, job: str | None = None, branch: str | None = None) -> dict[str, str]:
    """The labels of this repository's boxes (of one job's, of one branch's); a branch as a hash of its name,
    which any kind takes as a label value."""
    out = {LABEL: "1", f"{LABEL}.repo": repo_id}
    if job is not None:
        out[f"{LABEL}.job"] = job
    if branch is not None:
        out[f"{LABEL}.branch"] = hashlib.sha256(branch.encode()).hexdigest()[:20]
    return out


class BoxHost:
    """A container or pod machine: one box per job, reached through its kind's commands."""

    def __init__(self, lead: Lead, machine: str, spec: BoxSpec) -> None:
        self.lead = lead
        self.repo = lead.repo
        self.name = machine
        self.spec = spec
        self.door = door_for(machine, spec)
        self.repo_id = copies.identity(self.repo).short
        self.reach = process.part(Reach)

    def box(self, job: str) -> str:
        """The box of a job (its runner key): `balanced-<repository>-<job>`."""
        return f"balanced-{self.repo_id}-{job}".lower()

    # -- the runner --------------------------------------------------------------------------------
    def call(self, action: str, request: dict[str, Any]) -> dict[str, Any]:
        """Run one runner action in the box of its job (a status: in each named job's box)."""
        if action == "start":
            return self.answered(action, self._start(request))
        if action == "status":
            return {"jobs": self._status([str(j) for j in request.get("jobs") or []], request)}
        job = str(request.get("job", ""))
        if action == "cleanup":
            self.door.run(self.door.kind.remove([self.box(job)]), timeout=120)
            return {"job": job, "removed": True}
        live = self._live({job})
        if job not in live:
            return {"state": RunState.MISSING} if action == "stop" else {"error": f"the box of {job} is gone"}
        return self._runner(self.box(job), action, request)

    def call_many(self, action: str, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Several requests of one action, the boxes at once; the answers as they are."""
        if not requests:
            return []
        with ThreadPoolExecutor(max_workers=min(len(requests), 6)) as pool:
            return list(pool.map(lambda r: self._one(action, r), requests))

    def _one(self, action: str, request: dict[str, Any]) -> dict[str, Any]:
        try:
            return self._start(request) if action == "start" else self.call(action, request)
        except MachineUnreachable:
            raise
        except BalancedError as exc:
            return {"error": exc.message}

    def answered(self, action: str, answer: dict[str, Any]) -> dict[str, Any]:
        """The answer, unless it is a start the runner refused: that raises, saying why."""
        if answer.get("error") and action == "start":
            raise BalancedError(f"The runner on {self.name} refused to start a worker: {answer['error']}",
                                hint=f"`git balanced ready {self.name}` checks that machine.")
        return answer

    def _runner(self, box: str, action: str, request: dict[str, Any]) -> dict[str, Any]:
        timeout = TIMEOUTS.get(action, 60.0)
        res = Shell(self.door, box).run_python(self.reach.runner_source(), [action], input=json.dumps(request),
                                               timeout=timeout)
        try:
            answer = json.loads(res.out.strip().splitlines()[-1])
        except (ValueError, IndexError):
            raise BalancedError(f"The runner did not answer {action} in {box} on {self.name}: "
                                f"{(res.err or res.out).strip()[-500:]}",
                                hint=f"`git balanced ready {self.name}` checks its image.") from None
        return dict(answer) if isinstance(answer, dict) else {"error": f"the runner answered {answer!r}"}

    def _live(self, jobs: set[str]) -> dict[str, Found]:
        """Of `jobs`, those whose box is running now."""
        found = self.door.boxes(box_labels(self.repo_id))
        key = f"{LABEL}.job"
        return {f.labels[key]: f for f in found if f.running and f.labels.get(key) in jobs}

    def _status(self, jobs: list[str], request: dict[str, Any]) -> dict[str, Any]:
        live = self._live(set(jobs))
        gone = {"state": RunState.DEAD, "pid": None, "result": None, "log_tail": "", "log_size": 0,
                "error": "its box is gone or stopped"}

        def one(job: str) -> dict[str, Any]:
            if job not in live:
                return gone
            try:
                answer = self._runner(self.box(job), "status", {**request, "jobs": [job]})
            except MachineUnreachable:
                raise
            except BalancedError as exc:  # this box alone did not answer (it stopped meanwhile, say): next pass
                return {"state": RunState.UNREACHABLE, "error": exc.message}
            return dict((answer.get("jobs") or {}).get(job) or {"state": RunState.MISSING})

        with ThreadPoolExecutor(max_workers=max(1, min(len(jobs), 6))) as pool:
            return dict(zip(jobs, pool.map(one, jobs), strict=True))

    # -- a job's box -------------------------------------------------------------------------------
    def _start(self, request: dict[str, Any]) -> dict[str, Any]:
        """Make the job's box (once: a start asked again finds it), its copy and its base, then start the
        worker there."""
        job, branch = str(request["job"]), str(request["branch"])
        box = self.box(job)
        had = [f for f in self.door.boxes(box_labels(self.repo_id, job)) if f.name == box]
        if had and not had[0].running:  # stopped: what it held is lost, so start over in a new one
            self.door.must(self.door.kind.remove([box]), f"remove the stopped box {box}")
            had = []
        if not had:
            self.door.must(self.door.kind.create(box, box_labels(self.repo_id, job, branch)), f"make the box {box}")
            waiting = self.door.kind.ready(box)
            if waiting:
                self.door.must(waiting, f"wait for the box {box} to run", timeout=320)
            self._init_copy(box)
        self._push(box, branch, str(request["base"]), str(request.get("start_at") or request["base"]))
        return self._runner(box, "start", request)

    def _init_copy(self, box: str) -> None:
        ident = self.repo.committer_ident() or ""
        name, _, email = ident.partition(" <")
        req = {"copy": self.repo_path(), "head": self.lead.branch, "user.name": name.strip(),
               "user.email": email.split(">")[0]}
        res = Shell(self.door, box).run_python(INIT, [], input=json.dumps(req), timeout=60)
        if not res.ok:
            raise BalancedError(f"Machine {self.name}: could not make the project's copy in {box}: "
                                f"{(res.err or res.out).strip()[-400:]}",
                                hint=f"`git balanced ready {self.name}` checks that its image has git and python3.")

    def _push(self, box: str, branch: str, base: str, start_at: str) -> None:
        specs = [f"+{base}:refs/balanced/base/{self.lead.branch}"]
        if start_at != base:
            specs.append(f"+{start_at}:refs/heads/{branch}")
        res = self.repo.push(self.door.git_url(self.repo_path()), specs, quiet=False, env=self.door.git_env(),
                             receive_pack=self.door.git_program(box, "receive-pack"), timeout=GIT_TIMEOUT)
        if res.code != 0:
            raise BalancedError(f"Could not push the base {base[:7]} into {box} on {self.name}: "
                                f"{(res.err or res.out).strip()[-500:]}",
                                hint=f"`git balanced ready {self.name}` checks that machine.")

    # -- where things are in a box -----------------------------------------------------------------
    def repo_path(self) -> str:
        return f"{HOME}/{self.repo.name}"

    def worktree_path(self, job: str) -> str:
        return f"{HOME}/.balanced/worktrees/{job}"

    def branch_repo(self, branch: str) -> str:
        return branchcopy.own_copy_path(self.repo_path(), branch)

    def prepare_base(self, branch: str, base: str) -> None:
        """Refuse a machine that is not ticked or not ready; the base goes into the job's box as it starts."""
        from git_balanced.machines.reach.remote import MachineNotReady

        if self.name not in records.ticked(self.repo):
            raise MachineNotReady(f"Machine {self.name} is not ticked for this repository.",
                                  hint=f"tick it: `git balanced tick {self.name}`.")
        record = records.readiness(self.repo).get(self.name, {})
        if not record.get("ready"):
            raise MachineNotReady(f"Machine {self.name} is not ready: "
                                  f"{record.get('why') or '`git balanced ready` has not run'}.",
                                  hint=f"`git balanced ready {self.name}` checks its engine and image.")

    def warm(self) -> None:
        """Nothing to open ahead: each command is its own."""

    # -- branches back ---------------------------------------------------------------------------------
    def fetch_back(self, branch: str) -> str | None:
        """One `git fetch` of the worker's branch from its own copy in its box into
        `refs/remotes/<machine>/<branch>`; the ref's name, or None when it did not come."""
        boxes = self.door.boxes(box_labels(self.repo_id, branch=branch))
        if not boxes:
            raise BalancedError(f"Could not fetch {branch} back from {self.name}: no box holds it.",
                                hint="`git balanced board` shows the job; the engine tries the piece again.")
        box = max(boxes, key=lambda f: (f.running, f.labels.get(f"{LABEL}.job", ""))).name
        ref = f"refs/remotes/{self.name}/{branch}"
        fetch = partial(self.repo.fetch, self.door.git_url(self.branch_repo(branch)), [f"+refs/heads/{branch}:{ref}"],
                        fetch_head=False, upload_pack=self.door.git_program(box, "upload-pack"),
                        negotiate=negotiation_tips(self.repo, self.lead.ref, ref))
        res = fetch(env=self.door.git_env(), timeout=GIT_TIMEOUT)
        if res.code != 0:
            raise BalancedError(f"Could not fetch {branch} back from {box} on {self.name}: {res.err.strip()[-500:]}",
                                hint="the engine tries again on its next pass.")
        return ref if self.repo.read_ref(ref) else None

    def fetch_back_many(self, branches: list[str]) -> dict[str, str | None]:
        """Each branch from its box; None for one that failed (`fetch_back` of it says why)."""
        out: dict[str, str | None] = {}
        for branch in branches:
            try:
                out[branch] = self.fetch_back(branch)
            except MachineUnreachable:
                raise
            except BalancedError:
                out[branch] = None
        return out
