"""The chief's projects: its folder made on first use, each change a commit on its ref, bad input refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from git_balanced.chief import home
from git_balanced.chief.projects import REF, Project, add_project, list_projects, parse_where, remove_project
from git_balanced.errors import BalancedError
from tests.support.builders import make_repo


def test_projects_are_added_listed_and_removed_as_commits_in_the_chiefs_repository(tmp_path: Path,
                                                                                   sealed: Path) -> None:
    shop = make_repo(tmp_path / "shop")
    (shop / "sub").mkdir()
    app = make_repo(tmp_path / "Mobile App")
    assert list_projects() == []
    assert home.folder() == sealed / ".local" / "share" / "git-balanced" / "chief"
    assert (home.folder() / ".git").is_dir(), "the chief's folder is a repository, made on first use"

    assert add_project(str(shop / "sub")) == Project("shop", None, str(shop))
    assert add_project(str(app), name="ios") == Project("ios", None, str(app))
    assert [p.name for p in list_projects()] == ["ios", "shop"]

    remove_project("ios")
    assert list_projects() == [Project("shop", None, str(shop))]
    repo = home.repo()
    tip = repo.read_ref(REF)
    assert tip and repo.subject(tip) == f"Removed project ios ({app})"
    assert len(repo.commits(tip)) == 3, "one commit a change"


def test_bad_input_is_one_clear_refusal(tmp_path: Path) -> None:
    shop = make_repo(tmp_path / "shop")
    plain = tmp_path / "plain"
    plain.mkdir()
    add_project(str(shop))
    cases = {
        str(plain): "is not a git repository",
        str(tmp_path / "missing"): "is not a folder",
        str(shop): "is a project already, named 'shop'",
        f"local:{shop}": "is a project already, named 'shop'",
        "nowhere:src/app": "There is no machine named 'nowhere'",
    }
    for where, said in cases.items():
        with pytest.raises(BalancedError, match=said):
            add_project(where, name="other")
    with pytest.raises(BalancedError, match="There is a project named 'shop' already"):
        add_project(str(make_repo(tmp_path / "b" / "shop")))
    with pytest.raises(BalancedError, match="is not a project name"):
        add_project(str(shop), name="a.b")
    with pytest.raises(BalancedError, match="There is no project named 'web'"):
        remove_project("web")
    assert [p.name for p in list_projects()] == ["shop"], "nothing was lost"


def test_projects_commands_and_the_offer_of_init(tmp_path: Path) -> None:
    from tests.support.cli import balanced

    shop, app = make_repo(tmp_path / "shop"), make_repo(tmp_path / "app")
    first = balanced(shop, "init", "--check", "true", "--hooks", "git")
    assert first.code == 0 and "projects" not in first.out, "no chief's folder yet: nothing is offered"
    added = balanced(app, "init", "--check", "true", "--hooks", "git", "--project")
    assert added.out.splitlines()[-1] == "Added it to the chief's projects as app: `git balanced now --all` shows " \
                                         "its rows with the others'.", added.out
    again = balanced(shop, "init", "--check", "true", "--hooks", "git")
    assert again.out.splitlines()[-1] == f"It is not among the chief's projects: `git balanced projects add {shop}` " \
                                         "adds it (or `init --project`).", again.out
    assert balanced(tmp_path, "projects", "add", str(shop), "--name", "shop").code == 0
    listed = balanced(tmp_path, "projects")
    assert listed.out.splitlines() == ["project  machine  path", f"app      local    {app}",
                                       f"shop     local    {shop}"], listed.out
    dup = balanced(tmp_path, "projects", "add", str(app))
    assert (dup.code, dup.out) == (1, "") and dup.err == (
        f"error: {app} is a project already, named 'app'.\n"
        "hint: `git balanced projects rm app` first to add it under another name.\n"), dup.err
    from git_balanced.cli import completions

    assert completions(["projects", "rm", ""]) == ["app", "shop"], "`projects rm <TAB>` offers the projects"
    gone = balanced(tmp_path, "projects", "rm", "app")
    assert gone.out == f"Removed project app ({app}); the repository itself is untouched.\n"
    assert [p["name"] for p in json.loads(balanced(tmp_path, "projects", "--json").out)["projects"]] \
        == ["shop"]


def test_where_a_project_is_read_from_path_or_machine_and_path() -> None:
    assert parse_where("~/src/app") == (None, "~/src/app")
    assert parse_where("local:/srv/app") == (None, "/srv/app")
    assert parse_where("box:~/src/app") == ("box", "src/app"), "a path there starts from the home folder"
    assert parse_where("box:/srv/app") == ("box", "/srv/app")
    assert parse_where("./a:b/c") == (None, "./a:b/c"), "a colon after a slash is part of the path"



def test_a_tip_without_the_whole_list_is_read_by_folding_the_chain(tmp_path: Path) -> None:
    from git_balanced.chief.projects import ADDED
    from git_balanced.state.refs import append

    shop, app, web = (make_repo(tmp_path / n) for n in ("shop", "app", "web"))
    add_project(str(shop))
    # a change written without the list after it (as a merge of two clones' chains has none)
    append(home.repo(), REF, ADDED, "Added project app", {"name": "app", "machine": None, "path": str(app)})
    assert [p.name for p in list_projects()] == ["app", "shop"]
    add_project(str(web))
    assert [p.name for p in list_projects()] == ["app", "shop", "web"], "the next change keeps the whole list again"
