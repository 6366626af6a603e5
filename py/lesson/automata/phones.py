"""The lesson «Del esquema al autómata», section 7: the phone exercise.

- :func:`sample_until_invalid`: many unmasked samples, each stopped as soon as it leaves a grammar;
- :class:`PhoneCheck`: the masked samples checked with ``re``, and the unmasked ones' hits.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from html import escape

import numpy as np

from minigpt.gpt import softmax

from ..numbers import es_decimal, es_int
from ..views import styled


@dataclass
class EarlyAbort:
    """Result of :func:`sample_until_invalid`. ``hits``: samples whose tokens spelled a complete
    text of the grammar; ``died_at[j]``: samples that left the grammar with their token j+1;
    ``texts``: each sample's bytes up to where it stopped; ``rows_computed``: token positions the
    model ran (prompt excluded) against ``rows_whole``, what ``n`` whole samples of ``max_tokens``
    tokens would need (n x (max_tokens - 1))."""
    n: int
    max_tokens: int
    hits: int
    died_at: list[int]
    texts: list[bytes] = field(repr=False)
    rows_computed: int
    model_calls: int

    @property
    def rows_whole(self) -> int:
        return self.n * (self.max_tokens - 1)


MAX_UNMASKED = 10_000  # samples of one sample_until_invalid call (memory: float64 (n, V) arrays)


def sample_until_invalid(model, tok, prompt: str, grammar, *, n: int, seed: int = 0,
                         max_tokens: int = 16) -> EarlyAbort:
    """``n`` unmasked samples after ``prompt``, each stopped as soon as its text is no longer a
    prefix of a text of ``grammar`` (the early abort of «La máscara», section 6), as soon as it is a
    complete text (a hit: the sample starts with a text of the grammar, at a token boundary), or
    after ``max_tokens`` tokens (a miss). Whether a sample hits does not depend on the tokens it
    would write after stopping, so the hit count has exactly the distribution of whole samples
    checked afterwards; only the model work shrinks.

    Sampling is that of :func:`lesson.batch.sample_batch` without a mask (float64, one NumPy
    ``default_rng(seed)`` for the batch, one uniform per row and position, rows in order), one
    model call per position for the rows still alive. Raises ValueError for n < 1,
    n > ``MAX_UNMASKED`` (10,000: the batch holds float64 (n, V) arrays, 41 MB at the limit) or
    max_tokens < 1."""
    if n < 1 or max_tokens < 1:
        raise ValueError(f"n and max_tokens must be at least 1, found n={n}, max_tokens={max_tokens}")
    if n > MAX_UNMASKED:
        raise ValueError(f"n={n} is more than {MAX_UNMASKED:,} samples at once, too many for the page's "
                         f"memory: use a smaller n")
    model = model.astype(np.float64)
    rng = np.random.default_rng(seed)
    vocab = tok.vocab
    shared = model.new_cache(1)
    first = model.step(np.array([tok.encode(prompt)]), shared)[0, -1]
    cache, calls, computed = None, 1, 0
    logits = np.repeat(first[None, :], n, axis=0)
    matchers = [grammar.matcher(vocab) for _ in range(n)]
    texts, rows = [b""] * n, np.arange(n)
    hits, died = 0, [0] * max_tokens
    for j in range(max_tokens):
        cumulative = np.cumsum(softmax(logits), axis=1)
        u = rng.random(len(rows)) * cumulative[:, -1]
        chosen = np.minimum((cumulative <= u[:, None]).sum(axis=1), len(vocab) - 1)
        still = []
        for i, r in enumerate(rows.tolist()):
            t, m = int(chosen[i]), matchers[r]
            texts[r] += vocab[t]
            if not m.mask()[t]:
                died[j] += 1
                continue
            m.consume(t)
            if m.is_accepting():
                hits += 1
            elif j + 1 < max_tokens:
                still.append(i)
        if not still:
            break
        cache = shared.branch(len(still)) if cache is None else cache.select(still, extra=1)
        rows, chosen = rows[still], chosen[still]
        logits = model.step(chosen[:, None], cache)[:, -1]
        calls, computed = calls + 1, computed + len(rows)
    return EarlyAbort(n, max_tokens, hits, died, texts, computed, calls)


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

    def _free_html(self) -> str:
        free = self.unmasked
        if free is None:
            return ""
        took = f" en {es_decimal(self.seconds[1], 2)} s" if self.seconds else ""
        first = free.died_at[0] if free.died_at else 0
        return (f'<p data-testid="phone-unmasked" data-n="{free.n}" data-valid="{free.hits}">Sin máscara: '
                f'{es_int(free.n)} muestras{took}; empiezan por un número que cumple el '
                f'patrón: <strong>{es_int(free.hits)}</strong>. {es_int(first)} se salen del patrón en el '
                f'primer token, y cada muestra se corta en cuanto se sale: tras el prompt, el modelo calculó '
                f'{es_int(free.rows_computed)} posiciones en vez de {es_int(free.rows_whole)} '
                f'({es_int(free.model_calls)} {"llamada" if free.model_calls == 1 else "llamadas"}, '
                f'la del prompt incluida).</p>')

    def _repr_html_(self) -> str:
        texts = [g.text for g in self.masked]
        took = f" en {es_decimal(self.seconds[0], 2)} s" if self.seconds else ""
        data = escape(json.dumps(texts, ensure_ascii=False))
        shown = "".join(f"<li><code>{escape(t)}</code></li>" for t in texts[:self.show])
        return styled(
            f'<div class="phone-check"><p data-testid="phone-samples" data-n="{len(texts)}" '
            f'data-invalid="{self.invalid}" data-texts="{data}">Con máscara: <strong>{es_int(len(texts))}</strong> '
            f'muestras{took}; no cumplen el patrón: '
            f'<strong>{es_int(self.invalid)}</strong>.</p><ul class="texts phone-list">{shown}</ul>'
            f'{self._free_html()}</div>')
