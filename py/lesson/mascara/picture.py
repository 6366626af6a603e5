"""The page's pictures, as SVG: the conditional and the mask's distribution over the five names,
and the «¿Por qué Juliana?» ratio as a product of factors on a log axis.

Drawn at build time from the page's figures (no plotting library), in the current language of
``lesson.i18n`` (labels through :func:`_`, numbers through ``fmt_*``); the figures module draws
each picture in both languages with ``lesson.i18n.each_language``. The names: one pair of
horizontal bars per name, the conditional p(g | x, G) above and the mask's q~(g | x) below, on a
common scale from 0 to 1. Presentation attributes only (no ``style``), so the page's content
security policy lets it through; ``viewBox`` and ``width="100%"`` let it shrink to a phone's width.
"""

from __future__ import annotations

import math
from html import escape

from ..i18n import _
from ..numbers import fmt_decimal, fmt_int, fmt_sci

WIDTH, LEFT, RIGHT = 360, 84, 44  # the bars run from LEFT to WIDTH - RIGHT
BAR, GAP, TOP = 13, 12, 30  # bar height, space between names, room for the legend
COLORS = {"conditional": "#1f5fa8", "masked": "#d9822b"}


def labels() -> dict[str, str]:
    """The legend's label of each kind of bar, in the current language."""
    return {"conditional": _("condicionada p(g | x, G)"), "masked": _("máscara q̃(g | x)")}


FONT = 'font-family="system-ui, sans-serif" font-size="12"'


def bar_width(value: float) -> float:
    """The length in SVG units of a bar for a probability ``value`` in [0, 1]."""
    return value * (WIDTH - LEFT - RIGHT)


def _legend() -> list[str]:
    parts, x, label = [], 0.0, labels()
    for key in ("conditional", "masked"):
        parts.append(f'<rect x="{x:.0f}" y="6" width="12" height="12" fill="{COLORS[key]}"/>'
                     f'<text x="{x + 16:.0f}" y="16" {FONT} fill="#1d2430">{escape(label[key])}</text>')
        x += 178
    return parts


def names_svg(rows: list[dict]) -> str:
    """SVG of ``rows`` (each with ``name``, ``conditional``, ``masked``, probabilities in [0, 1]):
    for each name, in the order given, a bar ``data-kind="conditional"`` and one
    ``data-kind="masked"``, each with ``data-name`` and ``data-value`` (the probability drawn) and
    its value written at its end (4 decimals, as the enumeration's table; a decimal comma in Spanish). ``role="img"`` with a ``<title>`` listing
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
                         f'{fmt_decimal(r[key], 4)}</text>')
        y += 2 * BAR + GAP
    height = y
    title = "; ".join(_("{name}: condicionada {conditional}, máscara {masked}").format(
        name=r["name"], conditional=fmt_decimal(r["conditional"], 4), masked=fmt_decimal(r["masked"], 4))
        for r in rows)
    heading = _("Probabilidad de cada nombre.")
    return (f'<svg viewBox="0 0 {WIDTH} {height}" width="100%" role="img" data-testid="names-picture" '
            f'aria-labelledby="names-picture-title"><title id="names-picture-title">{escape(heading)} '
            f'{escape(title)}</title>{"".join(parts)}</svg>')


FACTOR_COLORS = {"name": "#7a8da6", "quote": "#c0392b", "brace": "#e6a15c", "paths": "#9bbf85"}


def factor_parts() -> list[tuple[str, str, str]]:
    """``(key, label, color)`` of each factor, in the bar's order, labels in the current language."""
    labels = {"name": _("resto del nombre"), "quote": _("comilla de cierre"),
              "brace": _("llave de cierre"), "paths": _("otros caminos")}
    return [(key, labels[key], color) for key, color in FACTOR_COLORS.items()]


SPAN = (16, 344)  # the bar runs from x = 16 to x = 344


def factor_width(factor: float, decades: int) -> float:
    """SVG length of a segment for a factor (> 1) on a log scale of ``decades`` powers of ten."""
    return math.log10(factor) / decades * (SPAN[1] - SPAN[0])


def factors_svg(why: dict) -> str:
    """SVG of a ratio split into factors (``lesson.mascara.why.ratio_split``'s ``name``, ``quote``,
    ``brace`` and ``paths``, their product ``ratio``): one bar on a log axis from 1 to the next power
    of ten above ``ratio``, a segment per factor above 1.001 (``data-part``, ``data-factor``) in
    that order, each as long as its factor's logarithm, so their lengths add up to the ratio's
    logarithm and the bar ends at the ratio (written there, ``×`` and 3 digits); ticks
    at the powers of ten, a legend with each factor, and a ``<title>`` with all of them."""
    decades = max(1, math.ceil(math.log10(why["ratio"])))
    parts, x = [], float(SPAN[0])
    parts_all = factor_parts()
    shown = [(key, label, color) for key, label, color in parts_all if why[key] > 1.001]
    for key, label, color in shown:
        w = factor_width(why[key], decades)
        parts.append(f'<rect x="{x:.2f}" y="10" width="{w:.2f}" height="26" fill="{color}" '
                     f'data-part="{key}" data-factor="{why[key]!r}"/>')
        x += w
    for k in range(decades + 1):
        tx = SPAN[0] + k / decades * (SPAN[1] - SPAN[0])
        parts.append(f'<line x1="{tx:.1f}" y1="36" x2="{tx:.1f}" y2="42" stroke="#56606e"/>'
                     f'<text x="{tx:.1f}" y="55" {FONT} text-anchor="middle" fill="#56606e">'
                     f'{fmt_int(10 ** k)}</text>')
    parts.append(f'<text x="{x:.1f}" y="6" {FONT} text-anchor="middle" fill="#1d2430">'
                 f'×{fmt_sci(why["ratio"], 3)}</text>')
    for row, (key, label, color) in enumerate(shown):
        y = 72 + 18 * row
        parts.append(f'<rect x="{SPAN[0]}" y="{y - 10}" width="12" height="12" fill="{color}"/>'
                     f'<text x="{SPAN[0] + 18}" y="{y}" {FONT} fill="#1d2430">{escape(label)}: '
                     f'×{fmt_sci(why[key], 3)}</text>')
    height = 72 + 18 * len(shown)
    title = "; ".join(f"{label} ×{fmt_sci(why[key], 3)}" for key, label, _color in parts_all)
    heading = _("El cociente ×{ratio}, en escala logarítmica, como producto de sus factores:").format(
        ratio=fmt_sci(why["ratio"], 3))
    return (f'<svg viewBox="0 -8 360 {height + 8}" width="100%" role="img" data-testid="factors-picture" '
            f'aria-labelledby="factors-picture-title"><title id="factors-picture-title">{escape(heading)} '
            f'{escape(title)}</title>{"".join(parts)}</svg>')
