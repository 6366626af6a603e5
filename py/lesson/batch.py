"""Many answers at once: the decode loop of :mod:`lesson.sampling` run on a batch of rows.

The lessons measure rates (how many answers parse, how many match a schema, how many are
invalid) over hundreds of samples; one answer at a time would run the model once per token per
answer. :func:`sample_batch` runs the prompt once, branches its key/value cache into ``n`` rows
(``KVCache.branch``: the prompt's keys are shared, not copied), and advances every unfinished row
by one token per model call. Each row has its own masker ``Matcher``; a row that ends leaves the
batch (``KVCache.select``), so later calls only pay for the rows still writing.

Each row is drawn from exactly the distribution :func:`lesson.sampling.generate` draws from (mask,
renormalise, top-k / top-p among the allowed tokens, sample), with the same end rule; the random
numbers differ (one generator for the batch), so row i is not ``generate(seed=i)``.
"""

from __future__ import annotations

import numpy as np

from masker import Grammar
from minigpt.gpt import softmax

from .language import ended, forced_kind
from .sampling import BUDGET, FINISHED, LENGTH, STOPPED, Generation, Position, truncate


def sample_batch(model, tok, prompt: str, grammar: Grammar | None = None, *, n: int, seed: int = 0,
                 temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None,
                 max_tokens: int | None = None, stop_at_accept: bool = False,
                 forced: bool = False, budget_aware: bool = False) -> list[Generation]:
    """``n`` independent answers after ``prompt``, masked by ``grammar`` when one is given.

    Arguments and errors as :func:`lesson.sampling.generate` (plus ValueError for n < 1); seed
    seeds one NumPy ``default_rng`` for the whole batch. Returns n Generations, in row order. Their
    positions are light, to keep a batch of thousands small: ``chosen``, ``p_chosen`` (before the
    mask), ``q_chosen`` (what the loop drew it with) and ``kept_mass`` (None without a grammar) are
    set; ``budget_aware`` as for ``generate`` (every row's matcher masks with the tokens it has
    left); ``top`` is empty and ``allowed`` and ``probs`` are None. ``forced`` is computed
    (:func:`lesson.language.forced_kind`) only when ``forced=True``. ``log_p``, ``log_q``,
    ``log_kept``, ``text`` and ``status`` work as for ``generate``.

    Cost: one model call per position of the longest answer, on the rows still writing
    (float64, like ``generate``).
    """
    if n < 1:
        raise ValueError(f"n must be at least 1, found {n}")
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0, found {temperature}")
    if top_k is not None and top_k < 1:
        raise ValueError(f"top_k must be at least 1, found {top_k}")
    if top_p is not None and not 0 < top_p <= 1:
        raise ValueError(f"top_p must be in (0, 1], found {top_p}")
    prompt_ids = tok.encode(prompt)
    if not prompt_ids:
        raise ValueError("the prompt must hold at least one token")
    n_ctx = model.config.n_ctx
    if max_tokens is None:
        max_tokens = 40 if grammar is None else n_ctx - len(prompt_ids)
    if len(prompt_ids) + max_tokens > n_ctx:
        raise ValueError(f"the prompt ({len(prompt_ids)} tokens) plus {max_tokens} new tokens do not "
                         f"fit in the model's context of {n_ctx} tokens")
    model = model.astype(np.float64)
    rng = np.random.default_rng(seed)
    gens = [Generation(prompt, tok.vocab, grammar=grammar, seed=seed, temperature=temperature,
                       top_k=top_k, top_p=top_p, max_tokens=max_tokens) for _ in range(n)]
    matchers = [grammar.matcher(tok.vocab) for _ in range(n)] if grammar is not None else None
    if budget_aware and matchers is not None:
        for m in matchers:
            m.set_budget(max_tokens)
    if matchers is not None and ended(matchers[0], stop_at_accept):
        for gen in gens:
            gen.status = STOPPED if stop_at_accept else FINISHED
        return gens

    shared = model.new_cache(1)
    first = model.step(np.array([prompt_ids]), shared)[0, -1]
    cache = shared.branch(n)
    logits = np.repeat(first[None, :], n, axis=0)  # float64[rows, V]
    rows = np.arange(n)  # the Generation index of each row still writing
    while len(rows):
        p = softmax(logits / temperature)  # float64[rows, V]
        if matchers is None:
            masks = None
            q = p
            kept = None
        else:
            masks = np.stack([matchers[r].mask() for r in rows])  # bool[rows, V]
            q = np.where(masks, p, 0.0)
            kept = q.sum(axis=1)
            if not (kept > 0).all():
                r = int(rows[np.flatnonzero(~(kept > 0))[0]])
                raise ValueError(f"the model gives probability 0 to every allowed token after "
                                 f"{matchers[r].prefix_bytes[-40:]!r}")
            q = q / kept[:, None]
        if top_k is not None or top_p is not None:
            candidates = [np.flatnonzero(m) for m in masks] if masks is not None else [None] * len(rows)
            q = np.stack([truncate(q[i], ids if ids is not None else np.arange(q.shape[1]), top_k, top_p)
                          for i, ids in enumerate(candidates)])
        cumulative = np.cumsum(q, axis=1)
        u = rng.random(len(rows)) * cumulative[:, -1]
        chosen = (cumulative <= u[:, None]).sum(axis=1)
        chosen = np.minimum(chosen, q.shape[1] - 1)
        # never land on a zero-probability token through rounding at the top of the cumulative sum
        bad = q[np.arange(len(rows)), chosen] == 0
        for i in np.flatnonzero(bad):
            chosen[i] = int(np.flatnonzero(q[i])[-1])
        still = []
        for i, r in enumerate(rows.tolist()):
            t = int(chosen[i])
            gen = gens[r]
            kind = None
            if forced and masks is not None:
                kind = forced_kind(matchers[r], np.flatnonzero(masks[i]), stop_at_accept)
            gen.positions.append(Position([], None, None if kept is None else float(kept[i]), t,
                                          float(p[i, t]), float(q[i, t]), kind))
            gen.token_ids.append(t)
            if matchers is not None:
                m = matchers[r]
                m.consume(t)
                if ended(m, stop_at_accept):
                    gen.status = STOPPED if stop_at_accept and not m.is_finished() else FINISHED
                    continue
            if len(gen.token_ids) >= max_tokens:
                gen.status = LENGTH if matchers is None else BUDGET
                continue
            still.append(i)
        if not still:
            break
        if len(still) < len(rows):
            cache = cache.select(still, extra=1)
            chosen = chosen[still]
            rows = rows[still]
        logits = model.step(chosen[:, None], cache)[:, -1]
    return gens
