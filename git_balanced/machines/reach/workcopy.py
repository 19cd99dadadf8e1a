"""This machine's copies of a lead repository: where local workers' worktrees, and the check's scratch
worktrees, belong (DESIGN §5).

A copy is a repository with nothing checked out, `~/.balanced/copies/<repository>-<hash>-<kind>`, that
borrows the lead's objects through `.git/objects/info/alternates` (what `git clone --shared` writes): made
once, in milliseconds whatever the repository's size. Whatever runs in a worktree of a copy moves
the copy's refs, notes, config and hooks, never the lead's. The lead sets the base (and an earlier attempt's
branch) in the copy per job and fetches exactly the worker's branch back, as from an SSH machine.

Workers get a copy per branch (`…-workers/<branch>`), which a fenced worker alone may write (shipped/pen.py):
one piece cannot create or move another piece's branch. Whatever a copy holds, the lead sets the branch
there from its own record before each start, unless a worktree holds it.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from git_balanced.errors import BalancedError
from git_balanced.files import Flock, write_atomic_bytes
from git_balanced.git import Repo, freshcopy, handback, initseed, peek, run_git

WORKERS = "workers"
CHECKS = "checks"  # the check runs a branch's own code: it gets a copy of its own, apart from the workers'
# What a worker's commit needs from the lead's own config: who commits, and how.
CARRIED_CONFIG = ("user.name", "user.email", "commit.gpgSign", "user.signingKey", "gpg.format")


def path(repo: Repo, kind: str = WORKERS) -> Path:
    """`~/.balanced/copies/<repository>-<hash>-<kind>`: beside the worktrees, outside any `.git`. For the
    workers it is the folder of their copies, one per branch (`for_branch`)."""
    home = repo.worktrees_home()
    return home.parent.parent / "copies" / f"{home.name}-{kind}"


def for_branch(repo: Repo, branch: str) -> Path:
    """The workers' copy of one branch: `…-workers/<branch, its slashes as +>`."""
    return path(repo) / branch.replace("/", "+")


def copy_of(repo: Repo, worktree: Path) -> Path | None:
    """The workers' copy a worktree belongs to, read from its `.git` file (no git run in a worker's folder),
    or None when it is no worktree of one."""
    try:
        text = (worktree / ".git").read_text(encoding="utf-8")
    except OSError:
        return None
    gitdir = Path(text.removeprefix("gitdir:").strip()) if text.startswith("gitdir:") else None
    # <copy>/.git/worktrees/<name>
    if gitdir is None or gitdir.parent.name != "worktrees" or gitdir.parent.parent.name != ".git":
        return None
    copy = gitdir.parent.parent.parent
    return copy if copy.parent.resolve() == path(repo).resolve() else None


def git_dir(copy: Path) -> Path:
    """The copy's git folder, which its worktrees share."""
    return copy / ".git"


def ensure(repo: Repo, kind: str, branch: str | None = None, carried: dict[str, str] | None = None) -> Path:
    """The copy of `kind`, or the workers' copy of `branch`, made now if it is missing or broken (one maker at
    a time); `carried`: the lead's `carried_config`, when the caller read it already (for a batch of copies)."""
    return ensure_with(repo, kind, branch, carried)[0]


def ensure_with(repo: Repo, kind: str, branch: str | None = None, carried: dict[str, str] | None = None,
                refs: dict[str, str] | None = None) -> tuple[Path, bool]:
    """`ensure`, and whether the copy was made now with `refs` ({full name: id}) in it, written before it took
    its place (so no other process saw it without them, and no `update-ref` is needed)."""
    where = path(repo, kind) if branch is None else for_branch(repo, branch)
    objects = str((repo.common_dir / "objects").resolve())
    if _valid(where, objects):
        return where, False
    where.parent.mkdir(parents=True, exist_ok=True)
    with Flock(repo.state_dir / "copies.lock"):
        if not _valid(where, objects):
            return where, _make(repo, where, objects, carried, refs)
    return where, False


def _valid(where: Path, objects: str) -> bool:
    try:
        borrowed = (git_dir(where) / "objects" / "info" / "alternates").read_text(encoding="utf-8").split("\n")
    except OSError:
        return False
    return objects in borrowed and (git_dir(where) / "HEAD").is_file()


