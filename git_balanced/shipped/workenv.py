"""The environment a worker gets: the basics every program expects, its own agent's credentials and settings,
and the names the lead's settings list (`[worktree] env`); never the rest of the lead's (other agents' keys,
GITHUB_TOKEN, cloud credentials). Stdlib only and free of package imports: the runner sends it along.
"""

from __future__ import annotations

import json
import os
import re

# What any program may read without being handed a secret: where things are, who and where the user is.
BASICS = frozenset({"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "COLORTERM", "TMPDIR", "TZ", "LANG",
                    "LANGUAGE", "NO_COLOR", "PRE_COMMIT_HOME", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY",
                    "http_proxy", "https_proxy", "no_proxy", "all_proxy", "SSL_CERT_FILE", "SSL_CERT_DIR"})
BASIC_PREFIXES = ("LC_", "XDG_")
# Each agent's own variables (credentials, endpoints, switches), as its CLI reads them; `*` ends a prefix.
AGENT_ENV = {
    "claude": ("ANTHROPIC_*", "CLAUDE_*", "DISABLE_*", "NODE_*", "MAX_THINKING_TOKENS", "MCP_TIMEOUT",
               "BASH_DEFAULT_TIMEOUT_MS", "BASH_MAX_TIMEOUT_MS", "ENABLE_TOOL_SEARCH"),
    "codex": ("OPENAI_*", "CODEX_*", "NODE_*", "RUST_LOG"),
    # Pi's providers, each by its own key (its models.json may name more: read below).
    "pi": ("PI_*", "NODE_*", "ANTHROPIC_*", "OPENAI_*", "GEMINI_API_KEY", "GOOGLE_*", "GROQ_API_KEY",
           "CEREBRAS_API_KEY", "XAI_API_KEY", "OPENROUTER_API_KEY", "MISTRAL_API_KEY", "ZAI_API_KEY",
           "AI_GATEWAY_API_KEY", "AZURE_OPENAI_*", "COPILOT_GITHUB_TOKEN", "AWS_*"),
    "shell": (),
}
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
CODEX_ENV_KEY = re.compile(r'^\s*env_key\s*=\s*["\']([A-Za-z_][A-Za-z0-9_]*)["\']', re.M)


def _matches(name: str, patterns: tuple[str, ...] | list[str]) -> bool:
    return any(name == p or (p.endswith("*") and name.startswith(p[:-1])) for p in patterns)


def configured_names(agent: str, environ: dict[str, str]) -> list[str]:
    """The variables the agent's own configuration on this machine says hold its key: Codex's
    `model_providers.*.env_key` in `$CODEX_HOME/config.toml`, Pi's providers' `apiKey` in its models.json."""
    home = environ.get("HOME") or os.path.expanduser("~")
    try:
        if agent == "codex":
            folder = environ.get("CODEX_HOME") or os.path.join(home, ".codex")
            with open(os.path.join(folder, "config.toml"), encoding="utf-8") as f:
                return CODEX_ENV_KEY.findall(f.read())
        if agent == "pi":
            folder = environ.get("PI_CODING_AGENT_DIR") or os.path.join(home, ".pi", "agent")
            with open(os.path.join(folder, "models.json"), encoding="utf-8") as f:
                providers = json.load(f).get("providers") or {}
            keys = [p.get("apiKey") for p in providers.values() if isinstance(p, dict)]
            return [k for k in keys if isinstance(k, str) and ENV_NAME.match(k)]
    except (OSError, ValueError, AttributeError):
        pass
    return []


def worker_env(environ: dict[str, str], agent: str, names: list[str]) -> dict[str, str]:
    """Of `environ`, what a worker of `agent` gets: the basics, git's own variables (the caller has kept
    only those that describe the user), the agent's, and `names` (the lead's `[worktree] env`)."""
    own = AGENT_ENV.get(agent, ())
    named = set(names) | set(configured_names(agent, environ))
    return no_push({k: v for k, v in environ.items()
                    if k in BASICS or k.startswith(BASIC_PREFIXES) or k.startswith("GIT_") or k in named
                    or _matches(k, own)})


# A worker commits; the person ships. Every URL a push names is rewritten to one that says so (an empty
# `pushInsteadOf` matches any URL), so git's refusal carries the reason. The fence and the lack of any
# forge's token are what stop a determined worker; this is what a well-meaning one reads.
NO_PUSH = "/git balanced: a worker does not push. Commit your work; the person ships it (git balanced ship)/"


def no_push(env: dict[str, str]) -> dict[str, str]:
    """`env` with git configured (GIT_CONFIG_COUNT) to refuse every push, naming why."""
    try:
        n = int(env.get("GIT_CONFIG_COUNT") or 0)
    except ValueError:
        n = 0
    return {**env, "GIT_CONFIG_COUNT": str(n + 1), f"GIT_CONFIG_KEY_{n}": f"url.{NO_PUSH}.pushInsteadOf",
            f"GIT_CONFIG_VALUE_{n}": ""}
