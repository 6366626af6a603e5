"""Why the mask inflates one name: the ratio of two names' chances to finish, split into factors.

At the first real choice of a masked sample (the initials), the unmasked model's chance to finish
a text of G after initial v is p(G | x, y_<j, v), a sum over the token paths of the rest of the
name and the closing ``"}``. Along the most likely of those paths it is a product of three kinds
of factor: the rest of the name (its tokens after the initial), the closing quote and the closing
brace; the other paths add the share ``finish / best``. The ratio of two initials' chances is then
the product of the ratios of those factors, which says what the ratio is made of.

The paths are all the token splits of the rest of the answer (a few for each name: the vocabulary
has no token with a straight quote, so ``"`` and ``}`` are always single tokens), each scored by
one forward pass of the model in float64.
"""

from __future__ import annotations

import math

import numpy as np

from minigpt.gpt import log_softmax

from ..course import PROMPT

CLOSE = b'"}'


def token_splits(rest: bytes, vocab: list[bytes]) -> list[list[int]]:
    """Every sequence of token ids whose bytes are exactly ``rest`` (depth first; [[]] for b"")."""
    if not rest:
        return [[]]
    out = []
    for v, piece in enumerate(vocab):
        if piece and rest.startswith(piece):
            out += [[v] + tail for tail in token_splits(rest[len(piece):], vocab)]
    return out


def path_steps(model64, ids: list[int], path: list[int]) -> list[float]:
    """ln p(path_k | ids, path_<k) for each token of ``path`` after the context ``ids`` (one
    forward pass; ``model64`` is the model in float64)."""
    logp = log_softmax(model64.forward(np.array([ids + path]))[0])  # (T, V)
    return [float(logp[len(ids) - 1 + k, t]) for k, t in enumerate(path)]


def finish_factors(model, tok, context: list[int], name: str) -> dict:
    """For the text whose value is ``name``, after ``context`` (prompt and answer tokens up to and
    including the name's initial): the most likely path of the rest ``name[1:] + '"}'`` and its
    factors. Returns plain data: ``name_p`` (product of the name's tokens after the initial),
    ``first_p`` (the first of them, the branch the initial opens), ``quote_p``, ``brace_p``,
    ``finish`` (all paths summed), ``share`` (finish / best path, >= 1), ``paths``, ``tokens``, and
    ``first_always``: whether every path starts with the best path's first token (then ``first_p``
    bounds the probability of the whole rest from above)."""
    m = model.astype(np.float64)
    rest = name[1:].encode() + CLOSE
    scored = []
    for path in token_splits(rest, tok.vocab):
        steps = path_steps(m, context, path)
        scored.append((sum(steps), path, steps))
    log_best, path, steps = max(scored, key=lambda s: s[0])
    log_finish = float(np.logaddexp.reduce([s[0] for s in scored]))
    name_steps = steps[:-2]  # the last two tokens are '"' and '}'
    return {"name": name, "tokens": [tok.vocab[t].decode("utf-8", "replace") for t in path[:-2]],
            "first_p": math.exp(name_steps[0]), "name_p": math.exp(sum(name_steps)),
            "quote_p": math.exp(steps[-2]), "brace_p": math.exp(steps[-1]),
            "finish": math.exp(log_finish), "share": math.exp(log_finish - log_best),
            "paths": len(scored), "first_always": all(p[0] == path[0] for _, p, _ in scored)}


def ratio_split(model, tok, prefix: list[int], big: str, small: str) -> dict:
    """The ratio finish(big) / finish(small) after the answer tokens ``prefix`` (the prompt is
    added here), and its factors: ``name`` (rest of the name along the best paths), ``quote``,
    ``brace``, ``pair`` (quote times brace) and ``paths`` (the other paths' shares). The product
    of name, pair and paths equals ``ratio`` (up to rounding)."""
    base = tok.encode(PROMPT) + list(prefix)
    a, b = (finish_factors(model, tok, base + [tok.vocab.index(n[0].encode())], n) for n in (big, small))
    out = {"big": a, "small": b, "ratio": a["finish"] / b["finish"],
           "first": a["first_p"] / b["first_p"], "name": a["name_p"] / b["name_p"],
           "quote": a["quote_p"] / b["quote_p"], "brace": a["brace_p"] / b["brace_p"],
           "paths": a["share"] / b["share"]}
    out["pair"] = out["quote"] * out["brace"]
    return out


def segments(a: list[bytes], b: list[bytes]) -> list[tuple[list[int], list[int]]]:
    """Two token splits of the same bytes (``a`` and ``b``: each token's bytes), cut into the
    shortest segments that cover the same bytes in both: a list of (indices into ``a``, indices
    into ``b``). Raises ValueError when the splits do not spell the same bytes."""
    if b"".join(a) != b"".join(b):
        raise ValueError("the two splits do not spell the same bytes")
    out, i, j, end_a, end_b = [], 0, 0, 0, 0
    seg_a, seg_b = [], []
    while i < len(a) or j < len(b):
        if end_a <= end_b and i < len(a):
            end_a += len(a[i])
            seg_a.append(i)
            i += 1
        else:
            end_b += len(b[j])
            seg_b.append(j)
            j += 1
        if end_a == end_b:
            out.append((seg_a, seg_b))
            seg_a, seg_b = [], []
    return out


