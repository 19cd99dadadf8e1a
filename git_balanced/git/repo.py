"""Repo: one repository, and what the package asks git for there, each by a name of its own (STYLE.md: nothing
outside this package builds a git command line)."""

from __future__ import annotations

import re
from pathlib import Path

from git_balanced import proc
from git_balanced.errors import GitError
from git_balanced.git.core import RepoCore
from git_balanced.git.refs import OBJECT_ID
from git_balanced.git.run import run_git

TYPE_CHECKING = False  # typing is not imported for this: the board and the inbox start without it
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, NamedTuple
else:
    from git_balanced.typed import NamedTuple

# A detached HEAD file: a commit id (SHA-1 or SHA-256) on a line of its own.
_DETACHED = re.compile(r"(?:[0-9a-f]{40}|[0-9a-f]{64})\n?")
# What makes a name more than a ref's name to `git rev-parse` (`main~1`, `main^{tree}`, `main@{1}`, `a:b`).
_REV_SYNTAX = re.compile(r"[~^:?*\[\\@\s]|\.\.")


class MergeResult(NamedTuple):
    clean: bool
    tree: str
    conflicts: tuple[str, ...]


class TreeChange(NamedTuple):
    """One file that differs between two trees, as `git diff-tree -r --no-renames` names it: its modes and
    blob ids on each side (a zero id, and mode 0, on the side where it is absent) and what happened to it
    (`A`, `M`, `D`, `T`)."""

    path: str
    old_mode: int
    new_mode: int
    old: str
    new: str
    status: str


def tree_changes(out: str) -> list[TreeChange]:
    """The files `git diff-tree -r -z` printed (`out`), each with its modes, blobs and status."""
    parts = out.split("\0")
    found = []
    for head, path in zip(parts[0::2], parts[1::2], strict=False):
        if not head.startswith(":"):
            continue
        old_mode, new_mode, old, new, status = head[1:].split(" ")
        found.append(TreeChange(path, int(old_mode, 8), int(new_mode, 8), old, new, status))
    return found


