"""The pictures of «Niveles de garantía», drawn as SVG from the page's own numbers (no plotting
library): the failure rate after k tries, per question against the naive curve (level 1), and the
depth of level 4's notes.

Both scale to the width of their box (``viewBox``, the ``cv-svg`` class of ``views.css``: readable
at 390 px) and carry a text alternative: ``role="img"`` with an ``aria-label`` that gives the
numbers, and the same numbers in a table beside the picture.
"""

from __future__ import annotations

from html import escape

from ..i18n import _, ngettext
from ..numbers import fmt_decimal, fmt_int
from ..views import _scroll, styled

# Geometry of both plots (SVG user units; the picture scales with its box).
WIDTH, HEIGHT = 420, 250
LEFT, RIGHT, TOP, BOTTOM = 46, 14, 14, 40
PER_QUESTION_COLOR, NAIVE_COLOR, QUESTION_COLOR = "#1d4ed8", "#b45309", "#9aa3af"


def x_of(k: int, ks: list[int]) -> float:
    """Horizontal position of try count ``k`` among ``ks`` (sorted, evenly spaced ticks)."""
    if len(ks) == 1:
        return (LEFT + WIDTH - RIGHT) / 2
    return LEFT + (k - ks[0]) / (ks[-1] - ks[0]) * (WIDTH - LEFT - RIGHT)


def y_of(rate: float) -> float:
    """Vertical position of a rate in [0, 1] (0 at the bottom axis, 1 at the top)."""
    return TOP + (1 - rate) * (HEIGHT - TOP - BOTTOM)


