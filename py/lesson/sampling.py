"""Sampling from the mini-GPT with and without a grammar's mask, recording every position.

The decode loop, written out (one position j per turn), for any masker grammar (``compile_choice``,
``compile_regex``, ``compile_json_schema``, ``compile_cfg``):

1. the model gives the next-token distribution p_T(. | x, y_<j) = softmax(logits / T);
2. mask: ``matcher.mask()`` gives the allowed set A_j, whose mass is the kept mass p_T(A_j | x, y_<j);
3. renormalise: q(v) = p_T(v) / p_T(A_j) for v in A_j, 0 outside;
4. optionally truncate q with top-k / top-p (among the allowed tokens) and renormalise again;
5. sample y_j from q, ``matcher.consume(y_j)``, and repeat until the end rule
   (:func:`lesson.token_language.ended`) says the text is complete, or the token budget runs out.

Without a grammar, steps 2-3 are skipped and the loop runs ``max_tokens`` tokens.

Fast-forward (``fast_forward=True``, an option): before step 1, when the grammar leaves exactly one
continuation of the text for one or more bytes (:func:`forced_bytes`), the loop writes those bytes
at once, split into tokens as the tokenizer's BPE encodes them (``tok.encode_bytes``: one fixed
split, never sampled), and runs the model on all of them, with the token before them, in one call. Step-by-step masked sampling
would instead choose among every token split of the same bytes, so the two loops draw different
token paths (same texts allowed, different probabilities).
Computed in float64 (``model.astype(np.float64)``), so that CPython and the browser agree to
far more digits than the lesson prints.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from masker import Grammar
from minigpt.gpt import softmax

from .token_language import allowed_ids, ended, forced_kind
from .views import PositionsView, generation_html

# Generation.status values
FINISHED = "finished"  # the grammar's text is complete and no token may follow
STOPPED = "stopped"    # stop_at_accept: the text is complete (it could have gone on)
BUDGET = "budget"      # max_tokens reached before the grammar's text was complete: incomplete
LENGTH = "length"      # no grammar: max_tokens tokens written, as asked


@dataclass
class Position:
    """What happened at one position j of a generation.

    top: the model's ``record_top`` most probable tokens before the mask, as (token id, p), most
        probable first (p after temperature).
    allowed: every allowed token with its probability before the mask p and after it q, as
        (token id, p, q), most probable first (None without a grammar). q includes top-k / top-p.
    kept_mass: p_T(A_j | x, y_<j), the tempered probability on allowed tokens (None without a grammar).
    chosen: the sampled token id; p_chosen: its probability before the mask; q_chosen: after it.
    forced: None for a real choice, "token" when one token was allowed, "split" when the grammar
        left one continuation of the text and the model only chose its token split
        (:func:`lesson.token_language.forced_kind`); always None without a grammar.
    probs: the whole tempered distribution p_T(. | x, y_<j), float64[V] (for the full view).
    """
    top: list[tuple[int, float]]
    allowed: list[tuple[int, float, float]] | None
    kept_mass: float | None
    chosen: int
    p_chosen: float
    q_chosen: float
    forced: str | None = None
    probs: np.ndarray | None = field(default=None, repr=False)  # float64[V], p_T before the mask

    @property
    def is_forced(self) -> bool:
        return self.forced is not None


@dataclass
class Generation:
    """One sampled answer: token ids, the bytes they spell, one Position per token, and why it
    stopped (``status``: "finished", "stopped", "budget" or "length"; see the module constants)."""
    prompt: str
    vocab: list[bytes]
    token_ids: list[int] = field(default_factory=list)
    positions: list[Position] = field(default_factory=list)
    grammar: Grammar | None = None
    seed: int = 0
    temperature: float = 1.0
    top_k: int | None = None
    top_p: float | None = None
    max_tokens: int = 0
    status: str = LENGTH
    model_calls: int = 0  # forward passes of the model (the prompt's included)

    @property
    def masked(self) -> bool:
        return self.grammar is not None

    @property
    def complete(self) -> bool:
        """True when the grammar's text is complete (always True without a grammar)."""
        return self.status != BUDGET

    @property
    def bytes(self) -> bytes:
        return b"".join(self.vocab[t] for t in self.token_ids)

    @property
    def text(self) -> str:
        """The answer as text (bytes that do not form UTF-8 shown as U+FFFD)."""
        return self.bytes.decode("utf-8", errors="replace")

    def prefix_split(self, n_bytes: int) -> tuple[int, ...]:
        """The token ids with which this answer wrote its first ``n_bytes`` bytes: its first
        tokens, up to the one that reaches or crosses byte ``n_bytes`` (so their bytes add up to at
        least ``n_bytes``, or to the whole answer if it is shorter); () for n_bytes <= 0."""
        ids, length = [], 0
        for t in self.token_ids:
            if length >= n_bytes:
                break
            ids.append(t)
            length += len(self.vocab[t])
        return tuple(ids)

    @property
    def log_p(self) -> float:
        """ln p_T(y | x): natural log of the unmasked (tempered) probability of this token path."""
        return float(sum(math.log(pos.p_chosen) for pos in self.positions))

    @property
    def log_q(self) -> float:
        """ln q~(y | x): natural log of the probability with which this loop drew this token path
        (-inf when a reader picked a token that top-k / top-p had cut)."""
        return float(sum(math.log(pos.q_chosen) if pos.q_chosen > 0 else -math.inf
                         for pos in self.positions))

    @property
    def log_kept(self) -> float:
        """ln prod_j p_T(A_j | x, y_<j): what the mask threw away along this path (0 without one)."""
        return float(sum(math.log(pos.kept_mass) for pos in self.positions if pos.kept_mass is not None))

    def _repr_html_(self) -> str:
        return generation_html(self)

    def positions_view(self, top_k: int = 5, uid: str | None = None):
        """The per-position picture (an object that renders as HTML in a cell or in Jupyter);
        ``uid``: the id prefix of its elements, when a page shows the same generation twice."""
        return PositionsView(self, top_k, uid)


