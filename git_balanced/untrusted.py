"""Git in a folder a worker could have written: nothing found there runs (DESIGN §5, "Untrusted folders").

A worker copy, the checks' copy, their worktrees and a machine's copy are written by code git balanced did not
write: a worker, a check, a setup. git runs what it finds in a repository (hooks, `core.fsmonitor`, filter,
diff and merge drivers, a pager, credential helpers) and goes where its config says (`core.worktree`). Every git
command of ours in such a folder is built here: the settings that run a program are set on git's command line,
which git reads after every config file (the repository's, its includes, its worktree config), and the working
tree is named, so none of that folder's config decides what runs or where git writes. Stdlib only: the runner
carries this file to other machines, and its own git commands there are built the same way.
"""

from __future__ import annotations

import os
import re
import stat

TYPE_CHECKING = False  # typing is not imported for this: the board and the inbox start without it
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    GitRunner = Callable[[Sequence[str], str], "tuple[int, bytes]"]

# Each names a program git may run, or a way for one to be run, and is set to nothing that runs.
OVERRIDES = (
    "core.hooksPath=/dev/null",  # hooks: git looks for /dev/null/<hook>, which cannot exist
    "core.fsmonitor=false",
    "core.sshCommand=false",
    "core.gitProxy=",
    "core.pager=cat",
    "core.askPass=",
    "core.editor=false",
    "sequence.editor=false",
    "core.alternateRefsCommand=",
    "credential.helper=",  # an empty value empties the list, helpers for particular URLs included
    "diff.external=",
    "gpg.program=false",
    "gpg.openpgp.program=false",
    "gpg.x509.program=false",
    "gpg.ssh.program=false",
    "gpg.ssh.defaultKeyCommand=",
    "commit.gpgSign=false",
    "tag.gpgSign=false",
    "log.showSignature=false",
    "protocol.ext.allow=never",
    "submodule.recurse=false",
    "fetch.recurseSubmodules=false",
    "gc.auto=0",  # and with it the pre-auto-gc hook, and a gc racing the workers
    "maintenance.auto=false",
)
# The drivers a `.gitattributes` (or `info/attributes`) names by name: their commands are emptied for every name
# the folder's own config defines. The user's global and system config are the user's own, and stay (git-lfs).
# (Patterns are compiled where they are first used, and kept there by re: the board imports this module and
# matches none of them.)
DRIVER_KEY = (r"(?i)^(filter\.(?P<f>.+)\.(clean|smudge|process)|diff\.(?P<d>.+)\.(textconv|command)|"
              r"merge\.(?P<m>.+)\.driver)$")
OWN_SCOPES = ("local", "worktree")
# Environment variables that name a program for git to run, dropped; and what a pager would be.
DROPPED_ENV = ("GIT_EXTERNAL_DIFF", "GIT_ASKPASS", "SSH_ASKPASS", "GIT_PAGER", "PAGER", "GIT_EDITOR",
               "GIT_SEQUENCE_EDITOR", "GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE",
               "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE")
# GIT_NO_LAZY_FETCH: a folder whose config makes it a partial clone would have git fetch a missing object from
# its "promisor" remote, running the upload-pack command that remote names (git 2.39.4 and later honour it).
SET_ENV = {"GIT_PAGER": "cat", "PAGER": "cat", "GIT_TERMINAL_PROMPT": "0", "GIT_EDITOR": "false",
           "GIT_NO_LAZY_FETCH": "1"}


def folder_of_ours(path: str, home: str | None = None) -> bool:
    """Whether `path` lies under `~/.balanced/` (the copies, worktrees, scratch worktrees and runs of this
    machine), where only workers, checks and setups write."""
    base = os.path.realpath(os.path.join(home or os.path.expanduser("~"), ".balanced"))
    try:
        real = os.path.realpath(path)
    except (OSError, ValueError):
        return True  # a path that cannot be judged is not trusted
    return real == base or real.startswith(base + os.sep)


def safe_env(base: Mapping[str, str]) -> dict[str, str]:
    """`base` without the variables that name a program or a repository for git, and with a pager that is cat."""
    out = {k: v for k, v in base.items() if k not in DROPPED_ENV}
    out.update(SET_ENV)
    return out


def driver_overrides(listing: bytes) -> list[str]:
    """`-c` values that empty every filter, diff and merge driver the folder's own config defines, read from
    `git config --list -z --show-scope` (included files report the scope of the file that includes them)."""
    out: list[str] = []
    parts = listing.split(b"\0")
    for i in range(0, len(parts) - 1, 2):  # (scope, key and value); no zip(strict=) on Python 3.9
        key = parts[i + 1].split(b"\n", 1)[0].decode("utf-8", "replace")
        if parts[i].decode("ascii", "replace") in OWN_SCOPES and re.match(DRIVER_KEY, key):
            out.append(f"{key}=")
    filters = {x.rsplit(".", 1)[0] for x in out if x.lower().startswith("filter.")}
    out.extend(f"{name}.required=false" for name in sorted(filters))
    return list(dict.fromkeys(out))


# A config that names no filter, diff or merge section and includes no other file defines no driver: its text,
# read here, says so without a git process (a listing is one, and git runs in the same copies many times a pass).
# Any `[filter` (`diff`, `merge`, `include`) anywhere counts, not only at a line's start: git skips a byte order
# mark and reads a carriage return as a space, and a false match only costs one listing.
_MAY_DEFINE = rb"(?i)\[[ \t]*(filter|diff|merge|include)"
CONFIG_MOST = 1 << 20  # bytes of a config file read here; a larger one is left to git


