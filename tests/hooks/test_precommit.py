"""The balanced hooks in `.pre-commit-config.yaml`: round-trip edits, idempotence, errors, installing."""

from __future__ import annotations

import difflib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from pre_commit.clientlib import load_config, load_manifest

from git_balanced.errors import BalancedError, SettingsError
from git_balanced.hooks.precommit import (
    HOOK_IDS,
    add_balanced_hooks,
    balanced_hooks,
    hooks_starting_at,
    install_hooks,
)
from tests.support.builders import git, make_repo

REPO_ROOT = Path(__file__).resolve().parents[2]
# What a file without `default_stages` gets where neither balanced hook type was installed: every stage but
# those two, under a comment saying why.
STAGES_ADDED = (
    "# Hooks without `stages:` run at these: every stage but the hook types\n"
    "# `git balanced init` installed first, so they run where they ran before it.\n"
    "default_stages: [commit-msg, post-checkout, post-commit, post-merge, post-rewrite, pre-commit, "
    "pre-rebase, prepare-commit-msg, manual]\n")

# Three layouts seen in the wild: pre-commit's own sample (4/0), indented dashes (4/2), flush dashes (2/0).
STYLES = {
    "sample": """\
# See https://pre-commit.com for more information
repos:
-   repo: https://github.com/pre-commit/pre-commit-hooks
    rev: v4.5.0  # pinned on purpose
    hooks:
    -   id: check-yaml
    -   id: end-of-file-fixer
        args: ['--fix', "lf"]
# disabled for now:
#   -   id: trailing-whitespace
""",
    "indented": """\
default_stages: [pre-commit]
repos:
  - repo: https://github.com/psf/black
    rev: "24.1.0"
    hooks:
      - id: black   # formats
        exclude: '^vendor/'
  # more to come
ci:
  autofix_prs: false
fail_fast: true
""",
    "flush": """\
---
repos:
- repo: local
  hooks:
  - id: lint
    name: lint
    entry: "make lint"
    language: system
""",
}


def config(root: Path) -> Path:
    return root / ".pre-commit-config.yaml"


def ids_in(path: Path) -> list[str]:
    """The hook ids as pre-commit itself reads the file (which also validates it)."""
    return [h["id"] for repo in load_config(str(path))["repos"] for h in repo["hooks"]]


def test_creates_the_file_with_both_hooks(tmp_path: Path) -> None:
    assert add_balanced_hooks(tmp_path) is True
    path = config(tmp_path)
    assert ids_in(path) == list(HOOK_IDS)
    local = load_config(str(path))["repos"][0]
    assert local["repo"] == "local"
    by_id = {h["id"]: h for h in local["hooks"]}
    for kind in ("pre-merge-commit", "pre-push"):
        hook = by_id[f"balanced-{kind}"]
        assert hook["entry"] == f"git balanced hook {kind}"
        assert hook["stages"] == [kind]
        assert (hook["pass_filenames"], hook["always_run"]) == (False, True)
    assert "language: system" in path.read_text()


def test_second_call_changes_nothing(tmp_path: Path) -> None:
    add_balanced_hooks(tmp_path)
    before = config(tmp_path).read_bytes()
    stamp = config(tmp_path).stat().st_mtime_ns
    assert add_balanced_hooks(tmp_path) is False
    assert config(tmp_path).read_bytes() == before
    assert config(tmp_path).stat().st_mtime_ns == stamp, "the file is not even rewritten"


@pytest.mark.parametrize("style", sorted(STYLES))
def test_existing_file_is_edited_in_place(tmp_path: Path, style: str) -> None:
    original = STYLES[style]
    config(tmp_path).write_text(original)
    assert add_balanced_hooks(tmp_path) is True
    edited = config(tmp_path).read_text()
    diff = list(difflib.ndiff(original.splitlines(), edited.splitlines()))
    removed = [line for line in diff if line.startswith("- ")]
    assert removed == [], "only lines added: comments, quotes, order and layout kept"
    assert ids_in(config(tmp_path))[-2:] == list(HOOK_IDS)
    assert add_balanced_hooks(tmp_path) is False
    assert config(tmp_path).read_text() == edited, "idempotent"


