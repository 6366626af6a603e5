"""Many answers at once: the decode loop of :mod:`lesson.sampling` run on a batch of rows.

The lessons measure rates (how many answers parse, how many match a schema, how many are
invalid) over hundreds of samples; one answer at a time would run the model once per token per
answer. :func:`sample_batch` runs the prompt once, branches its key/value cache into ``n`` rows
(``KVCache.branch``: the prompt's keys are shared, not copied), and advances every unfinished row
by one token per model call. Rows that have written the same tokens so far share
one model row, one masker ``Matcher`` and one mask (they are at the same prefix); a row that ends
leaves the batch (``KVCache.select``), so each call pays only for the distinct prefixes still being
written (for 1,000 phone numbers of 10 tokens, 4,275 model rows instead of 10,000).

Each row is drawn from exactly the distribution :func:`lesson.sampling.generate` draws from (mask,
renormalise, top-k / top-p among the allowed tokens, sample), with the same end rule; the random
numbers differ (one generator for the batch), so row i is not ``generate(seed=i)``.
"""

from __future__ import annotations

import time

import numpy as np

from masker import Grammar
from minigpt.gpt import softmax

from .token_language import ended, forced_kind
from .sampling import BUDGET, FINISHED, LENGTH, STOPPED, Generation, Position, check_settings, truncate


MAX_ANSWERS = 20_000  # per call: each row holds a float64[V] row of probabilities per position


def sample_batch(model, tok, prompt: str, grammar: Grammar | None = None, *, n: int, seed: int = 0,
                 temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None,
                 max_tokens: int | None = None, stop_at_accept: bool = False,
                 forced: bool = False, budget_aware: bool = False,
                 stats: dict | None = None) -> list[Generation]:
    """``n`` independent answers after ``prompt``, masked by ``grammar`` when one is given.

    Arguments and errors as :func:`lesson.sampling.generate` (plus ValueError for n outside
    1..MAX_ANSWERS); seed
    seeds one NumPy ``default_rng`` for the whole batch. Returns n Generations, in row order. Their
    positions are light, to keep a batch of thousands small: ``chosen``, ``p_chosen`` (before the
    mask), ``q_chosen`` (what the loop drew it with) and ``kept_mass`` (None without a grammar) are
    set; ``budget_aware`` as for ``generate`` (every row's matcher masks with the tokens it has
    left); ``top`` is empty and ``allowed`` and ``probs`` are None. ``forced`` is computed
    (:func:`lesson.token_language.forced_kind`) only when ``forced=True``. ``log_p``, ``log_q``,
    ``log_kept``, ``text`` and ``status`` work as for ``generate``.

    Cost: one model call per position of the longest answer, on the distinct prefixes still being
    written (float64, like ``generate``). ``stats``, when given, is a dict filled with where the
    cost went: ``model_calls`` and ``model_rows`` (model calls, the prompt's included: one per
    position of the longest answer; and the rows whose next-token distributions they gave: one per
    distinct prefix at each position, 1 for the prompt), ``model_seconds`` (wall time in ``model.step``, the prompt
    included), ``mask_seconds`` (wall time computing masks and advancing matchers) and
    ``seconds`` (the whole call); times are ``time.perf_counter`` differences, noisy.
    """
    if not 1 <= n <= MAX_ANSWERS:
        raise ValueError(f"n must be between 1 and {MAX_ANSWERS:,} answers per call, found {n:,}; "
                         "for more, call again with other seeds")
    prompt_ids, max_tokens = check_settings(model, tok, prompt, grammar, temperature, top_k, top_p,
                                            max_tokens)
    gens = [Generation(prompt, tok.vocab, grammar=grammar, seed=seed, temperature=temperature,
                       top_k=top_k, top_p=top_p, max_tokens=max_tokens) for _ in range(n)]
    root = grammar.matcher(tok.vocab) if grammar is not None else None
    if budget_aware and root is not None:
        root.set_budget(max_tokens)  # every node's matcher forks it, and counts down at each consume
    clock = _Clock()
    if root is not None and ended(root, stop_at_accept):
        for gen in gens:
            gen.status = STOPPED if stop_at_accept else FINISHED
    else:
        _decode(model.astype(np.float64), prompt_ids, root, gens, np.random.default_rng(seed),
                temperature, top_k, top_p, max_tokens, stop_at_accept, forced, clock)
    if stats is not None:
        stats.update(clock.summary())
    return gens


