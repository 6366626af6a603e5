"""Unmasked sampling that stops each answer as soon as it can no longer be a text of a grammar.

This is the early abort of rejection sampling («La máscara», section 6), written once: the model
samples without a mask, and the grammar only watches. An answer stops at the first token after
which its text is no longer a prefix of any text of the grammar (it has *left* G), as soon as the
end rule says its text is complete (:func:`lesson.token_language.ended`), or at ``max_tokens``. Whether an
answer ends in G does not depend on the tokens it would write after it left, so counting answers
this way gives exactly the counts of whole answers checked afterwards; only the model work shrinks.

Answer i draws with its own generator, ``numpy.random.default_rng([seed, first_row + i])``: one
uniform per position, inverted on the cumulative softmax (float64), so an answer's tokens do not
depend on how many other answers run beside it, nor on when they stop. All answers share one model
call per position, on a KV cache branched from the prompt's (:meth:`minigpt.gpt.KVCache.branch`,
``select``), as :func:`lesson.batch.sample_batch` does with the mask.

:func:`lesson.rejection.rejection_sample` runs on it, and so do level 0 of «Niveles de garantía»
and the unmasked phone numbers of «Del esquema al autómata».
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from masker import Grammar, TokenNotAllowed
from minigpt.gpt import softmax

from .token_language import ended

LEFT, COMPLETE, BUDGET = "left", "complete", "budget"
MAX_UNMASKED = 10_000  # answers of one call (memory: float64 (n, V) arrays, 41 MB at the limit)


@dataclass
class EarlyAbort:
    """The answers of :func:`sample_until_invalid`, in row order.

    ``texts[i]``: the bytes answer i wrote up to where it stopped (the token that left G included);
    ``tokens[i]``: how many tokens that took; ``status[i]``: ``"left"`` (its last token left G),
    ``"complete"`` (its text is a complete text of G, by the end rule) or ``"budget"``
    (``max_tokens`` tokens, still inside G). ``tokens_whole[i]``: with ``longest`` given, the tokens
    the answer needed without early abort (until ``longest`` bytes, a complete text or
    ``max_tokens``), else ``tokens[i]``. ``model_calls``: model calls, the prompt's included;
    ``rows_computed``: token positions the model ran after the prompt (every answer's tokens but
    its last)."""
    n: int
    max_tokens: int
    texts: list[bytes] = field(repr=False)
    tokens: list[int] = field(repr=False)
    status: list[str] = field(repr=False)
    tokens_whole: list[int] = field(repr=False)
    model_calls: int
    rows_computed: int

    @property
    def hits(self) -> int:
        """Answers that wrote a complete text of G."""
        return self.status.count(COMPLETE)

    @property
    def died_at(self) -> list[int]:
        """``died_at[j]``: answers that left G with their token j+1 (length ``max_tokens``)."""
        out = [0] * self.max_tokens
        for s, k in zip(self.status, self.tokens):
            if s == LEFT:
                out[k - 1] += 1
        return out

    @property
    def rows_whole(self) -> int:
        """Token positions after the prompt that ``n`` whole answers of ``max_tokens`` tokens need."""
        return self.n * (self.max_tokens - 1)


def sample_until_invalid(model, tok, prompt: str, grammar: Grammar, *, n: int, seed: int = 0,
                         max_tokens: int = 16, stop_at_accept: bool = False,
                         longest: int | None = None, first_row: int = 0) -> EarlyAbort:
    """``n`` unmasked answers after ``prompt``, each stopped as soon as it has left ``grammar``
    (any masker Grammar), is complete, or has ``max_tokens`` tokens; see the module doc.

    ``stop_at_accept`` is the end rule's (as in :func:`lesson.sampling.generate`): True counts an
    answer complete as soon as its text is a text of G. ``longest`` (bytes), when given, also
    measures the cost without early abort: an answer that left G goes on sampling, off the record,
    until it has ``longest`` bytes or ``max_tokens`` tokens (``EarlyAbort.tokens_whole``), as a
    sampler that judges only whole answers of the longest text's length would. ``first_row``
    offsets the generators' seeds (a later batch of the same run). Raises ValueError for n < 1,
    n > ``MAX_UNMASKED``, max_tokens < 1, or a prompt without tokens or without room for
    ``max_tokens`` more in the model's context."""
    if n < 1 or max_tokens < 1:
        raise ValueError(f"n and max_tokens must be at least 1, found n={n}, max_tokens={max_tokens}")
    if n > MAX_UNMASKED:
        raise ValueError(f"n={n} is more than {MAX_UNMASKED:,} samples at once, too many for the page's "
                         f"memory: use a smaller n")
    ids = tok.encode(prompt)
    if not ids or len(ids) + max_tokens > model.config.n_ctx:
        raise ValueError(f"the prompt ({len(ids)} tokens) plus {max_tokens} new tokens do not fit "
                         f"in the model's context of {model.config.n_ctx} tokens")
    run = _Rows(model.astype(np.float64), ids, n, seed, first_row, max_tokens, longest)
    root = grammar.matcher(tok.vocab)
    matchers = [root.fork() for _ in range(n)]
    texts, status, tokens = [b""] * n, [None] * n, [0] * n  # status None: inside G, not complete
    while run.alive:
        for r, t in zip(run.alive, run.draw()):
            if status[r] is None:
                texts[r] += tok.vocab[t]
                tokens[r] += 1
                status[r] = _judge(matchers[r], t, stop_at_accept)
            run.written[r] += len(tok.vocab[t])
        run.advance([r for r in run.alive if status[r] is None or run.goes_on(r, status[r])])
    return EarlyAbort(n, max_tokens, texts, tokens, [s or BUDGET for s in status],
                      run.steps if longest is not None else tokens, run.calls, run.computed)


