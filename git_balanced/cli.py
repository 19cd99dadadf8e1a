"""The command line: the only module that imports click. Each command hands its values to a plain function.

Heavy modules are imported inside the commands, so `--help` and `--version` start fast.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

import click

from git_balanced import __version__, exits, knobs
from git_balanced.kit.verbs import VERBS, Arg, Face, Verb, verb

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


class Group(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.commands)  # in the order they are declared, which reads as a story


@click.group(cls=Group, context_settings=CONTEXT)
@click.version_option(__version__, "--version", prog_name="git balanced", message="%(prog)s %(version)s")
def cli() -> None:
    """Hand pieces of a task to coding agents, each in its own worktree and branch, and land a branch
    in yours only when the repository's check passes."""


def _json_opt(f: Any) -> Any:
    return click.option("--json", "as_json", is_flag=True, help="Print data as JSON on stdout.")(f)


# -- the lead's verbs, made from their declarations in kit/verbs.py ------------------------------------------
def _base(kind: Any) -> Any:
    """The type an argument holds when given: `float` of `float | None`."""
    if isinstance(kind, types.UnionType):
        return next(k for k in kind.__args__ if k is not type(None))
    return kind


def _param(arg: Arg) -> click.Parameter:
    """The argument as the command line takes it: an option when it has flags, else positional."""
    kind = _base(arg.kind)
    if not arg.flags:
        many = getattr(kind, "__origin__", None) is list
        return click.Argument([arg.keyword], nargs=-1 if many else 1, required=arg.required and not many,
                              metavar=arg.metavar, default=None if arg.required or many else arg.default)
    if kind is bool:
        return click.Option([*arg.flags, arg.keyword], is_flag=True, default=bool(arg.default), help=arg.help)
    return click.Option([*arg.flags, arg.keyword], type=kind if kind in (int, float) else str, metavar=arg.metavar,
                        default=None if arg.required else arg.default, required=arg.required, help=arg.help)


def _runner(face: Face) -> Any:
    """The function of commands/ that runs the face (imported when called, so `-h` stays fast)."""
    if not isinstance(face.runs, str):
        return face.runs
    module, name = face.runs.split(":")
    return getattr(importlib.import_module(f"git_balanced.commands.{module}"), name)


def command_of(v: Verb) -> click.Command:
    """The verb's command: its declared arguments (positional ones first, in order) and the face's options,
    handed to the face's function of commands/ (positional ones by position, the rest by keyword)."""
    face = v.cli
    if face is None:
        raise ValueError(f"the verb {v.name} has no command line face; give it a Face in kit/verbs.py")
    args = (*v.args, *face.options)

    def run(**given: Any) -> int | None:
        if face.group and click.get_current_context().invoked_subcommand is not None:
            return None
        values = {a.keyword: list(given[a.keyword]) if isinstance(given[a.keyword], tuple) else given[a.keyword]
                  for a in args}
        return int(_runner(face)(*[values[a.keyword] for a in args if not a.flags],
                                 **{a.keyword: values[a.keyword] for a in args if a.flags}))

    params = [_param(a) for a in args]
    if face.group:
        return Group(face.words[-1], callback=run, params=params, help=face.help or v.doc, short_help=v.title,
                     invoke_without_command=True, context_settings=CONTEXT)
    return click.Command(face.words[-1], callback=run, params=params, help=face.help or v.doc,
                         short_help=v.title, context_settings=CONTEXT)


def place(name: str) -> click.Command:
    """Add the verb's command to its group (the one its face's words name under `cli`); the order of the
    calls is the order of `-h`."""
    v = verb(name)
    cmd = command_of(v)
    group = cli
    for word in v.cli.words[:-1]:  # type: ignore[union-attr]
        group = group.commands[word]  # type: ignore[assignment]
    group.add_command(cmd)
    return cmd


# -- setting up ----------------------------------------------------------------------------------------------
@cli.command(short_help="Write .magnum/settings.toml and install the balanced hooks.")
@click.option("--check", "check_cmd", metavar="CMD", help="The command that decides landing.")
@click.option("--setup", "setup_cmd", metavar="CMD", help="The command that readies a new copy.")
@click.option("--agent", metavar="NAME", help="claude, codex, pi or shell.")
@click.option("--hooks", type=click.Choice(["pre-commit", "git"]), default="pre-commit", show_default=True,
              help="Through pre-commit's config, or as plain git hooks in the hooks folder.")
@click.option("--project", is_flag=True, help="Add this repository to the chief's projects too.")
def init(check_cmd: str | None, setup_cmd: str | None, agent: str | None, hooks: str, project: bool) -> int:
    """Write .magnum/settings.toml (never over an existing one; a Python, Node.js or Go project gets its
    stack's setup and check unless --check is given), add the balanced hooks to .pre-commit-config.yaml
    and install them, or with --hooks git install plain git hooks instead. With --project, add the repository
    to the chief's projects; without, when you keep projects and it is not one, say how to add it."""
    from git_balanced.commands import init

    return init.init_command(check=check_cmd, setup=setup_cmd, agent=agent, hooks=hooks, project=project)


@cli.command(short_help="Approve the setup and check commands (shows them first).")
@click.option("--yes", is_flag=True, help="Approve without asking.")
def allow(yes: bool) -> int:
    """Approve this repository's setup and check commands, exactly as they are now."""
    from git_balanced.commands import trust as trust_cmd

    return trust_cmd.allow_command(yes=yes)


