"""The coding agents a worker can run: each adapter builds the command line and reads the event log."""

from __future__ import annotations

from git_balanced.errors import BalancedError

TYPE_CHECKING = False  # typing is not imported for this: a worker's hook on every tool call imports this package
if TYPE_CHECKING:
    from typing import Any

    from git_balanced.agents.base import Adapter, AgentRun, Outcome

__all__ = ["Adapter", "AgentRun", "Outcome", "NAMES", "get"]

# name -> (module, class); imported on first use so a missing one only fails the agent that needs it.
_ADAPTERS = {
    "claude": ("git_balanced.agents.claude", "ClaudeAdapter"),
    "codex": ("git_balanced.agents.codex", "CodexAdapter"),
    "pi": ("git_balanced.agents.pi", "PiAdapter"),
    "shell": ("git_balanced.agents.shell", "ShellAdapter"),
}
NAMES = tuple(_ADAPTERS)


def get(name: str) -> Adapter:
    """The adapter of agent `name` (claude, codex, pi or shell)."""
    if name not in _ADAPTERS:
        raise BalancedError(f"unknown agent {name!r}: one of {', '.join(NAMES)}.",
                            hint="set `agent` under [balanced] in .magnum/settings.toml, or pass --agent.")
    import importlib

    module_name, class_name = _ADAPTERS[name]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise
        raise BalancedError(f"the {name} agent is not available in this installation ({module_name}).",
                            hint="reinstall git-balanced: `pip install -e .`") from exc
    return getattr(module, class_name)()


def __getattr__(name: str) -> Any:
    """Adapter, AgentRun and Outcome, from base.py when first asked for: an agent's hook that only reads the
    permission modes (modes.py) does not import the adapters' types."""
    if name in ("Adapter", "AgentRun", "Outcome"):
        from git_balanced.agents import base

        return getattr(base, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
