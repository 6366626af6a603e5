"""The exercise of «Corregir la distorsión» §4: systematic resampling written by the reader.

The reader writes ``sistematico(pesos, u)`` (``systematic(weights, u)`` on the English page), the M indices (from 0) of the particles that M
systematic draws pick, or just the list of indices for the page's weights and ``u``. The checker
compares that answer with the library's :func:`lesson.smc.systematic_resample` (the one the SMC of
the page runs) on the page's case and, for a function, on a few more, and says where the two first
differ, with the cumulative sums and the points (u + k) / M that decide each index.

The report is written in the current language (:mod:`lesson.i18n`: Spanish ids, English in
``distorsion.po``). The Spanish page calls the checker :func:`comprobar_remuestreo`, the English
one :func:`check_resampling`: the same function.

Systematic resampling: Kitagawa (1996); Douc, Cappé & Moulines (2005), "Comparison of resampling
schemes for particle filtering".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape

import numpy as np

from ..i18n import _, get_language
from ..numbers import fmt_decimal
from ..smc import systematic_resample

# The page's case: M = 5 normalised weights and the one uniform u (no point falls on a cumulative
# sum, so "first sum above the point" and "first sum at or above it" agree).
WEIGHTS = (0.1, 0.4, 0.05, 0.3, 0.15)
U = 0.3
# More cases for a function: another u, a zero weight, one particle with all the weight, weights
# that do not sum to 1 (the library normalises them), and a single particle.
EXTRA_CASES = (
    ((0.1, 0.4, 0.05, 0.3, 0.15), 0.9),
    ((0.25, 0.0, 0.5, 0.0, 0.25), 0.1),
    ((0.0, 0.0, 1.0, 0.0), 0.5),
    ((2.0, 1.0, 1.0), 0.7),
    ((1.0,), 0.42),
)


@dataclass
class Verdict:
    """What the checker found. ok: the answer equals the library's on every case tried;
    lines: the report, in the language current when it was made, one sentence or hint a line; case: (weights, u) of the first
    case that differs (None when ok or when the answer could not be run); index: the first k at
    which the indices differ (None when the lengths differ or the answer failed)."""
    ok: bool
    lines: list[str] = field(default_factory=list)
    case: tuple | None = None
    index: int | None = None

    def __str__(self) -> str:
        return "\n".join(self.lines)

    def _repr_html_(self) -> str:
        """The report as HTML; test hooks ``[data-testid=resampling-check]`` with ``data-ok``
        ("true"/"false") and, when the indices differ, ``data-index`` (the first k)."""
        index = "" if self.index is None else f' data-index="{self.index}"'
        items = "".join(f"<li>{escape(line)}</li>" for line in self.lines[1:])
        return (f'<div class="exercise-check" data-testid="resampling-check" '
                f'data-ok="{str(self.ok).lower()}"{index}><p><strong>{escape(self.lines[0])}</strong></p>'
                + (f"<ul>{items}</ul>" if items else "") + "</div>")


def _numbers(xs) -> str:
    """A list of numbers with 3 decimals: "[0,100; 0,500]" in Spanish (the comma is the decimal
    mark), "[0.100, 0.500]" in English."""
    separator = "; " if get_language() == "es" else ", "
    return "[" + separator.join(fmt_decimal(float(x), 3) for x in xs) + "]"


def _as_indices(answer) -> list[int]:
    """The answer as a list of ints; TypeError naming what was found otherwise."""
    try:
        out = [int(i) for i in answer]
    except (TypeError, ValueError):
        raise TypeError(_("se esperaba una lista de índices enteros, y llegó {found}").format(
            found=repr(answer))) from None
    if any(int(i) != i for i in answer):
        raise TypeError(_("los índices deben ser enteros, y llegó {found}").format(found=repr(list(answer))))
    return out


def _hints(weights, u: float) -> list[str]:
    w = np.asarray(weights, dtype=float)
    m = len(w)
    return [_("Las sumas acumuladas de los pesos normalizados: {sums}.").format(
                sums=_numbers(np.cumsum(w / w.sum()))),
            _("Los M = {m} puntos (u + k) / M, k = 0, …, {last}: {points}.").format(
                m=m, last=m - 1, points=_numbers((u + np.arange(m)) / m)),
            _("Cada punto elige la primera partícula cuya suma acumulada lo supera.")]


def _where(weights, u: float) -> str:
    """«con pesos [...] y u = 0,30»: the case, as the report names it."""
    return _("con pesos {weights} y u = {u}").format(weights=_numbers(weights), u=fmt_decimal(u, 2))


def compare(answer: list[int], weights, u: float) -> Verdict:
    """One case: ``answer`` (list of ints) against ``systematic_resample(weights, u)``."""
    w = np.asarray(weights, dtype=float)
    expected = systematic_resample(w / w.sum(), u).tolist()
    case = (tuple(float(x) for x in weights), float(u))
    where = _where(w, u)
    if len(answer) != len(expected):
        return Verdict(False, [_("Aún no: {where} devuelve {got} índices, y el remuestreo de "
                                 "M = {m} partículas elige {m}.").format(
                                     where=where, got=len(answer), m=len(expected))] + _hints(w, u), case)
    for k, (got, want) in enumerate(zip(answer, expected)):
        if got != want:
            point = (u + k) / len(expected)
            return Verdict(False, [_("Aún no: {where}, el primer índice distinto es k = {k}: tu respuesta "
                                     "elige la partícula {got}, y el punto (u + {k}) / {m} = "
                                     "{point} cae en la partícula {want}.").format(
                                         where=where, k=k, got=got, m=len(expected),
                                         point=fmt_decimal(point, 3), want=want)] + _hints(w, u), case, k)
    return Verdict(True, [_("Correcto {where}: {indices}.").format(where=where, indices=expected)], case)


def check(answer, weights=WEIGHTS, u: float = U, extra=EXTRA_CASES) -> Verdict:
    """Check the reader's ``answer``: a function ``f(pesos, u) -> indices`` (tried on the page's
    case, then on ``extra``) or the list of indices for ``weights`` and ``u``. Returns a
    :class:`Verdict`; never raises for a wrong answer (an exception inside the reader's function
    is reported as such)."""
    if not callable(answer):
        try:
            return compare(_as_indices(answer), weights, u)
        except TypeError as error:
            return Verdict(False, [_("Aún no: {error}.").format(error=error)])
    for case_weights, case_u in ((weights, u), *extra):
        try:
            got = _as_indices(answer(list(case_weights), case_u))
        except Exception as error:  # the reader's code: report it, do not stop the page
            return Verdict(False, [_("Aún no: {where} tu función lanza {kind}: {error}.").format(
                                       where=_where(case_weights, case_u), kind=type(error).__name__, error=error)]
                           + _hints(case_weights, case_u),
                           (tuple(case_weights), case_u))
        verdict = compare(got, case_weights, case_u)
        if not verdict.ok:
            return verdict
    return Verdict(True, [_("Correcto: tu función da los mismos índices que la biblioteca en los "
                            "{n} casos probados.").format(n=1 + len(extra))])


def comprobar_remuestreo(respuesta, pesos=WEIGHTS, u: float = U) -> Verdict:
    """The Spanish cell's name for :func:`check` (Spanish, as the reader's code)."""
    return check(respuesta, pesos, u)


def check_resampling(answer, weights=WEIGHTS, u: float = U) -> Verdict:
    """The English cell's name for :func:`check` (the same checker as :func:`comprobar_remuestreo`)."""
    return check(answer, weights, u)
