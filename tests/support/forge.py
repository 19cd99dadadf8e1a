"""A scripted forge on 127.0.0.1 that speaks GitHub's REST API shapes, backed by a real bare repository.

The remote is a real bare git repository: `git push` to it is real, and the forge reads it for what GitHub
computes itself (a pull request's head and base commits, whether it merges cleanly). A test scripts what
GitHub's CI and reviewers would say: check runs for a commit (with their output text and annotations), or a
`ci` function that decides a run from the pushed tree; reviews and review comments on a pull request.

Every response carries an ETag; a request whose `If-None-Match` matches gets 304 with no body, as GitHub's
conditional requests do. Every request is recorded (method, path, status, whether a token came), and the
token itself is checked against `token` and never kept.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

TOKEN = "ghp_scriptedforgetoken0123456789abcdefXYZ"


@dataclass
class Run:
    """One check run as a test scripts it."""

    name: str
    conclusion: str  # success | failure | ...; "" while it runs
    text: str = ""  # the run's output text (what GitHub shows as its log's summary)
    annotations: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Seen:
    method: str
    path: str
    status: int
    authorized: bool


class Forge:
    """The forge's state: pull requests by number, check runs by commit, reviews by number."""

    def __init__(self, bare: Path, repository: str, token: str = TOKEN) -> None:
        self.bare, self.repository, self.token = bare, repository, token
        self.pulls: dict[int, dict[str, Any]] = {}
        self.runs: dict[str, list[Run]] = {}
        self.reviews: dict[int, list[dict[str, Any]]] = {}
        self.comments: dict[int, list[dict[str, Any]]] = {}
        self.ci: Callable[[Forge, str], list[Run]] | None = None
        self.seen: list[Seen] = []
        self.bodies: list[bytes] = []  # every request body, for the tests that look for a token in them
        self.lock = threading.Lock()
        self.url = ""

    # -- what a test scripts ------------------------------------------------------------------------------
    def reset(self, bare: Path) -> None:
        """Start again over another bare repository: no pull requests, runs, reviews or requests."""
        with self.lock:
            self.bare, self.ci = bare, None
            for kept in (self.pulls, self.runs, self.reviews, self.comments):
                kept.clear()
            self.seen.clear()
            self.bodies.clear()

    def checks(self, sha: str, *runs: Run) -> None:
        """The check runs of commit `sha` from now on."""
        with self.lock:
            self.runs[sha] = list(runs)

    def review(self, number: int, state: str, body: str, comments: tuple[tuple[str, int, str], ...] = ()) -> None:
        """A reviewer's review (APPROVED, CHANGES_REQUESTED, COMMENTED) with its line comments."""
        with self.lock:
            rid = 100 + sum(len(v) for v in self.reviews.values())
            head = self.head_sha(self.pulls[number]["head"]["ref"])
            self.reviews.setdefault(number, []).append({
                "id": rid, "user": {"login": "rev"}, "body": body, "state": state, "commit_id": head,
                "submitted_at": "2026-01-01T00:00:00Z"})
            for path, line, text in comments:
                self.comments.setdefault(number, []).append({
                    "id": 1000 + len(self.comments.get(number, [])), "pull_request_review_id": rid, "path": path,
                    "line": line, "body": text, "user": {"login": "rev"}, "commit_id": head})

    def merge(self, number: int) -> None:
        with self.lock:
            self.pulls[number].update(state="closed", merged=True, merged_at="2026-01-01T00:00:00Z")

    def show(self, sha: str, path: str) -> str | None:
        """The text of `path` at `sha` in the bare repository, or None."""
        cp = self._git("show", f"{sha}:{path}", check=False)
        return cp.stdout if cp.returncode == 0 else None

    def head_sha(self, branch: str) -> str | None:
        cp = self._git("rev-parse", "--verify", "-q", f"refs/heads/{branch}^{{commit}}", check=False)
        return cp.stdout.strip() if cp.returncode == 0 else None

    def requests_to(self, pattern: str) -> list[Seen]:
        return [s for s in self.seen if re.search(pattern, s.path)]

    # -- what GitHub computes ------------------------------------------------------------------------------
    def _git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        cp = subprocess.run(["git", "-C", str(self.bare), *args], capture_output=True, text=True)
        assert cp.returncode == 0 or not check, cp.stderr
        return cp

    def _pull(self, pr: dict[str, Any]) -> dict[str, Any]:
        """A pull request as GitHub returns it: head and base at the branches' tips now, mergeability."""
        head = self.head_sha(pr["head"]["ref"]) or pr["head"]["sha"]
        base = self.head_sha(pr["base"]["ref"]) or ""
        clean = self._git("merge-tree", "--write-tree", base, head, check=False).returncode == 0 if base else True
        merged = bool(pr.get("merged"))
        return {**pr, "head": {**pr["head"], "sha": head}, "base": {**pr["base"], "sha": base},
                "mergeable": None if merged else clean,
                "mergeable_state": "unknown" if merged else "clean" if clean else "dirty"}

    def _runs(self, sha: str) -> list[Run]:
        if sha not in self.runs and self.ci is not None:
            self.runs[sha] = self.ci(self, sha)
        return self.runs.get(sha, [])

    def _check_runs(self, sha: str) -> dict[str, Any]:
        out = []
        for i, r in enumerate(self._runs(sha)):
            out.append({"id": self._run_id(sha, i), "name": r.name, "head_sha": sha,
                        "status": "completed" if r.conclusion else "in_progress", "conclusion": r.conclusion or None,
                        "html_url": f"{self.url}/{self.repository}/runs/{self._run_id(sha, i)}",
                        "output": {"title": f"{r.name} {r.conclusion or 'running'}", "summary": r.text[:200],
                                   "text": r.text, "annotations_count": len(r.annotations)}})
        return {"total_count": len(out), "check_runs": out}

    @staticmethod
    def _run_id(sha: str, i: int) -> int:
        return int(sha[:6], 16) * 10 + i

    def _annotations(self, run_id: int) -> list[dict[str, Any]] | None:
        for sha, runs in self.runs.items():
            for i, r in enumerate(runs):
                if self._run_id(sha, i) == run_id:
                    return [{"annotation_level": "failure", "title": "", "raw_details": "", **a} for a in r.annotations]
        return None

    # -- the routes ----------------------------------------------------------------------------------------
    def answer(self, method: str, path: str, query: dict[str, list[str]], body: Any) -> tuple[int, Any]:
        base = f"/repos/{self.repository}"
        if not path.startswith(base + "/"):
            return 404, {"message": "Not Found"}
        rest = path[len(base):]
        if rest == "/pulls" and method == "POST":
            return self._create(body)
        if rest == "/pulls" and method == "GET":
            head = (query.get("head") or [""])[0].split(":", 1)[-1]
            state = (query.get("state") or ["open"])[0]
            return 200, [self._pull(p) for p in self.pulls.values()
                         if (not head or p["head"]["ref"] == head) and (state == "all" or p["state"] == state)]
        m = re.fullmatch(r"/pulls/(\d+)(/reviews|/comments)?", rest)
        if m and int(m.group(1)) in self.pulls:
            n = int(m.group(1))
            if m.group(2) == "/reviews":
                return 200, self.reviews.get(n, [])
            if m.group(2) == "/comments":
                return 200, self.comments.get(n, [])
            if method == "PATCH":
                self.pulls[n].update({k: v for k, v in body.items() if k in ("title", "body", "state", "base")})
            return 200, self._pull(self.pulls[n])
        m = re.fullmatch(r"/commits/([^/]+)/check-runs", rest)
        if m:
            ref = m.group(1)
            return 200, self._check_runs(self.head_sha(ref) or ref)
        m = re.fullmatch(r"/check-runs/(\d+)/annotations", rest)
        if m and (found := self._annotations(int(m.group(1)))) is not None:
            return 200, found
        return 404, {"message": "Not Found"}

    def _create(self, body: dict[str, Any]) -> tuple[int, Any]:
        head, base = str(body.get("head", "")).split(":", 1)[-1], str(body.get("base", ""))
        sha = self.head_sha(head)
        if sha is None or self.head_sha(base) is None:
            return 422, {"message": "Validation Failed", "errors": [{"resource": "PullRequest", "field": "head",
                                                                      "code": "invalid"}]}
        if any(p["head"]["ref"] == head and p["state"] == "open" for p in self.pulls.values()):
            return 422, {"message": "Validation Failed", "errors": [
                {"message": f"A pull request already exists for {self.repository.split('/')[0]}:{head}."}]}
        n = 1 + max(self.pulls, default=0)
        owner = self.repository.split("/")[0]
        self.pulls[n] = {"number": n, "state": "open", "merged": False, "draft": bool(body.get("draft")),
                         "title": body.get("title", ""), "body": body.get("body", ""),
                         "html_url": f"{self.url}/{self.repository}/pull/{n}", "user": {"login": owner},
                         "head": {"ref": head, "sha": sha, "label": f"{owner}:{head}"},
                         "base": {"ref": base, "sha": ""}}
        return 201, self._pull(self.pulls[n])


