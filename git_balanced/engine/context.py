"""What one pass of the engine works with, handed to its parts (watching, limits) in place of the engine."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from git_balanced.agents import modes
from git_balanced.channel.inbox import post
from git_balanced.channel.told import tell_and_record
from git_balanced.git import Repo
from git_balanced.job_events import JobEvent, record
from git_balanced.lead import Lead, commands_of
from git_balanced.trust import Commands

if TYPE_CHECKING:
    from git_balanced.settings import Settings  # a pass reads settings_view's, without the models


@dataclass(frozen=True)
class Context:
    """The lead, its settings as the pass read them at its start, and the lead's inbox to tell it things."""

    lead: Lead
    settings: Settings

    @property
    def repo(self) -> Repo:
        return self.lead.repo

    @property
    def cmds(self) -> Commands:
        return commands_of(self.settings)

    def record(self, job_id: str, ev: JobEvent, subject: str, say: str | None = None, **data: Any) -> None:
        """Record `ev` on a job; with `say`, the lead hears it too, told first so that a crash between the two
        loses neither (channel/told.py). `data` goes with the line (`job=`, `plan=`)."""
        if say is None:
            record(self.repo, job_id, ev, subject)
        else:
            tell_and_record(self.repo, self.lead.branch, job_id, ev, subject, say, **data)

    def say(self, text: str, **data: Any) -> None:
        """Post a line to the lead's inbox."""
        post(self.repo, self.lead.branch, text, **data)

    def default_model(self, agent: str) -> str | None:
        """The model a new worker of `agent` starts on: its lead's, when the lead is an agent of the same kind
        (agents/lead_model.py), else the settings' own, else the first of its ladder; none for a shell piece,
        which runs a command (a `model` left in settings made for another agent is not its)."""
        if agent == "shell":
            return None
        leads = modes.model_for(self.repo, self.lead.branch, agent)
        if leads:
            return leads
        if agent == self.settings.balanced.agent and self.settings.balanced.model:
            return self.settings.balanced.model
        ladder = self.settings.ladder(agent)
        return ladder[0] if ladder else None
