from __future__ import annotations

import random
import textwrap
from dataclasses import FrozenInstanceError
from decimal import Decimal

import pytest
from pydantic import ValidationError

from git_balanced.errors import BalancedError, SettingsError
from git_balanced.plans.planfile import Piece, Plan, budget_shares, describe_after, load_plan, order, with_shares

DESIGN_PLAN = """\
task: Add order history
budget: 2.00                 # optional, USD, split among pieces by size
pieces:
  - id: orders-api           # [a-z0-9-]+, unique in the plan
    task: Add a GET /orders endpoint returning the user's orders.
    size: 2                  # relative, default 1
  - id: orders-page
    task: A page listing the orders.
    machine: build-box       # explicit: never falls back
  - id: orders-tests
    task: Tests for both.
    after: [orders-api, orders-page]   # starts once both have landed
    agent: shell
    run: "python tools/gen_tests.py"   # shell agent only
    paths: ["tests/**"]      # write paths: the guard refuses writes elsewhere
"""


def problems(text: str, source: str = "plan.yaml", **kw: object) -> list[str]:
    """The lines of the one SettingsError that loading `text` raises."""
    with pytest.raises(SettingsError) as info:
        load_plan(textwrap.dedent(text), source, **kw)  # type: ignore[arg-type]
    return info.value.message.split("\n")


def plan_of(*pieces: str, head: str = "task: t\n") -> str:
    """A plan text whose pieces are the given YAML snippets (each a mapping body, unindented)."""
    body = "".join("  - " + textwrap.indent(textwrap.dedent(p).strip(), "    ")[4:] + "\n" for p in pieces)
    return head + "pieces:\n" + body


def test_the_design_plan_loads() -> None:
    plan = load_plan(DESIGN_PLAN, "plan.yaml", known_machines={"build-box"})
    assert plan.task == "Add order history" and plan.budget == 2.0
    api, page, tests = plan.pieces
    assert (api.id, api.size, api.after, api.machine, api.agent) == ("orders-api", 2.0, (), None, None)
    assert page.machine == "build-box" and page.size == 1.0, "size defaults to 1"
    assert tests.after == ("orders-api", "orders-page")
    assert (tests.agent, tests.run, tests.paths) == ("shell", "python tools/gen_tests.py", ("tests/**",))
    assert all(p.budget_usd is None for p in plan.pieces), "shares are filled later, not read"
    assert plan.piece("orders-page") is page
    with pytest.raises(KeyError):
        plan.piece("nope")


def test_single_items_and_block_text_read_naturally() -> None:
    plan = load_plan(plan_of("""
        id: a
        task: |
          Write the parser.
          Keep it small.
        """, """
        id: b
        task: "  spaced  "
        size:
        machine: ~
        after: a
        paths: src/**
        model: opus
        agent: claude
        """), "p.yaml")
    assert plan.pieces[0].task == "Write the parser.\nKeep it small.", "ends are trimmed, inside kept"
    assert plan.pieces[1].task == "spaced"
    assert plan.pieces[1].size == 1.0 and plan.pieces[1].machine is None, "an empty value means unset"
    assert plan.pieces[1].after == ("a",) and plan.pieces[1].paths == ("src/**",)
    assert (plan.pieces[1].agent, plan.pieces[1].model) == ("claude", "opus")


def test_broken_yaml_names_line_and_column_and_points_at_it() -> None:
    lines = problems("task: x\npieces:\n  - id: a\n    task: y: z\n")
    assert lines[0] == "plan.yaml:4:12: not valid YAML: mapping values are not allowed here."
    assert lines[1] == "    4 |     task: y: z"
    assert lines[2] == "      |            ^"


def test_a_key_written_twice_is_broken_yaml() -> None:
    lines = problems("task: x\ntask: y\npieces: []\n")
    assert lines[0].startswith('plan.yaml:2:1: not valid YAML: found duplicate key "task"')


@pytest.mark.parametrize(("text", "said"), [
    ("", "empty"), ("# only a comment\n", "empty"), ("- a\n- b\n", "a list"),
    ("just words\n", '"just words" (text)'),
])
def test_the_plan_must_be_a_mapping(text: str, said: str) -> None:
    assert problems(text) == [
        f"plan.yaml:1: the plan is {said}, but it must be a mapping with `task`, `budget` and `pieces`."]