def _judge(matcher, token: int, stop_at_accept: bool) -> str | None:
    """Consume ``token`` into an answer's matcher: ``"left"`` when G refuses it, ``"complete"``
    when the end rule says the text is done, else None (the answer is still inside G)."""
    try:
        matcher.consume(token)
    except TokenNotAllowed:
        return LEFT
    if ended(matcher, stop_at_accept):
        return COMPLETE
    return None


class _Rows:
    """The answers still sampling, on one branched KV cache: ``draw`` samples one token per live
    row (each row with its own generator), ``advance`` keeps the rows given and runs the model on
    their last tokens."""

    def __init__(self, model, ids: list[int], n: int, seed: int, first_row: int, max_tokens: int,
                 longest: int | None):
        self.model, self.max_tokens, self.longest = model, max_tokens, longest
        self.rngs = [np.random.default_rng([seed, first_row + i]) for i in range(n)]
        root = model.new_cache(1)
        first = model.step(np.array([ids]), root)[0, -1]
        capacity = max_tokens if longest is None else min(longest, max_tokens)
        self.cache = root.branch(n, capacity=capacity)
        self.logits = np.repeat(first[None, :], n, axis=0)  # float64[live rows, V]
        self.alive = list(range(n))
        self.steps, self.written = [0] * n, [0] * n  # per row: tokens drawn, bytes written
        self.calls, self.computed, self.chosen = 1, 0, None

    def draw(self) -> list[int]:
        """One token per live row: the row's uniform inverted on its cumulative softmax."""
        cumulative = np.cumsum(softmax(self.logits), axis=1)
        u = np.array([self.rngs[r].random() for r in self.alive]) * cumulative[:, -1]
        self.chosen = np.minimum((cumulative <= u[:, None]).sum(axis=1), cumulative.shape[1] - 1)
        for r in self.alive:
            self.steps[r] += 1
        return self.chosen.tolist()

    def goes_on(self, r: int, status: str) -> bool:
        """An answer off the record (it left G) samples on only to measure the cost without early
        abort: until ``longest`` bytes or ``max_tokens`` tokens."""
        return status == LEFT and self.longest is not None and self.written[r] < self.longest

    def advance(self, keep: list[int]) -> None:
        """Keep the live rows in ``keep`` that have fewer than ``max_tokens`` tokens, then run the
        model once on their last tokens."""
        wanted = {r for r in keep if self.steps[r] < self.max_tokens}
        rows = [i for i, r in enumerate(self.alive) if r in wanted]  # positions in the live rows
        if not rows:
            self.alive = []
            return
        keep = [self.alive[i] for i in rows]
        if len(rows) < len(self.alive):
            self.cache = self.cache.select(rows, extra=1)
        self.logits = self.model.step(self.chosen[rows][:, None], self.cache)[:, -1]
        self.alive = keep
        self.calls += 1
        self.computed += len(keep)
