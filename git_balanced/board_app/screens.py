"""The app's screens over the board: a line of text to type, a yes or no, the keys, and one worker."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import Footer, Input, RichLog, Static

from git_balanced import jobs as J
from git_balanced.agents.transcript import render
from git_balanced.engine.reach import read_log
from git_balanced.errors import BalancedError
from git_balanced.jobs import Job
from git_balanced.lead import Lead
from git_balanced.vocab import JobState

KEYS = """\
Under Now
  Space   mark the row (marked rows are answered together)
  Enter   answer the marked rows: allow them all ("Allow 4")
  a / d   allow / deny what a worker asks (d asks why); a word question asks for the answer
  c       correct: a line of text back to the lead (a review or an idea)
  s       ship the review (shows what would be pushed, asks first)
  n       not now (a review or an idea)
  g       go ahead with the lead's idea
On a worker (Running, or a held or failed one under Now)
  l       its pane: task, machine, agent, model, attempt, spend, its question, its log
  t       tell it a line: a running agent hears it at its next step
  x       stop it       r   retry it       L   land its branch (the check runs first)
Anywhere
  Tab     the next pane          f   fold or open the done workers (kept for this lead)
  v       the timeline: each machine a lane, each worker a bar
  ?       these keys             q   quit"""


class Prompt(ModalScreen[str | None]):
    """One line of text, or None when the person leaves with Escape."""

    BINDINGS = [Binding("escape", "leave", "Cancel")]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(self.question)
            yield Input(id="line")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_leave(self) -> None:
        self.dismiss(None)


class Confirm(ModalScreen[bool]):
    """A yes or no: y says yes; n or Escape says no."""

    BINDINGS = [Binding("y", "yes", "Yes"), Binding("n", "no", "No"), Binding("escape", "no", "No")]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(self.question + "\n\n[y] yes   [n] no")
        yield Footer()

    def action_yes(self) -> None:
        self.dismiss(True)

    def action_no(self) -> None:
        self.dismiss(False)


class Help(ModalScreen[None]):
    """The keys."""

    BINDINGS = [Binding("escape,q,question_mark", "leave", "Close")]

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(KEYS)
        yield Footer()

    def action_leave(self) -> None:
        self.dismiss(None)


class Worker(Screen[None]):
    """One worker: what it is and does (`show JOB`), its events, and its log (`logs JOB`) as it grows, read
    where the worker runs every `every` seconds while the pane is open."""

    BINDINGS = [Binding("escape,q", "leave", "Back")]

    def __init__(self, lead: Lead, job: Job, about: str, events: list[str], every: float = 1.0) -> None:
        super().__init__()
        self.lead, self.job, self.about, self.event_lines, self.log_every = lead, job, about, events, every
        self.log_at, self.log_held = 0, ""

    def compose(self) -> ComposeResult:
        yield Static(self.about, id="about")
        yield RichLog(id="log", wrap=True, markup=False)
        yield Footer()

    def on_mount(self) -> None:
        log = self.query_one(RichLog)
        for line in self.event_lines:
            log.write(line)
        log.write("── its log")
        self.more()
        self.set_interval(self.log_every, self.more)

    def more(self) -> None:
        """Add what the log grew by since the last read: its whole lines, as turns, tool calls and results."""
        try:
            chunk = read_log(self.lead, self.job, self.log_at)
        except BalancedError as exc:
            self.query_one(RichLog).write(f"(the log cannot be read: {exc.message})")
            return
        if not chunk.found and not self.log_at:
            if self.job.state == JobState.QUEUED:  # it may have started since the pane opened
                self.job = J.again(self.lead.repo, self.job.id) or self.job  # that job's ref only
            return
        whole, newline, self.log_held = (self.log_held + chunk.text).rpartition("\n")
        self.log_at = chunk.next_offset
        for line in render(whole + newline):
            self.query_one(RichLog).write(line)

    def action_leave(self) -> None:
        self.dismiss(None)


def worker_about(d: dict[str, Any]) -> str:
    """A worker's pane head, from `show JOB`'s data: task, machine, agent, model, attempt, spend, question."""
    spent = f"${d['cost_usd']:.2f}" if d.get("cost_usd") else "$0.00"
    budget = f" of ${d['budget_usd']:.2f}" if d.get("budget_usd") else ""
    lines = [f"{d.get('handle') or ''} {d['piece']} · {d['state']} · job {d['id']}".strip(),
             f"task: {d['task'].splitlines()[0] if d.get('task') else ''}",
             f"on {d['machine']} · {d.get('agent') or ''} · {d.get('model') or 'its default model'} · "
             f"attempt {d['attempt']} · spent {spent}{budget}",
             f"now: {d['reason']}"]
    if d.get("asked"):
        lines.append(f"asks: {d['asked']}")
    return "\n".join(lines)


class Timeline(Screen[None]):
    """Each machine a lane, each worker a bar (timeline.py)."""

    BINDINGS = [Binding("escape,q,v", "leave", "Back")]

    def __init__(self, text: Text) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        yield Static(self.text, id="timeline")
        yield Footer()

    def action_leave(self) -> None:
        self.dismiss(None)
