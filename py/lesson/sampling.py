"""Sampling from the mini-GPT with and without the mask, recording every position.

The decode loop, written out (one position j per turn):

1. the model gives the next-token distribution p(. | x, y_<j) (logits / temperature, softmax);
2. mask: keep the allowed set A_j of the grammar, whose mass is the kept mass p(A_j | x, y_<j);
3. renormalise: q(v) = p(v) / p(A_j) for v in A_j, 0 outside;
4. sample y_j from q, append it, and repeat until the text is complete (or the end token comes).

Without a grammar, steps 2-3 are skipped and the loop stops after ``max_tokens`` tokens.
Computed in float64 (``model.astype(np.float64)``), so that CPython and the browser agree to
far more digits than the lesson prints.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .grammar import FiniteGrammar, GrammarError


@dataclass
class Position:
    """What happened at one position j of a generation.

    top: the model's ``top_k`` most probable tokens before the mask, as (token id, p), most probable first.
    allowed: every allowed token after the mask with its renormalised probability q, most probable
        first (None without a grammar).
    kept_mass: p(A_j | x, y_<j), the probability the model put on allowed tokens (None without a grammar).
    chosen: the sampled token id; p_chosen: its probability before the mask; q_chosen: after it.
    forced: True when the grammar left a single continuation of the text (see FiniteGrammar.is_forced).
    """
    top: list[tuple[int, float]]
    allowed: list[tuple[int, float]] | None
    kept_mass: float | None
    chosen: int
    p_chosen: float
    q_chosen: float
    forced: bool


@dataclass
class Generation:
    """One sampled answer: token ids, the bytes they spell, and one Position per token."""
    prompt: str
    vocab: list[bytes]
    token_ids: list[int] = field(default_factory=list)
    positions: list[Position] = field(default_factory=list)
    masked: bool = False
    seed: int = 0
    temperature: float = 1.0
    end_token: int | None = None

    @property
    def bytes(self) -> bytes:
        """The answer's bytes (the end token, if any, not included)."""
        return b"".join(self.vocab[t] for t in self.token_ids if t != self.end_token)

    @property
    def text(self) -> str:
        """The answer as text (bytes that do not form UTF-8 shown as U+FFFD)."""
        return self.bytes.decode("utf-8", errors="replace")

    @property
    def log_p(self) -> float:
        """ln p(y | x): natural log of the unmasked probability of this token path."""
        return float(sum(math.log(pos.p_chosen) for pos in self.positions))

    @property
    def log_q(self) -> float:
        """ln q~(y | x): natural log of the masked probability of this token path."""
        return float(sum(math.log(pos.q_chosen) for pos in self.positions))

    def _repr_html_(self) -> str:
        from .views import generation_html
        return generation_html(self)

    def positions_view(self, top_k: int = 5):
        """The per-position picture (an object that renders as HTML in a cell or in Jupyter)."""
        from .views import PositionsView
        return PositionsView(self, top_k)


def generate(model, tok, prompt: str, grammar: FiniteGrammar | None = None, *, seed: int = 0,
             temperature: float = 1.0, max_tokens: int | None = None, top_k: int = 5) -> Generation:
    """Sample one answer after ``prompt``, masked by ``grammar`` when one is given.

    model: a minigpt GPT (computed in float64 here); tok: its Tokenizer (to encode the prompt).
    seed: NumPy ``default_rng`` seed; temperature > 0 divides the logits before the softmax (the mask
    then acts on the tempered distribution). max_tokens: required without a grammar (default 40);
    with one, generation stops when the text is complete (at most the longest text's byte count).
    Raises ValueError for an empty prompt, temperature <= 0 or a context overflow (prompt plus
    answer longer than the model's n_ctx tokens), and GrammarError if the model puts no mass at all
    on the allowed set (float64 underflow; does not happen with this model).
    """
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0, found {temperature}")
    if grammar is None and max_tokens is None:
        max_tokens = 40
    if max_tokens is None:
        max_tokens = max(len(g) for g in grammar.texts) + (grammar.end_token is not None)
    prompt_ids = tok.encode(prompt)
    if not prompt_ids:
        raise ValueError("the prompt must hold at least one token")
    n_ctx = model.config.n_ctx
    if len(prompt_ids) + max_tokens > n_ctx:
        raise ValueError(f"the prompt ({len(prompt_ids)} tokens) plus {max_tokens} new tokens do not "
                         f"fit in the model's context of {n_ctx} tokens")
    m = model.astype(np.float64)
    rng = np.random.default_rng(seed)
    out = Generation(prompt, grammar.vocab if grammar else tok.vocab, masked=grammar is not None,
                     seed=seed, temperature=temperature,
                     end_token=grammar.end_token if grammar else None)
    cache = m.new_cache(1)
    logits = m.step(np.array([prompt_ids]), cache)[0, -1]
    prefix = b""
    for _ in range(max_tokens):
        p = _softmax(logits / temperature)
        position = _choose(p, grammar, prefix, rng, top_k)
        out.positions.append(position)
        out.token_ids.append(position.chosen)
        if grammar is not None and position.chosen == grammar.end_token:
            break
        prefix += out.vocab[position.chosen]
        if grammar is not None and grammar.end_token is None and grammar.is_complete(prefix):
            break
        logits = m.step(np.array([[position.chosen]]), cache)[0, -1]
    return out


def _softmax(logits: np.ndarray) -> np.ndarray:
    z = np.exp(logits - logits.max())
    return z / z.sum()


def _choose(p: np.ndarray, grammar: FiniteGrammar | None, prefix: bytes, rng, top_k: int) -> Position:
    """Steps 2-4 of the loop for one position: mask, renormalise, sample."""
    order = np.argsort(-p, kind="stable")[:top_k]
    top = [(int(i), float(p[i])) for i in order]
    if grammar is None:
        chosen = int(rng.choice(len(p), p=p))
        return Position(top, None, None, chosen, float(p[chosen]), float(p[chosen]), False)
    allowed_ids = grammar.allowed_ids(prefix)
    allowed = np.array(allowed_ids, dtype=np.int64)
    kept = float(p[allowed].sum())
    if not kept > 0:
        raise GrammarError(f"the model gives probability 0 to every allowed token after {prefix!r}")
    q = np.zeros_like(p)
    q[allowed] = p[allowed] / kept
    chosen = int(rng.choice(len(q), p=q))
    ranked = allowed[np.argsort(-q[allowed], kind="stable")]
    return Position(top, [(int(i), float(q[i])) for i in ranked], kept, chosen,
                    float(p[chosen]), float(q[chosen]), grammar.is_forced(prefix, allowed_ids))
