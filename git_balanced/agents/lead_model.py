"""The model an agent lead runs on, read from what its hooks are handed, so that the workers of the same agent
start on it (a piece's own `model` still wins; engine/context.py).

- Codex puts `model` in every hook's input; Claude Code only in SessionStart's; Pi's extension
  (templates/pi-balanced.ts) adds `provider/id` of the session's model.
- Claude Code's other hooks name the session's transcript: its newest reply there carries its `model`.
- A headless lead (`git balanced lead start`, its tools through MCP) has no hooks: its `--model`, else what its
  turn's event stream names (kit/headless.py keeps it with `modes.remember_model`)."""

from __future__ import annotations

from git_balanced.shipped import lightjson  # json.loads, without importing json (and re) on every turn

TYPE_CHECKING = False  # a lead's hook reads its model on every turn: typing is not loaded for it
if TYPE_CHECKING:
    from typing import Any

NOT_A_MODEL = ("<synthetic>",)  # Claude Code's own stand-in replies (an error, an interruption) name this
TAIL_BYTES = 1 << 20  # the newest replies are near the end of the transcript


def model_of(data: dict[str, Any], agent: str) -> str | None:
    """The lead's model as its hook input `data` shows it, or None when it does not."""
    said = data.get("model")
    if isinstance(said, dict):  # a model object rather than its name
        said = said.get("id")
    if isinstance(said, str) and _fit(said.strip()):
        return said.strip()
    if agent != "claude":
        return None
    return _newest_reply_model(str(data.get("transcript_path") or ""))


def _newest_reply_model(path: str) -> str | None:
    """The model of the newest reply in a Claude Code transcript, or None."""
    try:
        with open(path, "rb") as f:
            f.seek(0, 2)
            f.seek(max(0, f.tell() - TAIL_BYTES))
            lines = f.read().decode("utf-8", errors="replace").splitlines()
    except OSError:
        return None
    for line in reversed(lines):
        if '"assistant"' not in line:
            continue
        try:
            entry = lightjson.loads(line)
        except ValueError:
            continue
        message = entry.get("message") if isinstance(entry, dict) and entry.get("type") == "assistant" else None
        model = message.get("model") if isinstance(message, dict) else None
        if isinstance(model, str) and model not in NOT_A_MODEL and _fit(model):
            return model
    return None


def _fit(name: str) -> bool:
    """Whether `name` can go on a worker's command line as its model: one short line of plain text."""
    from git_balanced.models import NAME_MOST, text_problem  # only a turn that names a model checks it

    return bool(name) and not name.startswith("-") and text_problem(name, most=NAME_MOST, lines=False) is None


def of_stream(agent: str, log_text: str) -> str | None:
    """The model a headless lead's turn ran on, from its event stream: Claude Code's `system/init` names it,
    Pi's replies their `provider` and `model`; Codex's `exec --json` does not say."""
    for line in log_text.splitlines():
        if not line.startswith("{") or '"model"' not in line:
            continue
        try:
            e = lightjson.loads(line)
        except ValueError:
            continue
        if not isinstance(e, dict):
            continue
        if agent == "claude" and e.get("type") == "system" and e.get("subtype") == "init":
            said = e.get("model")
        elif agent == "pi" and e.get("type") == "message_end" and isinstance(e.get("message"), dict):
            m = e["message"]
            said = f"{m.get('provider')}/{m.get('model')}" if m.get("provider") and m.get("model") else None
        else:
            continue
        if isinstance(said, str) and _fit(said):
            return said
    return None
