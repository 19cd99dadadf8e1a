"""List prices of the models Codex runs, for turning its token counts into dollars (it reports no cost).

USD per million tokens: (input, cached input, output). Figures from OpenAI's API pricing page as quoted in
mid-2026 (the gpt-5.4 and gpt-5.5 families) and from its 2025 page (gpt-5 to gpt-5.2); standard tier, prompts
under the long-context threshold. Reasoning tokens are billed as output and Codex counts them in output.
"""

from __future__ import annotations

PRICES: dict[str, tuple[float, float, float]] = {
    "gpt-5.5": (5.00, 0.50, 30.00),
    "gpt-5.5-pro": (30.00, 30.00, 180.00),
    "gpt-5.4": (2.50, 0.25, 15.00),
    "gpt-5.4-mini": (0.75, 0.075, 4.50),
    "gpt-5.4-nano": (0.20, 0.02, 1.25),
    "gpt-5.2": (1.75, 0.175, 14.00),
    "gpt-5.2-codex": (1.75, 0.175, 14.00),
    "gpt-5.1": (1.25, 0.125, 10.00),
    "gpt-5.1-codex": (1.25, 0.125, 10.00),
    "gpt-5.1-codex-mini": (0.25, 0.025, 2.00),
    "gpt-5": (1.25, 0.125, 10.00),
    "gpt-5-codex": (1.25, 0.125, 10.00),
    "gpt-5-mini": (0.25, 0.025, 2.00),
    "gpt-5-nano": (0.05, 0.005, 0.40),
}
# A model not in the table is priced as the dearest everyday model, so a budget errs on the safe side.
FALLBACK = "gpt-5.5"


def price(model: str | None) -> tuple[str, tuple[float, float, float]]:
    """The table entry used for `model` (its own, or the fallback) and its (input, cached, output) prices."""
    name = (model or "").strip().lower()
    if name in PRICES:
        return name, PRICES[name]
    # Dated snapshots such as gpt-5.4-2026-03-05 bill as their family.
    for known in sorted(PRICES, key=len, reverse=True):
        if name.startswith(known + "-20"):
            return known, PRICES[known]
    return FALLBACK, PRICES[FALLBACK]


def meter_prices(model: str | None) -> dict[str, float]:
    """The prices as the meter spec carries them (USD per million tokens)."""
    _, (inp, cached, out) = price(model)
    return {"input": inp, "cached_input": cached, "output": out}