@cli.command(short_help="Refuse the setup and check commands.")
@click.option("--for-now", "for_now", is_flag=True,
              help="Not now: refuse them for this run of the engine only; the next run asks again.")
def deny(for_now: bool) -> int:
    """Refuse this repository's setup and check commands; nothing runs them until `allow` (with --for-now, until
    the engine run going on, or the next one when none runs, has ended)."""
    from git_balanced.commands import trust as trust_cmd

    return trust_cmd.deny_command(for_now=for_now)


@cli.command(short_help="Show whether the setup and check commands are approved.")
@_json_opt
def trust(as_json: bool) -> int:
    """Show the setup and check commands and whether you approved them."""
    from git_balanced.commands import trust as trust_cmd

    return trust_cmd.trust_command(as_json=as_json)


@cli.command(short_help="Run the check on a commit's tree (default HEAD) and record it.")
@click.argument("rev", default="HEAD")
@click.option("--force", is_flag=True, help="Run it even when that tree was checked before.")
@_json_opt
def check(rev: str, force: bool, as_json: bool) -> int:
    """Run the check on REV's tree in a scratch worktree; the same tree and command is answered from
    its note. Exits with the check's status."""
    from git_balanced.commands import check as check_cmd

    return check_cmd.check_command(rev, force=force, as_json=as_json)


# -- machines -------------------------------------------------------------------------------------------------
machines = place("machines")
assert isinstance(machines, click.Group)


@machines.command(name="add", short_help="Add a machine (kept for you, across repositories).")
@click.argument("name")
@click.option("--host", metavar="H", help="The SSH host (default: NAME).")
@click.option("--preference", default="normal", show_default=True,
              type=click.Choice(["prefer", "normal", "less-often", "manual-only"]))
@click.option("--container", metavar="IMAGE", help="A fresh container of IMAGE per job (see `image build`).")
@click.option("--kubernetes", metavar="IMAGE", help="A bare Kubernetes pod of IMAGE per job, through kubectl.")
@click.option("--engine", type=click.Choice(["podman", "docker"]), default="podman", show_default=True,
              help="With --container: the container engine.")
@click.option("--on", "on", metavar="MACHINE", help="With --container: run the containers on this added SSH "
                                                    "machine's engine.")
@click.option("--network", type=click.Choice(["none", "on", "host"]), default="none", show_default=True,
              help="Each box's network: none, the engine's own (on), or this machine's (host).")
@click.option("--pass-env", "pass_env", multiple=True, metavar="NAME",
              help="Give each box this variable of the engine's environment (an API key); repeatable.")
@click.option("--cpus", metavar="N", help="Each box's CPU limit.")
@click.option("--memory", metavar="M", help="Each box's memory limit (e.g. 2g).")
@click.option("--engine-arg", "engine_args", multiple=True, metavar="ARG",
              help="A word put after the engine's name in every command (e.g. --runtime=runc); repeatable.")
@click.option("--engine-env", "engine_env", multiple=True, metavar="K=V",
              help="An environment variable set for the engine (e.g. CONTAINERS_CONF=...); repeatable.")
@click.option("--namespace", metavar="NS", help="With --kubernetes: the namespace of the pods.")
@click.option("--context", metavar="C", help="With --kubernetes: kubectl's context.")
def machines_add(name: str, host: str | None, preference: str, **box: Any) -> int:
    """Add NAME, reached over SSH as HOST, with a preference for placement (`local`: this machine's preference);
    or, with --container or --kubernetes, a machine that makes a fresh box of an image per job."""
    from git_balanced.commands import machines as machines_cmd

    if box["container"] or box["kubernetes"]:
        return machines_cmd.add_box_command(name, host=host, preference=preference, **box)
    return machines_cmd.add_command(name, host=host, preference=preference, **box)


@machines.command(name="rm", short_help="Remove an added machine.")
@click.argument("name")
def machines_rm(name: str) -> int:
    """Forget NAME."""
    from git_balanced.commands import machines as machines_cmd

    return machines_cmd.rm_command(name)


@cli.group(short_help="Images for container machines.")
def image() -> None:
    """Images a container machine starts each job's box from."""


@image.command(name="build", short_help="Build an image from Debian's packages and the pinned agent.")
@click.option("--agent", type=click.Choice(["claude", "codex", "pi"]), default=None,
              help="The agent to put in it, at its pinned version (default: none, git and python3 only).")
@click.option("--tag", metavar="NAME", help="The image's name (default: balanced-box:<agent>-<version>).")
@click.option("--engine", type=click.Choice(["podman", "docker"]), default="podman", show_default=True)
@click.option("--suite", default="bookworm", show_default=True, metavar="SUITE", help="The Debian suite.")
def image_build(agent: str | None, tag: str | None, engine: str, suite: str) -> int:
    """Make a root filesystem of Debian's minbase with git, python3 and CA certificates (mmdebstrap), put the
    pinned agent in it (npm), and import it into the engine."""
    from git_balanced.commands import image as image_cmd

    return image_cmd.build_command(agent=agent, tag=tag, engine=engine, suite=suite)


@cli.command(short_help="Let machines take this repository's workers.")
@click.argument("names", nargs=-1, required=True, metavar="NAME...")
def tick(names: tuple[str, ...]) -> int:
    """Tick machines for this repository (the first time, only `local` is ticked)."""
    from git_balanced.commands import machines as machines_cmd

    return machines_cmd.tick_command(list(names), on=True)


