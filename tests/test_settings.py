"""Reading `.magnum/settings.toml`, its error messages, and `init`'s writing of it."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from pydantic import ValidationError

from git_balanced.errors import BalancedError, SettingsError, UsageError
from git_balanced.settings import (
    Settings,
    load_settings,
    load_settings_text,
    render_settings,
    toml_string,
    toml_value,
    write_settings,
)
from tests.support.builders import commit, git, make_repo

DESIGN_EXAMPLE = """\
[worktree]
setup = "pip install -e ."    # readies a new copy; optional
check = "pytest -q"           # decides landing

[balanced]
agent = "claude"              # claude | codex | pi | shell
model = "sonnet"
attempts = 3
cap = 10                      # running workers across all machines
reserve = 20                  # percent of each plan window kept for you: 0, 10, 20, 30, 50
workers_edit_without_asking = true
lead_allows_commands = false

[agents.claude]
models = ["haiku", "sonnet", "opus"]   # the ladder a retry climbs
"""

SRC = "/r/.magnum/settings.toml"


def fails(text: str, source: str = SRC) -> SettingsError:
    with pytest.raises(SettingsError) as info:
        load_settings_text(text, source)
    return info.value


def write(root: Path, text: str | bytes) -> Path:
    path = root / ".magnum" / "settings.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


# --- reading -------------------------------------------------------------------------------------------


def test_missing_file_gives_the_defaults(tmp_path: Path) -> None:
    s = load_settings(tmp_path)
    assert s == Settings()
    assert (s.worktree.setup, s.worktree.check) == (None, None), "no commands unless written"
    b = s.balanced
    assert (b.agent, b.model, b.attempts, b.cap, b.reserve) == ("claude", "sonnet", 3, 10, 20)
    assert (b.workers_edit_without_asking, b.lead_allows_commands) == (True, False)
    assert (b.check_slots, b.ask_timeout) == (0, 600), "0: check slots as many as the cores"
    assert s.ladder() == ("haiku", "sonnet", "opus")


def test_the_design_example_reads_as_written(tmp_path: Path) -> None:
    write(tmp_path, DESIGN_EXAMPLE)
    s = load_settings(tmp_path)
    assert s.worktree.setup == "pip install -e ."
    assert s.worktree.check == "pytest -q"
    assert s.balanced.reserve == 20
    assert s.agents.claude is not None and s.agents.claude.models == ("haiku", "sonnet", "opus")


def test_every_key_is_read(tmp_path: Path) -> None:
    write(tmp_path, """
