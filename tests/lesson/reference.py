"""Deliberately naive references for the lesson's computations: every probability from a full
forward pass of the whole sequence (no key/value cache, no batching), every allowed set by brute
force over the vocabulary, every path by plain recursion."""

from __future__ import annotations

import numpy as np


def log_softmax(logits: np.ndarray) -> np.ndarray:
    z = logits - logits.max()
    return z - np.log(np.exp(z).sum())


def next_logp(model64, ids: list[int], temperature: float = 1.0) -> np.ndarray:
    """ln p(. | ids) from a full forward pass: float64[V]."""
    return log_softmax(model64.forward(np.array([ids]))[0, -1] / temperature)


def logsumexp(values) -> float:
    values = np.asarray(list(values), dtype=np.float64)
    top = values.max()
    return float(top + np.log(np.exp(values - top).sum()))


def all_paths(model64, prompt_ids: list[int], grammar, temperature: float = 1.0,
              tokens: tuple = (), prefix: bytes = b"", log_p: float = 0.0, log_q: float = 0.0):
    """Yield (text, tokens, ln p(path), ln q~(path)) for every token path spelling a text of G.
    grammar: the naive oracle ``tests.lesson.finite.FiniteGrammar``."""
    logp = next_logp(model64, prompt_ids + list(tokens), temperature)
    allowed = grammar.brute_force_allowed_ids(prefix)
    log_kept = logsumexp(logp[allowed])
    for v in allowed:
        lp, lq = log_p + logp[v], log_q + logp[v] - log_kept
        nxt = prefix + grammar.vocab[v]
        if grammar.is_complete(nxt):
            yield nxt, tokens + (v,), lp, lq
        else:
            yield from all_paths(model64, prompt_ids, grammar, temperature, tokens + (v,), nxt, lp, lq)


def log_p_grammar_after(model64, prompt_ids: list[int], grammar, tokens: tuple,
                        temperature: float = 1.0) -> float:
    """ln p(G | x, y_<j): the chance that the unmasked model, continuing after ``tokens``, writes a
    text of G (the sum over all completions of their probabilities)."""
    prefix = b"".join(grammar.vocab[t] for t in tokens)
    if grammar.is_complete(prefix):
        return 0.0
    return logsumexp(lp for *_, lp, _ in all_paths(model64, prompt_ids, grammar, temperature,
                                                  tokens, prefix))