def generate(model, tok, prompt: str, grammar: Grammar | None = None, *, seed: int = 0,
             temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None,
             max_tokens: int | None = None, stop_at_accept: bool = False,
             record_top: int = 5, fast_forward: bool = False, budget_aware: bool = False) -> Generation:
    """Sample one answer after ``prompt``, masked by ``grammar`` (a masker Grammar) when one is given.

    model: a minigpt GPT (computed in float64 here); tok: its Tokenizer (prompt and vocabulary).
    seed: NumPy ``default_rng`` seed. temperature > 0 divides the logits before the softmax; the
    mask acts on that tempered distribution (the kept mass is measured there), and top_k (keep the
    k most probable) and top_p (keep the smallest most-probable set whose mass reaches p, 0 < p <= 1)
    then truncate the masked distribution among the allowed tokens, so they never empty the
    allowed set. Without a grammar they truncate the tempered distribution.

    End rule (:func:`lesson.token_language.ended`): the loop stops when the matcher is finished, or with
    ``stop_at_accept`` as soon as the text is complete. max_tokens: the token budget (default 40
    without a grammar, the room left in the model's context with one); a masked generation that
    reaches it stops with ``status == "budget"`` and an incomplete text (``complete`` is False).
    budget_aware: with a grammar, mask with the token budget too (``Matcher.set_budget``): a token
    is allowed only if the text can still be completed in the tokens left, so the answer is
    complete within max_tokens (masker.BudgetTooSmall when even the shortest completion does not
    fit).

    Raises ValueError for an empty prompt, temperature <= 0, top_k < 1, top_p outside (0, 1], max_tokens < 1,
    or a prompt plus max_tokens longer than the model's n_ctx tokens; masker errors
    (``LimitExceeded``) pass through. The loop itself is :class:`Decoder`, one position a step.

    fast_forward: write each run of forced bytes (:func:`forced_bytes`) without sampling, in the
    tokenizer's BPE split, with one model call for the whole run and the token before it (see the
    module docstring); its
    positions have ``forced == "fast_forward"`` and q = 1. Needs a grammar; ignored without one.
    ``Generation.model_calls`` counts the model calls either way.
    """
    decoder = Decoder(model, tok, prompt, grammar, seed=seed, temperature=temperature, top_k=top_k,
                      top_p=top_p, max_tokens=max_tokens, stop_at_accept=stop_at_accept,
                      record_top=record_top, fast_forward=fast_forward, budget_aware=budget_aware)
    while not decoder.done:
        decoder.step()
    return decoder.generation


