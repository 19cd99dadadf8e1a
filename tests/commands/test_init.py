"""`git balanced init` in real repositories: the stack's setup and check taken from templates/settings/ when
no --check is given (and said), and those commands run for real."""

from __future__ import annotations

import json
import shutil
import tomllib
from pathlib import Path

import pytest

from git_balanced.bundled import template_text
from git_balanced.commands.init import set_keys
from git_balanced.settings import load_settings_text
from tests.support.builders import git, make_repo
from tests.support.cli import balanced

STACK_FILES = {"python": "pyproject.toml", "node": "package.json", "go": "go.mod"}
NAMES = {"python": "Python", "node": "Node.js", "go": "Go"}


def stack_worktree(stack: str) -> dict[str, str]:
    return tomllib.loads(template_text(f"settings/{stack}.toml"))["worktree"]


def written(repo: Path) -> dict[str, str | None]:
    settings = load_settings_text((repo / ".magnum" / "settings.toml").read_text(), "settings")
    return {"setup": settings.worktree.setup, "check": settings.worktree.check}


@pytest.mark.parametrize("stack", sorted(STACK_FILES))
def test_a_known_stack_gets_its_setup_and_check(tmp_path: Path, stack: str) -> None:
    marker = STACK_FILES[stack]
    repo = make_repo(tmp_path / stack, {marker: "{}\n" if marker == "package.json" else "\n"})
    r = balanced(repo, "init", "--hooks", "git")
    want = stack_worktree(stack)
    assert r.code == 0, r
    assert r.out.startswith(f"Wrote .magnum/settings.toml with the {NAMES[stack]} setup and check "
                            f"(from templates/settings/{stack}.toml, as {marker} is here):\n"
                            f"  setup: {want['setup']}\n  check: {want['check']}\n"), r.out
    assert written(repo) == want
    text = (repo / ".magnum" / "settings.toml").read_text()
    assert "[balanced]" in text and 'agent = "claude"' in text, "the rest of the commented template as ever"


def test_check_given_takes_no_stack(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"pyproject.toml": "\n"})
    r = balanced(repo, "init", "--hooks", "git", "--check", "make test")
    assert r.code == 0 and r.out.startswith("Wrote .magnum/settings.toml.\n"), r
    assert written(repo) == {"setup": None, "check": "make test"}


def test_a_setup_given_keeps_the_stacks_check(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"go.mod": "module example.com/x\n"})
    r = balanced(repo, "init", "--hooks", "git", "--setup", "make deps")
    assert r.code == 0 and "  setup: make deps\n" in r.out, r
    assert written(repo) == {"setup": "make deps", "check": stack_worktree("go")["check"]}


def test_two_stacks_the_first_is_taken_and_said(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"package.json": "{}\n", "go.mod": "module example.com/x\n"})
    r = balanced(repo, "init", "--hooks", "git")
    assert r.code == 0 and "the Node.js setup and check (from templates/settings/node.toml, as package.json " \
        "and go.mod are here, and package.json comes first):" in r.out, r
    assert written(repo) == stack_worktree("node")


