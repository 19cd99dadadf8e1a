"""Every relative Markdown link in docs/, README.md and bench/README.md lands: the file it names exists, and the
heading its anchor names is on that page (anchors as GitHub makes them from a heading's text)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted([ROOT / "README.md", ROOT / "bench" / "README.md", *(ROOT / "docs").rglob("*.md")])
FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
CODE = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)
LINK = re.compile(r"\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$", re.M)
ANCHOR_TAG = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"", re.I)


def prose(text: str) -> str:
    """The page without its fenced code blocks and inline code, where a bracket is not a link."""
    return CODE.sub("", FENCE.sub("", text))


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: its text lowercased, markup and punctuation dropped, spaces as hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading: its words
    text = re.sub(r"<[^>]+>", "", text).replace("`", "").lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Every anchor the page offers: its headings' (the second of a name with -1, and so on) and its <a name>s."""
    text = page.read_text(encoding="utf-8")
    seen: dict[str, int] = {}
    out = set(ANCHOR_TAG.findall(text))
    for heading in HEADING.findall(FENCE.sub("", text)):
        base = slug(heading)
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def links(page: Path) -> list[str]:
    """The relative links of a page (web addresses and mail left out)."""
    found = LINK.findall(prose(page.read_text(encoding="utf-8")))
    return [t for t in found if not re.match(r"^[a-z][a-z0-9+.-]*:", t, re.I)]


def shown(path: Path) -> str:
    """A path as the repository names it."""
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def broken(page: Path) -> list[str]:
    """Each link of PAGE that lands nowhere, with why."""
    out = []
    for target in links(page):
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            out.append(f"{target}: no file {shown(dest)}")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            out.append(f"{target}: no heading with that anchor in {shown(dest)}")
    return out


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_relative_link_lands(page: Path) -> None:
    assert broken(page) == []


def test_the_anchors_are_githubs() -> None:
    assert slug("Start-up: the front door") == "start-up-the-front-door"
    assert slug("The test suite: where `make test`'s time goes") == "the-test-suite-where-make-tests-time-goes"
    assert slug("bench/state.py: state in refs") == "benchstatepy-state-in-refs"
    assert slug("6. Parallel slots, and checks ahead") == "6-parallel-slots-and-checks-ahead"


def test_a_broken_link_is_found(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# A page\n\n## Its part\n\ntext\n", encoding="utf-8")
    page = tmp_path / "b.md"
    page.write_text("[ok](a.md#its-part) [no heading](a.md#gone) [no file](c.md) `[code](x.md)`\n"
                    "```\n[fenced](y.md)\n```\n[web](https://example.com/z.md) [here](#b)\n\n# B\n", encoding="utf-8")
    found = [line.split(":")[0] for line in broken(page)]
    assert found == ["a.md#gone", "c.md"]


def test_the_performance_page_opens_with_the_figures_now_and_names_every_benchmark() -> None:
    """bench/all.py writes its table between its two markers under "The figures now"; every benchmark it runs has
    its command on the page."""
    source = (ROOT / "bench" / "all.py").read_text(encoding="utf-8")
    start, end = re.search(r'^START, END = "(.*?)", "(.*?)"$', source, re.M).groups()  # type: ignore[union-attr]
    benches = re.findall(r'"(\w+)"', re.search(r"^BENCHES = \[(.*?)\]", source, re.M | re.S).group(1))  # type: ignore[union-attr]
    page = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
    assert page.index("\n## The figures now\n") < page.index(start) < page.index(end)
    assert page.index(end) < page.index("\n## ", page.index(start)), "the table is the first section's"
    assert [b for b in benches if f"bench/{b}.py" not in page] == []