def check_settings(model, tok, prompt: str, grammar, temperature: float, top_k: int | None,
                   top_p: float | None, max_tokens: int | None) -> tuple[list[int], int]:
    """The checks of :func:`generate`'s arguments, shared by every decode loop: returns the
    prompt's token ids and the token budget (default 40 without a grammar, the room left in the
    model's context with one). Raises ValueError as ``generate`` documents."""
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
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be at least 1, found {max_tokens}")
    if len(prompt_ids) + max_tokens > n_ctx:
        raise ValueError(f"the prompt ({len(prompt_ids)} tokens) plus {max_tokens} new tokens do not "
                         f"fit in the model's context of {n_ctx} tokens")
    return prompt_ids, max_tokens


class Decoder:
    """The decode loop of :func:`generate`, one position per :meth:`step`, so that a reader can
    step through it or pick the next token; same arguments and errors as ``generate``.

    ``generation`` is the answer so far (its ``status`` is final once ``done``); ``matcher`` the
    masker Matcher at its prefix (None without a grammar).
    """

    def __init__(self, model, tok, prompt: str, grammar: Grammar | None = None, *, seed: int = 0,
                 temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None,
                 max_tokens: int | None = None, stop_at_accept: bool = False, record_top: int = 5,
                 fast_forward: bool = False, budget_aware: bool = False):
        prompt_ids, max_tokens = check_settings(model, tok, prompt, grammar, temperature, top_k, top_p,
                                                max_tokens)
        self.temperature, self.top_k, self.top_p = temperature, top_k, top_p
        self.stop_at_accept, self.record_top = stop_at_accept, record_top
        self._model = model.astype(np.float64)
        self._rng = np.random.default_rng(seed)
        self.generation = Generation(prompt, tok.vocab, grammar=grammar, seed=seed,
                                     temperature=temperature, top_k=top_k, top_p=top_p,
                                     max_tokens=max_tokens)
        self.matcher = grammar.matcher(tok.vocab) if grammar is not None else None
        if budget_aware and self.matcher is not None:
            self.matcher.set_budget(max_tokens)  # mask() now keeps the text completable in time
        self.done = False
        self._cache = self._model.new_cache(1)
        self._logits = None
        self._prompt_ids = prompt_ids
        self._tok, self.fast_forward = tok, fast_forward
        self.budget_aware = budget_aware
        if self.matcher is not None and ended(self.matcher, stop_at_accept):
            self._finish(STOPPED if stop_at_accept else FINISHED)

    def _finish(self, status: str) -> None:
        self.generation.status, self.done = status, True

    def next_distribution(self) -> np.ndarray:
        """p_T(. | x, y_<j) for the next position: float64[V] (the model runs once per position)."""
        if self._logits is None:
            ids = self._prompt_ids if not self.generation.token_ids else [self.generation.token_ids[-1]]
            self._logits = self._model.step(np.array([ids]), self._cache)[0, -1]
            self.generation.model_calls += 1
        return softmax(self._logits / self.temperature)

    def step(self, token_id: int | None = None) -> Position:
        """One position: mask, renormalise, truncate, then sample, or take ``token_id`` (the reader's
        pick; it must be allowed, and no random number is drawn for it). Raises RuntimeError when
        the generation is done, ValueError for a token the mask refuses.

        With ``fast_forward`` (and no ``token_id``), a position where the grammar forces bytes writes
        the whole run of forced tokens instead (:meth:`_fast_forward`); the last one is returned."""
        if self.done:
            raise RuntimeError(f"the generation is done ({self.generation.status}): start a new one")
        if self.fast_forward and self.matcher is not None and token_id is None:
            forced = self._fast_forward()
            if forced is not None:
                return forced
        p = self.next_distribution()
        if token_id is not None and self.matcher is not None and not self.matcher.mask()[token_id]:
            raise ValueError(f"token {token_id} is not allowed after {self.matcher.prefix_bytes[-40:]!r}")
        position = choose(p, self.matcher, self._rng, self.record_top, self.top_k, self.top_p,
                          self.stop_at_accept, token_id)
        gen = self.generation
        gen.positions.append(position)
        gen.token_ids.append(position.chosen)
        self._logits = None
        if self.matcher is not None:
            self.matcher.consume(position.chosen)
            if ended(self.matcher, self.stop_at_accept):
                self._finish(STOPPED if self.stop_at_accept and not self.matcher.is_finished() else FINISHED)
                return position
        if len(gen.token_ids) >= gen.max_tokens:
            self._finish(LENGTH if self.matcher is None else BUDGET)
        return position


    def fork_at(self, position: int, token_id: int | None = None) -> "Decoder":
        """A new Decoder that keeps this one's tokens before ``position`` and goes on from there.

        position: 1-based, 1 <= position <= len(generation.token_ids), or one more while this
        decoder is not done (its next position). token_id: the token for ``position`` (it must be
        allowed: ValueError otherwise, as :meth:`step`); None leaves the fork at ``position``,
        ready to step. Same model, prompt, grammar and settings; the random generator starts
        again from the seed. So the fork is exactly the fresh ``Decoder`` with the same arguments
        to which the first ``position − 1`` tokens (and ``token_id``) are given as picks
        (``step(token_id=...)``, which draws no random number); the test checks this.

        Nothing is recomputed for the kept tokens: their ``Position`` records are shared, the
        matcher consumes them again (no model), and the keys and values of the prompt and the
        kept tokens are copied from this decoder's cache; the first ``next_distribution`` of the
        fork is one model call (the last kept token). This decoder is not changed.
        Raises ValueError for a position outside that range.
        """
        gen = self.generation
        last = len(gen.token_ids) + (0 if self.done else 1)
        if not 1 <= position <= last:
            raise ValueError(f"position must be in 1..{last}, found {position}")
        fork = Decoder(self._model, self._tok, gen.prompt, gen.grammar, seed=gen.seed,
                       temperature=self.temperature, top_k=self.top_k, top_p=self.top_p,
                       max_tokens=gen.max_tokens, stop_at_accept=self.stop_at_accept,
                       record_top=self.record_top, fast_forward=self.fast_forward,
                       budget_aware=self.budget_aware)
        kept = gen.token_ids[:position - 1]
        if kept:
            fork.generation.token_ids = list(kept)
            fork.generation.positions = list(gen.positions[:position - 1])
            if fork.matcher is not None:
                for t in kept:
                    fork.matcher.consume(t)
            fork._cache = self._cache.select([0])  # a copy; the kept tokens but the last are in it
            fork._cache.filled = len(self._prompt_ids) + len(kept) - 1 - self._cache.offset
        if token_id is not None:
            fork.step(token_id=token_id)
        return fork

    def _fast_forward(self) -> Position | None:
        """Write the forced bytes after the prefix (:func:`forced_bytes`) as the tokenizer's BPE
        tokens; None when nothing is forced. One model call runs the token before the run (or the
        prompt) together with the whole run, and gives the distribution before each forced token
        and after the last. Each token's Position has q = 1, kept mass = its own p (the loop
        allowed only it), and ``forced == "fast_forward"``."""
        gen = self.generation
        room = gen.max_tokens - len(gen.token_ids)
        ids = self._tok.encode_bytes(forced_bytes(self.matcher, self.stop_at_accept))[:room]
        if not ids:
            return None
        if self._logits is None:  # the pending token (or the prompt) goes into the same call
            pending = self._prompt_ids if not gen.token_ids else [gen.token_ids[-1]]
            logits = self._model.step(np.array([pending + ids]), self._cache)[0, len(pending) - 1:]
        else:
            logits = np.concatenate([self._logits[None], self._model.step(np.array([ids]), self._cache)[0]])
        gen.model_calls += 1
        for k, t in enumerate(ids):  # logits[k]: before forced token k; logits[-1]: after the run
            p = softmax(logits[k] / self.temperature)
            order = np.argsort(-p, kind="stable")[:self.record_top]
            pt = float(p[t])
            position = Position([(int(i), float(p[i])) for i in order], [(t, pt, 1.0)], pt, t, pt, 1.0,
                                "fast_forward", probs=p)
            gen.positions.append(position)
            gen.token_ids.append(t)
            self.matcher.consume(t)
        self._logits = logits[-1]
        if ended(self.matcher, self.stop_at_accept):
            self._finish(STOPPED if self.stop_at_accept and not self.matcher.is_finished() else FINISHED)
        elif len(gen.token_ids) >= gen.max_tokens:
            self._finish(BUDGET)
        return position