def test_new_entry_follows_the_files_layout(tmp_path: Path) -> None:
    config(tmp_path).write_text(STYLES["sample"])
    add_balanced_hooks(tmp_path)
    text = config(tmp_path).read_text()
    assert "\n-   repo: local\n    hooks:\n    -   id: balanced-pre-merge-commit\n" in text
    config(tmp_path).write_text(STYLES["indented"])
    add_balanced_hooks(tmp_path)
    text = config(tmp_path).read_text()
    assert "\n  - repo: local\n    hooks:\n      - id: balanced-pre-merge-commit\n" in text
    assert "ci:\n  autofix_prs: false\n" in text, "a nested mapping keeps its indent"


def test_closing_comments_stay_at_the_end_of_the_list(tmp_path: Path) -> None:
    config(tmp_path).write_text(STYLES["sample"])
    add_balanced_hooks(tmp_path)
    lines = config(tmp_path).read_text().splitlines()
    assert lines[-2:] == ["# disabled for now:", "#   -   id: trailing-whitespace"]
    config(tmp_path).write_text(STYLES["indented"])
    add_balanced_hooks(tmp_path)
    lines = config(tmp_path).read_text().splitlines()
    assert lines.index("  # more to come") == lines.index("ci:") - 1, "still closes the repos list"
    assert lines.index("  # more to come") > lines.index("      - id: balanced-pre-push")


def test_a_missing_hook_joins_the_one_already_there(tmp_path: Path) -> None:
    config(tmp_path).write_text("""\
repos:
  - repo: local
    hooks:
      - id: balanced-pre-push
        name: mine
        entry: git balanced hook pre-push
        language: system
        stages: [pre-push]
""")
    assert add_balanced_hooks(tmp_path) is True
    repos = load_config(str(config(tmp_path)))["repos"]
    assert len(repos) == 1, "no second local entry"
    assert [h["id"] for h in repos[0]["hooks"]] == ["balanced-pre-push", "balanced-pre-merge-commit"]
    assert repos[0]["hooks"][0]["name"] == "mine", "the user's own definition is kept"


def test_hooks_used_by_reference_count_as_present(tmp_path: Path) -> None:
    original = """\
default_stages: [pre-commit]
repos:
  - repo: https://example.com/git-balanced
    rev: v0.1.0
    hooks:
      - id: balanced-pre-merge-commit
      - id: balanced-pre-push
"""
    config(tmp_path).write_text(original)
    assert add_balanced_hooks(tmp_path) is False
    assert config(tmp_path).read_text() == original
    config(tmp_path).write_text(original.replace("default_stages: [pre-commit]\n", ""))
    assert add_balanced_hooks(tmp_path) is True, "an older init's file gets default_stages"
    assert config(tmp_path).read_text() == original.replace("default_stages: [pre-commit]\n", STAGES_ADDED)


def test_stage_less_hooks_stay_off_the_new_hook_types(tmp_path: Path) -> None:
    """pre-commit gives a hook without `stages:` the top-level default_stages (all stages without it)."""
    add_balanced_hooks(tmp_path)
    stages = load_config(str(config(tmp_path)))["default_stages"]
    assert "pre-push" not in stages and "pre-merge-commit" not in stages
    assert {"pre-commit", "commit-msg", "manual"} <= set(stages)
    text = config(tmp_path).read_text()
    assert text.startswith(STAGES_ADDED + "repos:\n"), text