def _make(repo: Repo, where: Path, objects: str, carried: dict[str, str] | None = None,
          refs: dict[str, str] | None = None) -> bool:
    tmp = where.with_name(f"{where.name}.tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    # `clone --shared --no-checkout` by hand: an empty repository that borrows every object of the lead, and
    # none of its refs (a worker sees the base the lead gives it, and its own branch). Not bare: a bare one's
    # core.bare would make its worktrees bare too once the guard turns on extensions.worktreeConfig.
    # No template: none of git's sample hooks, description or exclude file, made for each worker and removed again.
    # The lead's values in one read, the copy's config written with them. Worker commits skip `maintenance
    # --auto`: a gc there must not drop what a running worker holds.
    config = {**(carried_config(repo) if carried is None else carried), "gc.auto": "0"}
    res = initseed.init(tmp, repo.common_dir, config)  # git inits the first copy; the next ones are laid out alike
    if res is not None:
        raise BalancedError(f"Could not make the worker copy {where}: {res.err.strip()}",
                            hint=f"check that {where.parent} is writable.")
    (git_dir(tmp) / "objects" / "info" / "alternates").write_text(objects + "\n", encoding="utf-8")
    written = bool(refs) and freshcopy.write_refs(git_dir(tmp), refs or {}, repo.identity_line, "balanced: the base")
    shutil.rmtree(where, ignore_errors=True)  # a broken copy: its worktrees are made again per job
    os.replace(tmp, where)
    return written


def carried_config(repo: Repo) -> dict[str, str]:
    """The lead's CARRIED_CONFIG values that are set (the last of several, as `git config --get` says), read
    with one `git config`: its names come back lowercased, and are put back in CARRIED_CONFIG's spelling."""
    return _config_of(repo, CARRIED_CONFIG)


def copy_config(repo: Repo) -> tuple[dict[str, str], str]:
    """`carried_config`, and the lead's core.hooksPath ('' when unset), read with one `git config` for both."""
    found = _config_of(repo, (*CARRIED_CONFIG, "core.hooksPath"))
    return found, found.pop("core.hooksPath", "")


def _config_of(repo: Repo, keys: tuple[str, ...]) -> dict[str, str]:
    spelled = {key.lower(): key for key in keys}
    pattern = "^(" + "|".join(re.escape(key.lower()) for key in keys) + ")$"
    found: dict[str, str] = {}
    for key, value in repo.config_values(pattern):
        if key.lower() in spelled and value.strip():
            found[spelled[key.lower()]] = value.strip()
    return found


def sync_hooks(repo: Repo, copy: Path, configured: str | None = None) -> None:
    """The lead's own hooks for the copy, so a worker's commit runs them as before: a core.hooksPath of
    the worktree (`.husky`) or outside the lead's git folder is set in the copy too; otherwise the hooks
    are copied, and whatever a worker wrote into the copy's hooks is replaced here, before each job.
    `configured`: the lead's core.hooksPath ('' for none), when the caller read it already."""
    configured = (repo.config_value("core.hooksPath") or "") if configured is None else configured
    # Without core.hooksPath, git's hooks folder is the common git folder's; with it, git says where it is.
    theirs = str(repo.common_dir / "hooks") if not configured else \
        str(repo.git_path("hooks"))
    inside = Path(theirs).resolve().is_relative_to(repo.common_dir.resolve())
    if configured and (not os.path.isabs(configured) or not inside):
        git_in(copy, "config", "core.hooksPath", configured)
        return
    if _mentions(git_dir(copy) / "config", "hookspath"):  # set there by us, or by a worker: gone again
        run_git(["config", "--unset-all", "core.hooksPath"], cwd=copy)
    want: dict[str, bytes] = {}
    for name in sorted(os.listdir(theirs)) if os.path.isdir(theirs) else []:
        src = os.path.join(theirs, name)
        if not name.endswith(".sample") and os.path.isfile(src) and os.access(src, os.X_OK):
            want[name] = Path(src).read_bytes()
    hooks = git_dir(copy) / "hooks"
    if not want and not os.path.lexists(hooks):  # none to copy, and none there: no empty folder made for them
        return
    hooks.mkdir(exist_ok=True)
    # File by file, by rename, and only what differs: other workers may be committing through them now.
    for name in os.listdir(hooks):
        if name not in want and not name.endswith(".sample"):
            (hooks / name).unlink(missing_ok=True)
    for name, data in want.items():
        target = hooks / name
        if target.is_file() and target.read_bytes() == data and os.access(target, os.X_OK):
            continue
        write_atomic_bytes(target, data, mode=0o755)


def _mentions(path: Path, word: str) -> bool:
    """Whether a config file's text has `word` in any case (or cannot be read: then git is asked)."""
    try:
        return word in path.read_text(encoding="utf-8", errors="replace").lower()
    except OSError:
        return True


def git_in(copy: Path, *args: str, input: str | None = None) -> str:
    """Run git in the copy (`input` on its stdin); its output, or a BalancedError naming the copy."""
    res = run_git(args, cwd=copy, input=input)
    if res.code != 0:
        raise BalancedError(f"`git {' '.join(args)}` failed in the worker copy {copy}: {res.err.strip()[-300:]}",
                            hint=f"remove {copy}; the next job makes it again.")
    return res.out.strip()


def base_refs(branch: str, base: str, earlier: str | None) -> dict[str, str]:
    """What `set_base` sets in a copy no worktree holds the branch of: the base, and the branch at the earlier
    attempt's work, else the base."""
    return {f"refs/balanced/bases/{branch}": base, f"refs/heads/{branch}": earlier or base}


def set_base(copy: Path, branch: str, base: str, earlier: str | None) -> None:
    """Make the job's base visible in the copy, and set its branch to what the lead recorded: an earlier
    attempt's work, else the base. Never a ref found in the copy (a worker may have planted it), unless a
    worktree there holds the branch: that is the same job's, started again. One `update-ref` for both."""
    sets = f"update refs/balanced/bases/{branch} {base}\n"
    if not _held(copy, branch):
        sets += f"update refs/heads/{branch} {earlier or base}\n"
    git_in(copy, "update-ref", "--stdin", input=sets)


def _held(copy: Path, branch: str) -> bool:
    """Whether a worktree of the copy whose folder exists has `branch` checked out; git is asked only when the copy
    has worktrees registered (a copy just made has none)."""
    registered = git_dir(copy) / "worktrees"
    if not (registered.is_dir() and any(registered.iterdir())):
        return False
    listed = git_in(copy, "worktree", "list", "--porcelain")
    for block in listed.split("\n\n"):
        lines = block.splitlines()
        where = lines[0].removeprefix("worktree ") if lines else ""
        if f"branch refs/heads/{branch}" in lines and os.path.realpath(where) != os.path.realpath(copy) \
                and os.path.isdir(where):
            return True
    return False


def forget(repo: Repo, branch: str) -> None:
    """Remove the branch's copy once no worktree of it is left (the lead fetched its branch back already): none
    registered, or none whose folder is still there (what `git worktree prune` would drop)."""
    copy = for_branch(repo, branch)
    worktrees = git_dir(copy) / "worktrees"
    if copy.is_dir() and not (worktrees.is_dir() and any(_lives(entry) for entry in worktrees.iterdir())):
        shutil.rmtree(copy, ignore_errors=True)


def _lives(entry: Path) -> bool:
    """Whether a worktree registration's folder is there: its `gitdir` file names the worktree's `.git` file,
    relative to the registration with `worktree.useRelativePaths` (one that cannot be read counts as there)."""
    try:
        return (entry / entry.joinpath("gitdir").read_text(encoding="utf-8").strip()).exists()
    except OSError:
        return True


def _has_branch(copy: Path, branch: str) -> bool:
    """Whether the copy has `branch`, loose or packed, read from its files (no git run in a worker's copy for
    it); the fetch that follows says what is wrong with one that is there but broken."""
    refs = git_dir(copy)
    if (refs / "refs" / "heads" / branch).is_file():
        return True
    try:
        packed = (refs / "packed-refs").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return any(line.endswith(f" refs/heads/{branch}") for line in packed.splitlines())


def carry_back(repo: Repo, copy: Path, branch: str) -> str | None:
    """The worker's branch's objects brought here from its copy without a fetch (git/handback.py), past what the
    lead holds of it and the base it was given; its tip, or None when it is to be fetched (which says why)."""
    if not branch.startswith("balanced/") or _checked_out(repo, branch):
        return None  # fetch_branches refuses it, and says so; git's fetch refuses a branch checked out here
    given = peek.ref_id(str(git_dir(copy)), f"refs/balanced/bases/{branch}")  # a wrong one only fails the carry
    known = [repo.read_ref(f"refs/heads/{branch}") or "", given or ""]
    return handback.carry(repo, copy, branch, known)


def _checked_out(repo: Repo, branch: str) -> bool:
    """Whether a checkout of the lead has `branch` checked out (its HEAD files, read here), or one cannot be read."""
    heads = [repo.common_dir / "HEAD", *(repo.common_dir / "worktrees").glob("*/HEAD")]
    for head in heads:
        try:
            if head.read_text(encoding="utf-8", errors="replace").strip() == f"ref: refs/heads/{branch}":
                return True
        except FileNotFoundError:
            continue
        except OSError:
            return True
    return False


def fetch_branches(repo: Repo, copy: Path, branches: list[str]) -> dict[str, str | None]:
    """Fetch exactly the workers' branches from the copy into the lead's `refs/heads/<branch>`, nothing else;
    each branch's ref here, or None when the copy has no such branch."""
    if not branches:
        return {}
    have = [b for b in branches if _has_branch(copy, b)]
    for b in have:
        if not b.startswith("balanced/"):
            raise BalancedError(f"The worker branch {b!r} is not under balanced/, so it is not fetched.",
                                hint="this is a bug: please report it.")
    if have:
        res = repo.fetch(str(copy), [f"+refs/heads/{b}:refs/heads/{b}" for b in have], fetch_head=False)
        if res.code != 0:
            which = have[0] if len(have) == 1 else f"{len(have)} branches"
            raise BalancedError(f"Could not fetch {which} back from the worker copy {copy}: {res.err.strip()[-500:]}",
                                hint="`git balanced board` shows the job; the engine tries again on its next pass.")
    return {b: (f"refs/heads/{b}" if b in have else None) for b in branches}
