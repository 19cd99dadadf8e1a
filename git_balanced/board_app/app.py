"""The board's app: Now, Running and Next as three panes over `board --json`'s data, redrawn when a state ref
moves (one listing of `refs/balanced/` a second, compared with the last), answered with keys."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.coordinate import Coordinate
from textual.widgets import DataTable, Footer, Static

from git_balanced.board_app import acts, prefs
from git_balanced.board_app.rows import FOLD_KEY, Row, next_rows, now_rows, worker_rows
from git_balanced.board_app.screens import Confirm, Help, Prompt, Timeline, Worker, worker_about
from git_balanced.engine import reach
from git_balanced.engine.background import EngineLock
from git_balanced.engine.shown import collect_shown, engine_line
from git_balanced.errors import BalancedError
from git_balanced.lead import Lead, open_lead
from git_balanced.ui import clock

POLL = 1.0  # seconds between two listings of the state refs
ON_NOW = {"mark", "answer_marked", "allow", "deny", "correct", "ship", "not_now", "go_ahead"}
ON_WORKER = {"log", "tell", "stop", "retry", "land"}
FITS = {"mark": {"question"}, "answer_marked": {"question"}, "allow": {"question"}, "deny": {"question"},
        "correct": {"review", "idea"}, "ship": {"review"}, "not_now": {"review", "idea"}, "go_ahead": {"idea"}}


WIDE = {"now": 1, "running": 3, "next": 2}  # the column of each pane that holds words of any length
ROOM = {"now": 12, "running": 50, "next": 30}  # the width the other columns and the borders take, about


class BoardApp(App[int]):
    """The lead's board, live."""

    TITLE = "git balanced"
    CSS = """
    #top { height: auto; padding: 0 1; }
    .pane { height: auto; max-height: 45%; border: round $secondary; }
    .pane:focus-within { border: round $accent; }
    DataTable { height: auto; max-height: 100%; }
    #dialog { width: 84; max-width: 100%; height: auto; border: thick $accent; padding: 1 2; background: $surface; }
    Prompt, Confirm, Help { align: center middle; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("space", "mark", "Mark"), Binding("enter", "answer_marked", "Allow marked"),
        Binding("a", "allow", "Allow"), Binding("d", "deny", "Deny"), Binding("c", "correct", "Correct"),
        Binding("s", "ship", "Ship"), Binding("n", "not_now", "Not now"), Binding("g", "go_ahead", "Go ahead"),
        Binding("l", "log", "Log"), Binding("t", "tell", "Tell"), Binding("x", "stop", "Stop"),
        Binding("r", "retry", "Retry"), Binding("L", "land", "Land"), Binding("f", "fold", "Fold"),
        Binding("v", "timeline", "Timeline"),
        Binding("question_mark", "help", "Help"), Binding("q", "quit", "Quit")]

    def __init__(self, lead: Lead, poll: float = POLL) -> None:
        super().__init__()
        self.lead = lead
        self.poll_every = poll
        self.folded = prefs.folded(lead)
        self.marked: set[str] = set()
        self.rows: dict[str, list[Row]] = {"now": [], "running": [], "next": []}
        self.seen: object = None
        self._fits: object = None
        self.data: dict[str, Any] = {}

    def compose(self) -> ComposeResult:
        yield Static(id="top")
        for pane, title in (("now", "Now"), ("running", "Running"), ("next", "Next")):
            with Vertical(classes="pane", id=f"{pane}-pane") as box:
                box.border_title = title
                table: DataTable[Any] = DataTable(id=pane, cursor_type="row", zebra_stripes=False)
                table.show_header = False
                yield table
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#now", DataTable).add_columns("n", "what")
        self.query_one("#running", DataTable).add_columns("", "handle", "piece", "words", "where")
        self.query_one("#next", DataTable).add_columns("", "piece", "words", "machine")
        self.reload()
        self.query_one("#now" if self.rows["now"] else "#running", DataTable).focus()
        self.set_interval(self.poll_every, self.poll)

    # -- reading --------------------------------------------------------------------------------------------
    def fingerprint(self) -> object:
        """What changes when the board may: every state ref's tip, the lead's branch, the engine's pid."""
        repo = self.lead.repo
        return (tuple(sorted(repo.list_refs("refs/balanced/").items())), repo.read_ref(self.lead.ref),
                EngineLock(self.lead).holder_pid())

    def on_resize(self) -> None:
        if self.data:
            self.reload()

    def poll(self) -> None:
        if self.fingerprint() != self.seen:
            self.reload()

    def reload(self) -> None:
        self.seen = self.fingerprint()
        self.data = collect_shown(self.lead)
        self.rows = {"now": now_rows(self.data), "running": worker_rows(self.data, self.folded),
                     "next": next_rows(self.data)}
        keys = {r.key for r in self.rows["now"]}
        self.marked &= keys
        for pane, rows in self.rows.items():
            self._fill(pane, rows)
        self._head()

    def _fill(self, pane: str, rows: list[Row]) -> None:
        table = self.query_one(f"#{pane}", DataTable)
        at = self.current(pane)
        table.clear()
        wide = WIDE[pane]
        room = max(20, self.size.width - ROOM[pane])  # the long column is cut to the width: no sideways scrolling
        for r in rows:
            cells = list(r.cells)
            if pane == "now":
                cells[0] = ("✓ " if r.key in self.marked else "  ") + str(cells[0])
            long = cells[wide]
            if isinstance(long, Text) and long.cell_len > room and r.kind != "fold":
                long = long.copy()
                long.truncate(room, overflow="ellipsis")
                cells[wide] = long
            table.add_row(*cells, key=r.key)
        keys = [r.key for r in rows]
        if at is not None and at.key in keys:
            table.move_cursor(row=keys.index(at.key))
        self.query_one(f"#{pane}-pane").display = bool(rows) or pane == "running"
        if pane == "now":
            self._subtitle()

    def _subtitle(self) -> None:
        n = len(self.marked)
        self.query_one("#now-pane").border_subtitle = f"{n} marked · Enter: Allow {n}" if n else ""

    def _head(self) -> None:
        e = self.data.get("engine") or {}
        engine = f"engine running (pid {e['pid']})" if e.get("running") else (engine_line(self.data) or
                                                                                "no engine runs; nothing waits")
        spent = [f"plan {p['id'][-4:]}: ${p['spent_usd']:.2f}" + (f" of ${p['budget_usd']:.2f}" if p.get(
            "budget_usd") else "") for p in self.data.get("plans", [])
            if p.get("state") in ("created", "started") and (p.get("spent_usd") or p.get("budget_usd"))]
        self.query_one("#top", Static).update(f"{self.lead.branch} · {engine}" + (" · " + " · ".join(spent)
                                                                                  if spent else ""))

    def current(self, pane: str | None = None) -> Row | None:
        """The row under the cursor of `pane` (default: the focused one)."""
        pane = pane or self.pane()
        if pane is None:
            return None
        table = self.query_one(f"#{pane}", DataTable)
        rows = self.rows.get(pane, [])
        return rows[table.cursor_row] if 0 <= table.cursor_row < len(rows) else None

    def pane(self) -> str | None:
        focused = self.focused
        return focused.id if isinstance(focused, DataTable) else None

    # -- which keys fit ------------------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if not self.screen_stack:  # asked while the app closes
            return True
        if isinstance(self.screen, Worker):  # its own keys, on its worker
            return action in ON_WORKER - {"log"} or action in ("help", "quit")
        if self.screen is not self.screen_stack[0]:
            return action in ("help", "quit")
        row = self.current() if isinstance(self.focused, DataTable) else None
        # A key that does not fit the row is left out of the footer, which then holds what fits at 80 columns.
        if action in ON_NOW:
            if action == "answer_marked":
                return bool(self.marked)
            return row is not None and row.kind in FITS[action]
        if action in ON_WORKER:
            return row is not None and row.kind == "worker"
        return True

    def _keys_fit(self) -> None:
        """Show the keys that fit the row under the cursor: redrawn only when what fits changed (a footer
        redrawn on every move of the cursor is slow)."""
        row = self.current() if self.screen_stack and isinstance(self.focused, DataTable) else None
        fits = (self.pane(), row.kind if row else None, bool(self.marked))
        if fits != self._fits:
            self._fits = fits
            self.refresh_bindings()

    def on_descendant_focus(self) -> None:
        self._keys_fit()

    def on_data_table_row_highlighted(self) -> None:
        self._keys_fit()

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
