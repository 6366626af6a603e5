"""The lesson «Del esquema al autómata», section 6: fast-forward of forced tokens.

- :func:`compare_fast_forward` / :class:`FastForwardComparison`: the same grammar sampled step by
  step and with ``generate(..., fast_forward=True)``: model calls, time, validity, and the
  probabilities of the token splits each loop writes for the forced opening;
- :func:`path_probability`: ln p and ln q~ of a given token path (the masked loop made to pick it).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from html import escape

from ..i18n import _
from ..numbers import fmt_decimal, fmt_int, fmt_sci_log
from ..sampling import Decoder, forced_bytes, generate
from ..views import strip_html, styled, token_label
from .route import header_cells


def path_probability(model, tok, prompt: str, grammar, token_ids: list[int]) -> tuple[float, float]:
    """``(ln p, ln q~)`` of the token path ``token_ids`` after ``prompt``: its unmasked probability
    and the probability that the step-by-step masked loop (:class:`lesson.sampling.Decoder`) draws
    it. Raises ValueError when a token is not allowed where it stands."""
    decoder = Decoder(model, tok, prompt, grammar, max_tokens=len(token_ids))
    for t in token_ids:
        decoder.step(int(t))
    gen = decoder.generation
    return gen.log_p, gen.log_q


def exact_splits(vocab: list[bytes], data: bytes) -> list[list[int]]:
    """Every way to write ``data`` as a sequence of tokens of ``vocab`` (each token's bytes a
    piece of ``data``, in order, covering it exactly), in order of the token ids. Exponential in
    the worst case: meant for a short forced run such as ``{"nombre":"`` (9 splits)."""
    by_start: dict[int, list[list[int]]] = {len(data): [[]]}
    for i in range(len(data) - 1, -1, -1):
        by_start[i] = [[t] + rest for t, piece in enumerate(vocab)
                       if piece and data.startswith(piece, i) for rest in by_start[i + len(piece)]]
    return by_start[0]


def split_inversion(rows) -> dict | None:
    """The most lopsided pair of rows ``(ids, ln p, ln q~, ...)`` in which the less likely path
    (smaller p) is the one the masked loop draws more often (larger q~): ``{"low", "high"}`` (the
    two rows' ids), ``p_ratio`` (p_high / p_low, > 1) and ``q_ratio`` (q~_low / q~_high, > 1);
    None when no pair is inverted. Source: the distortion of «La máscara», q~(y) = p(y) / Π_j p(A_j)."""
    best = None
    for low in rows:
        for high in rows:
            if low[1] < high[1] and low[2] > high[2]:
                gap = high[1] - low[1]
                if best is None or gap > best[0]:
                    best = (gap, low, high)
    if best is None:
        return None
    _gap, low, high = best
    return {"low": list(low[0]), "high": list(high[0]), "p_ratio": math.exp(high[1] - low[1]),
            "q_ratio": math.exp(low[2] - high[2])}


HIGHLIGHT = " class='highlight'"


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
            ids = r.gen.prefix_split(n)
            pos = r.gen.positions[:len(ids)]
            row = found.setdefault(tuple(ids), [list(ids), sum(math.log(p.p_chosen) for p in pos),
                                                 sum(math.log(p.q_chosen) for p in pos), 0])
            row[3] += 1
        return sorted((tuple(v) for v in found.values()), key=lambda v: -v[3])

    def split_rows(self) -> list[tuple[list[int], float, float, int, int]]:
        """The rows of the view's split table: each split that the step-by-step runs wrote, and the
        BPE split if none of them did, as ``(ids, ln p, ln q~, step-by-step runs, fast-forward
        runs)``: the two loops counted apart, each out of ``len(seeds)``."""
        n = len(self.opening)
        rows = [(list(ids), lp, lq, k) for ids, lp, lq, k in self.opening_splits()]
        if not any(ids == list(self.bpe) for ids, *_ in rows):
            rows.append((list(self.bpe), *self.bpe_logs, 0))
        fast = [list(r.gen.prefix_split(n)) for r in self.fast]
        return [(ids, lp, lq, k, sum(f == ids for f in fast)) for ids, lp, lq, k in rows]

    def inversion(self) -> dict | None:
        """:func:`split_inversion` over :meth:`split_rows`."""
        return split_inversion(self.split_rows())

    def _inversion_html(self, vocab) -> str:
        inv = self.inversion()
        if inv is None:
            return ""
        text = _("Al revés de lo que diría p: {low} es {p_ratio} veces menos probable que {high} sin máscara, "
                 "y paso a paso su q̃ es {q_ratio} veces mayor.").format(
            low=strip_html(vocab, inv["low"]), p_ratio=fmt_sci_log(math.log(inv["p_ratio"])),
            high=strip_html(vocab, inv["high"]), q_ratio=fmt_decimal(inv["q_ratio"], 1))
        return (f'<p data-testid="split-inversion" data-p-ratio="{inv["p_ratio"]!r}" data-q-ratio="{inv["q_ratio"]!r}">'
                f'{text}</p>')

    def _repr_html_(self) -> str:
        (c_step, c_fast), (v_step, v_fast) = self.calls, self.valid
        ms_step = sum(r.ms for r in self.stepwise)
        ms_fast = sum(r.ms for r in self.fast)
        n = len(self.stepwise)
        vocab = self.stepwise[0].gen.vocab if self.stepwise else []

        def of(k: int) -> str:
            return _("{k} de {n}").format(k=k, n=n)

        rows = "".join(
            f"<tr><th scope='row'>{label}</th><td class='num'>{fmt_int(calls)}</td>"
            f"<td class='num'>{fmt_int(sum(len(r.gen.token_ids) for r in runs))}</td>"
            f"<td class='num' data-measured=''>{fmt_decimal(ms, 1)}</td><td class='num'>{of(valid)}</td></tr>"
            for label, runs, calls, ms, valid in ((_("paso a paso"), self.stepwise, c_step, ms_step, v_step),
                                                 (_("con adelanto"), self.fast, c_fast, ms_fast, v_fast)))
        texts = "".join(f"<li><code data-testid='fast-forward-text'>{escape(r.gen.text)}</code></li>"
                        for r in self.fast)
        bpe = list(self.bpe)
        bpe_note = _(" (BPE, la del adelanto)")
        splits = "".join(
            f"<tr{HIGHLIGHT if ids == bpe else ''}><td>{strip_html(vocab, ids)}"
            f"{bpe_note if ids == bpe else ''}</td><td class='num'>{of(k)}</td>"
            f"<td class='num'>{of(kf)}</td><td class='num'>{fmt_sci_log(lp)}</td>"
            f"<td class='num'>{fmt_sci_log(lq)}</td></tr>"
            for ids, lp, lq, k, kf in self.split_rows())
        calls_label = _("Llamadas al modelo")
        calls_head = header_cells(_("bucle|llamadas al modelo|tokens|ms (medidos)|válidas"))
        texts_title = _("Textos con adelanto:")
        splits_label = _("Particiones de la apertura")
        splits_head = header_cells(_("partición|veces paso a paso|veces con adelanto|p sin máscara|q̃ paso a paso"))
        return styled(
            f'<div class="fast-forward" data-testid="fast-forward" data-n="{n}" data-calls-stepwise="{c_step}" '
            f'data-calls-fast-forward="{c_fast}" data-forced="{self.forced}" '
            f'data-valid-fast-forward="{v_fast}">'
            f'<div class="table-scroll" tabindex="0" role="region" aria-label="{escape(calls_label)}">'
            '<table class="compact-table"><caption>' + _(
                "{n} respuestas con cada bucle (mismas semillas); {forced} posiciones forzadas en las de paso "
                "a paso").format(n=n, forced=self.forced) + '</caption><thead><tr>'
            f'{calls_head}</tr></thead><tbody>{rows}</tbody></table></div>'
            f'<p>{texts_title}</p><ul class="texts">{texts}</ul>'
            f'<div class="table-scroll" tabindex="0" role="region" aria-label="{escape(splits_label)}">'
            '<table class="compact-table"><caption>' + _(
                "La apertura forzada «{opening}»: las particiones que escribió cada bucle").format(
                opening=escape(token_label(self.opening))) + '</caption><thead><tr>'
            f'{splits_head}'
            f'</tr></thead><tbody>{splits}</tbody></table></div>{self._inversion_html(vocab)}</div>')