class _Clock:
    """Where :func:`sample_batch`'s time went: model calls and rows, seconds in the model and in
    the masker (``time.perf_counter``)."""

    def __init__(self):
        self.start = time.perf_counter()
        self.model_calls = self.model_rows = 0  # the prompt's call counts once, with one row
        self.model_seconds = self.mask_seconds = 0.0

    def model(self, model, ids, cache):
        t = time.perf_counter()
        out = model.step(ids, cache)
        self.model_seconds += time.perf_counter() - t
        return out

    def summary(self) -> dict:
        return {"model_calls": self.model_calls, "model_rows": self.model_rows,
                "model_seconds": self.model_seconds, "mask_seconds": self.mask_seconds,
                "seconds": time.perf_counter() - self.start}


def _decode(model, prompt_ids, root, gens, rng, temperature, top_k, top_p, max_tokens,
            stop_at_accept, forced, clock: _Clock) -> list[Generation]:
    """The loop of :func:`sample_batch`, one model call per position. A node is a distinct token
    prefix still being written; rows with the same prefix share its model row, its matcher (from
    ``root``) and its mask. row_node[i]: the node of active row rows[i]."""
    shared = model.new_cache(1)
    logits = clock.model(model, np.array([prompt_ids]), shared)[0, -1][None, :]  # float64[nodes, V]
    clock.model_calls, clock.model_rows = 1, 1
    matchers = [root]
    cache = None
    rows = np.arange(len(gens))  # the Generation index of each row still writing
    row_node = np.zeros(len(gens), dtype=np.intp)
    while True:
        p, q, kept, masks = node_distributions(logits, temperature, matchers, top_k, top_p, clock)
        kinds = [None] * len(q)
        if forced and masks is not None:
            kinds = [forced_kind(m, np.flatnonzero(mask), stop_at_accept) for m, mask in zip(matchers, masks)]
        chosen = draw(q, row_node, rng)
        step = _Step(p, q, kept, kinds)
        for i, r in enumerate(rows.tolist()):
            step.record(gens[r], r, int(row_node[i]), int(chosen[i]), matchers, stop_at_accept, max_tokens)
        clock.mask_seconds += step.matcher_seconds
        if not step.still:
            return gens
        live = sorted(set(step.still_node))  # the children some row still continues
        renumber = {child: k for k, child in enumerate(live)}
        rows = np.array(step.still)
        row_node = np.array([renumber[c] for c in step.still_node], dtype=np.intp)
        matchers = [step.matchers[c] for c in live]
        ids = np.array([[step.tokens[c]] for c in live])
        if cache is None:
            cache = shared.branch(len(live))
        else:
            cache = cache.select([step.parents[c] for c in live], extra=1)
        clock.model_calls += 1
        clock.model_rows += len(live)
        logits = clock.model(model, ids, cache)[:, -1]


