"""The GIT_* variables a worker's own commit keeps (shipped/pretool.py, read on its own) are the runner's."""

from git_balanced.shipped import pretool, runfiles


def test_a_codex_workers_own_commit_keeps_what_the_runners_git_keeps() -> None:
    assert pretool.COMMITTER_ENV == runfiles.KEEP_GIT - {"GIT_EDITOR"}, "GIT_EDITOR is set to false there"
