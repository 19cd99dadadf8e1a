"""GitHub and GitHub Enterprise through the REST API (urllib, no client library).

The token goes in the Authorization header of each request and nowhere else: not in an error, a log or a
file. What the watcher reads is asked conditionally: the ETag of each answer is kept (with the answer) in
`.git/balanced/forge-etags.json`, so an unchanged pull request costs a 304, which GitHub does not count
against the rate limit.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from git_balanced.files import write_json
from git_balanced.forge.base import CheckRun, ForgeError, PullRequest, Review
from git_balanced.vocab import PrState

TIMEOUT = 20.0
KEEP_TAGS = 200  # answers kept for conditional requests: a few per open pull request
LOG_MOST = 4000  # characters of a failed run's output carried in a message


class GitHub:
    """One repository on GitHub (`owner/name`) at an API base (`https://api.github.com`)."""

    kind = "github"

    def __init__(self, api: str, repository: str, token: str, tags: Path | None = None) -> None:
        self.api = api.rstrip("/")
        self.repository = repository
        self._token = token
        self._tags = tags
        self._kept_now: dict[str, Any] | None = None  # the kept answers, read once per client

    def __repr__(self) -> str:  # never the token
        return f"GitHub({self.api!r}, {self.repository!r})"

    # -- the calls --------------------------------------------------------------------------------------------
    def find_open(self, head: str) -> PullRequest | None:
        owner = self.repository.split("/")[0]
        query = urllib.parse.urlencode({"head": f"{owner}:{head}", "state": "open"})
        found = self._call("GET", f"/pulls?{query}")[1]
        return _pull(found[0]) if found else None

    def open(self, *, head: str, base: str, title: str, body: str, draft: bool) -> PullRequest:
        return _pull(self._call("POST", "/pulls", {"head": head, "base": base, "title": title, "body": body,
                                                   "draft": draft})[1])

    def update(self, number: int, *, title: str, body: str) -> PullRequest:
        return _pull(self._call("PATCH", f"/pulls/{number}", {"title": title, "body": body})[1])

    def pull(self, number: int) -> tuple[PullRequest, bool]:
        changed, data = self._call("GET", f"/pulls/{number}", conditional=True)
        return _pull(data), changed

    def checks(self, sha: str) -> tuple[list[CheckRun], bool]:
        changed, data = self._call("GET", f"/commits/{sha}/check-runs", conditional=True)
        runs = []
        for r in data.get("check_runs") or []:
            out = r.get("output") or {}
            parts = [str(out.get(k) or "").strip() for k in ("title", "summary", "text")]
            # A summary is often the text's first lines: each part once, unless another holds it whole.
            text = "\n".join(p for i, p in enumerate(parts) if p and not any(p in q for q in parts[i + 1:]))
            runs.append(CheckRun(id=int(r["id"]), name=str(r.get("name") or ""), done=r.get("status") == "completed",
                                 failed=r.get("conclusion") in ("failure", "timed_out", "cancelled",
                                                                "action_required"),
                                 url=str(r.get("html_url") or ""), text=text))
        return runs, changed

    def failure_text(self, run: CheckRun) -> str:
        notes = self._call("GET", f"/check-runs/{run.id}/annotations")[1]
        lines = [run.text.strip()] if run.text.strip() else []
        for a in notes or []:
            lines.append(f"{a.get('path')}:{a.get('start_line')}: {a.get('message')}")
        text = "\n".join(lines)
        return text if len(text) <= LOG_MOST else "…\n" + text[-LOG_MOST:]  # the end of a log says why

    def reviews(self, number: int) -> list[Review]:
        comments: dict[int, list[str]] = {}
        for c in self._call("GET", f"/pulls/{number}/comments", conditional=True)[1] or []:
            comments.setdefault(int(c.get("pull_request_review_id") or 0), []).append(
                f"{c.get('path')}:{c.get('line') or c.get('original_line') or '?'}: {c.get('body')}")
        return [Review(user=str((r.get("user") or {}).get("login") or ""), state=str(r.get("state") or ""),
                       body=str(r.get("body") or ""), comments=tuple(comments.get(int(r.get("id") or 0), ())))
                for r in self._call("GET", f"/pulls/{number}/reviews", conditional=True)[1] or []]

    # -- the wire ---------------------------------------------------------------------------------------------
    def _call(self, method: str, path: str, body: Any = None, *, conditional: bool = False) -> tuple[bool, Any]:
        """(changed, the answer's JSON); a conditional GET answered 304 gives the answer kept from before."""
        url = f"{self.api}/repos/{self.repository}{path}"
        headers = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28",
                   "User-Agent": "git-balanced", "Authorization": f"Bearer {self._token}"}
        kept = self._kept().get(url) if conditional else None
        if kept:
            headers["If-None-Match"] = kept["etag"]
        data = json.dumps(body).encode() if body is not None else None
        if data is not None:
            headers["Content-Type"] = "application/json"
        req = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=TIMEOUT) as r:
                raw, etag = r.read(), r.headers.get("ETag") or ""
        except urllib.error.HTTPError as e:
            if e.code == 304 and kept:
                return False, kept["body"]
            raise _refused(method, path, self.repository, e) from None
        except (urllib.error.URLError, OSError) as e:
            reason = getattr(e, "reason", e)
            raise ForgeError(f"{self.api} could not be reached ({reason}); nothing was changed there.",
                             hint="check the network, or the API base (GITHUB_API_URL), then run the command "
                                  "again.") from None
        answer = json.loads(raw) if raw else None
        if conditional and etag:
            self._keep(url, etag, answer)
        return True, answer

    def _kept(self) -> dict[str, Any]:
        if self._tags is None:
            return {}
        if self._kept_now is None:
            try:
                found = json.loads(self._tags.read_text())
            except (OSError, ValueError):
                found = {}
            self._kept_now = found if isinstance(found, dict) else {}
        return self._kept_now

    def _keep(self, url: str, etag: str, answer: Any) -> None:
        if self._tags is None:
            return
        tags = self._kept()
        tags.pop(url, None)
        tags[url] = {"etag": etag, "body": answer}
        self._kept_now = dict(list(tags.items())[-KEEP_TAGS:])
        write_json(self._tags, self._kept_now)


