"""The lesson «Del esquema al autómata», sections 6 and 7: fast-forward and the phone exercise.

- :func:`compare_fast_forward` / :class:`FastForwardComparison`: the same grammar sampled step by
  step and with ``generate(..., fast_forward=True)``: model calls, time, validity, and the
  probabilities of the token splits each loop writes for the forced opening;
- :func:`path_probability`: ln p and ln q~ of a given token path (the masked loop made to pick it);
- :func:`sample_until_invalid`: many unmasked samples, each stopped as soon as it leaves a grammar;
- :class:`PhoneCheck`: the masked samples checked with ``re``, and the unmasked ones' hits.
"""

from __future__ import annotations

import json
import math
import re
import time
from dataclasses import dataclass, field
from html import escape

import numpy as np

from minigpt.gpt import softmax

from .numbers import es_decimal, es_int, es_sci_log
from .sampling import Decoder, forced_bytes, generate
from .views import strip_html, styled, token_label


def path_probability(model, tok, prompt: str, grammar, token_ids: list[int]) -> tuple[float, float]:
    """``(ln p, ln q~)`` of the token path ``token_ids`` after ``prompt``: its unmasked probability
    and the probability that the step-by-step masked loop (:class:`lesson.sampling.Decoder`) draws
    it. Raises ValueError when a token is not allowed where it stands."""
    decoder = Decoder(model, tok, prompt, grammar, max_tokens=len(token_ids))
    for t in token_ids:
        decoder.step(int(t))
    gen = decoder.generation
    return gen.log_p, gen.log_q


def opening_split(gen, n_bytes: int) -> list[int]:
    """The first tokens of ``gen`` that spell its first ``n_bytes`` bytes (the forced opening),
    up to the token that reaches or crosses byte ``n_bytes``."""
    out, total = [], 0
    for t in gen.token_ids:
        if total >= n_bytes:
            break
        out.append(t)
        total += len(gen.vocab[t])
    return out


@dataclass
class Run:
    """One generation and its wall time in milliseconds."""
    gen: object
    ms: float


def compare_fast_forward(model, tok, prompt: str, grammar, seeds) -> "FastForwardComparison":
    """Sample ``grammar`` once per seed step by step and once with ``fast_forward=True`` (same seed,
    so the random numbers differ only where fast-forward skips a draw). Times are wall time (ms),
    measured, never asserted. Raises ValueError when ``seeds`` is empty."""
    seeds = list(seeds)
    if not seeds:
        raise ValueError("seeds is empty: give at least one seed, e.g. seeds=range(5)")
    step, fast = [], []
    for s in seeds:
        for runs, ff in ((step, False), (fast, True)):
            start = time.perf_counter()
            gen = generate(model, tok, prompt, grammar, seed=s, fast_forward=ff)
            runs.append(Run(gen, (time.perf_counter() - start) * 1e3))
    opening = forced_bytes(grammar.matcher(tok.vocab))
    bpe = tok.encode_bytes(opening)
    return FastForwardComparison(prompt, grammar, step, fast, opening, bpe,
                                 path_probability(model, tok, prompt, grammar, bpe) if bpe else (0.0, 0.0))


