"""The lesson «Del esquema al autómata», section 7: the phone exercise.

:class:`PhoneCheck`: the masked samples checked with ``re``, and the unmasked ones' hits (an
:class:`lesson.early_abort.EarlyAbort` from :func:`lesson.sample_until_invalid`).
"""

from __future__ import annotations

import json
import re
from html import escape

from ..early_abort import LEFT, EarlyAbort
from ..i18n import _, ngettext
from ..numbers import fmt_decimal, fmt_int
from ..views import styled


class PhoneCheck:
    """Masked samples checked against ``pattern`` with Python's ``re`` (valid when
    ``re.fullmatch(pattern, text)``), next to unmasked ones (an :class:`EarlyAbort`). ``seconds``:
    the measured wall time of each batch (masked, unmasked), shown only when given. Test hooks: ``[data-testid=phone-samples]`` with
    ``data-n``, ``data-invalid`` and ``data-texts`` (the JSON list of every masked text), and
    ``[data-testid=phone-unmasked]`` with ``data-n`` and ``data-valid`` (the hits)."""

    def __init__(self, pattern: str, masked, unmasked: EarlyAbort | None = None,
                 seconds: tuple[float, float] | None = None, show: int = 8):
        self.pattern, self.masked, self.unmasked = pattern, list(masked), unmasked
        self.seconds, self.show = seconds, show

    @property
    def invalid(self) -> int:
        """Masked texts that ``re.fullmatch(pattern, text)`` rejects (0 when the mask works)."""
        return sum(re.fullmatch(self.pattern, g.text) is None for g in self.masked)

    @property
    def digit_start(self) -> int:
        """Unmasked texts whose first character is a digit (0 without unmasked samples)."""
        if self.unmasked is None:
            return 0
        return sum(t[:1].isdigit() for t in self.unmasked.texts)

    @staticmethod
    def first_dead_digits_of(free: EarlyAbort) -> int:
        """Unmasked samples that left the pattern with their first token although that token began
        with a digit (a subset of ``free.died_at[0]``)."""
        return sum(s == LEFT and k == 1 and t[:1].isdigit()
                   for t, s, k in zip(free.texts, free.status, free.tokens))

    @property
    def first_dead_digits(self) -> int:
        """Of the unmasked samples that left the pattern at the first token, those that began with
        a digit (0 without unmasked samples)."""
        return 0 if self.unmasked is None else self.first_dead_digits_of(self.unmasked)

    @property
    def masked_tokens(self) -> int:
        """Tokens of the masked samples after their first (each needs a model row of its own
        when the samples are written one by one)."""
        return sum(len(g.token_ids) - 1 for g in self.masked)

    @property
    def masked_rows(self) -> int:
        """Model rows ``sample_batch`` ran after the prompt: one per distinct token prefix (samples
        that begin alike share it)."""
        return len({tuple(g.token_ids[:k]) for g in self.masked for k in range(1, len(g.token_ids))})

    @property
    def distinct(self) -> int:
        """Distinct masked texts."""
        return len({g.text for g in self.masked})

    def _free_html(self) -> str:
        free = self.unmasked
        if free is None:
            return ""
        took = _(" en {seconds} s").format(seconds=fmt_decimal(self.seconds[1], 2)) if self.seconds else ""
        first = free.died_at[0] if free.died_at else 0
        digit = self.first_dead_digits
        calls = ngettext("{n} llamada", "{n} llamadas", free.model_calls).format(n=fmt_int(free.model_calls))
        text = _("Sin máscara: {n} muestras{took}; empiezan por un número que cumple el patrón: "
                 "<strong>{hits}</strong>. {first} se salen del patrón en el primer token ({digit} de ellas "
                 "empiezan por una cifra), y cada muestra se corta en cuanto se sale: tras el prompt, el modelo calculó "
                 "{rows} posiciones en vez de {whole} ({calls}, la del prompt incluida).").format(
            n=fmt_int(free.n), took=took, hits=fmt_int(free.hits), first=fmt_int(first), digit=fmt_int(digit),
            rows=fmt_int(free.rows_computed), whole=fmt_int(free.rows_whole), calls=calls)
        return f'<p data-testid="phone-unmasked" data-n="{free.n}" data-valid="{free.hits}">{text}</p>'

    def _repr_html_(self) -> str:
        texts = [g.text for g in self.masked]
        took = _(" en {seconds} s").format(seconds=fmt_decimal(self.seconds[0], 2)) if self.seconds else ""
        data = escape(json.dumps(texts, ensure_ascii=False))
        shown = "".join(f"<li><code>{escape(t)}</code></li>" for t in texts[:self.show])
        return styled(
            f'<div class="phone-check"><p data-testid="phone-samples" data-n="{len(texts)}" '
            f'data-invalid="{self.invalid}" data-texts="{data}">' + _(
                "Con máscara: <strong>{n}</strong> muestras{took}, {distinct} números distintos; no cumplen el "
                "patrón (comprobado con re.fullmatch): <strong>{invalid}</strong>.").format(
                n=fmt_int(len(texts)), took=took, distinct=fmt_int(self.distinct),
                invalid=fmt_int(self.invalid)) + " " + _(
                "Tras el primer token, {tokens} tokens más, que el modelo calculó en {rows} filas: las "
                "muestras que empiezan igual comparten fila.").format(
                tokens=fmt_int(self.masked_tokens), rows=fmt_int(self.masked_rows))
            + f'</p><ul class="texts phone-list">{shown}</ul>'
            f'{self._free_html()}</div>')
