"""HTML views of «Corregir la distorsión» (:mod:`lesson.smc`): weighted particles, the weights'
imbalance, the particles' paths and the convergence plot. Plain HTML and SVG with the classes of
``views.css``, returned by ``_repr_html_`` (page cells, build time and Jupyter alike).

Test hooks (stable): ``[data-testid=smc-convergence]`` holds one ``tr`` per (method, N) with
``data-method`` ("mask", "is", "smc"), ``data-n`` and ``data-tv`` (mean over runs, Python repr);
``[data-testid=particles-summary]`` has ``data-method``, ``data-log-z`` (ln of run 0's estimate
of p(G | x)) and ``data-ess``; ``[data-testid=particles-table]`` rows have ``data-text`` and
``data-estimate``; ``[data-testid=particle-paths]`` is the paths picture (``data-resampled``: the
positions after which run 0 was resampled, comma-separated).

Words and numbers in the current language of :mod:`lesson.i18n`, as in :mod:`lesson.views`
(English in ``locale/en/LC_MESSAGES/lesson.po``).
"""

from __future__ import annotations

import math
from html import escape

import numpy as np

from .enumeration import exact_table
from .i18n import _, ngettext
from .numbers import fmt_decimal, fmt_int, fmt_percent, fmt_prob, fmt_sci_log
from .views import Translated, _bar, _heads, _scroll, counted, plain_int, styled

METHOD_NAMES = Translated(lambda: {"mask": _("máscara sola"), "is": _("pesos de importancia"),
                                   "smc": _("Monte Carlo secuencial")})
METHOD_COLORS = {"mask": "#8a8f98", "is": "#1f5fa8", "smc": "#b5541c"}
# Colours for the texts of G in the paths picture (colour-blind-safe Okabe–Ito palette).
TEXT_COLORS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"]
UNDECIDED = "#9aa3ad"


def _label(text: bytes | None) -> str:
    return _("(sin terminar)") if text is None else text.decode("utf-8", "replace")


def particles_html(result) -> str:
    """Run 0 of a :class:`lesson.smc.Particles`: the estimate per text, ESS, p(G | x), costs."""
    est, freq = result.estimate(0), result.frequencies(0)
    texts = sorted(set(est) | set(freq), key=lambda t: (-est.get(t, 0.0), t))
    rows = "".join(
        f'<tr data-text="{escape(_label(t))}" data-estimate="{est.get(t, 0.0)!r}"><th scope="row">'
        f'<code>{escape(_label(t))}</code></th><td>{_bar(freq.get(t, 0.0), fmt_prob(freq.get(t, 0.0)))}</td>'
        f'<td>{_bar(est.get(t, 0.0), fmt_prob(est.get(t, 0.0)))}</td></tr>' for t in texts)
    ess = result.final_ess(0)
    method = (_("importancia") if result.method == "is"
              else _("SMC, umbral {threshold}").format(threshold=fmt_decimal(result.ess_threshold, 2)))
    resampled = result.resampled[0]
    extra = ""
    if result.method == "smc":
        extra = " · " + (_("remuestreos tras las posiciones {positions}").format(
            positions=", ".join(map(plain_int, resampled))) if resampled else _("ningún remuestreo"))
    summary = (f'<p class="enum-summary" data-testid="particles-summary" data-method="{result.method}" '
               f'data-log-z="{float(result.log_z[0])!r}" data-ess="{ess!r}">'
               + _("{n} partículas ({method}){extra} · tamaño efectivo de la muestra final {ess} · "
                   "estimación de p(G | x) = {estimate}").format(
                   n=fmt_int(result.particles), method=method, extra=extra, ess=fmt_decimal(ess, 1),
                   estimate=fmt_sci_log(float(result.log_z[0])))
               + '</p><p class="enum-summary">'
               + _("Coste: {tokens} tokens muestreados ({runs}), {calls} llamadas al modelo con {rows} filas "
                   "(las partículas con el mismo prefijo comparten fila)").format(
                   tokens=fmt_int(result.particle_steps),
                   runs=counted(ngettext("{n} ejecución", "{n} ejecuciones", result.runs), result.runs),
                   calls=plain_int(result.forward_calls), rows=fmt_int(result.forward_rows))
               + f' · {fmt_decimal(result.seconds, 2)} s</p>')
    return styled(summary + _scroll(_("estimación por texto")) +
                  '<table class="enumeration" data-testid="particles-table"><thead><tr>'
                  + _heads([_("texto"), _("fracción de partículas"), _("fracción del peso (estimación)")])
                  + "</tr></thead><tbody>" + rows +
                  "</tbody></table></div>")


