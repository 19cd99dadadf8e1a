"""Landing checks on an idle ticked machine (landing/machine_checks.py, the runner's `landcheck`): they are hints
that choose what this machine checks, never verdicts. With a real sshd machine: an honest one's checks steer the
rounds, a lying one cannot make a bad tree land or a good branch be refused, one that is down is dropped, one busy
with a worker or turned off by `check_machines = false` is not asked."""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from git_balanced import jobs as J
from git_balanced.git import Repo
from git_balanced.landing import machine_checks, speculate
from git_balanced.landing.bisect import Search, search
from git_balanced.lead import open_lead
from git_balanced.state import notes
from tests.support.builders import commit, git, make_repo
from tests.support.cli import balanced
from tests.support.landing import branches, check_runs, landed_subjects, tip_passed
from tests.support.sshd import Machine, known_in, module_machine

# Fails when a file under src/ says BAD; where `$HOME/lie` exists (the machine's home, in these tests) it says
# the opposite. Each run on this machine is counted in $HOME/check-runs (the machine's home is read-only there).
CHECK = ('if [ -f "$HOME/lie" ]; then L=1; else L=0; fi; if grep -rq BAD src; then R=1; else R=0; fi; '
         'echo run 2>/dev/null >> "$HOME/check-runs"; [ $L = 1 ] && R=$((1-R)); exit $R')


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Machine, Path]]:
    with module_machine(tmp_path_factory.mktemp("landmachine"), "alpha") as found:
        yield found


@pytest.fixture
def alpha(box: tuple[Machine, Path], sealed: Path) -> Iterator[Machine]:
    """The module's machine, known in this test's HOME, telling the truth unless the test says otherwise."""
    m, config = box
    known_in(config, sealed)
    (m.home / "lie").unlink(missing_ok=True)
    yield m
    (m.home / "lie").unlink(missing_ok=True)
    if not m.alive():
        m.restart()


def lead(tmp_path: Path, extra: str = "") -> Path:
    """A lead with CHECK on one check slot, alpha ticked and ready."""
    settings = f'[worktree]\ncheck = {json.dumps(CHECK)}\n[balanced]\nagent = "shell"\ncheck_slots = 1\n{extra}'
    repo = make_repo(tmp_path / "lead", {"src/base.txt": "ok\n", ".magnum/settings.toml": settings})
    for args in (["allow", "--yes"], ["tick", "local", "alpha"], ["ready", "--yes"]):
        ran = balanced(repo, *args)
        assert ran.code == 0, (args, ran)
    return repo


def land(repo: Path, names: list[str]) -> dict:
    ran = balanced(repo, "land", *names, "--json")
    assert ran.out.strip(), ran
    return json.loads(ran.out)


def outcome(data: dict) -> list[tuple[str, str]]:
    return sorted((v["branch"], v["status"]) for v in data["verdicts"])


def serial(names: list[str], bad: set[int]) -> list[tuple[str, str]]:
    """What the serial queue decides: the bad branches refused, every other one landed."""
    return sorted((n, "check_failed" if i in bad else "landed") for i, n in enumerate(names, 1))


def own_results_only(repo: Path, data: dict) -> None:
    """The lead's check notes hold only its own results; the machine's are in HINTS, apart."""
    r = Repo.discover(repo)
    for row in data["machine_checks"]:
        assert row["hint"] is True and row["machine"] == "alpha", row
        kept = notes.read_json(r, machine_checks.HINTS, row["tree"])
        assert any(k["machine"] == "alpha" and k["hint"] is True for k in kept), kept
        assert all("machine" not in k for k in notes.read_json(r, notes.CHECKS, row["tree"])), row


# -- the steering itself, with every way a machine can lie ----------------------------------------------------
def test_hints_never_change_what_the_search_finds_whatever_they_say() -> None:
    """For every culprit set of a small chain and hints true, inverted or random, the search steered by them
    finds the same longest passing prefix and first culprit as without them, from the lead's own results."""
    rng = random.Random(7)
    for n, slots in itertools.product((1, 2, 5, 9), (1, 2, 4)):
        for bad in [set(), *({b} for b in range(1, n + 1)), {1, n}, set(rng.sample(range(1, n + 1), min(2, n)))]:
            truth = {i: not any(b <= i for b in bad) for i in range(1, n + 1)}
            lies = {"true": truth, "inverted": {i: not ok for i, ok in truth.items()},
                    "random": {i: rng.random() < 0.5 for i in truth}, "all pass": dict.fromkeys(truth, True)}
            plain = search(n, lambda idx, t=truth: {i: t[i] for i in idx}, slots)
            for name, hints in ((k, dict(v)) for k, v in lies.items()):
                def guide(s: Search, todo: list[int], h: dict[int, bool] = hints, k: int = slots) -> list[int]:
                    if any(h.get(i, ok) != ok for i, ok in s.passed.items()):  # contradicted once: dropped (`confirm`)
                        h.clear()
                    return machine_checks.picks(s, h, k) or todo

                got = speculate.search(n, lambda idx, ahead, t=truth: {i: t[i] for i in idx}, slots, guide=guide)
                assert (got.lo, got.hi) == (plain.lo, plain.hi), (n, slots, bad, name)
                assert got.rounds <= 2 * plain.rounds + 2, (n, slots, bad, name, got.rounds, plain.rounds)
                if name == "true" and bad:
                    assert got.rounds <= 2, (n, slots, bad, got.rounds)


