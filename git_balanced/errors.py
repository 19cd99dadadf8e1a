"""The one error family. A BalancedError is shown to the user as one message and a hint (exit 1)."""

from __future__ import annotations


class BalancedError(Exception):
    """A user-facing error: what happened, and what to run about it."""

    exit_code = 1

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message


class LandingBusy(BalancedError):
    """Another git command holds the lead's branch: the landing waits for it, not for you."""


class UsageError(BalancedError):
    """Wrong usage of a command (exit 2)."""

    exit_code = 2


class GitError(BalancedError):
    """Git failed: the message carries the command, its exit code and both streams."""

    def __init__(self, cmd: list[str], code: int, out: str, err: str) -> None:
        self.cmd, self.code, self.out, self.err = cmd, code, out, err
        shown = " ".join(cmd)
        body = f"git failed: `{shown}` exited {code}"
        for name, text in (("stdout", out), ("stderr", err)):
            if text.strip():
                body += f"\n{name}:\n    " + "\n    ".join(text.strip().splitlines()[-20:])
        super().__init__(body)


class NotARepository(BalancedError):
    def __init__(self, path: str) -> None:
        super().__init__(
            f"{path} is not inside a git repository.",
            hint="cd into a repository, or run `git init` first.",
        )


class SettingsError(BalancedError):
    """Bad `.magnum/settings.toml` or plan file: names the file, the key and what is allowed."""


class TrustError(BalancedError):
    """Setup or check commands that the user has not approved."""


class StaleRef(Exception):
    """A compare-and-swap kept losing the race, try after try (a bug unless a caller says otherwise)."""