def test_no_stack_leaves_the_commands_commented(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    r = balanced(repo, "init", "--hooks", "git")
    assert r.code == 0 and r.out.startswith("Wrote .magnum/settings.toml with no check command: no known stack "
                                            "is here"), r
    assert "Add one: `git balanced init --check 'CMD'`" in r.out, "how to add one, in words that work"
    assert written(repo) == {"setup": None, "check": None}
    assert '# check = "pytest -q"' in (repo / ".magnum" / "settings.toml").read_text()
    r = balanced(repo, "init", "--hooks", "git", "--check", "make test")
    assert r.code == 0 and written(repo) == {"setup": None, "check": "make test"}, r


def test_check_on_existing_settings_sets_that_key_and_keeps_the_rest(tmp_path: Path) -> None:
    before = ('# ours: keep this\n[worktree]\nsetup = "make deps"  # deps first\ncheck = "true"\n'
              '# protect = ["tests/**"]\n\n[balanced]\nagent = "shell"   # no account here\ncap = 4\n')
    repo = make_repo(tmp_path / "r", {".magnum/settings.toml": before})
    r = balanced(repo, "init", "--hooks", "git", "--check", "make test")
    assert r.code == 0 and r.out.startswith("Set check = 'make test' under [worktree] in .magnum/settings.toml;"), r
    assert (repo / ".magnum" / "settings.toml").read_text() == before.replace('check = "true"', 'check = "make test"')


@pytest.mark.parametrize(("before", "after"), [
    ('[balanced]\ncap = 2\n', '[balanced]\ncap = 2\n\n[worktree]\ncheck = "make test"\n'),
    ('[worktree]\n# check = "pytest -q"\n', '[worktree]\ncheck = "make test"\n'),
    ('[worktree]\nsetup = "x"\n[balanced]\n', '[worktree]\nsetup = "x"\ncheck = "make test"\n[balanced]\n'),
    ('[ worktree ]   # the tree\n  check="a"\n', '[ worktree ]   # the tree\n  check="make test"\n'),
])
def test_the_check_key_goes_where_it_belongs(tmp_path: Path, before: str, after: str) -> None:
    repo = make_repo(tmp_path / "r", {".magnum/settings.toml": before})
    assert balanced(repo, "init", "--hooks", "git", "--check", "make test").code == 0
    assert (repo / ".magnum" / "settings.toml").read_text() == after


# What a line-by-line edit got wrong and the TOML editor gets right: (settings before, after `--check 'make test'`).
SHAPES = {
    "the key dotted": ('worktree.check = "a"  # fast\n[balanced]\ncap = 1\n',
                       'worktree.check = "make test"  # fast\n[balanced]\ncap = 1\n'),
    "added beside a dotted key": ('worktree.setup = "x"\n[balanced]\ncap = 1\n',
                                  'worktree.setup = "x"\nworktree.check = "make test"\n[balanced]\ncap = 1\n'),
    "the table inline": ('worktree = { check = "a", setup = "b" }\n',
                         'worktree = { check = "make test", setup = "b" }\n'),
    "a header with a comment": ('[worktree]  # ours [x]\ncheck = "a"  # kept\n',
                                '[worktree]  # ours [x]\ncheck = "make test"  # kept\n'),
    "a header spaced": ('[ worktree ]\n# check = "pytest -q"\n[balanced]\n',
                        '[ worktree ]\ncheck = "make test"\n[balanced]\n'),
    "CRLF": ('[worktree]\r\nsetup = "x"\r\n\r\n[balanced]\r\ncap = 1\r\n',
             '[worktree]\r\nsetup = "x"\r\ncheck = "make test"\r\n\r\n[balanced]\r\ncap = 1\r\n'),
    "CRLF, a new table": ('[balanced]\r\ncap = 1\r\n',
                          '[balanced]\r\ncap = 1\r\n\r\n[worktree]\r\ncheck = "make test"\r\n'),
    "a multi-line value": ('[worktree]\ncheck = """\nmake\\\n  test\n"""\nsetup = "x"\n',
                           '[worktree]\ncheck = "make test"\nsetup = "x"\n'),
    "a header-like line in a string": ('[worktree]\nsetup = """\n[balanced]\ncheck = 1\n"""\n',
                                       '[worktree]\nsetup = """\n[balanced]\ncheck = 1\n"""\ncheck = "make test"\n'),
    "an indented example": ('[worktree]\n  # Decides landing.\n  # check = "pytest -q"\n  setup = "x"\n',
                            '[worktree]\n  # Decides landing.\n  check = "make test"\n  setup = "x"\n'),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_the_key_is_set_whatever_the_shape_of_the_file(shape: str) -> None:
    before, after = SHAPES[shape]
    assert load_settings_text(before, "before").worktree.check != "make test"
    text = set_keys(before, "worktree", {"check": "make test"})
    assert text == after
    assert load_settings_text(text, "after").worktree.check == "make test"


def test_a_check_over_several_lines_is_set_in_a_crlf_file(tmp_path: Path) -> None:
    before = ('# ours\r\n[ worktree ]  # the tree\r\ncheck = """\r\nmake \\\r\n  test\r\n"""  # slow\r\n\r\n'
              '[balanced]\r\ncap = 2\r\n')
    repo = make_repo(tmp_path / "r", {".magnum/settings.toml": before})
    r = balanced(repo, "init", "--hooks", "git", "--check", "make lint", "--setup", "make deps")
    assert r.code == 0, r
    assert (repo / ".magnum" / "settings.toml").read_bytes().decode() == \
        ('# ours\r\n[ worktree ]  # the tree\r\ncheck = "make lint"  # slow\r\nsetup = "make deps"\r\n\r\n'
         '[balanced]\r\ncap = 2\r\n')


@pytest.mark.parametrize(("before", "said"), [
    ('[[worktree]]\ncheck = "a"\n', "`worktree` in .magnum/settings.toml is not a table, so it cannot take check"),
    ('worktree = "make"\n', "`worktree` in .magnum/settings.toml is not a table, so it cannot take check"),
    ('[worktree\ncheck = "a"\n', ".magnum/settings.toml is not valid TOML at line 1"),
    ('[worktree]\ncheck = "caf\xe9"\n'.encode("latin-1"), ".magnum/settings.toml is not UTF-8 text"),
])
def test_what_cannot_be_set_is_refused_and_the_file_kept(tmp_path: Path, before: str | bytes, said: str) -> None:
    repo = make_repo(tmp_path / "r")
    (repo / ".magnum").mkdir()
    (repo / ".magnum" / "settings.toml").write_bytes(before if isinstance(before, bytes) else before.encode())
    r = balanced(repo, "init", "--hooks", "git", "--check", "make lint")
    assert r.code == 1 and said in r.err and "Traceback" not in r.err, r
    kept = (repo / ".magnum" / "settings.toml").read_bytes()
    assert kept == (before if isinstance(before, bytes) else before.encode())


def test_check_on_existing_settings_keeps_the_file_s_mode(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {".magnum/settings.toml": '[worktree]\ncheck = "true"\n'})
    target = repo / ".magnum" / "settings.toml"
    target.chmod(0o640)
    assert balanced(repo, "init", "--hooks", "git", "--check", "make test").code == 0
    assert target.read_text() == '[worktree]\ncheck = "make test"\n' and target.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in target.parent.iterdir() if p.name.endswith(".tmp")] == []


def test_agent_on_existing_settings_is_refused_naming_the_keys(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {".magnum/settings.toml": "[worktree]\n"})
    r = balanced(repo, "init", "--hooks", "git", "--agent", "codex")
    assert r.code == 1 and "set `agent` and `model` under [balanced]" in r.err, r


def test_agent_shell_writes_no_agent_table(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    assert balanced(repo, "init", "--hooks", "git", "--agent", "shell", "--check", "true").code == 0
    text = (repo / ".magnum" / "settings.toml").read_text()
    assert not [ln for ln in text.splitlines() if ln.startswith("[agents")], text
    settings = load_settings_text(text, "settings")
    assert settings.agents.model_fields_set == set() and settings.balanced.model is None
    from git_balanced.machines.prepare.agents_probe import configured_agents

    assert configured_agents(settings) == [], "ready installs no agent for it"
    claude = make_repo(tmp_path / "c")
    assert balanced(claude, "init", "--hooks", "git", "--check", "true").code == 0
    assert "\n[agents.claude]\n" in (claude / ".magnum" / "settings.toml").read_text(), "claude's ladder as ever"


def test_existing_settings_are_kept_whatever_the_stack(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"pyproject.toml": "\n", ".magnum/settings.toml": '[worktree]\ncheck = "true"\n'})
    r = balanced(repo, "init", "--hooks", "git")
    assert r.code == 0 and r.out.startswith("Kept .magnum/settings.toml as it is.\n"), r
    assert written(repo) == {"setup": None, "check": "true"}


def checked(repo: Path) -> str:
    """Commit the settings init wrote, approve them, and run the check for real; its output."""
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "git balanced settings")
    assert balanced(repo, "allow", "--yes").code == 0
    r = balanced(repo, "check")
    assert r.code == 0, r
    return r.out + r.err


