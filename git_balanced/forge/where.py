"""Which forge, which repository there, and with which token: from the remote's URL (or `[pr] repository`),
its host (or `GITHUB_API_URL`), and `GH_TOKEN`, `GITHUB_TOKEN` or `gh auth token`. The token is read for each
use and handed to the forge object only: never written to a file, a ref, a note or the output."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from git_balanced import proc
from git_balanced.errors import BalancedError
from git_balanced.forge.base import Forge
from git_balanced.forge.github import GitHub
from git_balanced.lead import Lead, settings_at

# scp-like `git@host:owner/name.git`, or a URL `https://host/owner/name(.git)`, `ssh://git@host[:port]/owner/name`
_SCP = re.compile(r"^(?:[^@/]+@)?(?P<host>[^:/]+):(?P<path>[^/].*)$")
_URL = re.compile(r"^(?:https?|ssh|git)://(?:[^@/]+@)?(?P<host>[^/:]+)(?::\d+)?/(?P<path>.+)$")
_NAME = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")


@dataclass(frozen=True)
class Place:
    """Where a pull request goes: the repository's `owner/name`, its forge's host and API base."""

    repository: str
    host: str
    api: str


def parse_remote_url(url: str) -> tuple[str, str] | None:
    """(host, `owner/name`) of a forge URL, or None for a path or a URL that names no repository."""
    m = _URL.match(url) or (_SCP.match(url) if "://" not in url else None)
    if not m:
        return None
    path = m.group("path").strip("/")
    path = path[:-4] if path.endswith(".git") else path
    return (m.group("host"), path) if _NAME.match(path) else None


def api_base(host: str) -> str:
    """GitHub's API for `host` (`GITHUB_API_URL` when set): api.github.com, or an Enterprise host's `/api/v3`."""
    if os.environ.get("GITHUB_API_URL"):
        return os.environ["GITHUB_API_URL"].rstrip("/")
    return "https://api.github.com" if host in ("github.com", "www.github.com") else f"https://{host}/api/v3"


def place(lead: Lead, remote: str) -> Place:
    """Where the lead's pull requests go; refuses, saying how to name it, when neither the remote's URL nor
    `[pr] repository` names a repository."""
    url = lead.repo.config_value(f"remote.{remote}.url") or ""
    parsed = parse_remote_url(url)
    named = settings_at(lead.repo, lead.branch).pr.repository
    if named:
        host = parsed[0] if parsed else "github.com"
        return Place(named, host, api_base(host))
    if parsed is None:
        raise BalancedError(f"The remote {remote} ({url or 'no URL'}) names no repository on a forge, so no pull "
                            "request can be opened.",
                            hint='name it in .magnum/settings.toml: `[pr]` then `repository = "owner/name"`.')
    return Place(parsed[1], parsed[0], api_base(parsed[0]))


def token() -> str:
    """The token: `GH_TOKEN`, `GITHUB_TOKEN`, or what `gh auth token` prints; refuses with what to set."""
    for name in ("GH_TOKEN", "GITHUB_TOKEN"):
        if os.environ.get(name, "").strip():
            return os.environ[name].strip()
    res = proc.run(["gh", "auth", "token"], timeout=15)
    if res.ok and res.out.strip():
        return res.out.strip()
    why = "the GitHub CLI (gh) is not installed" if res.code == 127 else "`gh auth token` gave none"
    raise BalancedError(f"No GitHub token: GH_TOKEN and GITHUB_TOKEN are not set, and {why}.",
                        hint="run `gh auth login`, or set GH_TOKEN to a token with the `repo` scope; git balanced "
                             "reads it for each call and stores it nowhere.")


def open_forge(lead: Lead, remote: str) -> Forge:
    """The forge of the lead's remote, signed in."""
    where = place(lead, remote)
    return GitHub(where.api, where.repository, token(), tags=lead.repo.state_dir / "forge-etags.json")