def test_missing_task_and_pieces_are_both_named() -> None:
    assert problems("budget: 1\n") == [
        "plan.yaml:1: the plan: `task` is missing; it says what the whole plan does.",
        "plan.yaml:1: the plan: `pieces` is missing; it lists the pieces of the task.",
    ]


@pytest.mark.parametrize(("pieces", "said"), [("[]", "empty"), ("", "empty"),
                                              ("a piece", '"a piece" (text)')])
def test_pieces_must_be_a_list_of_pieces(pieces: str, said: str) -> None:
    assert problems(f"task: t\npieces: {pieces}\n") == [
        f"plan.yaml:2: the plan, `pieces`: is {said}, but it must be a list of pieces, "
        "each with `id` and `task`."]


def test_unknown_keys_suggest_the_near_miss() -> None:
    lines = problems(plan_of("""
        id: a
        task: t
        machin: box
        colour: red
        """, head="task: t\nbudgt: 2\n"))
    assert lines == [
        "plan.yaml:2: the plan: unknown key `budgt`; did you mean `budget`? "
        "Known keys: task, budget, pieces.",
        "plan.yaml:6: piece a: unknown key `machin`; did you mean `machine`? Known keys: id, task, size, "
        "after, machine, agent, model, run, paths, plan_first, writes, check.",
        "plan.yaml:7: piece a: unknown key `colour`. Known keys: id, task, size, after, machine, agent, "
        "model, run, paths, plan_first, writes, check.",
    ]


def test_the_hint_says_what_to_do_in_which_file() -> None:
    with pytest.raises(SettingsError) as info:
        load_plan("task: t\nbudgt: 2\npieces: [{id: a, task: t}]\n", "plans/q3.yaml")
    assert info.value.hint == "in plans/q3.yaml, rename `budgt` to `budget`"


def test_a_budget_on_a_piece_is_pointed_to_the_plan() -> None:
    assert problems(plan_of("id: a\ntask: t\nbudget: 1")) == [
        "plan.yaml:5: piece a: `budget` is set for the whole plan, not per piece; each piece's share "
        "follows its `size`."]


def test_bad_and_missing_ids_name_the_piece_by_position() -> None:
    lines = problems(plan_of("id: a\ntask: t", "id: Orders API\ntask: t\nsize: 0", "task: no id"))
    assert lines == [
        'plan.yaml:5: pieces[1], `id`: "Orders API" is not a piece id: only a-z, 0-9 and - are allowed, '
        'not " ", "A", "I", "O", "P".',
        "plan.yaml:7: pieces[1], `size`: is 0, but it must be a number from 0.01 to 1,000 (relative, default 1).",
        "plan.yaml:8: pieces[2]: `id` is missing.",
    ]


def test_a_whole_number_id_is_read_as_text() -> None:
    plan = load_plan(plan_of("id: 1\ntask: t", "id: 2\ntask: t\nafter: [1]"), "p.yaml")
    assert [p.id for p in plan.pieces] == ["1", "2"] and plan.pieces[1].after == ("1",)
    assert problems(plan_of("id: 1.5\ntask: t"))[0] == \
        'plan.yaml:3: pieces[0], `id`: 1.5 is not a piece id: it must be text (a-z, 0-9 and -, 1 to 48 ' \
        "characters, not starting or ending with -)."


def test_a_piece_that_is_not_a_mapping() -> None:
    assert problems("task: t\npieces:\n  - {id: a, task: t}\n  - 5\n") == [
        "plan.yaml:4: pieces[1]: is 5 (a number), but a piece must be a mapping with `id` and `task`."]


def test_duplicate_ids() -> None:
    assert problems(plan_of("id: a\ntask: t", "id: b\ntask: t", "id: a\ntask: u")) == [
        'plan.yaml:7: pieces[2], `id`: "a" is already the id of pieces[0]; ids must be unique in the plan.']


def test_after_naming_no_piece_points_at_the_item() -> None:
    text = "task: t\npieces:\n  - id: orders-api\n    task: t\n  - id: b\n    task: t\n" \
           "    after:\n      - orders-api\n      - orders-apii\n      - zzz\n"
    assert problems(text) == [
        'plan.yaml:9: piece b, `after`: "orders-apii" is no piece of this plan; did you mean "orders-api"?',
        'plan.yaml:10: piece b, `after`: "zzz" is no piece of this plan.',
    ]


