"""Point each real coding-agent CLI at the scripted model server, and nowhere else.

Each helper writes the CLI's configuration under a private HOME and returns the environment to run it with.
Retries are turned off so a scripted failure reaches the event stream at once.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
AGENTS = Path(os.environ.get("GIT_BALANCED_AGENTS", ROOT / ".cache" / "agents"))
INSTALL = ROOT / "scripts" / "install-agents.sh"
# The XDG cache folder that outlives a run, beside the agents: `ready`'s cache of carried trees for Pi.
XDG_CACHE = ROOT / ".cache" / "xdg"
# V8's cache of compiled code for the Node.js CLIs (Pi's modules), kept between runs like the CLIs themselves.
NODE_COMPILE_CACHE = ROOT / ".cache" / "node-compile"

# The models the tests ask for; each CLI must know the name (Codex looks up its own metadata by slug).
CLAUDE_MODEL = "sonnet"
CODEX_MODEL = "gpt-5.5"
PI_PROVIDER = "scripted"
PI_MODEL = "scripted-coder"
# Pi prices what it is told (USD per million tokens); the tests check the sum it reports.
PI_COST = {"input": 3.0, "output": 15.0, "cacheRead": 0.3, "cacheWrite": 3.75}


def installed_bin() -> str:
    """The folder of the installed CLIs; installs the pinned versions when missing, and FAILS the test if it
    cannot (a real agent test never passes by skipping)."""
    cp = subprocess.run(["bash", str(INSTALL)], capture_output=True, text=True, timeout=900)
    if cp.returncode != 0:
        pytest.fail(f"the agent CLIs could not be installed, so the real agents cannot be tested:\n"
                    f"{cp.stdout}\n{cp.stderr}")
    found = AGENTS / "node_modules" / ".bin"
    for cli in ("claude", "codex", "pi"):
        assert (found / cli).exists(), f"{cli} is missing from {found} after the install"
    return str(found)


def _base(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "CLAUDE_"))}
    env["HOME"] = str(home)
    # The CLIs find git, node and sh on PATH: the pinned Node.js installed beside them (scripts/install-agents.sh),
    # else the one npm used. V8's compile cache outlives the run, as the CLIs do (`pi --offline --list-models`:
    # 1.0 CPU s on it against 1.5 on Node.js 20).
    pinned = AGENTS / "node_modules" / ".bin" / "node"
    node = str(pinned) if pinned.exists() else shutil.which("node")
    if node:
        env["PATH"] = os.path.dirname(node) + os.pathsep + env.get("PATH", "")
    env["NODE_COMPILE_CACHE"] = str(NODE_COMPILE_CACHE)
    return env


def claude_env(home: Path, url: str, *, subscription: bool = False, signed_in: bool = True) -> dict[str, str]:
    """Claude Code against `url`. With `subscription` it signs in as a plan user (an OAuth token), the only
    kind of account for which it reads the plan's usage-limit headers and emits `rate_limit_event`."""
    env = _base(home)
    env["ANTHROPIC_BASE_URL"] = url
    if not signed_in:
        pass
    elif subscription:
        env["CLAUDE_CODE_OAUTH_TOKEN"] = "sk-ant-oat01-scripted"
    else:
        env["ANTHROPIC_API_KEY"] = "sk-ant-api03-scripted"
    env.update({
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "CLAUDE_CODE_MAX_RETRIES": "0",
    })
    return env


def codex_env(home: Path, url: str, *, signed_in: bool = True) -> dict[str, str]:
    """Codex against `url` through a `model_providers` entry speaking the Responses API."""
    env = _base(home)
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(
        f'model = "{CODEX_MODEL}"\n'
        'model_provider = "scripted"\n'
        "check_for_update_on_startup = false\n"
        "\n[analytics]\nenabled = false\n"
        "\n[model_providers.scripted]\n"
        'name = "scripted"\n'
        f'base_url = "{url}/v1"\n'
        'env_key = "SCRIPTED_API_KEY"\n'
        'wire_api = "responses"\n'
        "request_max_retries = 0\n"
        "stream_max_retries = 0\n"
        "stream_idle_timeout_ms = 20000\n"
    )
    env["CODEX_HOME"] = str(codex_home)
    if signed_in:
        env["SCRIPTED_API_KEY"] = "sk-scripted"
    return env


def pi_env(home: Path, url: str, *, signed_in: bool = True) -> dict[str, str]:
    """Pi against `url` through a models.json provider speaking Chat Completions, retries off."""
    env = _base(home)
    agent_dir = home / ".pi" / "agent"
    agent_dir.mkdir(parents=True, exist_ok=True)
    # apiKey names an environment variable, but Pi takes the name itself as the key when it is unset.
    key = {"apiKey": "SCRIPTED_API_KEY"} if signed_in else {}
    models = {"providers": {PI_PROVIDER: {
        "baseUrl": f"{url}/v1",
        "api": "openai-completions",
        **key,
        "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
        "models": [{"id": PI_MODEL, "name": "Scripted coder", "reasoning": False, "input": ["text"],
                    "contextWindow": 128000, "maxTokens": 16384, "cost": PI_COST}],
    }}}
    (agent_dir / "models.json").write_text(json.dumps(models, indent=2))
    settings = {
        "defaultProvider": PI_PROVIDER,
        "defaultModel": PI_MODEL,
        "quietStartup": True,
        "enableInstallTelemetry": False,
        "retry": {"enabled": False, "maxRetries": 0, "provider": {"maxRetries": 0}},
    }
    (agent_dir / "settings.json").write_text(json.dumps(settings, indent=2))
    env.update({"PI_OFFLINE": "1", "PI_SKIP_VERSION_CHECK": "1"})
    if signed_in:
        env["SCRIPTED_API_KEY"] = "sk-scripted"
    return env
