"""The picture of «Corregir la distorsión» §4: ln w against the position, for two names.

For one text of the grammar, :func:`weight_curve` follows the model's most likely token split of
that text, token by token (at each position, the most probable token that still spells the text),
and records the kept mass p(A_j | x, y_<j) of the page's grammar at every position: the running
sum of their logarithms is ln w of that prefix, the weight an SMC particle on that path carries
after position j. :func:`weight_curves_svg` draws two such curves as a build-time SVG, so the
reader sees the short name pay its closing quote positions before the long one does.

The picture and its table write in the current language (:mod:`lesson.i18n`: Spanish ids, English
in ``distorsion.po``); the page's figures store both (``lesson.i18n.each_language``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape

import numpy as np

from masker import Grammar, compile_choice

from ..i18n import _
from ..numbers import fmt_decimal
from ..sampling import Decoder
from ..views import styled

COLORS = ("#0072B2", "#D55E00")  # Okabe–Ito blue and vermilion (colour-blind-safe)


@dataclass
class WeightCurve:
    """One path: ``labels`` the bytes of its tokens (n entries), ``log_kept`` ln p(A_j | x, y_<j)
    at each position j = 1 .. n (float, natural log), ``cumulative`` their running sums (ln w of
    each prefix), ``closing`` the 1-based position of the token that writes the quote closing the
    value (the last token holding a ``"``)."""
    name: str
    labels: list[bytes]
    log_kept: list[float]

    @property
    def cumulative(self) -> list[float]:
        return np.cumsum(self.log_kept).tolist()

    @property
    def closing(self) -> int:
        return max(j for j, b in enumerate(self.labels, start=1) if b'"' in b)


def weight_curve(model, tok, prompt: str, grammar: Grammar, text: str, name: str = "") -> WeightCurve:
    """The kept masses of ``grammar`` along the model's most likely split of ``text`` (a text of
    ``grammar``), chosen greedily: at each position the most probable token under p(. | x, y_<j)
    among those the one-text grammar ``compile_choice([text])`` allows. One model call per
    position. Raises ValueError (from the decoder) if ``text`` is not a text of ``grammar``."""
    single = compile_choice([text]).matcher(tok.vocab)
    decoder = Decoder(model, tok, prompt, grammar)
    labels, log_kept = [], []
    while not decoder.done:
        p = decoder.next_distribution()
        allowed = np.flatnonzero(single.mask())
        token = int(allowed[np.argmax(p[allowed])])
        position = decoder.step(token)
        single.consume(token)
        labels.append(tok.vocab[token])
        log_kept.append(math.log(position.kept_mass))
    return WeightCurve(name or text, labels, log_kept)


def _label(b: bytes) -> str:
    return b.decode("utf-8", "replace").replace(" ", "␣")


def weight_curves_svg(curves: list[WeightCurve], width: int = 360, height: int = 270) -> str:
    """Two curves as SVG: x the position (1 .. n), y ln w of the prefix (0 at the top); a dot per
    position (``data-curve``, ``data-position``, ``data-log-w``), each curve's closing quote ringed,
    a legend, and at the first curve's closing position a bracket joining its dot to the second
    curve's (``data-gap``, the gap unrounded; the label writes it to one decimal). The plot box maps ln w = ``data-top`` to y = ``data-y-top`` and
    ln w = ``data-bottom`` to ``data-y-bottom`` (linear); x maps position 1 to ``data-x-first``
    and ``data-last`` to ``data-x-last``. The second curve is drawn under the first, which is
    dashed where they coincide. Scales with the page (``viewBox``, width 100 %); 13-unit text
    reads at 390 px. Text alternative: ``role="img"``, ``<title>`` and ``aria-label``."""
    n = max(len(c.log_kept) for c in curves)
    bottom_value = 20 * math.floor(min(min(c.cumulative) for c in curves) / 20)
    x0, x1, y0, y1 = 46, width - 12, 58, height - 40

    def px(j):
        return x0 + (j - 1) / (n - 1) * (x1 - x0)

    def py(v):
        return y0 + v / bottom_value * (y1 - y0)

    font = 'font-family="system-ui, sans-serif" font-size="13" fill="#3d4550"'
    parts = [f'<line x1="{x0}" y1="{y0}" x2="{x0}" y2="{y1}" stroke="#1d2430"/>',
             f'<line x1="{x0}" y1="{y1}" x2="{x1}" y2="{y1}" stroke="#1d2430"/>']
    for v in range(0, bottom_value - 1, -40):
        parts.append(f'<line x1="{x0}" y1="{py(v):.1f}" x2="{x1}" y2="{py(v):.1f}" stroke="#e3e0d8"/>'
                     f'<text x="{x0 - 5}" y="{py(v) + 4:.1f}" text-anchor="end" {font}>{fmt_decimal(v, 0)}</text>')
    for j in range(1, n + 1, 3):
        parts.append(f'<text x="{px(j):.1f}" y="{y1 + 16}" text-anchor="middle" {font}>{j}</text>')
    x_axis = escape(_("posición j"))
    parts.append(f'<text x="{(x0 + x1) / 2}" y="{height - 6}" text-anchor="middle" {font}>{x_axis}</text>'
                 f'<text x="{x0 - 5}" y="{y0 - 8}" text-anchor="end" {font}>ln w</text>')
    for i in reversed(range(len(curves))):
        c, color = curves[i], COLORS[i % len(COLORS)]
        pts = list(zip(range(1, len(c.cumulative) + 1), c.cumulative))
        dash = ' stroke-dasharray="6 4"' if i == 0 else ""
        parts.append(f'<polyline points="{" ".join(f"{px(j):.1f},{py(v):.1f}" for j, v in pts)}" '
                     f'fill="none" stroke="{color}" stroke-width="2.5"{dash}/>')
        parts += [f'<circle cx="{px(j):.2f}" cy="{py(v):.2f}" r="3" fill="{color}" data-curve="{escape(c.name)}" '
                  f'data-position="{j}" data-log-w="{v!r}"/>' for j, v in pts]
        j, v = c.closing, c.cumulative[c.closing - 1]
        parts.append(f'<circle cx="{px(j):.2f}" cy="{py(v):.2f}" r="8" fill="none" stroke="{color}" '
                     f'stroke-width="2" data-closing="{escape(c.name)}"/>')
        ly = 16 + 20 * i
        parts.append(f'<line x1="{x0 + 4}" y1="{ly - 4}" x2="{x0 + 28}" y2="{ly - 4}" stroke="{color}" '
                     f'stroke-width="2.5"{dash}/><text x="{x0 + 34}" y="{ly}" {font}>'
                     + escape(_("{name}: comilla de cierre en {position} (círculo)").format(
                         name=c.name, position=c.closing)) + '</text>')
    if len(curves) > 1:
        j = curves[0].closing
        a, b = curves[0].cumulative[j - 1], curves[1].cumulative[j - 1]
        # the bracket joins the two curves' dots at that very position; its label sits left of the
        # short curve's drop into it, in the band above that curve's previous dot
        parts.append(f'<line x1="{px(j):.2f}" y1="{py(a):.2f}" x2="{px(j):.2f}" y2="{py(b):.2f}" '
                     f'stroke="#1d2430" stroke-width="1.5" data-gap="{b - a!r}" data-position="{j}" '
                     f'data-bracket="1"/>'
                     f'<text x="{px(j - 1) - 6:.1f}" y="{(py(a) + py(b)) / 2 + 4:.1f}" text-anchor="end" {font}>'
                     + escape(_("{gap} nats").format(gap=fmt_decimal(b - a, 1))) + '</text>')
    description = "; ".join(
        _("{name}: cierra la comilla en la posición {position}, donde ln w pasa de {before} a {after}, "
          "y termina en {final}").format(
            name=c.name, position=c.closing, before=fmt_decimal(c.cumulative[c.closing - 2], 1),
            after=fmt_decimal(c.cumulative[c.closing - 1], 1), final=fmt_decimal(c.cumulative[-1], 1))
        for c in curves)
    title = _("ln w del prefijo frente a la posición, para {names}").format(
        names=_(" y ").join(c.name for c in curves))
    return (f'<svg class="weight-curves" viewBox="0 0 {width} {height}" style="width:100%;max-width:{round(width * 1.5)}px;'
            f'height:auto;display:block" role="img" aria-label="{escape(title)}. {escape(description)}." '
            f'data-top="0" data-bottom="{bottom_value}" data-y-top="{y0}" data-y-bottom="{y1}" '
            f'data-last="{n}" data-x-first="{x0}" data-x-last="{x1}"><title>{escape(title)}</title>'
            f'{"".join(parts)}</svg>')


def weight_curves_table(curves: list[WeightCurve]) -> str:
    """The numbers of the picture as an HTML table (for a ``<details>`` under it): per position,
    each curve's token and ln w of the prefix (one decimal, in the current language's notation)."""
    n = max(len(c.log_kept) for c in curves)
    heads = [escape(_("token de {name}").format(name=c.name)) for c in curves]
    head = "".join(f'<th scope="col">{h}</th><th scope="col">ln w</th>' for h in heads)
    rows = []
    for j in range(n):
        cells = "".join(f'<td><code>{escape(_label(c.labels[j]))}</code></td><td class="num">'
                        f'{fmt_decimal(c.cumulative[j], 1)}</td>' if j < len(c.labels) else "<td></td><td></td>"
                        for c in curves)
        rows.append(f'<tr><th scope="row" class="num">{j + 1}</th>{cells}</tr>')
    position = escape(_("posición"))
    return ('<div class="table-scroll"><table class="compact-table" data-testid="weight-curves-table">'
            f'<thead><tr><th scope="col">{position}</th>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table></div>')


def name_mean_ess(draws) -> dict:
    """The importance weights' ESS (run 0) and, beside it, the ESS if every draw weighed the mean
    weight of its name (``ess_name_means``): the part of the imbalance the names alone make; the
    rest is between draws of the same name (their token splits). Names as ``course.name_of``."""
    from ..course import name_of
    w = draws.weights(0)
    names = [name_of(t.decode()) if t is not None else "" for t in draws.texts[0]]
    means = {n: float(np.mean([w[i] for i, m in enumerate(names) if m == n])) for n in set(names)}
    by_name = np.array([means[n] for n in names])
    return {"ess": float(draws.final_ess(0)), "ess_name_means": float(by_name.sum() ** 2 / (by_name ** 2).sum()),
            "n": len(names)}


def curve_gap(light: WeightCurve, heavy: WeightCurve) -> dict:
    """Two names' most likely paths compared (nats): ``gap``, how far ``light``'s ln w ends below
    ``heavy``'s; ``quote``, the part of it paid at the quote that closes the name; and that
    quote's cost after each name (``light_quote``, ``heavy_quote``)."""
    return {"gap": heavy.cumulative[-1] - light.cumulative[-1],
            "quote": heavy.log_kept[heavy.closing - 1] - light.log_kept[light.closing - 1],
            "light_quote": -light.log_kept[light.closing - 1], "heavy_quote": -heavy.log_kept[heavy.closing - 1]}


class WeightSources:
    """The two sources of §3's imbalance, printed: the ESS of the draws and the ESS with every draw
    at its name's mean weight (:func:`name_mean_ess`); and, along each of two names' most likely
    split (:func:`weight_curve`), ln w at the end and what the quote that closes the name costs
    (nats). ``light`` / ``heavy``: the two names (the inflated one and the favourite)."""

    def __init__(self, model, tok, prompt: str, grammar: Grammar, draws, light: str, heavy: str, answer):
        self.ess = name_mean_ess(draws)
        self.curves = [weight_curve(model, tok, prompt, grammar, answer(n), n) for n in (light, heavy)]

    def data(self) -> dict:
        return {**self.ess, **curve_gap(*self.curves)}

    def _repr_html_(self) -> str:
        d, (light, heavy) = self.data(), self.curves
        first = _("ESS de las {n} muestras: {ess}; si cada una pesara la media de su nombre: {names}.").format(
            n=d["n"], ess=fmt_decimal(d["ess"], 1), names=fmt_decimal(d["ess_name_means"], 1))
        second = _("Por su camino más probable, ln w de {light} acaba {gap} nats por debajo del de {heavy}; "
                   "la comilla que cierra el nombre cuesta {lq} nats tras {light} y {hq} tras {heavy} "
                   "({quote} de diferencia).").format(
            light=escape(light.name), heavy=escape(heavy.name), gap=fmt_decimal(d["gap"], 1),
            lq=fmt_decimal(d["light_quote"], 1), hq=fmt_decimal(d["heavy_quote"], 1), quote=fmt_decimal(d["quote"], 1))
        return styled(f'<p class="enum-summary" data-testid="weight-sources">{first}<br>{second}</p>')
