"""The agents' tool names a worker's PreToolUse hook judges by (shipped/pretool.py), as plain data: a hook on
every tool call reads them without importing the wiring (templates, settings, the guard's request).

Nothing here imports anything: `hook_rules()` is what the hook is handed here and, as `bin/hook.json`, on a
machine without git balanced.
"""

from __future__ import annotations

# Claude Code's, Codex's and Pi's tool names for reading: never a question, whatever the settings say.
READS = {"Read", "Glob", "Grep", "LS", "NotebookRead", "TodoWrite", "TodoRead", "Task", "Agent", "BashOutput",
         "ToolSearch", "read", "grep", "find", "ls"}

# The edit tools, and the field of their input that names the path they write.
EDITS = {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path",
         "write": "path", "edit": "path"}

# A path a Codex patch writes (a regular expression, multi-line).
PATCH_PATH = r"^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+)$"

# Claude Code's tool that shows a plan and leaves plan mode: the plan goes to the lead as a question.
PLANS = {"ExitPlanMode"}

# A shell command that only asks the lead (a regular expression).
ASKING = r"^\s*(?:git\s+balanced|git-balanced)\s+ask\b"


def hook_rules() -> dict[str, object]:
    """What shipped/pretool.py judges a tool call by: the reads, the edits and the field naming their path, a
    patch's paths, asking, plans."""
    return {"reads": sorted(READS), "edits": dict(EDITS), "patch_path": PATCH_PATH, "asking": ASKING,
            "plans": sorted(PLANS)}
