"""What the board's app keeps between runs, per lead branch: whether done workers are folded. In
`.git/balanced/ui.json`, this clone's own (never shared)."""

from __future__ import annotations

import json
from typing import Any

from git_balanced.files import write_atomic
from git_balanced.lead import Lead

FILE = "ui.json"


def _read(lead: Lead) -> dict[str, Any]:
    try:
        data = json.loads((lead.repo.state_dir / FILE).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def folded(lead: Lead) -> bool:
    """Whether this lead's done workers fold into one line past five (the default)."""
    leads = _read(lead).get("leads")
    mine = leads.get(lead.branch) if isinstance(leads, dict) else None
    return not (isinstance(mine, dict) and mine.get("fold") is False)


def set_folded(lead: Lead, fold: bool) -> None:
    """Keep this lead's choice for the next run."""
    data = _read(lead)
    leads: dict[str, Any] = data["leads"] if isinstance(data.get("leads"), dict) else {}
    mine = leads.get(lead.branch)
    leads[lead.branch] = {**(mine if isinstance(mine, dict) else {}), "fold": fold}
    data["leads"] = leads
    write_atomic(lead.repo.state_dir / FILE, json.dumps(data, indent=2, sort_keys=True) + "\n")