@dataclass
class FastForwardComparison:
    """Result of :func:`compare_fast_forward`. ``opening``: the bytes forced at the start; ``bpe``:
    their BPE split (what fast-forward writes); ``bpe_logs``: (ln p, ln q~) of that split under the
    step-by-step masked loop. Test hook: ``[data-testid=fast-forward]`` with ``data-calls-stepwise``,
    ``data-calls-fast-forward`` (model calls summed over the seeds), ``data-forced`` (forced positions
    of the step-by-step runs: one allowed token, or one continuation of the text),
    ``data-valid-fast-forward`` (how many fast-forward texts the grammar accepts) and ``data-n``."""
    prompt: str
    grammar: object
    stepwise: list[Run]
    fast: list[Run]
    opening: bytes
    bpe: list[int]
    bpe_logs: tuple[float, float]

    @property
    def calls(self) -> tuple[int, int]:
        """Model calls summed over the seeds: (step by step, fast-forward)."""
        return (sum(r.gen.model_calls for r in self.stepwise), sum(r.gen.model_calls for r in self.fast))

    @property
    def forced(self) -> int:
        """Forced positions of the step-by-step runs (one allowed token, or one continuation of the text)."""
        return sum(p.forced in ("token", "split") for r in self.stepwise for p in r.gen.positions)

    @property
    def valid(self) -> tuple[int, int]:
        """Texts the grammar accepts: (step by step, fast-forward)."""
        ok = self.grammar.accepts
        return (sum(ok(r.gen.bytes) for r in self.stepwise), sum(ok(r.gen.bytes) for r in self.fast))

    def opening_splits(self) -> list[tuple[list[int], float, float, int]]:
        """The distinct splits of the forced opening that the step-by-step runs wrote, as
        ``(token ids, ln p, ln q~, how many runs)``, most frequent first."""
        found: dict[tuple, list] = {}
        n = len(self.opening)
        for r in self.stepwise:
            ids = opening_split(r.gen, n)
            pos = r.gen.positions[:len(ids)]
            row = found.setdefault(tuple(ids), [list(ids), sum(math.log(p.p_chosen) for p in pos),
                                                 sum(math.log(p.q_chosen) for p in pos), 0])
            row[3] += 1
        return sorted((tuple(v) for v in found.values()), key=lambda v: -v[3])

    def _repr_html_(self) -> str:
        (c_step, c_fast), (v_step, v_fast) = self.calls, self.valid
        ms_step = sum(r.ms for r in self.stepwise)
        ms_fast = sum(r.ms for r in self.fast)
        n = len(self.stepwise)
        vocab = self.stepwise[0].gen.vocab if self.stepwise else []
        rows = "".join(
            f"<tr><th scope='row'>{label}</th><td class='num'>{es_int(calls)}</td>"
            f"<td class='num'>{es_int(sum(len(r.gen.token_ids) for r in runs))}</td>"
            f"<td class='num' data-measured=''>{es_decimal(ms, 1)}</td><td class='num'>{valid} de {n}</td></tr>"
            for label, runs, calls, ms, valid in (("paso a paso", self.stepwise, c_step, ms_step, v_step),
                                                 ("con adelanto", self.fast, c_fast, ms_fast, v_fast)))
        texts = "".join(f"<li><code data-testid='fast-forward-text'>{escape(r.gen.text)}</code></li>"
                        for r in self.fast)
        splits = "".join(
            f"<tr><td>{strip_html(vocab, list(ids))}</td><td class='num'>{k}</td>"
            f"<td class='num'>{es_sci_log(lp)}</td><td class='num'>{es_sci_log(lq)}</td></tr>"
            for ids, lp, lq, k in self.opening_splits())
        lp, lq = self.bpe_logs
        return styled(
            f'<div class="fast-forward" data-testid="fast-forward" data-n="{n}" data-calls-stepwise="{c_step}" '
            f'data-calls-fast-forward="{c_fast}" data-forced="{self.forced}" '
            f'data-valid-fast-forward="{v_fast}">'
            '<div class="table-scroll" tabindex="0" role="region" aria-label="Llamadas al modelo">'
            f'<table class="compact-table"><caption>{n} respuestas con cada bucle (mismas semillas); '
            f'{self.forced} posiciones forzadas en las de paso a paso</caption><thead><tr><th scope="col">bucle</th>'
            '<th scope="col">llamadas al modelo</th><th scope="col">tokens</th><th scope="col">ms (medidos)</th>'
            f'<th scope="col">válidas</th></tr></thead><tbody>{rows}</tbody></table></div>'
            f'<p>Textos con adelanto:</p><ul class="texts">{texts}</ul>'
            '<div class="table-scroll" tabindex="0" role="region" aria-label="Particiones de la apertura">'
            f'<table class="compact-table"><caption>La apertura forzada «{escape(token_label(self.opening))}»: '
            'particiones que eligió el bucle paso a paso</caption><thead><tr><th scope="col">partición</th>'
            '<th scope="col">veces</th><th scope="col">p sin máscara</th><th scope="col">q̃ paso a paso</th>'
            f'</tr></thead><tbody>{splits}<tr class="highlight"><td>{strip_html(vocab, self.bpe)} '
            f'(BPE, la del adelanto)</td><td class="num">siempre</td><td class="num">{es_sci_log(lp)}</td>'
            f'<td class="num">{es_sci_log(lq)}</td></tr></tbody></table></div></div>')


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
