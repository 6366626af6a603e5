"""The picture of «Python en el navegador»: the five most likely next tokens after the prompt with
its last space and after the prompt without it, as two bar charts side by side.

Drawn at build time from the page's figures (no plotting library), with presentation attributes
only (no ``style``), so the page's content security policy lets it through; ``viewBox`` and
``width="100%"`` let it shrink to a phone's width. Its words and numbers are written in the current
language (:mod:`lesson.i18n`); the figures store it in both (``each_language``). The prompts in
the panel titles stay Spanish in both editions: they are the model's input.
"""
from __future__ import annotations

from html import escape

from ..i18n import _
from ..numbers import fmt_decimal

WIDTH, PANEL, LABEL, BAR, GAP, TOP = 360, 176, 44, 14, 6, 34  # SVG units
COLORS = {"letter": "#1f5fa8", "punctuation": "#d9822b", "space": "#7a8da6"}
FONT = 'font-family="system-ui, sans-serif" font-size="11"'


def bar_width(p: float, scale: float) -> float:
    """The length in SVG units of the bar of a probability ``p``, the largest (``scale``) filling
    the panel's bar area."""
    return p / scale * (PANEL - LABEL - 34)


def _panel(x0: float, title: str, tokens: list[dict], scale: float) -> list[str]:
    parts = [f'<text x="{x0}" y="14" {FONT} font-weight="600" fill="#1d2430">{escape(title)}</text>']
    for i, t in enumerate(tokens):
        y = TOP + i * (BAR + GAP)
        w = bar_width(t["p"], scale)
        parts.append(f'<text x="{x0 + LABEL - 4}" y="{y + BAR - 3}" {FONT} text-anchor="end" '
                     f'fill="#1d2430">{escape(t["box"])}</text>')
        parts.append(f'<rect x="{x0 + LABEL}" y="{y}" width="{w:.2f}" height="{BAR}" '
                     f'fill="{COLORS[t["kind"]]}" data-kind="{t["kind"]}" data-value="{t["p"]!r}"/>')
        parts.append(f'<text x="{x0 + LABEL + w + 3:.1f}" y="{y + BAR - 3}" {FONT} fill="#1d2430">'
                     f'{fmt_decimal(t["p"], 3)}</text>')
    return parts


def next_tokens_svg(with_space: list[dict], without_space: list[dict], prompt: str) -> str:
    """SVG of two lists of next tokens (``lesson.marco.figures.next_tokens``: ``box``, ``p``,
    ``kind``, most likely first): the one after ``prompt`` + space on the left, the one after
    ``prompt`` on the right, on one scale (the largest p of both). Each bar has ``data-kind``
    (letter, punctuation, space: its colour) and ``data-value`` (its p); ``role="img"`` with a
    ``<title>`` that lists every token and p."""
    scale = max(t["p"] for t in with_space + without_space)
    parts = (_panel(0, f"«{prompt}␣»", with_space, scale)
             + _panel(WIDTH - PANEL, f"«{prompt}»", without_space, scale))
    height = TOP + len(with_space) * (BAR + GAP) + 4
    title = " ".join(
        _("Tras «{prompt}»: {tokens}.").format(
            prompt=label, tokens="; ".join(f'{t["box"]} {fmt_decimal(t["p"], 3)}' for t in tokens))
        for label, tokens in ((prompt + "␣", with_space), (prompt, without_space)))
    heading = _("Los tokens más probables.")
    return (f'<svg viewBox="0 0 {WIDTH} {height}" width="100%" role="img" data-testid="next-tokens-picture" '
            f'aria-labelledby="next-tokens-title"><title id="next-tokens-title">{escape(heading)} '
            f'{escape(title)}</title>{"".join(parts)}</svg>')
