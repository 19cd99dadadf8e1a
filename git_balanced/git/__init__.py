"""The one door to git: the git binary where hooks or porcelain matter, dulwich for fast object and ref work.

    run.py       the process door: git's environment, run_git, config files written in-process
    locks.py     a ref's stale `.lock`
    discover.py  the checkout holding a folder, found as git finds it
    refs.py      refs listed from git's own files
    core.py      a repository's folders, git run there, dulwich, compare-and-swap refs, listing once
    packing.py   how much lies loose, and packing refs and objects ourselves (automatic maintenance is off)
    repo.py      Repo: what the package asks git for, by name
"""

from git_balanced.git.core import RepoCore
from git_balanced.git.discover import found_in_process
from git_balanced.git.locks import STALE_LOCK_SECONDS, lock_age, remove_if_stale
from git_balanced.git.refs import BALANCED, OBJECT_ID, ZERO, PackedRefs, refs_from_files
from git_balanced.git.repo import MergeResult, Repo, TreeChange
from git_balanced.git.run import config_text, git_env, git_out, run_git, write_config

__all__ = [
    "BALANCED", "OBJECT_ID", "STALE_LOCK_SECONDS", "ZERO", "MergeResult", "PackedRefs", "Repo", "RepoCore",
    "TreeChange", "config_text", "found_in_process", "git_env", "git_out", "lock_age", "refs_from_files",
    "remove_if_stale", "run_git", "write_config"]