def test_a_bad_id_in_after() -> None:
    assert problems(plan_of("id: a\ntask: t\nafter: [B]"))[0].startswith(
        'plan.yaml:5: piece a, `after`: "B" is not a piece id')


def test_a_cycle_names_the_pieces_in_it() -> None:
    lines = problems(plan_of("id: a\ntask: t\nafter: [b]", "id: b\ntask: t\nafter: [a]", "id: c\ntask: t"))
    assert lines == ["plan.yaml:5: pieces wait for each other in a circle, so none could start: a → b → a "
                     "(each waits for the next)."]


def test_a_longer_cycle_and_a_piece_waiting_for_itself() -> None:
    lines = problems(plan_of("id: s\ntask: t\nafter: s", "id: a\ntask: t\nafter: [c]",
                             "id: b\ntask: t\nafter: [a]", "id: c\ntask: t\nafter: [b]"))
    assert lines == [
        "plan.yaml:5: piece s, `after`: it waits for itself, so it could never start.",
        "plan.yaml:8: pieces wait for each other in a circle, so none could start: a → c → b → a "
        "(each waits for the next).",
    ]


def test_run_needs_the_shell_agent_and_the_shell_agent_needs_run() -> None:
    lines = problems(plan_of("id: a\ntask: t\nrun: make", "id: b\ntask: t\nagent: codex\nrun: make",
                             "id: c\ntask: t\nagent: shell"))
    assert lines == [
        "plan.yaml:5: piece a, `run`: a command to run needs `agent: shell`, but the piece has no `agent`.",
        "plan.yaml:9: piece b, `run`: a command to run needs `agent: shell`, "
        "but the piece has `agent: codex`.",
        "plan.yaml:12: piece c, `agent`: the shell agent needs `run`, the command it runs in the worktree.",
    ]


def test_an_unknown_agent() -> None:
    assert problems(plan_of("id: a\ntask: t\nagent: claud", "id: b\ntask: t\nagent: gpt")) == [
        'plan.yaml:5: piece a, `agent`: "claud" is not an agent; did you mean "claude"? '
        "Agents: claude, codex, pi, shell.",
        'plan.yaml:8: piece b, `agent`: "gpt" is not an agent. Agents: claude, codex, pi, shell.',
    ]


def test_machines_are_checked_against_the_known_ones_and_local_is_always_known() -> None:
    text = plan_of("id: a\ntask: t\nmachine: build-bx", "id: b\ntask: t\nmachine: local",
                   "id: c\ntask: t\nmachine: faraway")
    lines = problems(text, known_machines={"build-box"})
    assert lines == [
        'plan.yaml:5: piece a, `machine`: "build-bx" is not a known machine; did you mean "build-box"? '
        "Known machines: build-box, local.",
        'plan.yaml:11: piece c, `machine`: "faraway" is not a known machine. '
        "Known machines: build-box, local.",
    ]
    assert load_plan(text, "plan.yaml").pieces[2].machine == "faraway", "unchecked when none are given"


def test_a_machine_name_that_would_be_an_ssh_option_is_refused() -> None:
    assert problems(plan_of("id: a\ntask: t\nmachine: -oProxyCommand=touch x")) == [
        'plan.yaml:5: piece a, `machine`: "-oProxyCommand=touch x" is not a machine name: '
        "it must not start with -."]


@pytest.mark.parametrize(("budget", "said"), [
    ("-1", "is -1"), ('"2.00"', 'is "2.00" (text)'), ("true", "is true (true/false)"),
    (".inf", "is inf (a number)"),
    ("[1]", "is a list"),
])
def test_the_budget_must_be_a_number_of_dollars(budget: str, said: str) -> None:
    assert problems(plan_of("id: a\ntask: t", head=f"task: t\nbudget: {budget}\n")) == [
        f"plan.yaml:2: the plan, `budget`: {said}, but it must be a number of US dollars from 0 to 100,000."]