def test_machines_take_the_prefixes_the_lead_does_not() -> None:
    s = Search(16, {})
    assert machine_checks.spare(s, {}, [16], set(), 3) == [4, 8, 12]
    assert machine_checks.spare(s, {}, [4, 8, 12, 16], set(), 2) == [2, 6]
    narrowed = Search(16, {4: True, 8: False})
    assert machine_checks.spare(narrowed, {}, [6], set(), 2) == [5, 7]
    assert machine_checks.spare(narrowed, {6: True}, [7], set(), 1) == [], "the hints leave nothing else to ask"
    assert machine_checks.spare(narrowed, {}, [6], {5}, 2) == [7], "one a machine holds is not asked twice"
    assert machine_checks.picks(narrowed, {5: True, 6: False}, 4) == [5, 6], "the culprit's neighbourhood"
    assert machine_checks.picks(narrowed, {}, 4) == [], "no hints: the search's own round"


# -- a real machine ------------------------------------------------------------------------------------------
@pytest.mark.sshd
def test_an_honest_machine_steers_the_rounds_and_its_checks_are_hints(alpha: Machine, tmp_path: Path) -> None:
    repo = lead(tmp_path)
    names = branches(repo, 8, {6})
    data = land(repo, names)
    assert outcome(data) == serial(names, {6}), data
    assert tip_passed(repo) and not bad_in_main(repo)
    assert data["machine_checks"], "alpha is idle and ready: it takes checks"
    assert data["machines_dropped"] == {}, data
    # The serial queue's 5 rounds (8, 4, 6, 5, then f7 and f8 again) at most: 4 when alpha's hints on 4 and 5
    # come back within the second each round waits for them. Only this machine's own runs are counted.
    assert data["rounds"] <= 5 and check_runs(Path.home()) == data["check_runs"], data
    own_results_only(repo, data)


@pytest.mark.sshd
def test_a_lying_machine_cannot_land_a_bad_tree_or_refuse_a_good_branch(alpha: Machine, tmp_path: Path) -> None:
    repo = lead(tmp_path)
    (alpha.home / "lie").write_text("every answer inverted\n")
    names = branches(repo, 8, {3})
    data = land(repo, names)
    assert outcome(data) == serial(names, {3}), data
    assert tip_passed(repo) and not bad_in_main(repo)
    assert landed_subjects(repo)[0].startswith("Land f8"), landed_subjects(repo)
    lies = list(data["machine_checks"])
    assert lies and all(r["hint"] for r in lies), data
    own_results_only(repo, data)
    for r in lies:  # a tree the lead checked too: its own result is the one kept, and the liar was dropped
        own = notes.read_json(Repo.discover(repo), notes.CHECKS, r["tree"])
        if own:
            assert own[-1]["result"] != r["result"], (own, r)
            assert data["machines_dropped"]["alpha"].startswith(f"it said {r['result']} for tree "), data
    # a second landing on the same (now dropped-and-forgotten) machine is as safe
    more = branches_after(repo, ["g1", "g2", "g3"], bad="g2")
    again = land(repo, more)
    assert outcome(again) == [("g1", "landed"), ("g2", "check_failed"), ("g3", "landed")], again
    assert tip_passed(repo)


def bad_in_main(repo: Path) -> list[str]:
    """The files under src/ on the lead's branch that say BAD."""
    files = git(repo, "ls-tree", "-r", "--name-only", "main", "--", "src").splitlines()
    return [f for f in files if "BAD" in git(repo, "show", f"main:{f}")]


def branches_after(repo: Path, names: list[str], bad: str) -> list[str]:
    for name in names:
        git(repo, "branch", name, "main")
        git(repo, "switch", "-q", name)
        commit(repo, {f"src/{name}.txt": "BAD\n" if name == bad else f"good {name}\n"}, name)
        git(repo, "switch", "-q", "main")
    return names