MAX_FORCED_BYTES = 256  # a bound on one fast-forward run (``a*`` forces ``a`` for ever)


def forced_bytes(matcher, stop_at_accept: bool = False, limit: int = MAX_FORCED_BYTES) -> bytes:
    """The bytes the grammar forces after ``matcher``'s prefix: the longest run b1 b2 ... such that,
    before each, exactly one byte value keeps the automaton alive and the text cannot end there
    (with ``stop_at_accept`` an accepting prefix ends the run; without it, the loop would go on
    anyway). At most ``limit`` bytes. Uses the automaton interface only (256 ``step`` calls per
    byte), so it holds for every grammar kind; the matcher is not changed."""
    automaton, state = matcher.grammar.automaton, matcher.state
    out = bytearray()
    while len(out) < limit and not (stop_at_accept and automaton.is_accepting(state)):
        alive = [(b, nxt) for b in range(256) if (nxt := automaton.step(state, b)) is not None]
        if len(alive) != 1:
            break
        out.append(alive[0][0])
        state = alive[0][1]
    return bytes(out)


def truncate(q: np.ndarray, ids: np.ndarray, top_k: int | None, top_p: float | None) -> np.ndarray:
    """Top-k and top-p over the candidates ``ids`` of the distribution ``q`` (float64[V], summing to
    1 over ``ids``): the probabilities of the candidates kept, renormalised, 0 elsewhere. Ties are
    broken by token id (a stable sort). Top-p keeps the smallest prefix of the ranked candidates
    whose mass reaches ``top_p`` (Holtzman et al., 2020, "The Curious Case of Neural Text
    Degeneration")."""
    if top_k is None and top_p is None:
        return q
    ranked = ids[np.argsort(-q[ids], kind="stable")]
    if top_k is not None:
        ranked = ranked[:top_k]
    if top_p is not None:
        cumulative = np.cumsum(q[ranked])
        ranked = ranked[:int(np.searchsorted(cumulative, top_p * cumulative[-1] * (1 - 1e-12))) + 1]
    out = np.zeros_like(q)
    out[ranked] = q[ranked] / q[ranked].sum()
    return out