@pytest.mark.parametrize(("size", "said"), [("-2", "is -2"), ("0", "is 0"), ("big", 'is "big" (text)'),
                                            (".nan", "is nan (a number)")])
def test_the_size_must_be_above_zero(size: str, said: str) -> None:
    problem = problems(plan_of(f"id: a\ntask: t\nsize: {size}", "id: b\ntask: t\nsize: 0.5"))
    assert problem == [f"plan.yaml:5: piece a, `size`: {said}, but it must be a number from 0.01 to 1,000 "
                       "(relative, default 1)."]


@pytest.mark.parametrize(("task", "said"), [('""', "empty"), ('"   "', "empty"), ("", "empty"),
                                            ("42", "42 (a number)"), ("[a]", "a list")])
def test_task_text_must_not_be_empty(task: str, said: str) -> None:
    assert problems(plan_of(f"id: a\ntask: {task}", head=f"task: {task}\n")) == [
        f"plan.yaml:1: the plan, `task`: is {said}, but it must be text.",
        f"plan.yaml:4: piece a, `task`: is {said}, but it must be text.",
    ]


def test_paths_stay_inside_the_repository() -> None:
    lines = problems(plan_of('id: a\ntask: t\npaths: ["/etc/**", "../x", "ok/**", 3, ""]'))
    assert lines == [
        'plan.yaml:5: piece a, `paths`: "/etc/**" leaves the repository; paths are globs relative to its '
        "top folder.",
        'plan.yaml:5: piece a, `paths`: "../x" leaves the repository; paths are globs relative to its '
        "top folder.",
        "plan.yaml:5: piece a, `paths`: an item is 3 (a number), but it must be a glob such as `src/**`.",
        "plan.yaml:5: piece a, `paths`: an item is empty, but it must be a glob such as `src/**`.",
    ]


def test_every_problem_is_reported_at_once_in_file_order() -> None:
    text = plan_of("id: a\ntask: t\nafter: [nope]\nagent: pie", "id: a\ntask: ''",
                   head="task: t\nbudget: -3\n")
    lines = problems(text, source="q.yaml")
    assert [line.split(":")[1] for line in lines] == ["2", "6", "7", "8", "9"], lines
    assert all(line.startswith("q.yaml:") for line in lines)


def test_merge_keys_still_load_and_report() -> None:
    text = "base: &b {task: shared, size: 0}\n"
    assert problems(text + "task: t\npieces:\n  - <<: *b\n    id: a\n") == [
        "plan.yaml:1: the plan: unknown key `base`. Known keys: task, budget, pieces.",
        "plan.yaml:4: piece a, `size`: is 0, but it must be a number from 0.01 to 1,000 (relative, default 1).",
    ], "a merged key has no line of its own: the piece's line stands in"


def three(budget: float | None = 2.0, sizes: tuple[float, ...] = (1, 1, 1)) -> Plan:
    pieces = [Piece(id=f"p{i}", task="t", size=s) for i, s in enumerate(sizes)]
    return Plan(task="t", budget=budget, pieces=tuple(pieces))


def test_shares_are_whole_cents_summing_exactly() -> None:
    assert budget_shares(three()) == {"p0": 0.67, "p1": 0.67, "p2": 0.66}
    assert budget_shares(three(1.0, (2, 1, 1))) == {"p0": 0.5, "p1": 0.25, "p2": 0.25}
    assert budget_shares(three(0.01)) == {"p0": 0.01, "p1": 0.0, "p2": 0.0}
    assert budget_shares(three(0.0)) == {"p0": 0.0, "p1": 0.0, "p2": 0.0}


def test_the_largest_remainder_gets_the_spare_cent() -> None:
    # 1.00 over 1, 2, 3.5: exact 15.38, 30.77, 53.85 cents; the spare cent goes to 30.77.
    assert budget_shares(three(1.0, (1, 2, 3.5))) == {"p0": 0.15, "p1": 0.31, "p2": 0.54}


def test_shares_sum_exactly_for_many_sizes() -> None:
    rng = random.Random(7)
    for _ in range(200):
        sizes = tuple(rng.choice([0.5, 1, 1, 2, 3, 0.1, 7.25]) for _ in range(rng.randint(1, 9)))
        budget = round(rng.uniform(0, 50), 2)
        shares = budget_shares(three(budget, sizes))
        assert sum(Decimal(str(v)) for v in shares.values()) == Decimal(str(budget)).quantize(Decimal("0.01"))
        assert all(Decimal(str(v)) == Decimal(str(v)).quantize(Decimal("0.01")) for v in shares.values())


