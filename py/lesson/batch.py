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

import numpy as np

from masker import Grammar
from minigpt.gpt import softmax

from .language import ended, forced_kind
from .sampling import BUDGET, FINISHED, LENGTH, STOPPED, Generation, Position, check_settings, truncate


MAX_ANSWERS = 20_000  # per call: each row holds a float64[V] row of probabilities per position


def sample_batch(model, tok, prompt: str, grammar: Grammar | None = None, *, n: int, seed: int = 0,
                 temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None,
                 max_tokens: int | None = None, stop_at_accept: bool = False,
                 forced: bool = False, budget_aware: bool = False) -> list[Generation]:
    """``n`` independent answers after ``prompt``, masked by ``grammar`` when one is given.

    Arguments and errors as :func:`lesson.sampling.generate` (plus ValueError for n outside
    1..MAX_ANSWERS); seed
    seeds one NumPy ``default_rng`` for the whole batch. Returns n Generations, in row order. Their
    positions are light, to keep a batch of thousands small: ``chosen``, ``p_chosen`` (before the
    mask), ``q_chosen`` (what the loop drew it with) and ``kept_mass`` (None without a grammar) are
    set; ``budget_aware`` as for ``generate`` (every row's matcher masks with the tokens it has
    left); ``top`` is empty and ``allowed`` and ``probs`` are None. ``forced`` is computed
    (:func:`lesson.language.forced_kind`) only when ``forced=True``. ``log_p``, ``log_q``,
    ``log_kept``, ``text`` and ``status`` work as for ``generate``.

    Cost: one model call per position of the longest answer, on the distinct prefixes still being
    written (float64, like ``generate``).
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
    if root is not None and ended(root, stop_at_accept):
        for gen in gens:
            gen.status = STOPPED if stop_at_accept else FINISHED
        return gens
    return _decode(model.astype(np.float64), prompt_ids, root, gens, np.random.default_rng(seed),
                   temperature, top_k, top_p, max_tokens, stop_at_accept, forced)


def _decode(model, prompt_ids, root, gens, rng, temperature, top_k, top_p, max_tokens,
            stop_at_accept, forced) -> list[Generation]:
    """The loop of :func:`sample_batch`, one model call per position. A node is a distinct token
    prefix still being written; rows with the same prefix share its model row, its matcher (from
    ``root``) and its mask. row_node[i]: the node of active row rows[i]."""
    shared = model.new_cache(1)
    logits = model.step(np.array([prompt_ids]), shared)[0, -1][None, :]  # float64[nodes, V]
    matchers = [root]
    cache = None
    rows = np.arange(len(gens))  # the Generation index of each row still writing
    row_node = np.zeros(len(gens), dtype=np.intp)
    while True:
        p, q, kept, masks = node_distributions(logits, temperature, matchers, top_k, top_p)
        kinds = [None] * len(q)
        if forced and masks is not None:
            kinds = [forced_kind(m, np.flatnonzero(mask), stop_at_accept) for m, mask in zip(matchers, masks)]
        chosen = draw(q, row_node, rng)
        step = _Step(p, q, kept, kinds)
        for i, r in enumerate(rows.tolist()):
            step.record(gens[r], r, int(row_node[i]), int(chosen[i]), matchers, stop_at_accept, max_tokens)
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
        logits = model.step(ids, cache)[:, -1]


def node_distributions(logits, temperature: float, matchers, top_k: int | None, top_p: float | None):
    """The next-token distributions of the nodes (float64[nodes, V] logits): ``(p, q, kept,
    masks)``, p the tempered softmax, q the distribution the loop draws from (masked by each
    node's matcher and renormalised by its kept mass, then truncated by top-k / top-p among the
    allowed tokens), ``kept`` float64[nodes] and ``masks`` bool[nodes, V] (both None when
    ``matchers`` is ``[None]``: no grammar). Raises ValueError when a node keeps no mass."""
    p = softmax(logits / temperature)  # float64[nodes, V]
    if matchers[0] is None:
        masks, q, kept = None, p, None
    else:
        masks = np.stack([m.mask() for m in matchers])  # bool[nodes, V]
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

    def child(self, node: int, t: int, matchers, stop_at_accept: bool) -> int:
        child = self.children.get((node, t))
        if child is None:
            child = self.children[(node, t)] = len(self.parents)
            self.parents.append(node)
            self.tokens.append(t)
            m = None
            if matchers[node] is not None:
                m = matchers[node].fork()
                m.consume(t)
            self.matchers.append(m)
            self.ended.append(m is not None and ended(m, stop_at_accept))
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
