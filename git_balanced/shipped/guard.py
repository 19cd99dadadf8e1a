#!/usr/bin/env python3
"""The guard: a piece with `paths` may write only there. Stdlib only, Python 3.9+.

The same declaration is enforced twice: the agent's PreToolUse hook refuses an edit elsewhere
(pretool.py asks `refusals_in` here), and the runner installs this very file as the pre-commit hook of
the worker's worktree, next to a `guard.json` that names the piece, its globs, the globs of the other live
pieces, and the hook it stands in front of. Run as a script it checks the staged paths.
"""

from __future__ import annotations

import json
import os
import re
import sys

SPEC_NAME = "guard.json"
# Left next to guard.json when this hook refuses a commit, so that the runner knows the guard refused the commit
# of what its worker left (shipped/launch.py GUARD_REFUSED), whatever git printed.
REFUSED_MARK = "guard.refused"


def _glob_re(pattern: str) -> re.Pattern[str]:
    """A git-style glob as a regex: `*` and `?` stay within one folder, `**` crosses folders, and a
    pattern naming a folder (`docs`, `docs/`) covers everything under it. Not kept: `re` keeps the patterns it
    compiled, and this file runs alone as a hook, with no per-process holder to keep them in."""
    pat = pattern.strip().lstrip("/")
    if pat.startswith("./"):
        pat = pat[2:]
    out, i = [], 0
    while i < len(pat):
        c = pat[i]
        if pat.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pat.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            end = pat.find("]", i + 1)
            if end == -1:
                out.append(re.escape(c))
                i += 1
            else:
                body = pat[i + 1:end].replace("\\", "\\\\")
                out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
                i = end + 1
        else:
            out.append(re.escape(c))
            i += 1
    body = "".join(out).rstrip("/")
    return re.compile(f"{body}(?:/.*)?" if body else ".*")


def matches(path: str, globs: list[str]) -> bool:
    """Whether a repository-relative path falls under any of the globs."""
    path = path.lstrip("/")
    return any(_glob_re(g).fullmatch(path) for g in globs if g.strip())


def owner_of(path: str, owners: dict[str, list[str]]) -> str | None:
    """The other live piece whose paths hold `path`, if one does."""
    for piece, globs in sorted(owners.items()):
        if matches(path, globs):
            return piece
    return None


def refusals(paths: list[str], spec: dict) -> list[str]:
    """One line per path the piece may not write, naming the piece that owns it when another does."""
    mine = list(spec.get("paths") or [])
    if not mine:
        return []
    piece, owners = spec.get("piece", "this piece"), spec.get("owners") or {}
    out = []
    for path in paths:
        if matches(path, mine):
            continue
        owner = owner_of(path, owners)
        if owner:
            out.append(f"{path} belongs to the piece {owner}, not to {piece} ({', '.join(mine)})")
        else:
            out.append(f"{path} is outside the paths of {piece} ({', '.join(mine)})")
    return out


def refusals_in(paths: list[str], worktree: str, spec: dict) -> list[str]:
    """The refusals for absolute paths an agent would write: outside the worktree (but for the temp folder),
    or outside the piece's globs. The agents' hook on the lead and the worker's script elsewhere both ask."""
    import tempfile

    root = os.path.realpath(worktree)
    inside, out = [], []
    for p in paths:
        real = os.path.realpath(p)
        rel = os.path.relpath(real, root)
        if rel == ".." or rel.startswith(".." + os.sep):
            if not real.startswith(os.path.realpath(tempfile.gettempdir()) + os.sep):
                out.append(f"{p} is outside this worker's worktree")
            continue
        inside.append(rel.replace(os.sep, "/"))
    return out + refusals(inside, spec)


def load_spec(folder: str) -> dict | None:
    """The guard.json in `folder`, or None when there is none (a piece without paths)."""
    try:
        with open(os.path.join(folder, SPEC_NAME), encoding="utf-8") as f:
            spec = json.load(f)
    except (OSError, ValueError):
        return None
    return spec if isinstance(spec, dict) else None


def _staged() -> list[str]:
    # In a hook, git's own variables (GIT_INDEX_FILE for `commit -a` or a partial commit) describe what
    # is being committed, so they are kept.
    import subprocess  # only the commit hook runs git: the PreToolUse hook's guard does not load it

    cp = subprocess.run(["git", "diff", "--cached", "--name-only", "-z", "--no-renames"], capture_output=True)
    if cp.returncode != 0:
        raise RuntimeError(cp.stderr.decode("utf-8", "replace").strip() or "git diff --cached failed")
    return [p for p in cp.stdout.decode("utf-8", "surrogateescape").split("\0") if p]


def pre_commit(args: list[str], folder: str) -> int:
    """The pre-commit hook: refuse a commit that touches a path outside the piece's; then run the hook this
    one stands in front of (the repository's own pre-commit), if there is one."""
    spec = load_spec(folder)
    if spec is None:
        print(f"[balanced guard] {os.path.join(folder, SPEC_NAME)} is missing or unreadable, so this commit "
              "was refused.", file=sys.stderr)
        return 1
    refused = refusals(_staged(), spec)
    if refused:
        # One line: it becomes the attempt's reason on the board and in the inbox.
        print(f"The guard refused this commit: {'; '.join(refused)}. Leave those paths to their piece "
              "(`git restore --staged PATH`).", file=sys.stderr)
        return 1
    chain = spec.get("chain")
    if chain and os.path.isfile(chain) and os.access(chain, os.X_OK):
        os.execv(chain, [chain, *args])
    return 0


def _mark_refused(folder: str) -> None:
    try:
        with open(os.path.join(folder, REFUSED_MARK), "w", encoding="utf-8") as f:
            f.write("refused\n")
    except OSError:
        pass  # a folder it cannot write: the commit is refused all the same


if __name__ == "__main__":
    _here = os.path.dirname(os.path.abspath(__file__))
    _code = pre_commit(sys.argv[1:], _here)  # what it stands in front of replaces this process: not ours
    if _code:
        _mark_refused(_here)
    sys.exit(_code)