def choose(p: np.ndarray, matcher, rng, record_top: int = 5, top_k: int | None = None,
           top_p: float | None = None, stop_at_accept: bool = False,
           token_id: int | None = None) -> Position:
    """Steps 2-5 of the loop for one position: mask, renormalise, truncate, sample.

    p: float64[V], the tempered next-token distribution; matcher: a masker Matcher at the prefix
    (None: no mask). The matcher is not advanced. token_id: take this token instead of sampling
    (no random number is drawn). Raises ValueError if the model puts no mass at all on the
    allowed set (float64 underflow; does not happen with this model).
    """
    order = np.argsort(-p, kind="stable")[:record_top]
    top = [(int(i), float(p[i])) for i in order]
    if matcher is None:
        q = truncate(p, np.arange(len(p)), top_k, top_p)
        chosen = int(rng.choice(len(q), p=q)) if token_id is None else int(token_id)
        return Position(top, None, None, chosen, float(p[chosen]), float(q[chosen]), probs=p)
    allowed = allowed_ids(matcher)
    kept = float(p[allowed].sum())
    if not kept > 0:
        raise ValueError(f"the model gives probability 0 to every allowed token after "
                         f"{matcher.prefix_bytes[-40:]!r}")
    q = np.zeros_like(p)
    q[allowed] = p[allowed] / kept
    q = truncate(q, allowed, top_k, top_p)
    chosen = int(rng.choice(len(q), p=q)) if token_id is None else int(token_id)
    ranked = allowed[np.argsort(-q[allowed], kind="stable")]
    return Position(top, [(int(i), float(p[i]), float(q[i])) for i in ranked], kept, chosen,
                    float(p[chosen]), float(q[chosen]), forced_kind(matcher, allowed, stop_at_accept),
                    probs=p)