def _refused(method: str, path: str, repository: str, e: urllib.error.HTTPError) -> ForgeError:
    """The forge's own words for a refusal, and what to do about the usual ones."""
    try:
        said = json.loads(e.read() or b"{}")
    except ValueError:
        said = {}
    words = str(said.get("message") or e.reason)
    details = "; ".join(str(x.get("message") or x.get("code") or "") for x in said.get("errors") or []
                        if isinstance(x, dict))
    hint = {401: "the token was refused: sign in again (`gh auth login`) or set GH_TOKEN to a valid token.",
            403: "the token may lack the `repo` scope, or the rate limit was reached; see the forge's message.",
            404: f"check that {repository} is the repository ([pr] repository in .magnum/settings.toml) and "
                 "that the token can see it."}.get(e.code, "see the forge's message above.")
    return ForgeError(f"GitHub refused {method} {path.split('?')[0]} on {repository}: {e.code} {words}"
                      + (f" ({details})" if details else "") + ".", hint=hint)


def _pull(d: dict[str, Any]) -> PullRequest:
    state = PrState.MERGED if d.get("merged") or d.get("merged_at") else PrState(str(d.get("state") or "open"))
    head, base = d.get("head") or {}, d.get("base") or {}
    return PullRequest(number=int(d["number"]), state=state, title=str(d.get("title") or ""),
                       url=str(d.get("html_url") or ""), head_ref=str(head.get("ref") or ""),
                       head_sha=str(head.get("sha") or ""), base_ref=str(base.get("ref") or ""),
                       draft=bool(d.get("draft")), mergeable=d.get("mergeable"))
