"""The scripted forge answers in GitHub's shapes, from a real bare repository, with ETags."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from tests.support.builders import commit, git, make_remote, make_repo
from tests.support.forge import TOKEN, Forge, Run, start


def _call(forge: Forge, method: str, path: str, body: Any = None, etag: str = "") -> tuple[int, Any, str]:
    req = urllib.request.Request(forge.url + path, method=method,
                                 data=json.dumps(body).encode() if body is not None else None,
                                 headers={"Authorization": f"Bearer {TOKEN}", **({"If-None-Match": etag} if etag
                                                                                  else {})})
    try:
        with urllib.request.urlopen(req) as r:
            data = r.read()
            return r.status, json.loads(data) if data else None, r.headers.get("ETag", "")
    except urllib.error.HTTPError as e:
        data = e.read()
        return e.code, json.loads(data) if data else None, e.headers.get("ETag", "")


def test_a_pull_request_is_opened_on_a_pushed_branch_and_its_checks_are_scripted(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    bare = make_remote(tmp_path, repo)
    git(repo, "switch", "-q", "-c", "feature")
    sha = commit(repo, {"a.txt": "a\n"}, "add a")
    git(repo, "push", "-q", "origin", "feature")
    forge, server = start(bare, "ada/widgets")
    try:
        code, pr, _ = _call(forge, "POST", "/repos/ada/widgets/pulls", {"head": "feature", "base": "main",
                                                                        "title": "Add a", "body": "b"})
        assert code == 201 and pr["number"] == 1 and pr["head"]["sha"] == sha and pr["mergeable"] is True
        assert _call(forge, "POST", "/repos/ada/widgets/pulls", {"head": "feature", "base": "main"})[0] == 422
        code, listed, _ = _call(forge, "GET", "/repos/ada/widgets/pulls?head=ada:feature&state=open")
        assert [p["number"] for p in listed] == [1]
        forge.checks(sha, Run("tests", "failure", "FAILED test_a", [{"path": "a.txt", "start_line": 1,
                                                                      "end_line": 1, "message": "a is wrong"}]))
        code, runs, etag = _call(forge, "GET", f"/repos/ada/widgets/commits/{sha}/check-runs")
        run = runs["check_runs"][0]
        assert (run["conclusion"], run["output"]["text"]) == ("failure", "FAILED test_a")
        assert _call(forge, "GET", f"/repos/ada/widgets/commits/{sha}/check-runs", etag=etag)[0] == 304, \
            "an unchanged answer costs a 304"
        code, notes, _ = _call(forge, "GET", f"/repos/ada/widgets/check-runs/{run['id']}/annotations")
        assert notes[0]["message"] == "a is wrong"
        forge.review(1, "CHANGES_REQUESTED", "please rename", (("a.txt", 1, "call it b"),))
        assert _call(forge, "GET", "/repos/ada/widgets/pulls/1/reviews")[1][0]["state"] == "CHANGES_REQUESTED"
        assert _call(forge, "GET", "/repos/ada/widgets/pulls/1/comments")[1][0]["body"] == "call it b"
        git(repo, "switch", "-q", "main")
        commit(repo, {"a.txt": "other\n"}, "conflicting a")
        git(repo, "push", "-q", "origin", "main")
        assert _call(forge, "GET", "/repos/ada/widgets/pulls/1")[1]["mergeable_state"] == "dirty", \
            "a base that changed the same lines makes it conflict"
        req = urllib.request.Request(forge.url + "/repos/ada/widgets/pulls/1")
        try:
            urllib.request.urlopen(req)
        except urllib.error.HTTPError as e:
            assert e.code == 401
        assert forge.seen[-1].status == 401 and not forge.seen[-1].authorized
    finally:
        server.shutdown()
        server.server_close()
