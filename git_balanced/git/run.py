"""Running the git binary: the environment a child git gets, the one function that starts it, and the config
files written in-process instead."""

from __future__ import annotations

import os
from pathlib import Path

from git_balanced import proc, untrusted
from git_balanced.errors import GitError
from git_balanced.files import write_atomic

TYPE_CHECKING = False  # typing is not imported for this: the board and the inbox start without it
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

# On every git command of ours: git's automatic maintenance (`gc --auto`, `maintenance run --auto`) never starts
# inside one, whatever the repository's config says (the command line is read after every config file, and
# reaches the git commands it starts through GIT_CONFIG_PARAMETERS). A gc there held a whole pass for 86 s; the
# engine packs refs and objects itself, while idle (engine/upkeep.py).
NO_AUTO_MAINTENANCE = ("-c", "gc.auto=0", "-c", "maintenance.auto=false")


def write_config(path: Path, values: Mapping[str, str]) -> None:
    """Set `section.key` values in one repository's config file, read and written once (with dulwich), where
    `git config` would start a process for each."""
    write_atomic(path, config_text(path.read_text(), values))


def config_text(text: str, values: Mapping[str, str]) -> str:
    """The config file `text` with these `section.key` values set (with dulwich), as git would read it."""
    import io

    from dulwich.config import ConfigFile

    cfg = ConfigFile.from_file(io.BytesIO(text.encode()))
    for key, value in values.items():
        section, _, name = key.rpartition(".")
        cfg.set((section.encode(),), name.encode(), value.encode())
    out = io.BytesIO()
    cfg.write_to_file(out)
    return out.getvalue().decode()


def git_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for a child git: ours without the GIT_* variables leaked by hooks."""
    env = proc.no_git_env()
    if extra:
        env.update(extra)
    return env


def run_git(args: Iterable[str], *, cwd: str | os.PathLike[str], input: str | bytes | None = None,
            env: Mapping[str, str] | None = None, timeout: float | None = None, text: bool = True) -> proc.Result:
    """Run git in `cwd` and return the result whatever its exit code. In a folder a worker, a check or a setup
    could have written (untrusted.folder_of_ours), nothing of that folder's runs: no hook, no fsmonitor, no
    driver, pager or helper its config names, and the working tree is the folder itself. Anywhere, git's
    automatic maintenance is off (NO_AUTO_MAINTENANCE; untrusted.OVERRIDES turn it off too)."""
    environ = git_env(env)
    given = list(args)
    argv = ["git", *NO_AUTO_MAINTENANCE, *given]
    where = os.fspath(cwd)
    if untrusted.folder_of_ours(where):
        environ = untrusted.safe_env(environ)
        argv = untrusted.safe_argv(given, where, lambda a, c: untrusted.safe_listing(a, c, environ))
    return proc.run(argv, cwd=cwd, input=input, env=environ, timeout=timeout, text=text)


def git_out(args: Iterable[str], *, cwd: str | os.PathLike[str], input: str | None = None,
            env: Mapping[str, str] | None = None) -> str:
    """Run git and return stdout without its trailing newline; GitError on a non-zero exit."""
    argv = list(args)
    res = run_git(argv, cwd=cwd, input=input, env=env)
    if res.code != 0:
        raise GitError(["git", *argv], res.code, res.out, res.err)
    return res.out.rstrip("\n")
