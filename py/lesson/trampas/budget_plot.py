"""The budget sweep of «Trampas y decisiones» §3 as a build-time SVG (no plotting library).

:func:`sweep_svg` draws a :class:`lesson.trampas.budget.BudgetSweep` in two panels that share the
horizontal axis (the token budget): above, the share of valid answers when the budget cuts and
with the budget-aware mask; below, the mean length of the name with the budget-aware mask, beside
the length without a budget. The SVG scales to its box (``viewBox``, ``width: 100%``), keeps few
labels at 11 px of a 360-unit width (readable at 390 px), and carries a ``<title>`` and a
``<desc>`` that give every number; :func:`sweep_table` gives them again as a table.
"""

from __future__ import annotations

import math
from html import escape

from ..i18n import _
from ..numbers import fmt_decimal, fmt_percent
from ..views import _scroll

WIDTH, HEIGHT = 360, 300
PAD_L, PAD_R = 44, 12
TOP = (28, 130)  # y range of the upper panel (valid share), in SVG units
BOTTOM = (176, 262)  # y range of the lower panel (name length)
CUT, AWARE, FREE = "#b3541e", "#1f5fa8", "#6b6b6b"


def x_of(sweep, budget: float) -> float:
    """SVG x of a budget (linear between the first and the last budget of the sweep)."""
    lo, hi = sweep.budgets[0], sweep.budgets[-1]
    span = hi - lo if hi > lo else 1
    return PAD_L + (budget - lo) / span * (WIDTH - PAD_L - PAD_R)


def y_of(value: float, top: float, bottom: float, vmax: float) -> float:
    """SVG y of ``value`` in a panel spanning ``top``..``bottom`` (SVG units) for 0..``vmax``."""
    return bottom - max(0.0, min(value, vmax)) / vmax * (bottom - top)


def name_scale(sweep) -> float:
    """The top of the lower panel's scale: the longest name length drawn, at least 1."""
    values = [v for v in sweep.name_aware + [sweep.name_free] if math.isfinite(v)]
    return max(values + [1.0])


def _line(sweep, values, panel, vmax, colour, dash="") -> str:
    points = [(x_of(sweep, k), y_of(v, *panel, vmax)) for k, v in zip(sweep.budgets, values)
              if math.isfinite(v)]
    path = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
    dots = "".join(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{colour}"/>' for x, y in points)
    style = f' stroke-dasharray="{dash}"' if dash else ""
    return (f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"{style}/>'
            + ("" if dash else dots))


def _axes(sweep, vmax_name: float) -> str:
    parts = []
    for panel, ticks in ((TOP, [(0, _("0 %")), (0.5, _("50 %")), (1, _("100 %"))]),
                         (BOTTOM, [(0, "0"), (vmax_name, fmt_decimal(vmax_name, 0))])):
        vmax = 1 if panel is TOP else vmax_name
        for v, text in ticks:
            y = y_of(v, *panel, vmax)
            parts.append(f'<line x1="{PAD_L}" x2="{WIDTH - PAD_R}" y1="{y:.1f}" y2="{y:.1f}" '
                         f'stroke="#d9d5ca"/><text x="{PAD_L - 4}" y="{y + 4:.1f}" '
                         f'text-anchor="end" font-size="11">{text}</text>')
    for k in sweep.budgets:
        parts.append(f'<text x="{x_of(sweep, k):.1f}" y="{BOTTOM[1] + 15}" text-anchor="middle" '
                     f'font-size="11">{k}</text>')
    parts.append(f'<text x="{WIDTH / 2:.0f}" y="{BOTTOM[1] + 31}" text-anchor="middle" '
                 'font-size="11">' + _("presupuesto (tokens)") + '</text>')
    valid, cut, masked = _("respuestas válidas:"), _("cortando"), _("con máscara")
    chars, free = _("caracteres del nombre:"), _("sin límite")
    parts.append(f'<text x="{PAD_L}" y="{TOP[0] - 12}" font-size="11">{valid} '
                 f'<tspan fill="{CUT}">■ {cut}</tspan> <tspan fill="{AWARE}">■ {masked}</tspan></text>')
    parts.append(f'<text x="{PAD_L}" y="{BOTTOM[0] - 12}" font-size="11">{chars} '
                 f'<tspan fill="{AWARE}">■ {masked}</tspan> <tspan fill="{FREE}">- - {free}</tspan></text>')
    return "".join(parts)


def sweep_desc(sweep) -> str:
    """The numbers of the picture as one sentence (the SVG's ``<desc>``)."""
    points = "; ".join(_("{k} tokens: válidas {cut} cortando y {aware} con máscara, nombre de "
                         "{chars} caracteres").format(k=k, cut=fmt_percent(c), aware=fmt_percent(a),
                                                      chars=fmt_decimal(n, 1))
                       for k, c, a, n in zip(sweep.budgets, sweep.valid_cut, sweep.valid_aware,
                                             sweep.name_aware))
    return _("{points}. Sin límite, el nombre tiene {chars} caracteres.").format(
        points=points, chars=fmt_decimal(sweep.name_free, 1))


def sweep_svg(sweep) -> str:
    """The picture (see the module doc) as an SVG string inside a ``<figure>``."""
    vmax = name_scale(sweep)
    free = [sweep.name_free] * len(sweep.budgets)
    body = (_axes(sweep, vmax) + _line(sweep, sweep.valid_cut, TOP, 1, CUT)
            + _line(sweep, sweep.valid_aware, TOP, 1, AWARE)
            + _line(sweep, free, BOTTOM, vmax, FREE, dash="5 4")
            + _line(sweep, sweep.name_aware, BOTTOM, vmax, AWARE))
    return (f'<figure class="trap-plot" data-testid="budget-sweep"><svg viewBox="0 0 {WIDTH} {HEIGHT}" '
            'width="100%" role="img" aria-labelledby="sweep-title sweep-desc"><title id="sweep-title">'
            + _("Respuestas válidas y longitud del nombre según el presupuesto de tokens") + '</title>'
            f'<desc id="sweep-desc">{escape(sweep_desc(sweep))}</desc>{body}</svg><figcaption>'
            + _("Arriba, la proporción de respuestas válidas de {n} (cortando al agotar el presupuesto, "
                "y con la máscara que lo respeta); abajo, los caracteres medios del nombre con esa "
                "máscara, y sin límite de tokens.").format(n=sweep.n) + '</figcaption></figure>')


def sweep_table(sweep) -> str:
    """The same numbers as an HTML table (for a ``<details>`` under the picture)."""
    rows = "".join(f'<tr><td class="num">{k}</td><td class="num">{fmt_percent(c)}</td>'
                   f'<td class="num">{fmt_percent(a)}</td><td class="num">{fmt_decimal(n, 1)}</td></tr>'
                   for k, c, a, n in zip(sweep.budgets, sweep.valid_cut, sweep.valid_aware,
                                         sweep.name_aware))
    head = "".join(f'<th scope="col">{label}</th>' for label in (
        _("presupuesto"), _("válidas cortando"), _("válidas con máscara"), _("caracteres del nombre")))
    return (_scroll(_("los números del gráfico")) + '<table class="compact-table"><thead><tr>'
            f'{head}</tr></thead><tbody>{rows}</tbody></table></div>')