class WeightsView:
    """How lopsided the importance weights of run 0 are: ESS, the share of the heaviest particles,
    the heaviest ``top`` particles, and per text the share of draws (what the mask gives), the
    typical weight of its draws (exp of their mean ln w: a geometric mean), the share of weight
    (the corrected estimate) and, with ``exact`` (an Enumeration or a dict), the exact conditional."""

    def __init__(self, result, exact=None, top: int = 8):
        self.result, self.exact, self.top = result, exact, top

    def _repr_html_(self) -> str:
        r = self.result
        w = r.weights(0)
        order = np.argsort(-w, kind="stable")
        n = len(w)
        ess = r.final_ess(0)
        top1, top10 = float(w[order[:1]].sum()), float(w[order[:max(1, n // 100)]].sum())
        log_z = float(r.log_z[0])
        words = _("{n} muestras con máscara · media de los pesos, la estimación de p(G | x): {estimate} · "
                  "tamaño efectivo (Σw)²/Σw² = {ess} ({ess_share}) · la más pesada lleva el {top1} del peso; "
                  "el 1 % más pesado ({top_count}), el {top_share}").format(
            n=fmt_int(n), estimate=fmt_sci_log(log_z), ess=fmt_decimal(ess, 1), ess_share=fmt_percent(ess / n),
            top1=fmt_percent(top1), top_count=fmt_int(max(1, n // 100)), top_share=fmt_percent(top10))
        words += _(" · pesos sin normalizar de {lightest} (la más ligera) a {heaviest} (la más pesada)").format(
            lightest=fmt_sci_log(float(r.log_weights[0].min()), 2),
            heaviest=fmt_sci_log(float(r.log_weights[0].max()), 3))
        summary = (f'<p class="enum-summary" data-testid="weights-summary" data-ess="{ess!r}" '
                   f'data-log-z="{log_z!r}">{words}</p>')
        heavy = "".join(
            f'<tr><td class="num">{plain_int(i)}</td><td><code>{escape(_label(r.texts[0][j]))}</code></td>'
            f'<td class="num">{fmt_sci_log(float(r.log_weights[0, j]))}</td>'
            f'<td>{_bar(float(w[j]), fmt_prob(float(w[j])))}</td></tr>'
            for i, j in enumerate(order[:self.top].tolist(), start=1))
        est, freq = r.estimate(0), r.frequencies(0)
        exact = exact_table(self.exact) if self.exact is not None else {}
        texts = sorted(set(est) | set(freq) | set(exact), key=lambda t: (-exact.get(t, est.get(t, 0.0)), t))
        head_exact = _heads([_("exacta")]) if exact else ""
        typical = {}
        for text, lw in zip(r.texts[0], r.log_weights[0].tolist()):
            typical.setdefault(text, []).append(lw)
        per_text = "".join(
            f'<tr><th scope="row"><code>{escape(_label(t))}</code></th>'
            f'<td>{_bar(freq.get(t, 0.0), fmt_prob(freq.get(t, 0.0)))}</td>'
            f'<td class="num">{fmt_sci_log(float(np.mean(typical[t]))) if t in typical else "—"}</td>'
            f'<td>{_bar(est.get(t, 0.0), fmt_prob(est.get(t, 0.0)))}</td>'
            + (f'<td>{_bar(exact.get(t, 0.0), fmt_prob(exact.get(t, 0.0)))}</td>' if exact else "")
            + "</tr>" for t in texts)
        return styled(summary + _scroll(_("las muestras más pesadas")) +
                      '<table class="compact-table" data-testid="heaviest"><caption>' + _("Las muestras más pesadas")
                      + '</caption><thead><tr>'
                      + _heads([_("puesto"), _("texto"), _("peso w"), _("peso normalizado")], '"')
                      + f'</tr></thead><tbody>{heavy}</tbody></table></div>' + _scroll(_("muestras y peso por texto"))
                      + '<table class="enumeration weights-by-text"><caption>'
                      + _("Por texto: cuántas muestras, cuánto peso") + '</caption><thead><tr>'
                      + _heads([_("texto"), _("fracción de muestras (máscara)"), _("peso típico (media geométrica)"),
                                _("fracción del peso")], '"') + head_exact +
                      f'</tr></thead><tbody>{per_text}</tbody></table></div>')


class PathsView:
    """The particles of run 0 position by position (SVG): one row per particle, one column per
    position; a dot's area grows with its normalised weight, its colour says which text of
    ``texts`` its prefix already determines (grey: still undecided); a line joins each particle to
    the one it continues; after a resampling, lines cross to the copied particle, and a particle
    with no line going on died there. Readable up to about 64 particles."""

    def __init__(self, result, texts, caption: str = ""):
        self.result = result
        self.texts = [t.encode("utf-8") if isinstance(t, str) else bytes(t) for t in texts]
        self.caption = caption

    def _color(self, label: bytes) -> str:
        fits = [i for i, t in enumerate(self.texts) if t.startswith(label)]
        if len(fits) == 1:
            return TEXT_COLORS[fits[0] % len(TEXT_COLORS)]
        return UNDECIDED

    def _repr_html_(self) -> str:
        steps = self.result.history
        k = self.result.particles
        if not steps:
            return styled('<p class="enum-summary">' + _("Ninguna posición.") + "</p>")
        dx, dy, left, top = 30, max(6, min(14, 360 // k)), 34, 22
        width, height = left + dx * len(steps) + 12, top + dy * k + 10
        parts = []
        for t, step in enumerate(steps):
            x = left + dx * t
            if step.ancestors is not None:
                parts.append(f'<rect x="{x + 6}" y="{top - 6}" width="{dx - 12}" height="{dy * k + 4}" '
                             'class="pp-resample"/>')
            parts.append(f'<text x="{x}" y="{top - 10}" class="pp-axis">{plain_int(t + 1)}</text>')
        for t, step in enumerate(steps[:-1]):  # lines from position t to t + 1
            x = left + dx * t
            anc = step.ancestors if step.ancestors is not None else np.arange(k)
            nxt = steps[t + 1]
            for i in range(k):
                a = int(anc[i])
                color = self._color(nxt.labels[i])
                parts.append(f'<line x1="{x}" y1="{top + dy * a}" x2="{x + dx}" y2="{top + dy * i}" '
                             f'stroke="{color}" class="pp-line"/>')
        for t, step in enumerate(steps):
            x = left + dx * t
            for i in range(k):
                radius = 1.2 + 0.45 * dy * math.sqrt(min(1.0, float(step.weights[i]) * k) / 1.0)
                radius = min(radius, 0.9 * dy)
                parts.append(f'<circle cx="{x}" cy="{top + dy * i}" r="{radius:.2f}" '
                             f'fill="{self._color(step.labels[i])}"/>')
        resampled = [str(t + 1) for t, s in enumerate(steps) if s.ancestors is not None]
        names = [t.decode("utf-8", "replace") for t in self.texts]
        if resampled:
            description = _("{k} partículas a lo largo de {n} posiciones; remuestreo tras las posiciones "
                            "{positions}.").format(k=plain_int(k), n=plain_int(len(steps)),
                                                   positions=", ".join(resampled))
        else:
            description = _("{k} partículas a lo largo de {n} posiciones; remuestreo tras ninguna "
                            "posición.").format(k=plain_int(k), n=plain_int(len(steps)))
        legend = "".join(f'<li><span class="pp-swatch" style="background:{TEXT_COLORS[i % len(TEXT_COLORS)]}">'
                         f'</span><code>{escape(n)}</code></li>' for i, n in enumerate(names))
        legend += f'<li><span class="pp-swatch" style="background:{UNDECIDED}"></span>' + _("aún sin decidir") + "</li>"
        svg = (f'<svg class="pp-svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
               f'role="img" aria-label="{escape(description)}">{"".join(parts)}</svg>')
        caption = f'<p class="pv-caption">{escape(self.caption)}</p>' if self.caption else ""
        return styled(f'<figure class="particle-paths" data-testid="particle-paths" '
                      f'data-resampled="{",".join(resampled)}">{caption}'
                      + _scroll(_("caminos de las partículas")) + f'{svg}</div>'
                      f'<figcaption><ul class="pp-legend">{legend}</ul>{escape(description)} '
                      + _("Las franjas marcan los remuestreos; el área de cada punto crece con su peso.")
                      + '</figcaption></figure>')


def convergence_html(conv) -> str:
    """The convergence plot (SVG: total variation against N on a log axis, one line per method,
    every run a faint dot) and its table (test hook ``smc-convergence``)."""
    methods = [m for m in ("mask", "is", "smc") if any(r.method == m for r in conv.rows)]
    legend = "".join(f'<li><span class="pp-swatch" style="background:{METHOD_COLORS[m]}"></span>'
                     f'{METHOD_NAMES[m]}</li>' for m in methods)
    legend += ('<li><span class="cv-dash"></span>'
               + _("distancia exacta de la máscara, {tv}").format(tv=fmt_decimal(conv.exact_tv, 3)) + "</li>")
    words = _("{runs} ejecuciones por método y N (la máscara sola y los pesos de importancia leen las mismas muestras; el SMC tiene las suyas) · umbral de remuestreo del SMC {threshold}").format(
        runs=plain_int(conv.runs), threshold=fmt_decimal(conv.ess_threshold, 2))
    summary = f'<p class="enum-summary">{words} · {fmt_decimal(conv.seconds, 2)} s</p>'
    return styled(summary + '<figure class="convergence">' + _scroll(_("gráfica de convergencia")) +
                  f'{_convergence_svg(conv, methods)}</div>'
                  f'<figcaption><ul class="pp-legend">{legend}</ul></figcaption></figure>'
                  + _convergence_table(conv))


def _convergence_svg(conv, methods: list[str], w: int = 420, h: int = 240) -> str:
    """The plot of :func:`convergence_html`: axes, ticks, the exact distance of the mask as a
    dashed line, each run's distance as a dot and each method's mean as a line."""
    sizes = sorted({r.n for r in conv.rows})
    top_tv = max(0.05, max(float(r.tvs.max()) for r in conv.rows), conv.exact_tv) * 1.08
    left, right, top, bottom = 46, 14, 12, 34
    lo, hi = math.log10(sizes[0]), math.log10(sizes[-1])
    span = hi - lo or 1.0

    def px(n):
        return left + (math.log10(n) - lo) / span * (w - left - right) if len(sizes) > 1 else (w + left) / 2

    def py(tv):
        return top + (1 - tv / top_tv) * (h - top - bottom)

    parts = [f'<line x1="{left}" y1="{py(0)}" x2="{w - right}" y2="{py(0)}" class="cv-axis"/>',
             f'<line x1="{left}" y1="{top}" x2="{left}" y2="{py(0)}" class="cv-axis"/>']
    step = 0.1 if top_tv <= 0.5 else 0.2
    for tick in np.arange(0, top_tv, step).tolist():
        parts.append(f'<text x="{left - 4}" y="{py(tick) + 4:.1f}" class="cv-tick" text-anchor="end">'
                     f'{fmt_decimal(tick, 2)}</text>')
    for n in sizes:
        parts.append(f'<text x="{px(n):.1f}" y="{h - bottom + 16}" class="cv-tick" text-anchor="middle">'
                     f'{fmt_int(n)}</text>')
    parts.append(f'<text x="{(w + left) / 2}" y="{h - 4}" class="cv-tick" text-anchor="middle">'
                 + _("N (muestras o partículas), escala logarítmica") + "</text>")
    middle = (top + py(0)) / 2  # the y-axis label, written upwards along the left edge
    parts.append(f'<text x="10" y="{middle:.1f}" class="cv-tick" text-anchor="middle" data-axis="y" '
                 f'transform="rotate(-90 10 {middle:.1f})">' + _("variación total") + "</text>")
    parts.append(f'<line x1="{left}" y1="{py(conv.exact_tv):.1f}" x2="{w - right}" y2="{py(conv.exact_tv):.1f}" '
                 'class="cv-exact"/>')
    for m in methods:
        color = METHOD_COLORS[m]
        rows = sorted((r for r in conv.rows if r.method == m), key=lambda r: r.n)
        offset = {"mask": -6, "is": 0, "smc": 6}[m]
        for r in rows:
            for tv in r.tvs.tolist():
                parts.append(f'<circle cx="{px(r.n) + offset:.1f}" cy="{py(tv):.1f}" r="2" fill="{color}" '
                             'fill-opacity="0.35"/>')
        points = " ".join(f"{px(r.n) + offset:.1f},{py(r.mean):.1f}" for r in rows)
        parts.append(f'<polyline points="{points}" fill="none" stroke="{color}" stroke-width="2.5"/>')
    description = "; ".join(
        f"{METHOD_NAMES[r.method]}, N = {plain_int(r.n)}: {fmt_decimal(r.mean, 3)}" for r in conv.rows)
    label = _("Distancia de variación total media frente a N. {description}").format(description=description)
    return (f'<svg class="cv-svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" '
            f'aria-label="{escape(label)}">'
            f'{"".join(parts)}</svg>')


def _convergence_table(conv) -> str:
    """The table of :func:`convergence_html`: per method and N, the mean, smallest and largest
    total variation over the runs, and the tokens per run."""
    rows = "".join(
        f'<tr data-method="{r.method}" data-n="{r.n}" data-tv="{r.mean!r}"><td>{METHOD_NAMES[r.method]}</td>'
        f'<td class="num">{fmt_int(r.n)}</td><td class="num">{fmt_decimal(r.mean, 3)}</td>'
        f'<td class="num">{fmt_decimal(float(r.tvs.min()), 3)} – {fmt_decimal(float(r.tvs.max()), 3)}</td>'
        f'<td class="num">{fmt_int(round(r.particle_steps))}</td></tr>'
        for r in sorted(conv.rows, key=lambda r: (["mask", "is", "smc"].index(r.method), r.n)))
    return (_scroll(_("tabla de convergencia"))
            + '<table class="compact-table" data-testid="smc-convergence"><caption>'
            + _("Distancia de variación total a la condicionada exacta") + "</caption><thead><tr>"
            + _heads([_("método"), "N", _("media"), _("mín. – máx."), _("tokens por ejecución")], '"')
            + f'</tr></thead><tbody>{rows}</tbody></table></div>')