def _axes(x_ticks: list[tuple[float, str]], x_label: str, y_ticks: list[tuple[float, str]],
          y_label: str = "") -> list[str]:
    """Axis lines, tick labels, the x-axis label and (if given) the y-axis label, written upwards
    along the left edge, in the convergence plot's style."""
    parts = [f'<line x1="{LEFT}" y1="{y_of(0)}" x2="{WIDTH - RIGHT}" y2="{y_of(0)}" class="cv-axis"/>',
             f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{y_of(0)}" class="cv-axis"/>']
    for y, label in y_ticks:
        parts.append(f'<text x="{LEFT - 5}" y="{y + 4:.1f}" class="cv-tick" text-anchor="end">{label}</text>')
    for x, label in x_ticks:
        parts.append(f'<text x="{x:.1f}" y="{y_of(0) + 16:.1f}" class="cv-tick" text-anchor="middle">'
                     f'{label}</text>')
    parts.append(f'<text x="{(WIDTH + LEFT) / 2}" y="{HEIGHT - 4}" class="cv-tick" '
                 f'text-anchor="middle">{x_label}</text>')
    if y_label:
        middle = (TOP + y_of(0)) / 2
        parts.append(f'<text x="10" y="{middle:.1f}" class="cv-tick" text-anchor="middle" '
                     f'data-axis="y" transform="rotate(-90 10 {middle:.1f})">{y_label}</text>')
    return parts


def _polyline(points: list[tuple[float, float]], color: str, series: str, width: float = 2.5,
              dash: str = "") -> str:
    coords = " ".join(f"{x:.2f},{y:.2f}" for x, y in points)
    dashed = f' stroke-dasharray="{dash}"' if dash else ""
    return (f'<polyline data-series="{series}" points="{coords}" fill="none" stroke="{color}" '
            f'stroke-width="{width}"{dashed}/>')


def retry_svg(rows: list[dict], ps: list[float]) -> str:
    """The failure rate after k tries against k: the mean over the questions of (1 − p_i)^k
    (``data-series="per_question"``, solid), the naive (1 − mean p_i)^k (``"naive"``, dashed) and
    each question's own (1 − p_i)^k (``"question-i"``, thin grey). ``rows``: the output of
    :func:`lesson.niveles.levels.retry_arithmetic` (dicts with k, per_question, naive, k
    ascending); ``ps``: the questions' success rates. Raises ValueError for no rows."""
    if not rows:
        raise ValueError("rows must hold at least one k")
    ks = [r["k"] for r in rows]
    parts = _axes([(x_of(k, ks), fmt_int(k)) for k in ks], _("k, intentos por pregunta"),
                  [(y_of(t / 4), fmt_decimal(t / 4, 2)) for t in range(5)], _("probabilidad de fallar"))  # y: the caption says it whole
    for i, p in enumerate(ps):
        parts.append(_polyline([(x_of(k, ks), y_of((1 - p) ** k)) for k in ks], QUESTION_COLOR,
                               f"question-{i}", width=1))
    parts.append(_polyline([(x_of(r["k"], ks), y_of(r["naive"])) for r in rows], NAIVE_COLOR, "naive",
                           dash="6 4"))
    parts.append(_polyline([(x_of(r["k"], ks), y_of(r["per_question"])) for r in rows],
                           PER_QUESTION_COLOR, "per_question"))
    description = "; ".join(
        _("k = {k}: media por pregunta {per_question}, cuenta ingenua {naive}").format(
            k=r["k"], per_question=fmt_decimal(r["per_question"], 3), naive=fmt_decimal(r["naive"], 3))
        for r in rows)
    title = _("Probabilidad de fallar k intentos seguidos.")
    return (f'<svg class="cv-svg" data-testid="retry-plot" width="{WIDTH}" height="{HEIGHT}" '
            f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{escape(title)} '
            f'{escape(description)}">{"".join(parts)}</svg>')


def retry_figure(rows: list[dict], ps: list[float]) -> str:
    """:func:`retry_svg` in a figure with its legend (the numbers are in the tables beside it)."""
    legend = (f'<li><span class="pp-swatch" style="background:{PER_QUESTION_COLOR}"></span>'
              + _("media de las preguntas, (1 − p<sub>i</sub>)<sup>k</sup> promediado") + '</li>'
              f'<li><span class="cv-dash" style="border-color:{NAIVE_COLOR}"></span>'
              + _("cuenta ingenua, (1 − media de p<sub>i</sub>)<sup>k</sup>") + '</li>'
              f'<li><span class="pp-swatch" style="background:{QUESTION_COLOR}"></span>'
              + _("cada pregunta sola") + '</li>')
    caption = _("Eje vertical: probabilidad de fallar k intentos seguidos; eje horizontal: k, "
                "el número de intentos.")
    return ('<figure class="convergence">' + _scroll(_("gráfica de reintentos")) + retry_svg(rows, ps)
            + f'</div><figcaption>{caption}<ul class="pp-legend">{legend}</ul></figcaption></figure>')


def nice_step(x: float) -> int:
    """The smallest of 1, 2, 5, 10, 20, 25, 50, 100... (whole numbers) that is at least ``x``."""
    step = 1
    while True:
        for m in (1, 2, 2.5, 5):
            if m * step >= x and float(m * step).is_integer():
                return int(m * step)
        step *= 10


def answers(count: int) -> str:
    """«1 respuesta», «0 respuestas», «12 respuestas»: the count with the noun in agreement
    (in the current language: "1 answer", "12 answers")."""
    return ngettext("{n} respuesta", "{n} respuestas", count).format(n=fmt_int(count))


def depth_svg(counts: dict[int, int]) -> str:
    """Bars of answers per note depth (``counts``: {depth: answers}, depths ascending), each with
    its count above it (``rect[data-depth][data-count]``), on a scale from 0 to four times
    :func:`nice_step` of the largest count / 4. Raises ValueError for no depths."""
    if not counts:
        raise ValueError("counts must hold at least one depth")
    depths = sorted(counts)
    step = nice_step(max(counts.values()) / 4)
    top = 4 * step
    slot = (WIDTH - LEFT - RIGHT) / len(depths)
    parts = _axes([(LEFT + (i + 0.5) * slot, fmt_int(d)) for i, d in enumerate(depths)],
                  _("profundidad de la nota"), [(y_of(t / 4), fmt_int(t * step)) for t in range(5)])
    for i, d in enumerate(depths):
        y = y_of(counts[d] / top)
        x = LEFT + (i + 0.2) * slot
        parts.append(f'<rect data-depth="{d}" data-count="{counts[d]}" x="{x:.2f}" y="{y:.2f}" '
                     f'width="{slot * 0.6:.2f}" height="{y_of(0) - y:.2f}" fill="{PER_QUESTION_COLOR}"/>')
        parts.append(f'<text x="{x + slot * 0.3:.2f}" y="{y - 4:.2f}" class="cv-tick" '
                     f'text-anchor="middle">{fmt_int(counts[d])}</text>')
    description = "; ".join(_("profundidad {depth}: {answers}").format(depth=fmt_int(d), answers=answers(counts[d]))
                            for d in depths)
    title = _("Respuestas por profundidad de paréntesis.")
    return (f'<svg class="cv-svg" data-testid="depth-plot" width="{WIDTH}" height="{HEIGHT}" '
            f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{escape(title)} '
            f'{escape(description)}">{"".join(parts)}</svg>')


class DepthHistogram:
    """Level 4's answers by the depth of their note, as bars and as a table
    (``data-testid="depth-table"``, ``tr[data-depth][data-count]``). ``counts``: {depth: answers},
    as :func:`lesson.niveles.levels.depth_counts` gives it; raises what :func:`depth_svg` raises."""

    def __init__(self, counts: dict[int, int]):
        self.counts = {int(d): int(c) for d, c in sorted(counts.items())}
        depth_svg(self.counts)  # fail here, not when displayed

    def _repr_html_(self) -> str:
        rows = "".join(f'<tr data-depth="{d}" data-count="{c}"><td class="num">{fmt_int(d)}</td>'
                       f'<td class="num">{fmt_int(c)}</td></tr>' for d, c in self.counts.items())
        return styled(
            '<figure class="convergence">' + _scroll(_("profundidades")) + depth_svg(self.counts)
            + "</div><figcaption>" + _("Respuestas por profundidad de paréntesis de la nota")
            + "</figcaption></figure>"
            + _scroll(_("tabla de profundidades")) + '<table class="levels" data-testid="depth-table">'
            + "<caption>" + _("Profundidad de la nota") + "</caption><thead><tr><th scope='col'>"
            + _("profundidad") + "</th><th scope='col'>" + _("respuestas") + "</th>"
            f"</tr></thead><tbody>{rows}</tbody></table></div>")