def split_factors(model, tok, prompt_ids: list[int], sample: list[int], other: list[int]) -> dict:
    """Why the unmasked model prefers one token split of a text to another: p(split | prompt) of
    each, as a product of factors over :func:`segments` (the stretches of text that both splits
    cover with their own tokens). ``rows``: one per segment after the splits first differ, with
    the two splits' tokens (as bytes), the token before the segment in each (``before_sample``,
    ``before_other``; b"" at the start), the sample's 1-based ``positions``, ``same_tokens``, their probabilities (each the product over the
    segment's tokens, in the context of that split) and ``ratio`` (sample / other); ``ratio``:
    the whole ratio, the product of the rows' (the segments before the first difference have the
    same tokens in the same context, ratio 1); ``largest``: the index of the row with the largest
    ratio. One forward pass per split, float64. Raises ValueError as :func:`segments`, or when the
    two splits are the same."""
    if sample == other:
        raise ValueError("the two splits are the same")
    m = model.astype(np.float64)
    steps_a = path_steps(m, prompt_ids, sample)
    steps_b = path_steps(m, prompt_ids, other)
    rows, differ = [], False
    for seg_a, seg_b in segments([tok.vocab[t] for t in sample], [tok.vocab[t] for t in other]):
        differ = differ or [sample[k] for k in seg_a] != [other[k] for k in seg_b]
        if not differ:
            continue
        log_a = sum(steps_a[k] for k in seg_a)
        log_b = sum(steps_b[k] for k in seg_b)
        rows.append({"sample": [tok.vocab[sample[k]] for k in seg_a], "other": [tok.vocab[other[k]] for k in seg_b],
                     "before_sample": tok.vocab[sample[seg_a[0] - 1]] if seg_a[0] else b"",
                     "before_other": tok.vocab[other[seg_b[0] - 1]] if seg_b[0] else b"",
                     "positions": [k + 1 for k in seg_a], "p_sample": math.exp(log_a), "p_other": math.exp(log_b),
                     "ratio": math.exp(log_a - log_b), "same_tokens": len(seg_a) == len(seg_b) and all(
                         sample[x] == other[y] for x, y in zip(seg_a, seg_b))})
    ratio = math.exp(sum(steps_a) - sum(steps_b))
    largest = max(range(len(rows)), key=lambda r: rows[r]["ratio"])
    return {"rows": rows, "ratio": ratio, "largest": largest}


def crossing_forks(model, tok, prompt: str, short: str, long: str) -> list[dict]:
    """Where the mask sends a sample to ``long`` rather than to its proper prefix ``short``, with
    the loop that stops as soon as the text is complete (``stop_at_accept=True``): every token
    boundary inside ``short`` at which the allowed set holds a token that ends exactly at the end
    of ``short`` or one that jumps over it (``crossing``). The walk follows every masked token
    path inside ``short`` (the allowed sets computed from the two texts, no masker), so the forks'
    ``reach`` (the mask's probability of arriving there) times their ``q_cross`` (the masked
    probability of a crossing token there) sum to the mask's q~(long). Each fork: ``written``
    (the text so far), ``path`` (its tokens, as bytes), ``reach``, ``p_end`` / ``p_cross`` (the unmasked model's probability of
    the ending / crossing tokens there), ``q_cross`` = p_cross / kept mass, and ``tokens``: the
    allowed tokens with their p, most probable first (labels as bytes). Sorted by the share of
    q~(long) each fork carries, largest first. One forward pass per token boundary (float64)."""
    s, l = short.encode(), long.encode()
    m = model.astype(np.float64)
    prompt_ids = tok.encode(prompt)
    forks = []

    def walk(ids: list[int], written: bytes, reach: float):
        p = np.exp(log_softmax(m.forward(np.array([prompt_ids + ids]))[0])[-1])
        allowed = [v for v, piece in enumerate(tok.vocab)
                   if piece and (s.startswith(written + piece) or l.startswith(written + piece))]
        kept = float(sum(p[v] for v in allowed))
        ending = [v for v in allowed if written + tok.vocab[v] == s]
        crossing = [v for v in allowed if len(written + tok.vocab[v]) > len(s)]
        if ending or crossing:
            forks.append({"written": written, "path": [tok.vocab[t] for t in ids], "reach": reach, "p_end": float(sum(p[v] for v in ending)),
                          "p_cross": float(sum(p[v] for v in crossing)),
                          "q_cross": float(sum(p[v] for v in crossing)) / kept,
                          "tokens": [(tok.vocab[v], float(p[v])) for v in sorted(allowed, key=lambda v: -p[v])]})
        for v in allowed:
            nxt = written + tok.vocab[v]
            if len(nxt) < len(s):
                walk(ids + [v], nxt, reach * float(p[v]) / kept)

    walk([], b"", 1.0)
    forks.sort(key=lambda f: -f["reach"] * f["q_cross"])
    return forks
