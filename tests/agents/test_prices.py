"""The list prices Codex's tokens are priced at."""

from __future__ import annotations

from git_balanced.agents.prices import FALLBACK, PRICES, price


def test_prices_known_dated_and_unknown_models() -> None:
    assert price("gpt-5.4") == ("gpt-5.4", PRICES["gpt-5.4"])
    assert price("gpt-5.4-mini-2026-03-05")[0] == "gpt-5.4-mini"
    assert price("gpt-7-unknown") == (FALLBACK, PRICES[FALLBACK]), "an unknown model errs on the dear side"
    assert all(inp >= cached and out >= inp for inp, cached, out in PRICES.values())