[worktree]
check = "make check"
[balanced]
agent = "codex"
model = "gpt-5-codex"
attempts = 5
cap = 2
reserve = 50
workers_edit_without_asking = false
lead_allows_commands = true
check_slots = 3
ask_timeout = 90
[agents.codex]
models = ["gpt-5-codex-mini", "gpt-5-codex"]
""")
    b = load_settings(tmp_path).balanced
    assert (b.agent, b.model, b.attempts, b.cap, b.reserve) == ("codex", "gpt-5-codex", 5, 2, 50)
    assert (b.workers_edit_without_asking, b.lead_allows_commands, b.check_slots, b.ask_timeout) == (
        False, True, 3, 90)


def test_takeover_after_defaults_to_ten_minutes(tmp_path: Path) -> None:
    assert load_settings(tmp_path).balanced.takeover_after == 600
    write(tmp_path, "[balanced]\ntakeover_after = 90\n")
    assert load_settings(tmp_path).balanced.takeover_after == 90


def test_settings_are_frozen() -> None:
    s = Settings()
    with pytest.raises(ValidationError):
        s.balanced.cap = 99  # type: ignore[misc]
    assert s.balanced.cap == 10


@pytest.mark.parametrize("reserve", [0, 10, 20, 30, 50])
def test_each_allowed_reserve(reserve: int) -> None:
    assert load_settings_text(f"[balanced]\nreserve = {reserve}\n", SRC).balanced.reserve == reserve


def test_the_model_default_follows_the_agent() -> None:
    assert load_settings_text('[balanced]\nagent = "codex"\n', SRC).balanced.model is None, \
        "sonnet means nothing to codex: the agent's own default"
    assert load_settings_text('[balanced]\nagent = "claude"\n', SRC).balanced.model == "sonnet"
    assert load_settings_text('[balanced]\nagent = "pi"\nmodel = "m1"\n', SRC).balanced.model == "m1"


def test_ladder_and_climbing() -> None:
    s = load_settings_text('[balanced]\nagent = "pi"\nmodel = "small"\n'
                           '[agents.pi]\nmodels = ["small", "big"]\n', SRC)
    assert s.ladder() == ("small", "big")
    assert s.stronger_model("small") == "big"
    assert s.stronger_model("big") is None, "the top of the ladder has nowhere to climb"
    assert s.stronger_model("other") is None
    assert s.ladder("claude") == ("haiku", "sonnet", "opus"), "claude keeps its default ladder"
    assert s.stronger_model("haiku", "claude") == "sonnet"
    bare = load_settings_text('[balanced]\nagent = "codex"\nmodel = "x"\n', SRC)
    assert bare.ladder() == ("x",), "without a ladder the configured model is the only step"


# --- errors --------------------------------------------------------------------------------------------


def test_unknown_key_suggests_the_near_miss() -> None:
    err = fails("[balanced]\natempts = 3\n")
    assert str(err).startswith(f"{SRC}: unknown key `balanced.atempts`; did you mean `balanced.attempts`?")
    assert "Known keys in [balanced]: agent, model, attempts" in str(err)
    assert err.hint == f"in {SRC}, rename `balanced.atempts` to `balanced.attempts`"


def test_key_in_the_wrong_table_names_where_it_belongs() -> None:
    err = fails('check = "pytest"\n')
    assert "unknown key `check`; did you mean `worktree.check`?" in str(err)
    assert "Known keys in the top level: worktree, balanced, agents, landing, pr." in str(err)


def test_unknown_key_without_a_near_miss() -> None:
    err = fails("[worktree]\nzzz = 1\n")
    assert str(err) == (f"{SRC}: unknown key `worktree.zzz`. Known keys in [worktree]: "
                        "setup, check, protect, check_timeout, env.")
    assert err.hint == f"in {SRC}, remove `worktree.zzz`"


def test_protect_is_a_list_of_globs() -> None:
    assert load_settings_text('[worktree]\nprotect = ["tests/**", "conftest.py"]\n', SRC).worktree.protect == (
        "tests/**", "conftest.py")
    err = fails('[worktree]\nprotect = "tests/**"\n')
    assert str(err) == (f'{SRC}: `worktree.protect` is "tests/**" (a string), but it must be a list of path globs '
                        '(one line each, up to 1,000), such as ["tests/**"].')
    assert "`worktree.protect` item 2 is 3 (a number)" in str(fails('[worktree]\nprotect = ["a", 3]\n'))


def test_unknown_agent_table() -> None:
    err = fails('[agents.claud]\nmodels = ["a"]\n')
    assert "unknown key `agents.claud`; did you mean `agents.claude`?" in str(err)
    assert "Known keys in [agents]: claude, codex, pi, shell." in str(err)


def test_wrong_type_names_key_value_and_what_is_allowed() -> None:
    err = fails('[balanced]\nattempts = "3"\n')
    assert str(err) == (f'{SRC}: `balanced.attempts` is "3" (a string), '
                        "but it must be a whole number from 1 to 100.")
    assert err.hint == f"in {SRC}, set `balanced.attempts` to a whole number from 1 to 100"


@pytest.mark.parametrize("text, shown", [
    ("[balanced]\ncap = true\n", "`balanced.cap` is true (a boolean)"),
    ("[balanced]\nask_timeout = 1.5\n", "`balanced.ask_timeout` is 1.5 (a number)"),
    ('[balanced]\nlead_allows_commands = "yes"\n', '`balanced.lead_allows_commands` is "yes" (a string)'),
    ("[worktree]\ncheck = 3\n", "`worktree.check` is 3 (a number), but it must be a non-empty command line"),
    ("balanced = 3\n", "`balanced` is 3 (a number), but it must be a table [balanced]"),
    ('[agents.claude]\nmodels = ["a", 3]\n', "`agents.claude.models` item 2 is 3 (a number)"),
])
def test_wrong_types(text: str, shown: str) -> None:
    assert shown in str(fails(text))


@pytest.mark.parametrize("text, shown", [
    ("[balanced]\nreserve = 25\n",
     "`balanced.reserve` is 25, but it must be one of 0, 10, 20, 30, 50 (percent)."),
    ('[balanced]\nagent = "gpt"\n',
     '`balanced.agent` is "gpt", but it must be one of "claude", "codex", "pi", "shell".'),
    ("[balanced]\ncap = 0\n",
     "`balanced.cap` is 0, but it must be a whole number of running workers from 1 to 1,000."),
    ("[balanced]\ncheck_slots = -1\n",
     "`balanced.check_slots` is -1, but it must be a whole number of checks"),
    ('[worktree]\ncheck = "  "\n',
     '`worktree.check` is "  ", but it must be a non-empty command line of at most 65,536 bytes, without a NUL.'),
    ("[agents.claude]\nmodels = []\n", "`agents.claude.models` is [], but it must be a list of 1 to 50 model names"),
    ("[agents.pi]\n", "`agents.pi.models` is missing; it must be a list of 1 to 50 model names"),
    ("[balanced]\ntakeover_after = 0\n",
     "`balanced.takeover_after` is 0, but it must be a whole number of seconds from 1 to 604,800 (a week)."),
    ('[balanced]\ntakeover_after = "10m"\n',
     '`balanced.takeover_after` is "10m" (a string), but it must be a whole number of seconds from 1 to '
     '604,800 (a week).'),
])
def test_values_outside_what_is_allowed(text: str, shown: str) -> None:
    message = str(fails(text))
    assert message.startswith(f"{SRC}: {shown}"), message


def test_reserve_false_is_not_zero() -> None:
    # TOML `false` must not slip through as 0 (bool is an int in Python).
    assert "`balanced.reserve` is false (a boolean)" in str(fails("[balanced]\nreserve = false\n"))


def test_several_problems_are_reported_together() -> None:
    err = fails('[balanced]\nreserve = 25\nagnet = "pi"\n')
    lines = str(err).splitlines()
    assert len(lines) == 2, "one line per problem"
    assert any("`balanced.reserve` is 25" in line for line in lines)
    assert any("did you mean `balanced.agent`?" in line for line in lines)


def test_broken_toml_names_line_and_column() -> None:
    err = fails('[worktree]\ncheck = "pytest"\n[balanced\nattempts = 3\n')
    first = str(err).splitlines()[0]
    assert first == (f"{SRC} is not valid TOML at line 3, column 10: "
                     "Expected ']' at the end of a table declaration.")
    assert "    3 | [balanced" in str(err), "the line is shown"
    assert str(err).splitlines()[2] == "      |          ^", "a caret under column 10"
    assert err.hint == f"in {SRC}, fix line 3"


def test_broken_toml_at_the_end_of_the_document() -> None:
    err = fails('[worktree]\ncheck = "unclosed')
    assert f"{SRC} is not valid TOML at line 2, column" in str(err)


def test_duplicate_key_is_broken_toml() -> None:
    assert "is not valid TOML at line 3" in str(fails("[balanced]\ncap = 1\ncap = 2\n"))


def test_committed_settings_say_to_commit_the_fix() -> None:
    for source in ("HEAD:.magnum/settings.toml", ".magnum/settings.toml at HEAD"):
        err = fails("[balanced]\nreserve = 25\n", source)
        assert str(err).startswith(f"{source}: `balanced.reserve` is 25")
        assert err.hint is not None
        assert err.hint.startswith("in .magnum/settings.toml, set `balanced.reserve` to one of 0, 10")
        assert err.hint.endswith("then commit it (landing reads the committed settings)")


def test_file_that_is_not_utf8(tmp_path: Path) -> None:
    path = write(tmp_path, b'[worktree]\ncheck = "\xff"\n')
    with pytest.raises(SettingsError) as info:
        load_settings(tmp_path)
    assert str(info.value) == f"{path} is not UTF-8 text (byte 20)."


def test_errors_from_a_file_name_its_path(tmp_path: Path) -> None:
    path = write(tmp_path, "[balanced]\ncap = 0\n")
    with pytest.raises(SettingsError) as info:
        load_settings(tmp_path)
    assert str(info.value).startswith(f"{path}: `balanced.cap` is 0")


def test_committed_content_reads_like_the_file(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    write_settings(repo, check="pytest -q -k 'not slow'", setup="pip install -e .")
    commit(repo, {}, "settings")
    text = git(repo, "show", "HEAD:.magnum/settings.toml") + "\n"
    assert load_settings_text(text, "HEAD:.magnum/settings.toml") == load_settings(repo)


# --- writing -------------------------------------------------------------------------------------------


def test_write_defaults_reads_back_as_the_defaults(tmp_path: Path) -> None:
    path = write_settings(tmp_path)
    assert path == tmp_path / ".magnum" / "settings.toml"
    assert load_settings(tmp_path) == Settings(), "template and models agree on every default"
    text = path.read_text()
    assert '# check = "pytest -q"' in text, "without --check the line is there, commented out"
    assert "# Readies a new copy of the project" in text, "the template's comments are kept"


def test_write_with_commands_and_agent(tmp_path: Path) -> None:
    write_settings(tmp_path, check="pytest -q", setup="pip install -e .", agent="shell")
    s = load_settings(tmp_path)
    assert s.worktree.check == "pytest -q"
    assert (s.worktree.setup, s.balanced.agent) == ("pip install -e .", "shell")
    assert s.balanced.model is None, "no claude model name for the shell agent"


@pytest.mark.parametrize("command", [
    'pytest -q -k "not slow"',
    "grep -q 'a\\b' file && echo \"ok\"",
    'printf "%s\\n" "a\\"b" \'c\'',
    "C:\\tools\\check.exe",
    "echo 'single' \"double\" \\back",
    "line one\nline two\ttab",
    "caf\u00e9 \u2713 \x7f",
])
def test_commands_round_trip_exactly(tmp_path: Path, command: str) -> None:
    write_settings(tmp_path, check=command, setup=command + " --setup")
    s = load_settings(tmp_path)
    assert s.worktree.check == command, "the check reads back byte for byte"
    assert s.worktree.setup == command + " --setup"


def test_toml_string_reads_back_for_every_character() -> None:
    every = "".join(chr(c) for c in range(1, 0x250))
    for value in (every, every.replace("'", ""), "'", '"', "\\", "", "a'b\"c\\d"):
        assert tomllib.loads(f"v = {toml_string(value)}")["v"] == value
    assert toml_string("pytest -q") == '"pytest -q"', "plain commands keep plain quotes"
    assert toml_string('a "b" \\c') == "'a \"b\" \\c'", "a literal string needs no escapes"


def test_toml_value_reads_back_for_tables_lists_and_odd_keys() -> None:
    value = {"matcher": "*", "hooks": [{"type": "command", "command": 'python3 -m x "quoted"', "timeout": 86400}],
             "odd key": {"on": True, "ratio": 0.5, "path": "C:\\tmp"}}
    written = toml_value(value)
    assert tomllib.loads(f"v = {written}")["v"] == value
    assert written.startswith('{matcher = "*", hooks = [{type = "command"'), "bare keys stay bare"
    assert '"odd key" = {on = true' in written, "a key with a space is quoted"


def test_write_never_overwrites(tmp_path: Path) -> None:
    path = write(tmp_path, "# mine\n[worktree]\ncheck = \"make\"\n")
    with pytest.raises(BalancedError) as info:
        write_settings(tmp_path, check="pytest")
    assert str(info.value) == f"{path} already exists; it is never overwritten."
    assert info.value.hint == f"edit {path} by hand, or remove it and run `git balanced init` again"
    assert path.read_text() == "# mine\n[worktree]\ncheck = \"make\"\n", "the file is untouched"


def test_write_refuses_an_unknown_agent(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as info:
        write_settings(tmp_path, agent="claud")
    assert str(info.value) == "--agent claud is not an agent; it must be one of claude, codex, pi, shell."
    assert info.value.hint == "use --agent claude"
    assert not (tmp_path / ".magnum").exists(), "nothing is written"


def test_write_refuses_an_empty_check(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as info:
        write_settings(tmp_path, check=" ")
    assert str(info.value) == "--check is empty."
    assert not (tmp_path / ".magnum" / "settings.toml").exists()


def test_write_where_magnum_is_a_file(tmp_path: Path) -> None:
    (tmp_path / ".magnum").write_text("not a folder")
    with pytest.raises(BalancedError) as info:
        write_settings(tmp_path)
    assert str(info.value).startswith("cannot write ")
    assert info.value.hint == f"check that {tmp_path / '.magnum'} is a writable folder"


def test_rendered_template_has_no_placeholders_left() -> None:
    for agent in ("claude", "codex", "pi", "shell"):
        text = render_settings(agent=agent)
        assert "@" not in text, f"a placeholder left for {agent}"
        assert load_settings_text(text, "t").balanced.agent == agent


def test_settings_are_read_once_per_text_and_afresh_when_the_file_changes(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    import git_balanced.settings as settings_mod

    parsed: list[str] = []
    real = settings_mod._parsed

    def counted(text: str, source_name: str) -> Settings:
        parsed.append(text)
        return real(text, source_name)

    monkeypatch.setattr(settings_mod, "_parsed", counted)
    write(tmp_path, '[balanced]\nagent = "codex"\n')
    first = load_settings(tmp_path)
    assert load_settings(tmp_path) is first and len(parsed) == 1, "the same file is parsed once"
    assert load_settings_text('[balanced]\nagent = "codex"\n', "HEAD:.magnum/settings.toml") is first
    write(tmp_path, '[balanced]\nagent = "pi"\n')
    assert load_settings(tmp_path).balanced.agent == "pi" and len(parsed) == 2, "a changed file is read afresh"
    with pytest.raises(SettingsError):
        load_settings_text("[balanced]\nagent = 3\n", SRC)
    with pytest.raises(SettingsError):
        load_settings_text("[balanced]\nagent = 3\n", SRC)
    assert len(parsed) == 4, "a refusal is not remembered: it is said each time"


def test_settings_read_are_kept_for_the_eight_newest_texts() -> None:
    from git_balanced import process
    from git_balanced.settings import _Read

    texts = [f'[balanced]\ncap = {n}\n' for n in range(1, 10)]
    first = load_settings_text(texts[0], "settings")
    assert load_settings_text(texts[0], "settings") is first, "the same text gives the settings read then"
    for text in texts[1:]:
        load_settings_text(text, "settings")
    read = process.part(_Read)
    assert read.get(texts[0]) is None and read.get(texts[1]) is not None, "the oldest is dropped past eight"
    assert load_settings_text(texts[0], "settings") == first