@pytest.mark.parametrize("installed, stages", [
    (["pre-push"], "pre-merge-commit"),
    (["pre-merge-commit"], "pre-push"),
    (["pre-push", "pre-merge-commit"], None),
])
def test_hook_types_installed_before_keep_their_stage_less_hooks(
        tmp_path: Path, installed: list[str], stages: str | None) -> None:
    repo = make_repo(tmp_path / "repo")
    pre_commit = str(Path(sys.executable).parent / "pre-commit")
    config(repo).write_text("repos: []\n")
    for kind in installed:
        subprocess.run([pre_commit, "install", "-t", kind], cwd=repo, check=True, capture_output=True)
    add_balanced_hooks(repo)
    got = load_config(str(config(repo)))["default_stages"]
    if stages is None:
        assert "default_stages" not in config(repo).read_text(), "nothing to keep them from"
    else:
        assert stages not in got and all(k in got for k in installed), got


def test_default_install_hook_types_count_as_installed(tmp_path: Path) -> None:
    config(tmp_path).write_text("default_install_hook_types: [pre-commit, pre-push]\nrepos: []\n")
    add_balanced_hooks(tmp_path)
    got = load_config(str(config(tmp_path)))["default_stages"]
    assert "pre-push" in got and "pre-merge-commit" not in got


def test_hooks_whose_own_stages_name_a_new_hook_type_are_told(tmp_path: Path) -> None:
    config(tmp_path).write_text("""\
default_stages: [pre-commit, push]
repos:
  - repo: local
    hooks:
      - {id: plain, name: p, entry: 'true', language: system}
      - {id: pushy, name: p, entry: 'true', language: system, stages: [pre-push]}
      - {id: merging, name: m, entry: 'true', language: system, stages: [merge-commit, pre-commit]}
      - {id: early, name: e, entry: 'true', language: system, stages: [pre-commit]}
""")
    assert hooks_starting_at(tmp_path) == {
        "plain": ["pre-push"], "pushy": ["pre-push"], "merging": ["pre-merge-commit"]}
    assert hooks_starting_at(tmp_path / "nowhere") == {}


def test_the_users_own_default_stages_are_kept(tmp_path: Path) -> None:
    original = "# ours\ndefault_stages: [pre-commit, pre-push]  # on purpose\nrepos: []\n"
    config(tmp_path).write_text(original)
    assert add_balanced_hooks(tmp_path) is True
    text = config(tmp_path).read_text()
    assert text.startswith(original[:-len("repos: []\n")]), text
    assert load_config(str(config(tmp_path)))["default_stages"] == ["pre-commit", "pre-push"]


def test_line_endings_and_comment_only_files_are_kept(tmp_path: Path) -> None:
    config(tmp_path).write_bytes(b"# team config\r\nrepos:\r\n  - repo: local\r\n    hooks: []\r\n")
    add_balanced_hooks(tmp_path)
    data = config(tmp_path).read_bytes()
    assert data.startswith(b"# team config\r\n" + STAGES_ADDED.replace("\n", "\r\n").encode() + b"repos:\r\n")
    assert b"\n" not in data.replace(b"\r\n", b""), "every line ends in CRLF"
    other = tmp_path / "other"
    other.mkdir()
    config(other).write_text("# nothing yet\n")
    add_balanced_hooks(other)
    assert config(other).read_text().startswith("# nothing yet\n" + STAGES_ADDED + "repos:\n")
    assert ids_in(config(other)) == list(HOOK_IDS)


def test_mode_is_kept(tmp_path: Path) -> None:
    config(tmp_path).write_text("repos: []\n")
    os.chmod(config(tmp_path), 0o600)
    add_balanced_hooks(tmp_path)
    assert config(tmp_path).stat().st_mode & 0o777 == 0o600
    assert ids_in(config(tmp_path)) == list(HOOK_IDS), "an empty flow list becomes a block list"


@pytest.mark.parametrize("text, line, column", [
    ("repos:\n  - repo: local\n   hooks: []\n", 3, 4),
    ("repos: [\n", 2, 1),
    ("repos:\n  - repo: a\n    repo: b\n", 3, 5),
])
def test_broken_yaml_names_file_line_and_column(tmp_path: Path, text: str, line: int, column: int) -> None:
    config(tmp_path).write_text(text)
    with pytest.raises(SettingsError) as info:
        add_balanced_hooks(tmp_path)
    first = str(info.value).splitlines()[0]
    assert first.startswith(f"{config(tmp_path)} is not valid YAML at line {line}, column {column}: ")
    assert info.value.hint == f"fix line {line} of {config(tmp_path)}, then run `git balanced init` again"
    assert config(tmp_path).read_text() == text, "a broken file is left alone"