def _read_path(name: str) -> bytes | None:
    """A path written in a `.git` file or a `commondir` file, as git reads it: the whole file, less the line ends
    at its end (a name may hold a newline); None when it cannot be read."""
    try:
        with open(name, "rb") as fh:
            data = fh.read(CONFIG_MOST)
    except OSError:
        return None
    return data.rstrip(b"\r\n")


def _is_git_dir(git_dir: str, common: str) -> bool:
    """Whether git would take `git_dir` (with `common`, its common folder) for a repository, or stricter: a HEAD
    file that names a branch or a commit, and `objects` and `refs` folders. Otherwise git passes it by and looks
    further up, or in the folder itself as a bare repository."""
    try:
        head = os.lstat(os.path.join(git_dir, "HEAD"))
        if not stat.S_ISREG(head.st_mode):
            return False
        with open(os.path.join(git_dir, "HEAD"), "rb") as fh:
            text = fh.read(256)
    except OSError:
        return False
    named = text.startswith(b"ref:") and text[4:].lstrip().startswith(b"refs/")
    detached = re.match(rb"([0-9a-f]{40}|[0-9a-f]{64})\s*$", text) is not None
    return (named or detached) and all(os.path.isdir(os.path.join(common, x)) and
                                       os.access(os.path.join(common, x), os.X_OK) for x in ("objects", "refs"))


def _config_files(cwd: str) -> list[str] | None:
    """The config files git reads for `cwd` of its own (its repository's, and its worktree's), found as git
    finds them from a `.git` folder or file; None when `cwd/.git` is not a repository git would use."""
    dotgit = os.path.join(cwd, ".git")
    if os.path.isfile(dotgit):
        line = _read_path(dotgit)
        if line is None or not line.startswith(b"gitdir: ") or len(line) == len(b"gitdir: "):
            return None
        git_dir = os.path.join(os.fsencode(cwd), line[len(b"gitdir: "):]).decode("utf-8", "surrogateescape")
    elif os.path.isdir(dotgit):
        git_dir = dotgit
    else:
        return None  # none, or a link to nothing: git looks further up
    common = git_dir
    commondir = os.path.join(git_dir, "commondir")
    if os.path.lexists(commondir):
        named = _read_path(commondir)
        if not named:
            return None
        common = os.path.join(os.fsencode(git_dir), named).decode("utf-8", "surrogateescape")
    if not _is_git_dir(git_dir, common):
        return None
    return [os.path.join(common, "config"), os.path.join(common, "config.worktree"),
            os.path.join(git_dir, "config.worktree")]


def _may_define_drivers(cwd: str) -> bool:
    """Whether the config files of `cwd`'s own repository (and worktree) may define a driver: they name a filter,
    diff or merge section, or include other files, or cannot be read here, or git would use another repository
    than `cwd/.git` (further up, or `cwd` as a bare one). False only when they plainly do not."""
    files = _config_files(cwd)
    if files is None:
        return True  # git finds another repository: the listing says what its config holds
    for name in files:
        try:
            if not stat.S_ISREG(os.stat(name).st_mode):
                return True
            with open(name, "rb") as fh:
                text = fh.read(CONFIG_MOST + 1)
        except FileNotFoundError:
            continue
        except OSError:
            return True
        if len(text) > CONFIG_MOST or re.search(_MAY_DEFINE, text):
            return True
    return False


def worktree_arg(cwd: str) -> list[str]:
    """`--work-tree=<cwd>` where `cwd` is a checkout's top (it holds `.git`): a `core.worktree` in the folder's
    config (its worktree config included) cannot send git's writes elsewhere."""
    return [f"--work-tree={cwd}"] if os.path.lexists(os.path.join(cwd, ".git")) else []


def safe_argv(args: Sequence[str], cwd: str, run: GitRunner, git: str = "git") -> list[str]:
    """The argv for `git args` in the untrusted `cwd`: OVERRIDES, the emptied drivers and the named working tree
    before `args`. `run(argv, cwd)` runs a git command and returns (exit code, stdout): it lists the config, when
    the folder's config may define a driver at all."""
    fixed = [x for kv in OVERRIDES for x in ("-c", kv)]
    drivers: list[str] = []
    if _may_define_drivers(cwd):
        code, listing = run([git, *fixed, "config", "--list", "-z", "--show-scope"], cwd)
        drivers = driver_overrides(listing) if code == 0 else []
    return [git, *fixed, *[x for kv in drivers for x in ("-c", kv)], *worktree_arg(cwd), *args]


def machine_program(program: str) -> str:
    """`git receive-pack` or `git upload-pack` as our push or fetch runs it in a machine's copy over SSH
    (`--receive-pack`, `--upload-pack`): with OVERRIDES, so the copy's hooks (pre-receive, update,
    reference-transaction, post-update, push-to-checkout) and programs do not run. Each value is one plain word
    for the machine's shell."""
    return " ".join(["git", *[f"-c {kv}" for kv in OVERRIDES], program])


def safe_listing(argv_: Sequence[str], cwd: str, environ: Mapping[str, str]) -> tuple[int, bytes]:
    """Run a config listing (which runs nothing of the folder's) and return (exit code, stdout)."""
    import subprocess  # here: the board and the inbox start no process

    try:
        cp = subprocess.run(list(argv_), cwd=cwd, env=dict(environ), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    except OSError:
        return 127, b""
    return cp.returncode, cp.stdout
