"""The one door to git: the git binary where hooks or porcelain matter, dulwich for fast object and ref work.

    run.py       the process door: git's environment, run_git, config files written in-process
    locks.py     a ref's stale `.lock`
    discover.py  the checkout holding a folder, found as git finds it
    peek.py      a checkout's branch and one ref's id, read from git's files with os alone (for the hooks)
    catfile.py   objects read through one `git cat-file --batch`, started with os alone (for the pre-push hook)
    refs.py      refs listed from git's own files
    objects.py   one dulwich object store per objects folder, shared by the process's Repos and threads
    core.py      a repository's folders, git run there, dulwich, compare-and-swap refs, listing once
    packing.py   how much lies loose, and packing refs and objects ourselves (automatic maintenance is off)
    repo.py      Repo: what the package asks git for, by name
    handback.py  a worker's branch brought back from its copy here in two git processes, not a fetch of six
    forkdiff.py  the change since a branch forked, in one process (`diff-tree --merge-base`)
    contains.py  which of some refs hold a commit, or are merged into one, in one process; branches checked out
    loosesize.py objects' sizes read from their loose files' headers, `cat-file` for the rest
    freshcopy.py refs written into a repository git has just made and nothing else has seen
    initseed.py  the repositories of one folder after the first laid out as git laid out the first

Each name below is imported from its module when first asked for: a hook that only peeks (peek.py) does not
load the rest of the door (pathlib, subprocess, dataclasses, dulwich's shims).
"""

TYPE_CHECKING = False
if TYPE_CHECKING:
    from git_balanced.git.core import RepoCore
    from git_balanced.git.discover import found_in_process
    from git_balanced.git.locks import STALE_LOCK_SECONDS, lock_age, remove_if_stale
    from git_balanced.git.refs import BALANCED, OBJECT_ID, ZERO, PackedRefs, refs_from_files
    from git_balanced.git.repo import MergeResult, Repo, TreeChange
    from git_balanced.git.run import config_text, git_env, git_out, run_git, write_config

# Each name this package gives, and the module of it that defines it.
_FROM = {
    "RepoCore": "core", "found_in_process": "discover", "STALE_LOCK_SECONDS": "locks", "lock_age": "locks",
    "remove_if_stale": "locks", "BALANCED": "refs", "OBJECT_ID": "refs", "ZERO": "refs", "PackedRefs": "refs",
    "refs_from_files": "refs", "MergeResult": "repo", "Repo": "repo", "TreeChange": "repo", "config_text": "run",
    "git_env": "run", "git_out": "run", "run_git": "run", "write_config": "run"}

__all__ = [
    "BALANCED", "OBJECT_ID", "STALE_LOCK_SECONDS", "ZERO", "MergeResult", "PackedRefs", "Repo", "RepoCore",
    "TreeChange", "config_text", "found_in_process", "git_env", "git_out", "lock_age", "refs_from_files",
    "remove_if_stale", "run_git", "write_config"]


def __getattr__(name: str) -> object:
    """One of __all__, from its module (imported now, once)."""
    module = _FROM.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
