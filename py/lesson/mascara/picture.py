"""The page's picture: the conditional and the mask's distribution over the five names, as SVG.

Drawn at build time from the exact enumeration's rows (no plotting library): one pair of
horizontal bars per name, the conditional p(g | x, G) above and the mask's q~(g | x) below, on a
common scale from 0 to 1. Presentation attributes only (no ``style``), so the page's content
security policy lets it through; ``viewBox`` and ``width="100%"`` let it shrink to a phone's width.
"""

from __future__ import annotations

from html import escape

from ..numbers import es_decimal

WIDTH, LEFT, RIGHT = 360, 84, 44  # the bars run from LEFT to WIDTH - RIGHT
BAR, GAP, TOP = 13, 12, 30  # bar height, space between names, room for the legend
COLORS = {"conditional": "#1f5fa8", "masked": "#d9822b"}
LABELS = {"conditional": "condicionada p(g | x, G)", "masked": "máscara q̃(g | x)"}
FONT = 'font-family="system-ui, sans-serif" font-size="12"'


def bar_width(value: float) -> float:
    """The length in SVG units of a bar for a probability ``value`` in [0, 1]."""
    return value * (WIDTH - LEFT - RIGHT)


def _legend() -> list[str]:
    parts, x = [], 0.0
    for key in ("conditional", "masked"):
        parts.append(f'<rect x="{x:.0f}" y="6" width="12" height="12" fill="{COLORS[key]}"/>'
                     f'<text x="{x + 16:.0f}" y="16" {FONT} fill="#1d2430">{escape(LABELS[key])}</text>')
        x += 178
    return parts


def names_svg(rows: list[dict]) -> str:
    """SVG of ``rows`` (each with ``name``, ``conditional``, ``masked``, probabilities in [0, 1]):
    for each name, in the order given, a bar ``data-kind="conditional"`` and one
    ``data-kind="masked"``, each with ``data-name`` and ``data-value`` (the probability drawn) and
    its value written at its end with a decimal comma (4 decimals, as the enumeration's table). ``role="img"`` with a ``<title>`` listing
    every value, for readers who do not see it."""
    parts = _legend()
    y = TOP
    for r in rows:
        parts.append(f'<text x="{LEFT - 6}" y="{y + BAR + GAP / 2:.0f}" {FONT} text-anchor="end" '
                     f'fill="#1d2430">{escape(r["name"])}</text>')
        for k, key in enumerate(("conditional", "masked")):
            top = y + k * BAR
            w = bar_width(r[key])
            parts.append(f'<rect x="{LEFT}" y="{top}" width="{w:.2f}" height="{BAR - 1}" fill="{COLORS[key]}" '
                         f'data-kind="{key}" data-name="{escape(r["name"])}" data-value="{r[key]!r}"/>')
            parts.append(f'<text x="{LEFT + w + 4:.1f}" y="{top + BAR - 3}" {FONT} fill="#1d2430">'
                         f'{es_decimal(r[key], 4)}</text>')
        y += 2 * BAR + GAP
    height = y
    title = "; ".join(f'{r["name"]}: condicionada {es_decimal(r["conditional"], 4)}, '
                      f'máscara {es_decimal(r["masked"], 4)}' for r in rows)
    return (f'<svg viewBox="0 0 {WIDTH} {height}" width="100%" role="img" data-testid="names-picture" '
            f'aria-labelledby="names-picture-title"><title id="names-picture-title">Probabilidad de cada '
            f'nombre. {escape(title)}</title>{"".join(parts)}</svg>')