@cli.command(short_help="Stop machines taking this repository's workers.")
@click.argument("names", nargs=-1, required=True, metavar="NAME...")
def untick(names: tuple[str, ...]) -> int:
    """Untick machines for this repository; workers running there go on."""
    from git_balanced.commands import machines as machines_cmd

    return machines_cmd.tick_command(list(names), on=False)


@cli.command(short_help="Prepare ticked machines: connect, copy the project, check room and identity.")
@click.argument("names", nargs=-1, metavar="[NAME]...")
@click.option("--yes", is_flag=True, help="Do what is yours to decide without asking: set the git identity, "
                                         "install what is missing, stop agents left running.")
@click.option("--share-sign-in", "share", metavar="AGENT", default=None,
              help="Copy this machine's sign-in for AGENT (claude, codex, pi) to the machines, mode 600.")
@click.option("--replace", is_flag=True, help="With --share-sign-in: replace a sign-in of another account there.")
def ready(names: tuple[str, ...], yes: bool, share: str | None, replace: bool) -> int:
    """Connect to each ticked machine (or those named), find git, python3 and the agents, copy the project to
    ~/<repository>, check free room and the git identity there; install the agents the settings and plans use,
    at the pinned versions, when you say so."""
    from git_balanced.commands import ready as ready_mod

    return ready_mod.ready_command(list(names), yes=yes, share=share, replace=replace)


# -- plans and workers ----------------------------------------------------------------------------------------
@cli.command(short_help="Store a plan (YAML) and show where each piece runs and why.")
@click.argument("file", metavar="FILE|-")
@click.option("--budget", type=float, metavar="USD", help="The plan's budget, split among pieces by size.")
@click.option("--start", is_flag=True, help="Start it at once.")
@click.option("--wait", is_flag=True, help="Store it even when no machine can ever take a piece as things are "
                                           "(its agent installed or signed in nowhere): it waits for one.")
@click.option("--until-idle", is_flag=True, help="With --start: run the engine here until nothing can move, as "
                                                 "`engine --until-idle` does, its exit code this command's.")
@_json_opt
def plan(file: str, budget: float | None, start: bool, wait: bool, until_idle: bool, as_json: bool) -> int:
    """Read a plan file (or - for stdin), check it, place its pieces and store it. A plan file:

    \b
        task: Add order history to the shop
        pieces:
          - id: orders-api          # its branch: balanced/orders-api
            task: Add GET /orders, the user's orders, newest first.
          - id: orders-tests
            task: Test the orders endpoint.
            after: [orders-api]     # starts once orders-api landed
          - id: changelog
            task: Add the change to the changelog.
            agent: shell            # a command, no agent account
            run: echo '- Order history' >> CHANGELOG.md   # what it leaves is committed

    Each piece may also name a machine, a model, a size and the paths it may write (docs/plans.md).
    """
    from git_balanced.commands import plan as plan_mod

    return plan_mod.plan_command(file, budget=budget, start=start, wait=wait, as_json=as_json, until_idle=until_idle)


@cli.command(short_help="List plans.")
@_json_opt
def plans(as_json: bool) -> int:
    """Every plan, newest first, with its state."""
    from git_balanced.commands import plan as plan_mod

    return plan_mod.plans_command(as_json=as_json)


place("start")
place("worker")


@cli.command(short_help="Run the loop: start, watch, check, land, retry.")
@click.option("--once", is_flag=True, help="One pass, then return.")
@click.option("--until-idle", is_flag=True, help="Return when nothing can move any more.")
@click.option("--detach", is_flag=True, help="Run in the background.")
@click.option("--stop", "stop_it", is_flag=True, help="Stop the engine running in the background.")
def engine(once: bool, until_idle: bool, detach: bool, stop_it: bool) -> int:
    """The engine starts pieces whose `after` have landed, watches workers, lands what finished through
    the landing queue, and tries failed pieces again. One per repository."""
    from git_balanced.commands import engine as engine_cmd

    return engine_cmd.engine_command(once=once, until_idle=until_idle, detach=detach, stop=stop_it)


place("board")


@cli.command(short_help="The board as a live terminal app (as board --live).")
def ui() -> int:
    """Now, Running and Next as a full-screen app, redrawn as the state changes and answered with keys:
    Space marks rows under Now, Enter allows the marked ones, `l` opens a worker, `?` lists the keys."""
    from git_balanced.commands import ui as ui_cmd

    return ui_cmd.ui_command()


place("inbox")
place("stop")
place("retry")
place("logs")
place("tell")


@cli.command(short_help="Hide a done job from the board.")
@click.argument("job")
def dismiss(job: str) -> int:
    """Hide JOB from the board; its history stays in git."""
    from git_balanced.commands import jobs as jobs_cmd

    return jobs_cmd.dismiss_command(job)


# -- landing ------------------------------------------------------------------------------------------------
place("land")


# -- the lead and its workers ----------------------------------------------------------------------------------
@cli.command(short_help="From inside a worker: ask the lead, wait for the answer.")
@click.argument("text")
def ask(text: str) -> int:
    """Post TEXT to the lead's inbox and print the answer when it comes."""
    from git_balanced.commands import ask

    return ask.ask_command(text)