class Repo(RepoCore):
    """One repository as seen from a checkout (or a bare repository), and git's answers about it by name."""

    @classmethod
    def create(cls, folder: Path) -> Repo:
        """A new repository with a checkout at `folder` (made when missing), on branch `main`."""
        folder.mkdir(parents=True, exist_ok=True)
        res = run_git(["init", "-q", "-b", "main", str(folder)], cwd=folder)
        if res.code != 0:
            raise GitError(["git", "init", str(folder)], res.code, res.out, res.err)
        return cls.discover(folder)

    def rev_parse(self, rev: str) -> str | None:
        """The commit id `rev` names, or None. A branch's full ref name (`refs/heads/…`, which git keeps
        pointing at a commit) is read in-process, without starting git."""
        if rev.startswith("refs/heads/") and not _REV_SYNTAX.search(rev):
            try:
                return self.read_ref(rev)
            except (OSError, ValueError):
                pass  # unreadable here: git says what it is
        obj = self._object(rev)
        if obj is not None:
            return obj.id.decode() if obj.type_name == b"commit" else None
        res = self._run("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
        return res.out.strip() or None if res.code == 0 else None

    def tree_of(self, rev: str) -> str:
        """The tree of a commit (or the tree itself); a full commit id is read in-process."""
        obj = self._object(rev)
        if obj is not None and obj.type_name in (b"commit", b"tree"):
            return str((obj.tree if obj.type_name == b"commit" else obj.id).decode())
        return self._git("rev-parse", f"{rev}^{{tree}}")

    def _object(self, rev: str) -> Any | None:
        """The object a full id names, its tags peeled, read through dulwich; None for anything else (a name, an
        abbreviated id, an object dulwich cannot find or read), which git then resolves."""
        if not OBJECT_ID.fullmatch(rev):
            return None
        try:
            obj = self.store[rev.encode()]
            while obj.type_name == b"tag":
                obj = self.store[obj.object[1]]
        except Exception:  # missing or unreadable here: git has the last word on it
            return None
        return obj

    def current_branch(self) -> str | None:
        """The checked-out branch's short name, or None when HEAD is detached. Read from this checkout's HEAD
        file, as `git symbolic-ref HEAD` reads it, without starting git; git answers when the file says
        something else (another ref store's placeholder, a symbolic ref outside refs/heads/)."""
        try:
            head = (self.git_dir / "HEAD").read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            head = ""
        name = head[len("ref: refs/heads/"):].rstrip("\n") if head.startswith("ref: refs/heads/") else ""
        if name and name != ".invalid" and "\n" not in name:
            return name
        if _DETACHED.fullmatch(head):
            return None
        res = self._run("symbolic-ref", "--quiet", "--short", "HEAD")
        return res.out.strip() if res.code == 0 else None

    def is_ancestor(self, a: str, b: str) -> bool:
        return self._run("merge-base", "--is-ancestor", a, b).code == 0

    def show_file(self, rev: str, path: str) -> str | None:
        """A file's text at `rev`, or None when it has no such file. A branch or a commit id is read
        through dulwich (the engine reads its settings so every pass); any other revision through git."""
        sha = rev if re.fullmatch(r"[0-9a-f]{40}", rev) else self.read_ref(
            rev if rev.startswith("refs/") else f"refs/heads/{rev}")
        if sha is None:
            res = self._run("show", f"{rev}:{path}")
            return res.out if res.code == 0 else None
        from dulwich.errors import NotTreeError
        from dulwich.object_store import tree_lookup_path

        try:
            commit = self.store[sha.encode()]
            while commit.type_name == b"tag":
                commit = self.store[commit.object[1]]
            _, blob_id = tree_lookup_path(self.store.__getitem__, commit.tree, path.encode())
            blob = self.store[blob_id]
        except (KeyError, NotTreeError):
            return None
        return blob.data.decode(errors="replace") if blob.type_name == b"blob" else None

    def merge_tree(self, ours: str, theirs: str) -> MergeResult:
        """Merge two commits without touching any worktree (`git merge-tree --write-tree`)."""
        res = self._run("merge-tree", "--write-tree", "--name-only", "--no-messages", ours, theirs)
        lines = res.out.splitlines()
        if res.code not in (0, 1) or not lines:
            raise GitError(["git", "merge-tree", "--write-tree", ours, theirs], res.code, res.out, res.err)
        conflicts = tuple(dict.fromkeys(x for x in lines[1:] if x))
        return MergeResult(res.code == 0, lines[0], conflicts)

    def status_paths(self) -> list[str]:
        """Paths with uncommitted changes (staged, unstaged or untracked) in this checkout."""
        return [p for _, p in self.status_entries()]

    def status_entries(self) -> list[tuple[str, str]]:
        """Each path of this checkout with uncommitted changes, untracked ones included, and git's two-letter
        code for it (`??` for an untracked file); a rename as the removal and the addition it is."""
        out = self._run("status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames").out
        return [(item[:2], item[3:]) for item in out.split("\0") if len(item) > 3]

    def changed_paths(self, a: str, b: str) -> list[str]:
        """Paths that differ between two commits or trees."""
        out = self._git("diff", "--name-only", "-z", "--no-renames", a, b)
        return [p for p in out.split("\0") if p]

    def diff_tree(self, a: str, b: str) -> list[TreeChange]:
        """The files that differ between commits or trees `a` and `b`, each with its blobs on both sides."""
        return tree_changes(self._git("diff-tree", "-r", "-z", "--no-renames", "--no-commit-id", a, b))

    def numstat(self, base: str, tip: str) -> list[tuple[int | None, int | None, str]]:
        """Lines added and removed in each file from the merge base of `base` and `tip` to `tip`
        (`git diff --numstat base...tip`); None for a binary file's counts."""
        out = self._git("diff", "--numstat", "--no-renames", f"{base}...{tip}")
        found = []
        for line in out.splitlines():
            parts = line.split("\t", 2)
            if len(parts) == 3:
                found.append((int(parts[0]) if parts[0].isdigit() else None,
                              int(parts[1]) if parts[1].isdigit() else None, parts[2]))
        return found

    def object_sizes(self, ids: list[str]) -> list[int]:
        """The size in bytes of each object in `ids`, in order (one `git cat-file --batch-check` for all)."""
        if not ids:
            return []
        out = self._git("cat-file", "--batch-check=%(objectsize)", input="\n".join(ids) + "\n")
        return [int(x) for x in out.split()]

    def files_in(self, rev: str, paths: list[str]) -> list[str]:
        """Those of `paths` (from the top of the tree) that are files in the tree of `rev`."""
        if not paths:
            return []
        out = self._git("ls-tree", "-z", "--full-tree", rev, "--", *paths)
        have = {entry.split("\t", 1)[1] for entry in out.split("\0") if "\t" in entry and " blob " in entry}
        return [p for p in paths if p in have]

    def merge_base(self, a: str, b: str) -> str:
        """The best common ancestor of commits `a` and `b`; GitError when they share none."""
        return self._git("merge-base", a, b)

    def count_commits(self, since: str, until: str) -> int:
        """How many commits `until` has that `since` has not (`git rev-list --count since..until`)."""
        return int(self._git("rev-list", "--count", f"{since}..{until}"))

    def commits(self, tip: str, exclude: str | None = None, *, first_parent: bool = False,
                most: int | None = None) -> list[str]:
        """The commits of `tip`, newest first, without those of `exclude`; along first parents only
        (`first_parent`), and `most` of them at the most."""
        args = ["rev-list", *(["--first-parent"] if first_parent else []),
                *([f"--max-count={most}"] if most is not None else []), tip, *([f"^{exclude}"] if exclude else [])]
        return self._git(*args).split()

    def subject(self, rev: str) -> str:
        """The first line of the message of commit `rev`."""
        return self._git("log", "-1", "--format=%s", rev)

    def first_parent_log(self, revs: str, fmt: str, *, notes: str | None = None, most: int | None = None,
                         oldest_first: bool = False, skip: int = 0) -> str:
        """`git log --first-parent` of `revs` (a branch, `A..B`) in the format `fmt`, newest first unless
        `oldest_first`; with the notes of `notes` for `%N`, and `most` commits at the most, after the first
        `skip` of them."""
        args = ["log", "--first-parent", *([f"--notes={notes}"] if notes else []), f"--format={fmt}",
                *([f"-n{most}"] if most is not None else []), *([f"--skip={skip}"] if skip else []),
                *(["--reverse"] if oldest_first else []), revs]
        return self._git(*args)

    def write_index_tree(self) -> str:
        """Write this checkout's index as a tree (`git write-tree`); its id."""
        return self._git("write-tree")

    def commit_tree(self, tree: str, parents: list[str], message: str) -> str:
        """Write a commit of `tree` on `parents` through git (its identity and dates as git takes them); its id."""
        return self._git("commit-tree", tree, *(x for p in parents for x in ("-p", p)), "-m", message)

    def git_path(self, name: str) -> Path:
        """Where git keeps `name` of this checkout (`hooks`, say), as an absolute path: core.hooksPath and a
        linked worktree's folders included (`git rev-parse --git-path`)."""
        return Path(self._git("rev-parse", "--path-format=absolute", "--git-path", name))

    def cat_file_batch(self, asked: bytes) -> bytes | None:
        """What `git cat-file --batch` answers for the object names in `asked` (one a line), as it writes it;
        None when git failed."""
        res = run_git(["cat-file", "--batch"], cwd=self.root, input=asked, text=False)
        out: bytes = res.out  # type: ignore[assignment]  # bytes, as text=False reads them
        return out if res.code == 0 else None

    def config_value(self, key: str) -> str | None:
        """The value git reads for `key` (`core.hooksPath`) from this repository's config and the user's, or
        None when none is set."""
        res = self._run("config", "--get", key)
        return (res.out.strip() or None) if res.ok else None

    def upstream(self, branch: str) -> str | None:
        """The short name of `branch`'s upstream (`origin/main`), or None when it has none."""
        res = self._run("rev-parse", "--abbrev-ref", "--symbolic-full-name", f"{branch}@{{upstream}}")
        return (res.out.strip() or None) if res.ok else None

    def update_ref(self, ref: str, new: str, old: str, *, message: str) -> bool:
        """Point `ref` at `new` through git (any ref store git knows) only if it still points at `old`; False
        when it does not."""
        return self._run("update-ref", "-m", message, ref, new, old).ok

    def delete_ref(self, ref: str, old: str | None) -> bool:
        """Remove `ref` through git only if it still points at `old` (None: whatever it points at); False when
        it does not, or git could not."""
        return self._run("update-ref", "-d", ref, *([old] if old else [])).ok

    def delete_refs(self, refs: Mapping[str, str]) -> bool:
        """Remove every ref of `refs` ({ref: the id it must still point at}) in one transaction, packed-refs
        rewritten once; False, with nothing removed, when any of them moved (or git could not)."""
        if not refs:
            return True
        self._listed = None  # a listing taken before is not what is there after
        return self._run("update-ref", "--stdin", input="".join(f"delete {r} {old}\n" for r, old in refs.items())).ok

    def fetch(self, remote: str, specs: list[str], *, fetch_head: bool = True, upload_pack: str | None = None,
              negotiate: tuple[str, ...] = (), env: Mapping[str, str] | None = None,
              timeout: float | None = None) -> proc.Result:
        """Fetch the refspecs `specs` from `remote` (a name, a path, a URL), without tags; without writing
        FETCH_HEAD unless `fetch_head`, with the machine's `upload_pack` program when given; git's result,
        whatever its exit code. With `negotiate` (refs or commits), git tells the remote only of the commits they
        reach (`--negotiation-tip`), not of every ref's history here: what the remote can have in common with
        this repository, where every ref's would be the whole state's and the archive's, thousands of commits
        the remote never had."""
        return self._run("fetch", "--quiet", "--no-tags", *([] if fetch_head else ["--no-write-fetch-head"]),
                         *([f"--upload-pack={upload_pack}"] if upload_pack else []),
                         *(f"--negotiation-tip={tip}" for tip in negotiate), remote, *specs,
                         env=env, timeout=timeout)

    def push(self, remote: str, specs: list[str], *, quiet: bool = True, lease: str | None = None,
             receive_pack: str | None = None, env: Mapping[str, str] | None = None,
             timeout: float | None = None) -> proc.Result:
        """Push the refspecs `specs` to `remote` without running this repository's pre-push hooks (state is
        not code: they have nothing to judge in it); git's result (`--porcelain`), whatever its exit code.
        With `lease` (`REF:ID`), all of it lands only if the remote's REF is still ID (`--atomic
        --force-with-lease`); `receive_pack` names the machine's program."""
        return self._run("push", *(["--quiet"] if quiet else []), "--porcelain", "--no-verify",
                         *([f"--receive-pack={receive_pack}"] if receive_pack else []),
                         *(["--atomic", f"--force-with-lease={lease}"] if lease else []), remote, *specs,
                         env=env, timeout=timeout)

    def push_as_user(self, remote: str, spec: str) -> proc.Result:
        """Push `spec` to `remote` as the user's own `git push` would, hooks and all (shipping the lead's
        branch upstream); git's result, whatever its exit code."""
        return self._run("push", remote, spec)

    def fast_forward_checkout(self, target: str, reflog_action: str) -> proc.Result:
        """Fast-forward the checked-out branch and its working tree to `target` (`git merge --ff-only`), its
        reflog line saying `reflog_action`; git's result, whatever its exit code."""
        return self._run("merge", "--ff-only", "--quiet", target, env={"GIT_REFLOG_ACTION": reflog_action})

    def prune_worktrees(self, *, dry_run: bool = False) -> proc.Result:
        """Forget the linked worktrees whose folders are gone (`git worktree prune`), or only say which
        (`dry_run`: a line `Removing worktrees/NAME: why` each); git's result, whatever its exit code."""
        return self._run("worktree", "prune", *(["--dry-run", "--verbose"] if dry_run else []))

    def remove_worktree(self, path: Path, *, copy: Path | None = None) -> proc.Result:
        """Remove the linked worktree at `path` (of `copy`, another repository, when given), which git refuses
        when anything in it changed; git's result, whatever its exit code."""
        return self._run("worktree", "remove", str(path), cwd=copy)

    def is_ignored(self, path: str) -> bool:
        """Whether git ignores `path` (relative to the working tree) here (`git check-ignore`)."""
        return self._run("check-ignore", "-q", "--", path).code == 0

    def config_values(self, pattern: str) -> list[tuple[str, str]]:
        """The config keys (lowercased, as git names them) matching the regex `pattern`, with their values,
        in the order git reads them (`git config --get-regexp`)."""
        res = self._run("config", "--null", "--get-regexp", pattern)
        found = []
        for entry in res.out.split("\0") if res.code == 0 else []:
            key, _, value = entry.partition("\n")
            if key:
                found.append((key, value))
        return found

    def committer_ident(self) -> str | None:
        """The committer line git would write here (`Name <email> time zone`), or None when it has none."""
        res = self._run("var", "GIT_COMMITTER_IDENT")
        return res.out.strip() if res.ok else None

    def root_commits(self, rev: str) -> list[str]:
        """The commits without parents that `rev` reaches, newest first ([] when it names none)."""
        res = self._run("rev-list", "--max-parents=0", rev)
        return res.out.split() if res.ok else []

    def kept_by_a_ref(self, sha: str) -> bool:
        """Whether a branch, remote branch or tag of this repository holds the commit `sha`."""
        res = self._run("for-each-ref", "--count=1", "--contains", sha, "refs/heads/", "refs/remotes/", "refs/tags/")
        return res.code == 0 and bool(res.out.strip())

    # -- another checkout, seen from this repository ---------------------------------------------------------
    def status_at(self, where: Path) -> proc.Result:
        """`git status --porcelain` of the checkout at `where` (untracked files by folder); git's result."""
        return self._run("status", "--porcelain", "--untracked-files=normal", cwd=where)

    def head_at(self, where: Path) -> tuple[str | None, str | None]:
        """The commit and the branch (short name) of the checkout at `where`; None for what it has not."""
        head = self._run("rev-parse", "--verify", "--quiet", "HEAD", cwd=where).out.strip()
        branch = self._run("symbolic-ref", "--quiet", "--short", "HEAD", cwd=where).out.strip()
        return head or None, branch or None

    def branch_tips_at(self, where: Path) -> list[tuple[str, str]]:
        """Each branch of the checkout at `where`, as (its commit, its short name)."""
        out = self._run("for-each-ref", "--format=%(objectname) %(refname:short)", "refs/heads/", cwd=where).out
        return [(sha, name) for sha, _, name in (line.partition(" ") for line in out.splitlines())]

    def common_dir_at(self, where: Path) -> Path | None:
        """The common git folder of the checkout at `where`, or None when git finds none there."""
        res = self._run("rev-parse", "--path-format=absolute", "--git-common-dir", cwd=where)
        return Path(res.out.strip()) if res.code == 0 and res.out.strip() else None

    def remotes(self) -> list[str]:
        """The names of this repository's remotes."""
        return self._git("remote").split()

    def put_worktree_at(self, git_dir: Path, where: Path, rev: str) -> None:
        """Put the worktree at `where`, whose own git folder is `git_dir`, at `rev`: detached, forced, and
        without an untracked or ignored file. The folder is named, not found through the worktree's `.git` file,
        which what ran there could have rewritten."""
        self._git(f"--git-dir={git_dir}", "checkout", "--quiet", "--detach", "--force", rev, cwd=where)
        self._git(f"--git-dir={git_dir}", "clean", "-ffdq", cwd=where)
