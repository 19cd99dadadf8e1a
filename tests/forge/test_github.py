"""The GitHub client against the scripted forge: the calls, conditional requests, refusals, and the token
kept out of every message; where the repository, the API base and the token come from."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_balanced.errors import BalancedError
from git_balanced.forge import where
from git_balanced.forge.base import ForgeError, checks_state, decision
from git_balanced.forge.github import GitHub
from git_balanced.vocab import ChecksState, PrState
from tests.support.builders import commit, git, make_repo
from tests.support.forge import TOKEN, Forge, Run


def _pushed(tmp: Path, forge: Forge, branch: str) -> tuple[Path, str]:
    repo = make_repo(tmp / "repo")
    if not (forge.bare / "HEAD").exists():
        git(tmp, "init", "-q", "--bare", str(forge.bare))
    git(repo, "remote", "add", "origin", str(forge.bare))
    git(repo, "push", "-q", "-f", "origin", "main")
    git(repo, "switch", "-q", "-c", branch)
    sha = commit(repo, {f"{branch}.txt": "x\n"}, f"add {branch}")
    git(repo, "push", "-q", "-f", "origin", branch)
    return repo, sha


def test_open_find_update_and_read_a_pull_request(tmp_path: Path, forge_server: Forge) -> None:
    _, sha = _pushed(tmp_path, forge_server, "feat-a")
    gh = GitHub(forge_server.url, "ada/widgets", TOKEN, tags=tmp_path / "tags.json")
    assert gh.find_open("feat-a") is None
    pr = gh.open(head="feat-a", base="main", title="Add a", body="what landed", draft=True)
    assert (pr.state, pr.head_sha, pr.draft, pr.conflicts) == (PrState.OPEN, sha, True, False)
    assert gh.find_open("feat-a") == pr, "the open one is found by its branch"
    assert gh.update(pr.number, title="Add a, better", body="b").title == "Add a, better"
    first, changed = gh.pull(pr.number)
    again, changed_again = gh.pull(pr.number)
    assert changed and not changed_again and again == first, "unchanged, it is a 304 and the answer kept"
    assert forge_server.seen[-1].status == 304
    forge_server.checks(sha, Run("lint", "success"), Run("tests", "failure", "FAILED test_a: 1 != 2",
                                                         [{"path": "a.py", "start_line": 3, "message": "boom"}]))
    runs, _ = gh.checks(sha)
    assert checks_state(runs) == ChecksState.FAILING
    failed = [r for r in runs if r.failed][0]
    assert gh.failure_text(failed).splitlines()[-2:] == ["FAILED test_a: 1 != 2", "a.py:3: boom"]
    forge_server.review(pr.number, "CHANGES_REQUESTED", "please rename", (("a.py", 3, "call it b"),))
    reviews = gh.reviews(pr.number)
    assert reviews[0].comments == ("a.py:3: call it b",) and decision(reviews) == "changes requested"
    assert TOKEN not in repr(gh)


def test_a_refusal_names_the_call_and_what_to_do_and_never_the_token(forge_server: Forge) -> None:
    gh = GitHub(forge_server.url, "ada/widgets", "ghp_wrong_token_value_1234")
    with pytest.raises(ForgeError) as caught:
        gh.pull(1)
    said = caught.value.message + (caught.value.hint or "")
    assert "401 Bad credentials" in said and "gh auth login" in said and "ghp_wrong" not in said
    gone = GitHub("http://127.0.0.1:9", "ada/widgets", TOKEN)
    with pytest.raises(ForgeError, match="could not be reached"):
        gone.pull(1)


@pytest.mark.parametrize(("url", "found"), [
    ("git@github.com:ada/widgets.git", ("github.com", "ada/widgets")),
    ("https://github.com/ada/widgets", ("github.com", "ada/widgets")),
    ("ssh://git@ghe.example.com:2222/team/tool.git", ("ghe.example.com", "team/tool")),
    ("/srv/git/widgets.git", None),
    ("https://github.com/ada", None),
])
def test_the_repository_comes_from_the_remote_url(url: str, found: tuple[str, str] | None) -> None:
    assert where.parse_remote_url(url) == found


def test_the_api_base_follows_the_host_unless_github_api_url_is_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_API_URL", raising=False)
    assert where.api_base("github.com") == "https://api.github.com"
    assert where.api_base("ghe.example.com") == "https://ghe.example.com/api/v3"
    monkeypatch.setenv("GITHUB_API_URL", "http://127.0.0.1:1234/")
    assert where.api_base("github.com") == "http://127.0.0.1:1234"


def test_the_token_comes_from_the_environment_or_gh(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    monkeypatch.setenv("GH_TOKEN", "t1")
    assert where.token() == "t1"
    monkeypatch.delenv("GH_TOKEN")
    monkeypatch.setenv("GITHUB_TOKEN", "t2")
    assert where.token() == "t2"
    monkeypatch.delenv("GITHUB_TOKEN")
    monkeypatch.setenv("PATH", str(tmp_path))  # no gh here
    with pytest.raises(BalancedError, match="gh\\) is not installed") as caught:
        where.token()
    assert "gh auth login" in (caught.value.hint or "")
    fake = tmp_path / "gh"
    fake.write_text("#!/bin/sh\necho t3\n")
    fake.chmod(0o755)
    assert where.token() == "t3", "gh auth token, when gh is there"
