"""The exercise of «Corregir la distorsión» §4: systematic resampling written by the reader.

The reader writes ``sistematico(pesos, u)``, the M indices (from 0) of the particles that M
systematic draws pick, or just the list of indices for the page's weights and ``u``. The checker
compares that answer with the library's :func:`lesson.smc.systematic_resample` (the one the SMC of
the page runs) on the page's case and, for a function, on a few more, and says where the two first
differ, with the cumulative sums and the points (u + k) / M that decide each index.

Systematic resampling: Kitagawa (1996); Douc, Cappé & Moulines (2005), "Comparison of resampling
schemes for particle filtering".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape

import numpy as np

from ..numbers import es_decimal
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
    lines: the report, in Spanish, one sentence or hint a line; case: (weights, u) of the first
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
    return "[" + "; ".join(es_decimal(float(x), 3) for x in xs) + "]"


def _as_indices(answer) -> list[int]:
    """The answer as a list of ints; TypeError naming what was found otherwise."""
    try:
        out = [int(i) for i in answer]
    except (TypeError, ValueError):
        raise TypeError(f"se esperaba una lista de índices enteros, y llegó {answer!r}") from None
    if any(int(i) != i for i in answer):
        raise TypeError(f"los índices deben ser enteros, y llegó {list(answer)!r}")
    return out


def _hints(weights, u: float) -> list[str]:
    w = np.asarray(weights, dtype=float)
    m = len(w)
    return [f"Las sumas acumuladas de los pesos normalizados: {_numbers(np.cumsum(w / w.sum()))}.",
            f"Los M = {m} puntos (u + k) / M, k = 0, …, {m - 1}: {_numbers((u + np.arange(m)) / m)}.",
            "Cada punto elige la primera partícula cuya suma acumulada lo supera."]


def compare(answer: list[int], weights, u: float) -> Verdict:
    """One case: ``answer`` (list of ints) against ``systematic_resample(weights, u)``."""
    w = np.asarray(weights, dtype=float)
    expected = systematic_resample(w / w.sum(), u).tolist()
    case = (tuple(float(x) for x in weights), float(u))
    where = f"con pesos {_numbers(w)} y u = {es_decimal(u, 2)}"
    if len(answer) != len(expected):
        return Verdict(False, [f"Aún no: {where} devuelve {len(answer)} índices, y el remuestreo de "
                               f"M = {len(expected)} partículas elige {len(expected)}."] + _hints(w, u), case)
    for k, (got, want) in enumerate(zip(answer, expected)):
        if got != want:
            point = (u + k) / len(expected)
            return Verdict(False, [f"Aún no: {where}, el primer índice distinto es k = {k}: tu respuesta "
                                   f"elige la partícula {got}, y el punto (u + {k}) / {len(expected)} = "
                                   f"{es_decimal(point, 3)} cae en la partícula {want}."] + _hints(w, u), case, k)
    return Verdict(True, [f"Correcto {where}: {expected}."], case)


def check(answer, weights=WEIGHTS, u: float = U, extra=EXTRA_CASES) -> Verdict:
    """Check the reader's ``answer``: a function ``f(pesos, u) -> indices`` (tried on the page's
    case, then on ``extra``) or the list of indices for ``weights`` and ``u``. Returns a
    :class:`Verdict`; never raises for a wrong answer (an exception inside the reader's function
    is reported as such)."""
    if not callable(answer):
        try:
            return compare(_as_indices(answer), weights, u)
        except TypeError as error:
            return Verdict(False, [f"Aún no: {error}."])
    for case_weights, case_u in ((weights, u), *extra):
        try:
            got = _as_indices(answer(list(case_weights), case_u))
        except Exception as error:  # the reader's code: report it, do not stop the page
            return Verdict(False, [f"Aún no: con pesos {_numbers(case_weights)} y u = {es_decimal(case_u, 2)} "
                                   f"tu función lanza {type(error).__name__}: {error}."] + _hints(case_weights, case_u),
                           (tuple(case_weights), case_u))
        verdict = compare(got, case_weights, case_u)
        if not verdict.ok:
            return verdict
    return Verdict(True, [f"Correcto: tu función da los mismos índices que la biblioteca en los "
                          f"{1 + len(extra)} casos probados."])


def comprobar_remuestreo(respuesta, pesos=WEIGHTS, u: float = U) -> Verdict:
    """The cell's name for :func:`check` (Spanish, as the reader's code)."""
    return check(respuesta, pesos, u)