def test_the_flag_overrides_the_file_and_no_budget_gives_none() -> None:
    assert budget_shares(three(), 3.0) == {"p0": 1.0, "p1": 1.0, "p2": 1.0}
    assert budget_shares(three(None)) == {"p0": None, "p1": None, "p2": None}
    assert budget_shares(three(None), 0.3) == {"p0": 0.1, "p1": 0.1, "p2": 0.1}
    assert budget_shares(three(0.999)) == {"p0": 0.33, "p1": 0.33, "p2": 0.33}, "never more than given"
    with pytest.raises(BalancedError) as info:
        budget_shares(three(), -1)
    assert info.value.message == "--budget -1 is not a number of US dollars from 0 to 100,000."


def test_a_plan_reads_back_from_its_json() -> None:
    plan = with_shares(load_plan(DESIGN_PLAN, "p.yaml"))
    again = Plan.model_validate_json(plan.model_dump_json())
    assert again == plan, "what is stored in a ref reads back the same"
    assert [p.budget_usd for p in again.pieces] == [1.0, 0.5, 0.5]


def test_with_shares_fills_each_piece() -> None:
    filled = with_shares(three(), 2.5)
    assert [p.budget_usd for p in filled.pieces] == [0.84, 0.83, 0.83] and filled.budget == 2.5
    assert [p.budget_usd for p in with_shares(three()).pieces] == [0.67, 0.67, 0.66]


def test_waves() -> None:
    plan = load_plan(plan_of("id: d\ntask: t\nafter: [b, c]", "id: b\ntask: t\nafter: a", "id: a\ntask: t",
                             "id: c\ntask: t\nafter: a", "id: e\ntask: t"), "p.yaml")
    assert order(plan) == [["a", "e"], ["b", "c"], ["d"]]
    assert order(load_plan(DESIGN_PLAN, "p.yaml")) == [["orders-api", "orders-page"], ["orders-tests"]]


def test_describe_after() -> None:
    def piece(*after: str) -> Piece:
        return Piece(id="x", task="t", after=after)

    assert describe_after(piece()) == ""
    assert describe_after(piece("alpha")) == "After: alpha (starts once landed)"
    assert describe_after(piece("alpha", "beta")) == "After: alpha and beta (starts once landed)"
    assert describe_after(piece("a", "b", "c")) == "After: a, b and c (starts once landed)"


def test_models_built_by_hand_keep_the_same_rules() -> None:
    with pytest.raises(ValidationError, match="a → b → a wait in a circle"):
        Plan(task="t", pieces=(Piece(id="a", task="t", after=("b",)), Piece(id="b", task="t", after=("a",))))
    with pytest.raises(ValidationError, match="id a is used twice"):
        Plan(task="t", pieces=(Piece(id="a", task="t"), Piece(id="a", task="u")))
    with pytest.raises(ValidationError, match="a waits for z, which is no piece"):
        Plan(task="t", pieces=(Piece(id="a", task="t", after=("z",)),))
    with pytest.raises(ValidationError, match="`run` goes with `agent: shell`"):
        Piece(id="a", task="t", run="make")
    with pytest.raises(ValidationError, match="not a piece id"):
        Piece(id="A", task="t")
    piece = Piece(id="a", task="t")
    with pytest.raises(FrozenInstanceError):
        piece.size = 3  # type: ignore[misc]


def test_plan_first_is_true_or_false_and_only_for_claude() -> None:
    ok = load_plan(plan_of("id: a\ntask: t\nagent: claude\nplan_first: true", "id: b\ntask: t"), "plan.yaml")
    assert [p.plan_first for p in ok.pieces] == [True, False]
    assert problems(plan_of("id: a\ntask: t\nagent: codex\nplan_first: true",
                            "id: b\ntask: t\nplan_first: sure")) == [
        "plan.yaml:6: piece a, `plan_first`: only a Claude Code worker shows a plan before it starts.",
        "plan.yaml:9: piece b, `plan_first`: it is true or false."]