def node_distributions(logits, temperature: float, matchers, top_k: int | None, top_p: float | None,
                       clock: _Clock | None = None):
    """The next-token distributions of the nodes (float64[nodes, V] logits): ``(p, q, kept,
    masks)``, p the tempered softmax, q the distribution the loop draws from (masked by each
    node's matcher and renormalised by its kept mass, then truncated by top-k / top-p among the
    allowed tokens), ``kept`` float64[nodes] and ``masks`` bool[nodes, V] (both None when
    ``matchers`` is ``[None]``: no grammar). Raises ValueError when a node keeps no mass. The
    time spent on masks is added to ``clock.mask_seconds`` when a clock is given."""
    p = softmax(logits / temperature)  # float64[nodes, V]
    if matchers[0] is None:
        masks, q, kept = None, p, None
    else:
        t = time.perf_counter()
        masks = np.stack([m.mask() for m in matchers])  # bool[nodes, V]
        if clock is not None:
            clock.mask_seconds += time.perf_counter() - t
        q = np.where(masks, p, 0.0)
        kept = q.sum(axis=1)
        if not (kept > 0).all():
            node = int(np.flatnonzero(~(kept > 0))[0])
            raise ValueError(f"the model gives probability 0 to every allowed token after "
                             f"{matchers[node].prefix_bytes[-40:]!r}")
        q = q / kept[:, None]
    if top_k is not None or top_p is not None:
        every = np.arange(q.shape[1])
        q = np.stack([truncate(q[k], every if masks is None else np.flatnonzero(masks[k]), top_k, top_p)
                      for k in range(len(q))])
    return p, q, kept, masks


def draw(q, row_node, rng) -> np.ndarray:
    """One token per row (int[rows]): a uniform of ``rng`` per row, in row order, inverted on the
    cumulative distribution of the row's node (``q[row_node[i]]``)."""
    cumulative = np.cumsum(q, axis=1)[row_node]  # float64[rows, V]
    u = rng.random(len(row_node)) * cumulative[:, -1]
    chosen = np.minimum((cumulative <= u[:, None]).sum(axis=1), q.shape[1] - 1)
    # never land on a zero-probability token through rounding at the top of the cumulative sum
    for i in np.flatnonzero(q[row_node, chosen] == 0):
        chosen[i] = int(np.flatnonzero(q[row_node[i]])[-1])
    return chosen


class _Step:
    """One position of the batch: each row records its token and moves to the child node of its
    node by that token (rows that drew the same token from the same node share the child, its
    matcher forked and advanced once). ``still`` / ``still_node``: the rows that go on and their
    children; ``parents``, ``tokens``, ``matchers``: per child."""

    def __init__(self, p, q, kept, kinds):
        self.p, self.q, self.kept, self.kinds = p, q, kept, kinds
        self.children: dict[tuple[int, int], int] = {}  # (node, token) -> child
        self.parents, self.tokens, self.matchers, self.ended = [], [], [], []
        self.still, self.still_node = [], []
        self.matcher_seconds = 0.0  # forking and advancing the children's matchers

    def child(self, node: int, t: int, matchers, stop_at_accept: bool) -> int:
        child = self.children.get((node, t))
        if child is None:
            child = self.children[(node, t)] = len(self.parents)
            self.parents.append(node)
            self.tokens.append(t)
            m = None
            if matchers[node] is not None:
                start = time.perf_counter()
                m = matchers[node].fork()
                m.consume(t)
                self.ended.append(ended(m, stop_at_accept))
                self.matcher_seconds += time.perf_counter() - start
            else:
                self.ended.append(False)
            self.matchers.append(m)
        return child

    def record(self, gen: Generation, r: int, node: int, t: int, matchers, stop_at_accept: bool,
               max_tokens: int) -> None:
        kept = None if self.kept is None else float(self.kept[node])
        gen.positions.append(Position([], None, kept, t, float(self.p[node, t]), float(self.q[node, t]),
                                      self.kinds[node]))
        gen.token_ids.append(t)
        child = self.child(node, t, matchers, stop_at_accept)
        if self.ended[child]:
            m = self.matchers[child]
            gen.status = STOPPED if stop_at_accept and not m.is_finished() else FINISHED
        elif len(gen.token_ids) >= max_tokens:
            gen.status = LENGTH if matchers[node] is None else BUDGET
        else:
            self.still.append(r)
            self.still_node.append(child)