@cli.command(short_help="Run a check in one of this machine's check seats, waiting for one.",
             context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.argument("command", nargs=-1, type=click.UNPROCESSED, required=True)
def seat(command: tuple[str, ...]) -> int:
    """Run COMMAND (one word: a shell line, `sh -c`; several: those words) once one of this machine's check seats is
    free: at most
    `[balanced] check_seats` checks (default: the machine's cores) run at once on a machine, every worker's and
    the landing's. While all are taken it says who holds them, and waits. Exits with COMMAND's code."""
    from git_balanced.commands import seat as seat_cmd

    return seat_cmd.seat_command(list(command))


@cli.command(short_help="Answer a worker's question (or allow several at once).")
@click.argument("args", nargs=-1, required=True, metavar="ID [TEXT] | ID... [REASON]")
@click.option("--allow", is_flag=True, help="Allow what was asked (each ID named).")
@click.option("--deny", is_flag=True, help="Deny what was asked (each ID named).")
def answer(args: tuple[str, ...], allow: bool, deny: bool) -> int:
    """Answer question ID with TEXT, --allow or --deny; the first answer counts. With --allow or --deny,
    name several questions at once, by id or by their numbers under Now on the board, or across the chief's
    projects as PROJECT.N (as `now --all` names them)."""
    from git_balanced.commands import ask

    return ask.answer_command(list(args), allow=allow, deny=deny)


place("pass")


@cli.command(short_help="What would ship, with the check run again.")
@_json_opt
def review(as_json: bool) -> int:
    """Sum up what would ship from the lead's branch against its upstream, and check it."""
    from git_balanced.commands import review as review_mod

    return review_mod.review_command(as_json=as_json)


@cli.command(short_help="Send work back to the lead with a correction.")
@click.argument("text")
@click.argument("row", required=False, metavar="[ID]")
def correct(text: str, row: str | None) -> int:
    """Record a correction; the board then says how often the lead was corrected. A review or idea waiting
    under Now (ID, or the only one) goes back to the lead with it."""
    from git_balanced.commands import review as review_mod

    return review_mod.correct_command(text, row)


@cli.command(short_help="Push the lead's branch, only when you say so.")
@click.argument("row", required=False, metavar="[ID]")
@click.option("--yes", is_flag=True, help="Push without asking.")
@click.option("--pr", "pr", is_flag=True, help="Push to its own branch and open (or update) a pull request.")
@click.option("--base", default=None, metavar="BRANCH", help="The pull request's base (default: the upstream's).")
@click.option("--draft", is_flag=True, help="Open the pull request as a draft.")
def ship(row: str | None, yes: bool, pr: bool, base: str | None, draft: bool) -> int:
    """Show the steps, ask, and push the lead's branch to its upstream only on a yes; the review waiting
    under Now (ID, or the only one) is answered. With --pr, push it to its own branch and open its pull
    request; a fix ready to push under Now is shipped that way."""
    from git_balanced.commands import prs as prs_mod
    from git_balanced.commands import review as review_mod

    if pr or base or draft or prs_mod.names_a_fix(row):
        return prs_mod.ship_pr_command(yes=yes, name=row, base=base, draft=draft)
    return review_mod.ship_command(yes=yes, name=row)


@cli.command(name="not-now", short_help="Decline a review or idea under Now, for now.")
@click.argument("row", required=False, metavar="[ID]")
@click.option("-m", "--reason", default="", metavar="TEXT", help="Why, for the lead.")
def not_now(row: str | None, reason: str) -> int:
    """Answer the review or idea ID (a number on the board or its id; default: the only one waiting) with
    not now; the lead hears it."""
    from git_balanced.commands import now as now_cmd

    return now_cmd.not_now_command(row, reason)


@cli.command(name="go-ahead", short_help="Tell the lead to go ahead with its idea.")
@click.argument("row", metavar="ID")
@click.argument("text", required=False, default="")
def go_ahead(row: str, text: str) -> int:
    """Answer the lead's idea ID (a number on the board or its id) with go ahead, and TEXT if given."""
    from git_balanced.commands import now as now_cmd

    return now_cmd.go_ahead_command(row, text)


@cli.group(short_help="Schedules: tell the lead things at set times.")
def schedule() -> None:
    """Add, list and remove schedules (s1, s2, ...)."""


place("schedule_add")
place("schedule_list")
place("schedule_rm")


# -- sharing and history -------------------------------------------------------------------------------------
@cli.command(short_help="Push and fetch the state refs and notes, merging what diverged.")
@click.argument("remote", default="origin")
@_json_opt
def sync(remote: str, as_json: bool) -> int:
    """Share plans, jobs, schedules, the inbox and the notes with REMOTE."""
    from git_balanced.commands import sync as sync_cmd

    return sync_cmd.sync_command(remote, as_json=as_json)


@cli.command(name="log", short_help="Landings, with their check notes.")
@click.option("-n", "limit", type=click.IntRange(min=1), default=50, show_default=True, help="How many landings.")
@_json_opt
def log_(limit: int, as_json: bool) -> int:
    """List what landed in the lead's branch, newest first, with its note."""
    from git_balanced.commands import log

    return log.log_command(limit=limit, as_json=as_json)


@cli.command(short_help="Stale locks, malformed state refs, leftover worktrees: listed, removed with --fix.")
@click.option("--fix", "do_fix", is_flag=True, help="Remove what is listed to remove (asks first).")
@click.option("--yes", is_flag=True, help="With --fix: remove without asking.")
@_json_opt
def doctor(do_fix: bool, yes: bool, as_json: bool) -> int:
    """List malformed refs under refs/balanced/, stale ref locks, and the worktrees and run folders of done
    jobs, each with the command that removes it; --fix removes them. A worktree with uncommitted changes or
    commits on no branch is listed and kept."""
    from git_balanced.commands import doctor as doctor_cmd

    return doctor_cmd.doctor_command(do_fix=do_fix, yes=yes, as_json=as_json)


# -- plumbing -----------------------------------------------------------------------------------------------
@cli.command(short_help="The entry point that installed git and agent hooks call.")
@click.argument("name")
@click.argument("args", nargs=-1)
def hook(name: str, args: tuple[str, ...]) -> int:
    """Run the balanced hook NAME (pre-merge-commit, pre-push, ...)."""
    from git_balanced.commands import hook

    return hook.run_hook(name, list(args))


@cli.group(short_help="Make an agent's sessions here leads, or stop that.")
def lead() -> None:
    """Turn this repository's sessions of an agent into leads (the MCP server, its hooks and the lead's
    instructions, in the agent's own project files), or turn that off; or run a headless lead whose turns
    are driven by its inbox."""


@lead.command(name="on", short_help="Make this repository's sessions of AGENT leads.")
@click.option("--agent", required=True, type=click.Choice(["claude", "codex", "pi"]), help="The agent.")
def lead_on(agent: str) -> int:
    """Write the agent's project files: Claude Code's .mcp.json, hooks and skill; Codex's
    [mcp_servers.balanced], hooks and AGENTS.md part; Pi's extension and instructions. What the files
    held is kept."""
    from git_balanced.commands import lead as lead_cmd

    return lead_cmd.on_command(agent)


@lead.command(name="off", short_help="Take away what `lead on` added.")
@click.option("--agent", type=click.Choice(["claude", "codex", "pi"]), help="The agent (default: all).")
def lead_off(agent: str | None) -> int:
    """Remove exactly what `lead on` added: a file untouched since gets back its exact bytes."""
    from git_balanced.commands import lead as lead_cmd

    return lead_cmd.off_command(agent)


@lead.command(name="plugin", short_help="Write the lead as a Claude Code, Codex and Pi plugin, in DIR.")
@click.argument("dest", metavar="DIR")
def lead_plugin(dest: str) -> int:
    """Write a local plugin marketplace in DIR holding the lead (its MCP server, hooks and skill) for Claude
    Code and Codex, and as a Pi package (its tools, hooks and skill); installed once with their `plugin`
    commands (Pi: `pi install DIR/plugins/balanced`), it serves every repository."""
    from git_balanced.commands import lead as lead_cmd

    return lead_cmd.plugin_command(dest)


@lead.command(name="start", short_help="Run a headless lead on TASK, its turns driven by its inbox.")
@click.option("--agent", required=True, type=click.Choice(["claude", "codex", "pi"]), help="The lead's agent.")
@click.option("--model", metavar="M", help="The lead's model (default: the agent's own).")
@click.option("--started-by", type=click.Choice(["chief"]), hidden=True, help="Who started it (the chief's tool).")
@click.argument("task")
def lead_start(agent: str, model: str | None, started_by: str | None, task: str) -> int:
    """Start the lead agent itself in the background, with the lead's tools and an engine: its first turn
    is TASK, and each batch of new messages in its inbox is its next turn on the same session."""
    from git_balanced.commands import lead as lead_cmd

    return lead_cmd.start_command(agent, task, model, started_by)


@lead.command(name="status", short_help="The headless lead: session, turns, spend, what it waits on.")
@_json_opt
def lead_status(as_json: bool) -> int:
    """Show the headless lead of this branch."""
    from git_balanced.commands import lead as lead_cmd

    return lead_cmd.status_command(as_json=as_json)


@lead.command(name="stop", short_help="End the headless lead.")
def lead_stop() -> int:
    """End the headless lead of this branch (its workers and the engine go on)."""
    from git_balanced.commands import lead as lead_cmd

    return lead_cmd.stop_command()


@lead.command(name="run", hidden=True)
def lead_run() -> int:
    """The headless lead's driver, which `lead start` runs in the background."""
    from git_balanced.commands import lead as lead_cmd

    return lead_cmd.run_command()


# -- the chief's projects and one Now over them --------------------------------------------------------------
@cli.group(cls=Group, invoke_without_command=True, short_help="The projects the chief works over (list, add, rm).")
@_json_opt
@click.pass_context
def projects(ctx: click.Context, as_json: bool) -> int | None:
    """List the repositories this person works with, on this machine and on SSH machines; kept in the chief's
    folder ($XDG_DATA_HOME/git-balanced/chief/), a git repository whose refs hold the list."""
    if ctx.invoked_subcommand is not None:
        return None
    from git_balanced.commands import projects as projects_cmd

    return projects_cmd.list_command(as_json=as_json)


@projects.command(name="add", short_help="Add the repository at PATH or MACHINE:PATH.")
@click.argument("where", metavar="PATH|MACHINE:PATH")
@click.option("--name", metavar="N", help="The project's name (default: its folder's name).")
def projects_add(where: str, name: str | None) -> int:
    """Add a repository on this machine (PATH), or on a machine you added (MACHINE:PATH, a path there,
    relative to its home), where git balanced must be installed: it is read there once before it is added."""
    from git_balanced.commands import projects as projects_cmd

    return projects_cmd.add_command(where, name)


@projects.command(name="rm", short_help="Take project NAME off the list.")
@click.argument("name")
def projects_rm(name: str) -> int:
    """Take project NAME off the list; the repository itself is untouched."""
    from git_balanced.commands import projects as projects_cmd

    return projects_cmd.rm_command(name)


@cli.group(cls=Group, invoke_without_command=True, short_help="What waits on you: here, or in every project.")
@click.option("--all", "every", is_flag=True, help="Every project's rows in one list (`git balanced projects`).")
@_json_opt
@click.pass_context
def now(ctx: click.Context, every: bool, as_json: bool) -> int | None:
    """What waits on your answer, as the board's Now shows it. With --all, every project's rows in one list,
    each named PROJECT.N (its number in its project, which no answer moves): `git balanced answer --allow web.3
    ios.1` answers across projects."""
    if ctx.invoked_subcommand is not None:
        return None
    from git_balanced.commands import now as now_cmd

    return now_cmd.now_command(as_json=as_json, every=every)


@now.command(name="note", short_help="Put a line under a row of Now.")
@click.argument("name", metavar="ID")
@click.argument("text")
@click.option("--by", default="Chief", show_default=True, metavar="WHO", help="Who says it, shown before the line.")
@_json_opt
def now_note(name: str, text: str, by: str, as_json: bool) -> int:
    """Put TEXT under the row ID names (its number or id here, or PROJECT.N across projects), shown under it by
    `now`, `now --all` and `board`: "Chief: ship this one first"."""
    from git_balanced.commands import now as now_cmd

    return now_cmd.note_command(name, text, by=by, as_json=as_json)


@cli.command(short_help="The stdio MCP server with the lead's tools.", help=(
    f"Serve the lead's tools ({', '.join(v.name for v in VERBS)}) over stdin and stdout, for an agent session "
    "that leads. With --chief, the chief's tools (projects, start_lead, tell_lead, answer, pass_on, note, "
    "how_are_they_doing). With --call TOOL '{...}', one call of one tool, its result as JSON on stdout."))
@click.option("--call", "call", metavar="TOOL", help="Make one call of TOOL and print its result as JSON.")
@click.option("--chief", is_flag=True, help="The chief's tools, not the lead's.")
@click.argument("arguments", default="", metavar="[JSON]")
def mcp(call: str | None, chief: bool, arguments: str) -> int:
    from git_balanced.commands import mcp as mcp_cmd

    return mcp_cmd.mcp_command(call=call, arguments=arguments, chief=chief)


# -- the chief ---------------------------------------------------------------------------------------------------
_AGENTS = click.Choice(["claude", "codex", "pi"])


@cli.group(short_help="The chief: one agent session over every project's lead.")
def chief() -> None:
    """Run the chief, one agent session over the leads of every project (`git balanced projects`): it starts
    leads, tells them things, answers what they pass on or hands it to you, and notes your Now. It never
    allows, lands, ships or starts a worker."""


@chief.command(name="start", short_help="Run a headless chief, its turns driven by what the leads pass on.")
@click.option("--agent", required=True, type=_AGENTS, help="The chief's agent.")
@click.option("--model", metavar="M", help="The chief's model (default: the agent's own).")
@click.option("--pass-after", type=click.FloatRange(min=0, min_open=True), default=600.0, show_default=True,
              metavar="SECONDS", help="A question the chief leaves unanswered this long comes to you.")
@click.argument("text", default="")
def chief_start(agent: str, model: str | None, pass_after: float, text: str) -> int:
    """Start the chief agent in the background in the chief's folder, with the chief's tools: its first turn
    is TEXT (or a look over the projects), and each batch of questions the leads pass on its next turn."""
    from git_balanced.commands import chief as chief_cmd

    return chief_cmd.start_command(agent, text, model, pass_after)


@chief.command(name="on", short_help="Make the agent's sessions in the chief's folder chiefs.")
@click.option("--agent", required=True, type=_AGENTS, help="The agent.")
def chief_on(agent: str) -> int:
    """Write the chief's MCP server, hook and instructions in the chief's folder, in the agent's own files."""
    from git_balanced.commands import chief as chief_cmd

    return chief_cmd.on_command(agent)


@chief.command(name="off", short_help="Take away what `chief on` wrote.")
@click.option("--agent", type=_AGENTS, help="The agent (default: all).")
def chief_off(agent: str | None) -> int:
    """Remove the files `chief on` wrote that are still as it wrote them."""
    from git_balanced.commands import chief as chief_cmd

    return chief_cmd.off_command(agent)


@chief.command(name="status", short_help="The headless chief: session, turns, spend, what it waits on.")
@_json_opt
def chief_status(as_json: bool) -> int:
    """Show the headless chief."""
    from git_balanced.commands import chief as chief_cmd

    return chief_cmd.status_command(as_json=as_json)


@chief.command(name="stop", short_help="End the headless chief.")
def chief_stop() -> int:
    """End the headless chief; the leads go on, and what they pass on comes to you."""
    from git_balanced.commands import chief as chief_cmd

    return chief_cmd.stop_command()


@chief.command(name="run", hidden=True)
def chief_run() -> int:
    """The headless chief's driver, which `chief start` runs in the background."""
    from git_balanced.commands import chief as chief_cmd

    return chief_cmd.run_command()


@chief.command(name="held", short_help="In a project: the questions its lead passed on to the chief.")
@_json_opt
@click.option("--pass-after", type=click.FloatRange(min=0, min_open=True), default=600.0, show_default=True,
              metavar="SECONDS", help="Hand you those the chief held this long.")
@click.option("--since", metavar="STAMP", help="Only if anything changed since this stamp (`stamp` of the last).")
@click.option("--wait", type=click.FloatRange(min=0, max=110), default=0.0, metavar="SECONDS",
              help="With --since: wait up to this long for a change.")
def chief_held(as_json: bool, pass_after: float, since: str | None, wait: float) -> int:
    """List the questions this project's lead passed on to the chief (the chief reads this in each project: it
    marks the chief seen here, and hands you those it held PASS_AFTER seconds)."""
    from git_balanced.commands import chief as chief_cmd

    return chief_cmd.held_command(as_json=as_json, pass_after=pass_after, since=since, wait=wait)


@chief.command(name="look", short_help="In a project: its board and its headless lead, in one (the chief's).")
@_json_opt
def chief_look(as_json: bool) -> int:
    """Show what the chief's `projects` tool reads of this project in one call: its board (as `board --json`)
    and its headless lead (as `lead status --json` says it)."""
    from git_balanced.commands import chief as chief_cmd

    return chief_cmd.look_command(as_json=as_json)


@chief.command(name="tell", short_help="In a project: a line from the chief into its lead's inbox.")
@_json_opt
@click.argument("text")
def chief_tell(as_json: bool, text: str) -> int:
    """Post `Your chief says: TEXT` to this branch's lead's inbox (the chief's tell_lead)."""
    from git_balanced.commands import chief as chief_cmd

    return chief_cmd.tell_command(text, as_json=as_json)


@chief.command(name="reply", short_help="In a project: the chief answers a question passed on to it.")
@_json_opt
@click.argument("qid", metavar="ID")
@click.argument("text")
def chief_reply(as_json: bool, qid: str, text: str) -> int:
    """Answer question ID, passed on to the chief, with TEXT; its worker reads `Your chief says: TEXT`."""
    from git_balanced.commands import chief as chief_cmd

    return chief_cmd.reply_command(qid, text, as_json=as_json)


@chief.command(name="hand", short_help="In a project: the chief hands a question passed on to it to you.")
@_json_opt
@click.argument("qid", metavar="ID")
def chief_hand(as_json: bool, qid: str) -> int:
    """Hand question ID, passed on to the chief, to you: it shows under Now."""
    from git_balanced.commands import chief as chief_cmd

    return chief_cmd.hand_command(qid, as_json=as_json)


@cli.command(short_help="A whole run on a sample repository in a temporary folder.")
@click.option("--keep", is_flag=True, help="Keep the sample repository and print where it is.")
def demo(keep: bool) -> int:
    """Build a sample project, run git balanced on it and show what happened. No account needed."""
    from git_balanced.commands import demo as demo_mod

    return demo_mod.demo_command(keep=keep)


@cli.command(short_help="Shell completion of `git balanced <TAB>` (bash, zsh), through git's own completion.")
@click.argument("shell", type=click.Choice(["bash", "zsh"]))
@click.option("--install", is_flag=True, help="Write the script where the shell finds it (bash) or where "
                                              "~/.zshrc can source it (zsh), and say what is left to do.")
def completion(shell: str, install: bool) -> int:
    """Print the completion script for SHELL, or write it with --install. git's own completion must be
    loaded (bash-completion's `git`, or git-completion.bash / .zsh); it completes commands, options, job
    handles (the pieces' branches and the job ids), machines, plans and agents."""
    from git_balanced.commands import completion as completion_mod

    return completion_mod.completion_command(shell, install=install)


@cli.command(name="__complete", hidden=True, context_settings={"ignore_unknown_options": True})
@click.argument("words", nargs=-1, type=click.UNPROCESSED)
def complete_words(words: tuple[str, ...]) -> int:
    """The words that may follow `git balanced WORDS[:-1]` and start with WORDS[-1], one a line: what the
    completion scripts ask."""
    for word in completions(list(words) or [""]):
        click.echo(word)
    return 0


# An argument's values, by the command's full words and the argument (or a metavar naming JOB), and an
# option's, by its flag.
_ARG_KINDS = {("check", "rev"): "revs", ("machines", "rm", "name"): "machines", ("tick", "names"): "machines",
              ("untick", "names"): "machines", ("ready", "names"): "machines", ("plan", "file"): "files",
              ("start", "plan"): "plans", ("projects", "rm", "name"): "projects"}
_OPT_KINDS = {"--agent": "agents", "--machine": "machines", "--share-sign-in": "agents"}


def completions(words: list[str]) -> list[str]:
    """What may come next after `git balanced WORDS[:-1]`, starting with the last word: a command, an option,
    or an argument's or option's values (jobs, machines, plans, agents, revisions, files)."""
    *done, cur = words
    cmd: click.Command = cli
    ctx = click.Context(cli, info_name="git balanced")
    taking: click.Option | None = None  # an option whose value comes next
    given = 0  # positional words given to cmd
    path: list[str] = []  # the command's words
    for word in done:
        if taking is not None:
            taking = None
        elif isinstance(cmd, click.Group):
            found = cmd.commands.get(word)
            if found is None:
                return []
            cmd = found
            path.append(word)
        elif word.startswith("-") and word != "-":
            opt = _option(cmd, word.split("=", 1)[0])
            taking = opt if opt is not None and not opt.is_flag and "=" not in word else None
        else:
            given += 1
    if taking is not None:
        return _values(taking, _OPT_KINDS.get(taking.opts[-1], ""), cur)
    if cur.startswith("-"):
        return [o for p in cmd.get_params(ctx) if isinstance(p, click.Option) and not p.hidden
                for o in p.opts if o.startswith(cur)]
    if isinstance(cmd, click.Group):
        return [n for n in cmd.list_commands(ctx) if n.startswith(cur) and not cmd.commands[n].hidden]
    args = [p for p in cmd.params if isinstance(p, click.Argument)]
    if not args:
        return []
    arg = args[min(given, len(args) - 1)] if args[-1].nargs == -1 or given < len(args) else None
    if arg is None:
        return []
    job = arg.name == "job" or "JOB" in (arg.metavar or "")
    return _values(arg, "jobs" if job else _ARG_KINDS.get((*path, arg.name or ""), ""), cur)


def _option(cmd: click.Command, flag: str) -> click.Option | None:
    return next((p for p in cmd.params if isinstance(p, click.Option) and flag in (*p.opts, *p.secondary_opts)),
                None)


def _values(param: click.Parameter, kind: str, cur: str) -> list[str]:
    """A parameter's choices, or the values of its kind read from the repository."""
    if isinstance(param.type, click.Choice):
        return [str(c) for c in param.type.choices if str(c).startswith(cur)]
    if not kind:
        return []
    from git_balanced.commands.completion import values

    return values(kind, cur)


def _has(words: tuple[str, ...]) -> bool:
    """Whether `cli` has a command at these words."""
    found: click.Command | None = cli
    for word in words:
        found = found.commands.get(word) if isinstance(found, click.Group) else None
    return found is not None


def _place_the_rest() -> None:
    """A verb with a command line face that no `place` above put comes last in its group: declaring it in
    kit/verbs.py is all a new verb needs."""
    for v in VERBS:
        if v.cli is not None and not _has(v.cli.words):
            place(v.name)


_place_the_rest()


def manpage() -> str:
    """The man page `git balanced --help` shows (git turns `--help` into `man git-balanced`)."""
    def esc(text: str) -> str:
        return text.replace("\\", "\\\\").replace("-", "\\-")

    ctx = click.Context(cli, info_name="git balanced")
    out = [".TH GIT-BALANCED 1 \"\" \"git balanced " + __version__ + "\" \"Git Manual\"",
           ".SH NAME", "git-balanced \\- hand pieces of a task to coding agents; land what passes the check",
           ".SH SYNOPSIS", ".B git balanced", "COMMAND [ARGS]...", ".SH DESCRIPTION",
           esc(" ".join((cli.help or "").split())), ".PP", "Run \\fBgit balanced COMMAND \\-h\\fR for a command's "
           "options. The docs/ folder of the project walks through every command with real runs.",
           ".SH COMMANDS"]

    def walk(group: click.Group, prefix: str) -> None:
        for name in group.list_commands(ctx):
            cmd = group.get_command(ctx, name)
            if cmd is None or cmd.hidden:
                continue
            sub = click.Context(cmd, info_name=f"{prefix} {name}", parent=ctx)
            out.extend([".TP", f"\\fB{esc(prefix + ' ' + name)}\\fR {esc(' '.join(cmd.collect_usage_pieces(sub)))}",
                        *_man_paragraphs(cmd.help or cmd.short_help or "", esc)])
            if isinstance(cmd, click.Group):
                walk(cmd, f"{prefix} {name}")

    walk(cli, "git balanced")
    out += [".SH EXIT STATUS", "0 done; 1 an error of yours, with a hint; 2 wrong usage; 3 an internal error "
            "(please report it); 130 interrupted."]
    return "\n".join(out) + "\n"


def _man_paragraphs(text: str, esc: Any) -> list[str]:
    """A command's help as man page lines: its paragraphs run together, a `\\b` block (a plan file) kept as
    it is written."""
    import inspect
    import textwrap

    out: list[str] = []
    for para in inspect.cleandoc(text).split("\n\n"):
        if para.startswith("\b\n"):
            out += [".IP", ".nf", *(esc(line) for line in textwrap.dedent(para[2:]).splitlines()), ".fi", ".IP"]
        else:
            out.append(esc(" ".join(para.split())))
    return out


def _interrupted(exc: BaseException) -> bool:
    """Whether click's Abort stands for a Ctrl-C: it is raised from (or while handling) a KeyboardInterrupt."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            return True
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return False


def main(argv: list[str] | None = None) -> int:
    """Run the command line; map errors to exit codes 1 (yours), 2 (usage), 3 (ours), 130 (Ctrl-C)."""
    sys.unraisablehook = exits.quiet_full_disk

    try:
        if knobs.reads(list(sys.argv[1:] if argv is None else argv)):
            knobs.check()  # a wait shortened wrong stops a command that reads it here, not the engine mid-pass
        rv = cli.main(args=argv, prog_name="git balanced", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.exceptions.Abort as exc:
        if _interrupted(exc):  # click turns Ctrl-C (in a prompt or anywhere in a command) into Abort
            click.echo("Interrupted.", err=True)
            return 130
        click.echo("Aborted.", err=True)  # the input ended (EOF) where a prompt waited for an answer
        return 1
    except click.ClickException as exc:
        exc.show()
        return 2
    except (Exception, KeyboardInterrupt) as exc:  # noqa: BLE001 — ours and yours, said as exits.py says them
        return exits.ended(exc, argv)
    return rv if isinstance(rv, int) else 0


if __name__ == "__main__":
    sys.exit(main())
