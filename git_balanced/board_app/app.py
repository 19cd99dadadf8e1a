"""The board's app: its keys, each done through the function the command of the same name calls (acts.py), over
its panes (panes.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.coordinate import Coordinate
from textual.widgets import DataTable

from git_balanced.board_app import acts, prefs
from git_balanced.board_app.panes import Panes
from git_balanced.board_app.rows import FOLD_KEY
from git_balanced.board_app.screens import Confirm, Help, Prompt, Timeline, Worker, worker_about
from git_balanced.engine import reach
from git_balanced.errors import BalancedError
from git_balanced.lead import Lead, open_lead
from git_balanced.ui import clock


class BoardApp(Panes):
    """The lead's board, live."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("space", "mark", "Mark"), Binding("enter", "answer_marked", "Allow marked"),
        Binding("a", "allow", "Allow"), Binding("d", "deny", "Deny"), Binding("c", "correct", "Correct"),
        Binding("s", "ship", "Ship"), Binding("n", "not_now", "Not now"), Binding("g", "go_ahead", "Go ahead"),
        Binding("l", "log", "Log"), Binding("t", "tell", "Tell"), Binding("x", "stop", "Stop"),
        Binding("r", "retry", "Retry"), Binding("L", "land", "Land"), Binding("f", "fold", "Fold"),
        Binding("v", "timeline", "Timeline"),
        Binding("question_mark", "help", "Help"), Binding("q", "quit", "Quit")]

    # -- doing ---------------------------------------------------------------------------------------------
    def act(self, do: Callable[[], str]) -> None:
        """Do it, say what was done (or why not), and show the board as it is now."""
        try:
            self.notify(do(), timeout=6)
        except BalancedError as exc:
            self.notify(exc.message + (f"\n{exc.hint}" if exc.hint else ""), severity="error", timeout=10)
        self.reload()

    def _with_text(self, do: Callable[[str], str]) -> Callable[[str | None], None]:
        """What a Prompt calls back: do it with the line typed, unless none was."""
        def then(text: str | None) -> None:
            if text and text.strip():
                self.act(lambda: do(text))
        return then

    def _if_yes(self, do: Callable[[], str]) -> Callable[[bool | None], None]:
        """What a Confirm calls back: do it on a yes."""
        def then(yes: bool | None) -> None:
            if yes:
                self.act(do)
        return then

    def action_mark(self) -> None:
        row = self.current()
        if row is None or row.kind != "question":
            return
        self.marked ^= {row.key}
        table = self.query_one("#now", DataTable)
        table.update_cell_at(Coordinate(table.cursor_row, 0), ("✓ " if row.key in self.marked else "  ")
                             + str(row.cells[0]))
        self._subtitle()
        table.move_cursor(row=min(table.cursor_row + 1, len(self.rows["now"]) - 1))
        self._keys_fit()

    def _targets(self) -> list[str]:
        marked = [r.target for r in self.rows["now"] if r.key in self.marked]
        row = self.current()
        return marked or ([row.target] if row is not None and row.kind == "question" else [])

    def action_answer_marked(self) -> None:
        qids = self._targets()
        self.marked.clear()
        self.act(lambda: acts.decide(self.lead, qids, "allow"))

    def action_allow(self) -> None:
        qids = self._targets()
        if len(qids) == 1 and acts.ask_kind(self.lead, qids[0]) == "question":
            self.push_screen(Prompt(f"Your answer to {qids[0]}:"),
                             self._with_text(lambda text: acts.answer(self.lead, qids[0], text)))
            return
        self.marked.clear()
        self.act(lambda: acts.decide(self.lead, qids, "allow"))

    def action_deny(self) -> None:
        qids = self._targets()

        def done(reason: str | None) -> None:
            if reason is not None:
                self.marked.clear()
                self.act(lambda: acts.decide(self.lead, qids, "deny", reason))

        self.push_screen(Prompt(f"Deny {len(qids)}: why not (the worker reads it)?"), done)

    def action_correct(self) -> None:
        row = self.current()
        if row is not None:
            self.push_screen(Prompt(f"Correct {row.kind} {row.target}: a line for the lead"),
                             self._with_text(lambda text: acts.correct(self.lead, row.target, text)))

    def action_not_now(self) -> None:
        row = self.current()
        if row is not None:
            self.act(lambda: acts.not_now(self.lead, row.target))

    def action_go_ahead(self) -> None:
        row = self.current()
        if row is not None:
            self.act(lambda: acts.go_ahead(self.lead, row.target))

    def action_ship(self) -> None:
        row = self.current()
        if row is None:
            return
        try:
            r = acts.to_ship(self.lead)
        except BalancedError as exc:
            self.notify(exc.message, severity="error", timeout=10)
            return
        self.push_screen(Confirm(f"Push {r.branch} to {r.upstream}: {r.summary}? Check: {r.check.get('words')}"),
                         self._if_yes(lambda: acts.ship(self.lead, row.target, r)))

    def action_stop(self) -> None:
        self._on_worker(acts.stop)

    def action_retry(self) -> None:
        self._on_worker(acts.retry)

    def action_land(self) -> None:
        """Land the worker's branch: its check may take minutes, so it runs beside the app, which says when it
        is done."""
        job = self._worker()
        if not job:
            return
        self.notify(f"Landing {job}: its check runs; you hear when it is done.", timeout=6)
        root = str(self.lead.repo.root)

        def land() -> None:
            try:
                said, bad = acts.land(open_lead(root), job), False  # a Lead of its own: this is another thread
            except BalancedError as exc:
                said, bad = exc.message + (f"\n{exc.hint}" if exc.hint else ""), True
            self.call_from_thread(self._landed, said, bad)

        self.run_worker(land, thread=True, exclusive=False, group="land")

    def _landed(self, said: str, bad: bool) -> None:
        self.notify(said, severity="error" if bad else "information", timeout=10)
        self.reload()

    def _worker(self) -> str | None:
        """The job the worker keys act on: the open worker pane's, or the worker row's under the cursor."""
        if isinstance(self.screen, Worker):
            return self.screen.job.id
        row = self.current()
        return row.target if row is not None and row.kind == "worker" else None

    def _on_worker(self, do: Callable[[Lead, str], str]) -> None:
        job = self._worker()
        if job:
            self.act(lambda: do(self.lead, job))

    def action_log(self) -> None:
        from git_balanced.engine.detail import detail

        row = self.current()
        if row is None or row.kind != "worker":
            return
        d = detail(self.lead, row.target)
        d["asked"] = acts.question_of(self.lead, row.target)
        events = [f"{clock(float(e['time']), seconds=True)}  {e['subject']}" for e in d.get("events", [])]
        self.push_screen(Worker(self.lead, reach.job_named(self.lead, d["id"]), worker_about(d), events))

    def action_tell(self) -> None:
        job = self._worker()
        if job:
            self.push_screen(Prompt(f"Tell {job}: a line its agent reads at its next step"),
                             self._with_text(lambda text: acts.tell(self.lead, job, text)))

    def action_fold(self) -> None:
        self.folded = not self.folded
        prefs.set_folded(self.lead, self.folded)
        self.reload()

    def action_timeline(self) -> None:
        from git_balanced import jobs as J
        from git_balanced.board_app.timeline import lines

        ids = {r["id"] for r in self.data.get("jobs", [])}
        jobs = [j for j in J.all_jobs(self.lead.repo).values() if j.id in ids]
        handles = {r["id"]: r.get("handle") or "" for r in self.data.get("jobs", [])}
        self.push_screen(Timeline(Text("\n").join(lines(jobs, handles, self.size.width))))

    def action_help(self) -> None:
        self.push_screen(Help())

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter on a table: under Now, answer the marked rows; on the folded line, open it; on a worker, its
        pane."""
        row = self.current(event.data_table.id)
        if event.data_table.id == "now" and (self.marked or (row is not None and row.kind == "question")):
            self.action_answer_marked()
        elif row is not None and row.key == FOLD_KEY:
            self.action_fold()
        elif row is not None and row.kind == "worker":
            self.action_log()