class _Handler(BaseHTTPRequestHandler):
    forge: Forge

    def log_message(self, *args: Any) -> None:
        pass

    def _serve(self, method: str) -> None:
        forge = self.server.forge  # type: ignore[attr-defined]
        size = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(size) if size else b""
        parts = urlsplit(self.path)
        authorized = self.headers.get("Authorization", "") in (f"Bearer {forge.token}", f"token {forge.token}")
        with forge.lock:
            forge.bodies.append(raw)
            if not authorized:
                status, body = 401, {"message": "Bad credentials"}
            else:
                status, body = forge.answer(method, parts.path, parse_qs(parts.query), json.loads(raw or b"{}"))
            data = json.dumps(body).encode()
            etag = '"' + hashlib.sha1(data).hexdigest() + '"'
            if method == "GET" and status == 200 and self.headers.get("If-None-Match") == etag:
                status, data = 304, b""
            forge.seen.append(Seen(method, parts.path + (f"?{parts.query}" if parts.query else ""), status,
                                   authorized))
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("ETag", etag)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def do_PATCH(self) -> None:
        self._serve("PATCH")


def start(bare: Path, repository: str) -> tuple[Forge, ThreadingHTTPServer]:
    """A forge serving on 127.0.0.1 in a thread; stop it with `server.shutdown()`."""
    forge = Forge(bare, repository)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    server.forge = forge  # type: ignore[attr-defined]
    forge.url = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return forge, server