@pytest.mark.sshd
def test_a_machine_that_is_down_is_dropped_without_harm(alpha: Machine, tmp_path: Path) -> None:
    repo = lead(tmp_path)
    names = branches(repo, 4, {2})
    alpha.cut()
    data = land(repo, names)
    assert outcome(data) == serial(names, {2}), data
    assert data["machine_checks"] == [] and data["machines_dropped"]["alpha"].startswith("it did not answer"), data
    more = branches_after(repo, ["h1", "h2"], bad="h1")
    said = balanced(repo, "land", *more)  # the words name the machine dropped
    assert said.code == 1 and "alpha was dropped from this landing: it did not answer" in said.err, said


@pytest.mark.sshd
def test_a_busy_machine_or_the_setting_off_takes_no_check(alpha: Machine, tmp_path: Path) -> None:
    repo = lead(tmp_path, "check_machines = false\n")
    before = len(alpha.commands())
    names = branches(repo, 4, {3})
    data = land(repo, names)
    assert outcome(data) == serial(names, {3}) and data["machine_checks"] == [], data
    assert not any("landcheck" in c for c in alpha.commands()[before:]), "the setting is off: nothing asked there"

    settings = git(repo, "show", "main:.magnum/settings.toml").replace("check_machines = false\n", "")
    commit(repo, {".magnum/settings.toml": settings}, "machines take checks again")
    lead_of = open_lead(str(repo))
    assert machine_checks.idle(lead_of) == ["alpha"]
    J.place(lead_of.repo, {"plan": "p1", "piece": "w", "task": "t", "lead": "main", "machine": "alpha",
                           "agent": "shell"})
    assert machine_checks.idle(lead_of) == [], "a worker is placed there: the machine is not idle"
    names = branches_after(repo, ["b1", "b2", "b3"], bad="b2")
    data = land(repo, names)
    assert outcome(data) == serial(names, {2}) and data["machine_checks"] == [], data


def test_the_runner_checks_exactly_that_commit_in_a_scratch_folder_it_removes(tmp_path: Path) -> None:
    """The runner's `landcheck`, as a machine runs it: the commit's own tree, the code and tail of the check, the
    folder gone after; a request it cannot act on is refused, naming the key."""
    from git_balanced.shipped import landcheck, runner

    copy = make_repo(tmp_path / "copy", {"src/a.txt": "BAD\n"})
    sha = git(copy, "rev-parse", "HEAD")
    commit(copy, {"src/a.txt": "fine\n"}, "fixed")  # the copy moved on: the commit asked for is what is checked
    check = 'cat src/a.txt; touch "$HOME/written-by-the-check" 2>/dev/null; grep -q BAD src/a.txt && exit 3; exit 0'
    ans = runner._act("landcheck", {"copy": str(copy), "commit": sha, "command": check, "timeout": 30, "slot": "t"})
    assert ans["code"] == 3 and ans["passed"] is False and ans["tail"].startswith("BAD"), ans
    assert ans["tree"] == git(copy, "rev-parse", f"{sha}^{{tree}}"), ans
    assert not Path(landcheck.landcheck_folder(str(copy), "t")).exists(), "the scratch folder is removed"
    if ans["penned"]:  # the machine's home is read-only to the check where the pen can be made
        assert not (Path.home() / "written-by-the-check").exists()
    refused = runner._act("landcheck", {"copy": str(copy), "commit": "HEAD", "command": "true"})
    assert "`commit` must be a full commit id" in refused["error"], refused


@pytest.mark.parametrize("lead_first", [True, False])
def test_a_liar_is_dropped_whichever_comes_first_its_hint_or_the_leads_own_check(tmp_path: Path,
                                                                                lead_first: bool) -> None:
    """Under load a machine's hint can come after the lead checked the same tree itself: it is caught all the
    same (a landing once kept a liar whose hint came late)."""
    repo = make_repo(tmp_path / "r")
    m = machine_checks.Machines(open_lead(str(repo)), "true", None, 60.0)
    hint = machine_checks.Hint(machine="alpha", tree="a" * 40, commit="b" * 40, passed=False, code=1, tail="",
                               seconds=1.0, at=0.0)
    truthful = machine_checks.Hint(machine="beta", tree="c" * 40, commit="d" * 40, passed=True, code=0, tail="",
                                   seconds=1.0, at=0.0)
    steps = [lambda: m.confirm(hint.tree, True), lambda: m.heard(hint)]
    for step in steps if lead_first else steps[::-1]:
        step()
    m.heard(truthful)
    m.confirm(truthful.tree, True)
    assert m.dropped == {"alpha": f"it said fail for tree {'a' * 12}, where this machine's own check said pass"}
