"""Rejection sampling: draw whole unmasked answers until one is a text of G.

Each try i samples tokens after the prompt with its own generator (``default_rng([seed, i])``), so a
try draws the same tokens whether or not it is aborted early; the sampling loop is
:func:`lesson.early_abort.sample_until_invalid`, run ``batch`` tries at a time. A try is accepted when its bytes
become a text of G with every prefix inside G on the way; it is rejected as soon as its bytes leave
G. Two costs are counted per try, in forward passes (one per sampled token):

- with early abort: the try stops at the first token that leaves G;
- without: the try goes on until it has as many bytes as the longest text (only then is it judged),
  or, for an infinite language, until the token budget.

The accepted answers follow p(y | x, G) exactly; the number of tries per accepted answer is
geometric with mean 1 / p(G | x), with or without early abort (it saves passes, not tries).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from masker import Grammar

from .early_abort import COMPLETE, EarlyAbort, sample_until_invalid
from .token_language import LanguageTooLarge, count_language
from .views import rejection_html


@dataclass
class Try:
    """One try: index, the bytes it wrote (up to the decision), accepted or not, and its cost in
    forward passes with early abort (``passes``) and without (``passes_full``)."""
    index: int
    text: bytes
    accepted: bool
    passes: int
    passes_full: int


@dataclass
class Rejection:
    """The tries of :func:`rejection_sample`, in order, up to the last accepted one."""
    tries: list[Try] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def accepted(self) -> list[Try]:
        return [t for t in self.tries if t.accepted]

    @property
    def mean_tries(self) -> float:
        """Tries per accepted answer (estimates 1 / p(G | x))."""
        return len(self.tries) / max(1, len(self.accepted))

    @property
    def passes(self) -> int:
        return sum(t.passes for t in self.tries)

    @property
    def passes_full(self) -> int:
        return sum(t.passes_full for t in self.tries)

    def counts(self) -> dict[bytes, int]:
        """How many accepted answers wrote each text."""
        out: dict[bytes, int] = {}
        for t in self.accepted:
            out[t.text] = out.get(t.text, 0) + 1
        return out

    def _repr_html_(self) -> str:
        return rejection_html(self)


def rejection_sample(model, tok, prompt: str, grammar: Grammar, *, accepted: int = 10,
                     seed: int = 0, batch: int = 64, max_tries: int = 10_000,
                     max_tokens: int | None = None, stop_at_accept: bool = False) -> Rejection:
    """Run tries, ``batch`` at a time (one batched forward pass per token), until ``accepted``
    answers are texts of ``grammar`` (any masker Grammar); see the module doc.

    A try is judged by the masker's matcher: it leaves the language at the first token with a byte
    the grammar refuses, and it is accepted when the end rule (:func:`lesson.token_language.ended`,
    ``stop_at_accept`` as in ``generate``) says its text is complete. Without early abort a try runs
    until it has as many bytes as the longest text when the language is finite, else until
    ``max_tokens`` tokens (default: the room left in the model's context), where an undecided try
    counts as rejected. Raises ValueError when ``max_tries`` tries give fewer answers (the grammar
    is too unlikely for this model: compute 1 / p(G | x) first) or the prompt leaves no room.
    """
    start = time.perf_counter()
    prompt_ids = tok.encode(prompt)
    room = model.config.n_ctx - len(prompt_ids)
    max_tokens = room if max_tokens is None else max_tokens
    if not 0 < max_tokens <= room:
        raise ValueError(f"max_tokens must be in 1..{room} (the room left in the context after the "
                         f"prompt's {len(prompt_ids)} tokens), found {max_tokens}")
    try:
        longest = count_language(grammar, tok.vocab, stop_at_accept=stop_at_accept,
                                 max_tokens=max_tokens).longest_bytes
    except LanguageTooLarge:
        longest = None  # infinite, or too large to count: tries run to the token budget
    result = Rejection()
    while len(result.accepted) < accepted:
        if len(result.tries) >= max_tries:
            raise ValueError(f"{max_tries} tries gave {len(result.accepted)} answers in G, fewer "
                             f"than {accepted}: p(G | x) is too small for rejection sampling")
        wave = sample_until_invalid(model, tok, prompt, grammar, n=batch, seed=seed,
                                    max_tokens=max_tokens, stop_at_accept=stop_at_accept,
                                    longest=longest, first_row=len(result.tries))
        result.tries += tries_of(wave, len(result.tries), longest)
    last = max(t.index for t in result.accepted[:accepted])
    result.tries = result.tries[:last + 1]
    result.seconds = time.perf_counter() - start
    return result


def tries_of(wave: EarlyAbort, offset: int, longest: int | None) -> list[Try]:
    """The tries of one batch, numbered from ``offset``. Without early abort a rejected try runs
    until it has ``longest`` bytes (``wave.tokens_whole``) or, when the language has no known
    longest text, the whole token budget."""
    out = []
    for i, (text, tokens, status) in enumerate(zip(wave.texts, wave.tokens, wave.status)):
        accepted = status == COMPLETE
        whole = tokens if accepted else (wave.tokens_whole[i] if longest is not None else wave.max_tokens)
        out.append(Try(offset + i, text, accepted, tokens, whole))
    return out