def test_the_node_commands_run(tmp_path: Path) -> None:
    if shutil.which("npm") is None:
        pytest.skip("needs npm")
    package = {"name": "sum", "version": "1.0.0", "private": True, "scripts": {"test": "node test.js"}}
    lock = {"name": "sum", "version": "1.0.0", "lockfileVersion": 3, "requires": True,
            "packages": {"": {"name": "sum", "version": "1.0.0"}}}
    repo = make_repo(tmp_path / "sum", {
        "package.json": json.dumps(package), "package-lock.json": json.dumps(lock), ".gitignore": "node_modules/\n",
        "sum.js": "module.exports = (a, b) => a + b;\n",
        "test.js": "require('assert').strictEqual(require('./sum.js')(1, 2), 3);\n"})
    assert balanced(repo, "init", "--hooks", "git").code == 0
    assert "Check passed on HEAD" in checked(repo)


@pytest.mark.skipif(shutil.which("go") is None, reason="needs go")
def test_the_go_commands_run(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "sum", {
        "go.mod": "module example.com/sum\n\ngo 1.19\n",
        "sum.go": "package sum\n\nfunc Sum(a, b int) int { return a + b }\n",
        "sum_test.go": 'package sum\n\nimport "testing"\n\nfunc TestSum(t *testing.T) {\n'
                       '\tif Sum(1, 2) != 3 {\n\t\tt.Fatal("1+2")\n\t}\n}\n'})
    assert balanced(repo, "init", "--hooks", "git").code == 0
    assert "Check passed on HEAD" in checked(repo)


@pytest.mark.install
def test_the_python_commands_run(tmp_path: Path) -> None:
    """The setup makes a virtualenv in the copy and installs the project and pytest into it (slow: pip)."""
    repo = make_repo(tmp_path / "pricing", {
        "pyproject.toml": '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n\n'
                          '[project]\nname = "pricing"\nversion = "0.1.0"\n',
        ".gitignore": ".venv/\n",
        "pricing/__init__.py": "def total(prices):\n    return sum(prices)\n",
        "tests/test_total.py": "from pricing import total\n\n\ndef test_total():\n    assert total([1, 2]) == 3\n"})
    assert balanced(repo, "init", "--hooks", "git").code == 0
    assert "Check passed on HEAD" in checked(repo)