def test_wrong_shapes(tmp_path: Path) -> None:
    config(tmp_path).write_text("- repo: local\n")
    with pytest.raises(SettingsError) as info:
        add_balanced_hooks(tmp_path)
    assert str(info.value) == f"{config(tmp_path)}: the top level is not a mapping with a `repos:` key."
    config(tmp_path).write_text("repos: local\n")
    with pytest.raises(SettingsError) as info:
        add_balanced_hooks(tmp_path)
    assert str(info.value) == f"{config(tmp_path)}: `repos` is not a list."


def test_hooks_by_reference_match_the_local_ones() -> None:
    manifest = load_manifest(str(REPO_ROOT / ".pre-commit-hooks.yaml"))
    local = {h["id"]: h for h in balanced_hooks()}
    assert [h["id"] for h in manifest] == list(HOOK_IDS)
    for hook in manifest:
        mine = local[hook["id"]]
        kind = hook["id"].removeprefix("balanced-")
        assert hook["entry"] == f"git-balanced hook {kind}"
        assert hook["language"] == "python"
        assert (hook["stages"], hook["pass_filenames"], hook["always_run"]) == (
            mine["stages"], mine["pass_filenames"], mine["always_run"])


# --- installing ----------------------------------------------------------------------------------------


def test_install_writes_both_hook_scripts(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    add_balanced_hooks(repo)
    install_hooks(repo)
    hooks = repo / ".git" / "hooks"
    for kind in ("pre-merge-commit", "pre-push"):
        script = hooks / kind
        assert script.is_file() and os.access(script, os.X_OK), f"{kind} hook installed"
        assert "pre-commit" in script.read_text() and kind in script.read_text()
    assert not (hooks / "pre-commit").exists(), "only the two hook types asked for"
    install_hooks(repo)  # again: nothing breaks
    assert (hooks / "pre-push").is_file()


@pytest.mark.parametrize("scope", ["local", "global"])
def test_install_refuses_with_hooks_path_set(tmp_path: Path, scope: str) -> None:
    repo = make_repo(tmp_path / "repo")
    git(repo, "config", f"--{scope}", "core.hooksPath", ".githooks")
    with pytest.raises(BalancedError) as info:
        install_hooks(repo)
    assert str(info.value).startswith(f"core.hooksPath is set to .githooks (in the {scope} git config)")
    assert info.value.hint == (f"git config --{scope} --unset-all core.hooksPath, "
                               "then run `git balanced init` again; or `git balanced init --hooks git` "
                               "installs plain git hooks in .githooks")
    assert not (repo / ".git" / "hooks" / "pre-push").exists(), "nothing installed"


def test_install_finds_pre_commit_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path / "repo")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "pre-commit").symlink_to(Path(sys.executable).parent / "pre-commit")
    # An interpreter with no pre-commit beside it: the one on PATH is used.
    monkeypatch.setattr(sys, "executable", str(tmp_path / "elsewhere" / "python"))
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    install_hooks(repo)
    assert (repo / ".git" / "hooks" / "pre-push").is_file()


def test_install_without_pre_commit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path / "repo")
    git_dir = Path(shutil.which("git") or "/usr/bin/git").parent
    monkeypatch.setattr(sys, "executable", str(tmp_path / "elsewhere" / "python"))
    monkeypatch.setenv("PATH", str(git_dir))
    if (git_dir / "pre-commit").exists():
        pytest.skip("pre-commit sits next to git on this machine")
    with pytest.raises(BalancedError) as info:
        install_hooks(repo)
    assert str(info.value).startswith("pre-commit is not installed")
    assert info.value.hint == "pip install pre-commit"
