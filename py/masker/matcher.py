"""Compiled grammars and matchers: the objects a decode loop talks to.

``Grammar`` wraps one automaton (see ``automaton.py``) and is what every ``compile_*`` function
returns. ``Grammar.matcher(vocab)`` gives a ``Matcher``, which tracks one prefix and computes
token masks. Masks are cached per (vocabulary, automaton state key): for a DFA, after warm-up a
mask is one dictionary look-up.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager

import numpy as np

from .automaton import Automaton
from .budget import Distances, budget_mask
from .errors import BudgetTooSmall, GrammarSyntaxError, LimitExceeded, TokenNotAllowed
from .trie import DEFAULT_MAX_TRIE_STEPS, TokenTrie, brute_force_mask, trie_mask

MAX_CACHED_MASKS = 20_000  # per grammar and vocabulary; the cache is emptied when it is full
MASK_CACHE_BYTES = 256 << 20  # and at most this many bytes of masks (1,342 at 200,000 tokens)


@contextmanager
def gc_paused():
    """Pause Python's cyclic garbage collector while a grammar compiles. Compiling allocates
    millions of small tuples, lists and sets that hold no reference cycles; the collector
    would scan every live object again and again as they pile up, which makes compile time
    grow faster than the schema (a 10,000-value enum: 1.5x slower, 14x instead of 11x the
    time of 1,000 values, measured with bench/bench_scaling.py). Reference counting still
    frees everything; the collector's previous state is restored on exit."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


class _VocabIndex:
    """A vocabulary's trie (shared by every grammar: ``TokenTrie.shared``) plus the masks this
    grammar computed for it (key -> read-only mask), at most ``max_masks`` of them."""

    def __init__(self, vocab):
        self.trie = TokenTrie.shared(vocab)
        self.longest = self.trie.longest  # bytes of the longest token
        self.masks: dict = {}
        self.max_masks = max(16, min(MAX_CACHED_MASKS, MASK_CACHE_BYTES // max(1, len(vocab))))
        self.distances: Distances | None = None  # budget-aware masks: built at the first use


class Grammar:
    """A compiled grammar: ``kind`` ("choice", "regex", "cfg", "json_schema"), ``source`` (the
    text or object it came from) and ``automaton`` (an ``automaton.Automaton``: start / step /
    is_accepting / can_continue / cache_key / allowed_tokens)."""

    def __init__(self, automaton: Automaton, kind: str, source):
        self.automaton, self.kind, self.source = automaton, kind, source
        self._indexes: dict[tuple, _VocabIndex] = {}

    def __repr__(self) -> str:
        text = repr(self.source)
        return f"<Grammar {self.kind} {text[:60]}{'...' if len(text) > 60 else ''}>"

    def matcher(self, vocab: list[bytes], *, max_trie_steps: int | None = None):
        """A new ``Matcher`` at the empty prefix. ``vocab``: list of bytes, token id = index.

        ``max_trie_steps``: the most automaton steps one mask may take (Earley's walk);
        default ``DEFAULT_MAX_TRIE_STEPS`` (200,000) or twice the trie's nodes if more, since a
        walk that steps every node once is normal on a large vocabulary.

        The vocabulary's trie is built once per process and shared by every grammar
        (``TokenTrie.shared``); the mask cache is built once per grammar and shared by all its
        matchers. Raises TypeError if a vocabulary entry is not bytes.
        """
        key = vocab if isinstance(vocab, tuple) else tuple(vocab)
        index = self._indexes.get(key)
        if index is None:
            index = self._indexes[key] = _VocabIndex(key)
        if max_trie_steps is None:
            max_trie_steps = max(DEFAULT_MAX_TRIE_STEPS, 2 * index.trie.n_nodes)
        return Matcher(self, index, self.automaton.start(), b"", max_trie_steps)

    def accepts(self, text: str | bytes) -> bool:
        """True when ``text`` (str is UTF-8 encoded) is a complete text of the grammar."""
        data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
        state = self.automaton.start()
        for b in data:
            state = self.automaton.step(state, b)
            if state is None:
                return False
        return self.automaton.is_accepting(state)


class Matcher:
    """Tracks one prefix of a grammar's text and says which tokens may come next.

    The decode loop (the model has no end token; the grammar decides when the text may end):

    1. ``mask = matcher.mask()``: ``bool (V,)``, True where token id i keeps the text valid.
    2. Set the logits of the masked-out tokens to -inf (``logits[~mask] = -np.inf``) and
       renormalize; sample (or take the argmax of) a token id ``t`` from what is left.
    3. ``matcher.consume(t)``: append the token's bytes to ``matcher.prefix_bytes``.
    4. Repeat from 1 until ``matcher.is_finished()`` or a token budget runs out (``a*`` never
       finishes). An all-False mask while not accepting means no token of this vocabulary can
       continue (only with vocabularies lacking some single bytes): stop and report it.

    End rule: accepting is not finished. ``is_accepting()`` says the prefix is a complete text;
    ``can_continue()`` says some token may still follow (``1|12|123`` after ``1`` is both).
    Generation stops when ``is_accepting() and not can_continue()`` (= ``is_finished()``). A caller
    that wants shorter texts may also offer "stop" as an extra option whenever ``is_accepting()``
    is True; the lesson pages do that explicitly, never silently.

    Token budget (``budget.py``): ``mask(budget=k)`` allows only the tokens after which the text
    can still be completed in ``k - 1`` more tokens of this vocabulary; ``set_budget(k)`` makes
    every later ``mask()`` (and so ``can_continue``, ``is_finished``) do that with the tokens left,
    lowered by one at each ``consume``, so the loop above ends on a complete text within ``k``
    tokens. ``min_tokens_to_finish()`` is the shortest completion, in tokens.

    Errors: ``consume`` and ``consume_bytes`` raise ``TokenNotAllowed`` (the matcher is left
    unchanged); ``mask`` may raise ``LimitExceeded`` for grammars whose step has a work limit;
    ``set_budget`` and ``mask(budget=k)`` raise ``BudgetTooSmall`` when the shortest completion
    needs more than the budget.
    """

    __slots__ = ("grammar", "_index", "state", "_prefix", "token_ids", "max_trie_steps", "budget")

    def __init__(self, grammar, index, state, prefix: bytes, max_trie_steps: int):
        self.grammar, self._index, self.state = grammar, index, state
        self._prefix, self.max_trie_steps = prefix, max_trie_steps
        self.token_ids: list[int] = []
        self.budget: int | None = None  # tokens left (set_budget), or None: no budget

    @property
    def vocab(self) -> list[bytes]:
        return self._index.trie.vocab

    @property
    def prefix_bytes(self) -> bytes:
        """Every byte consumed so far."""
        return self._prefix

    def mask(self, budget: int | None = None) -> np.ndarray:
        """Allowed next tokens: read-only ``bool (len(vocab),)``; copy it before changing it.

        ``budget``: tokens that may still be written (this one included); only the tokens after
        which the shortest completion needs at most ``budget - 1`` tokens stay allowed. Default:
        the budget set by ``set_budget`` (None: no budget, the plain mask). Raises BudgetTooSmall
        when the prefix is not a complete text and no token fits the budget, ValueError for a
        negative budget, LimitExceeded (``max_budget_states``) when the bounded search of a
        counted or Earley automaton visits too many states."""
        if budget is None:
            budget = self.budget
        if budget is None:
            return self._plain_mask()
        return self._budget_mask(int(budget))

    def _budget_mask(self, budget: int) -> np.ndarray:
        if budget < 0:
            raise ValueError(f"the budget must be >= 0 tokens, found {budget}")
        plain = self._plain_mask()
        try:
            mask = budget_mask(self._distances(), self.state, plain, budget)
        except LimitExceeded as exc:
            raise exc.at_prefix(self._prefix) from None
        if not mask.any() and not self.is_accepting():
            raise self._too_small(budget)
        mask.flags.writeable = False
        return mask

    def _distances(self) -> Distances:
        index = self._index
        if index.distances is None:
            index.distances = Distances(self.grammar.automaton, index.trie, self.max_trie_steps)
        return index.distances

    def _too_small(self, budget: int) -> BudgetTooSmall:
        searched = max(4 * budget, budget + 32)
        return BudgetTooSmall(budget, self.min_tokens_to_finish(searched), self._prefix, searched)

    def min_tokens_to_finish(self, limit: int = 256) -> int | None:
        """The shortest completion of the prefix, in tokens of this vocabulary (0 when it is a
        complete text already), or None when it needs more than ``limit`` tokens or no token
        path completes it. Computed once per (grammar, vocabulary) for a DFA, by a search
        bounded by ``limit`` otherwise (``budget.py``); LimitExceeded as for ``mask``."""
        try:
            return self._distances().within(self.state, int(limit))
        except LimitExceeded as exc:
            raise exc.at_prefix(self._prefix) from None

    def set_budget(self, budget: int | None) -> None:
        """From now on ``mask()`` keeps the text completable within ``budget`` tokens, counted
        down by ``consume`` (not by ``consume_bytes``); None removes the budget. Raises
        BudgetTooSmall when even the shortest completion needs more than ``budget`` tokens."""
        if budget is not None:
            budget = int(budget)
            if budget < 0:
                raise ValueError(f"the budget must be >= 0 tokens, found {budget}")
            if self.min_tokens_to_finish(budget) is None:
                raise self._too_small(budget)
        self.budget = budget

    def _plain_mask(self) -> np.ndarray:
        automaton = self.grammar.automaton
        key = automaton.mask_key(self.state, self._index.longest)
        masks = self._index.masks
        if key is not None:
            cached = masks.get(key)
            if cached is not None:
                return cached
        try:
            mask = trie_mask(automaton, self.state, self._index.trie, self.max_trie_steps)
        except LimitExceeded as exc:
            raise exc.at_prefix(self._prefix) from None
        mask.flags.writeable = False
        if key is not None:
            if len(masks) >= self._index.max_masks:
                masks.clear()
            masks[key] = mask
        return mask

    def mask_is_cached(self) -> bool:
        """True when ``mask()`` (no budget) would come from the vocabulary's index, computed
        earlier for a state with the same ``mask_key``, instead of a new trie walk."""
        key = self.grammar.automaton.mask_key(self.state, self._index.longest)
        return key is not None and key in self._index.masks

    def brute_force_mask(self) -> np.ndarray:
        """The reference mask (each token run on its own); equal to ``mask()``, only slower."""
        return brute_force_mask(self.grammar.automaton, self.state, self.vocab)

    def allowed_token_ids(self) -> list[int]:
        return np.flatnonzero(self.mask()).tolist()

    def is_accepting(self) -> bool:
        """True when ``prefix_bytes`` is a complete text of the grammar (it may still continue)."""
        return self.grammar.automaton.is_accepting(self.state)

    def can_continue(self) -> bool:
        """True when at least one token of the vocabulary may follow the prefix."""
        return bool(self.mask().any())

    def is_finished(self) -> bool:
        """The stop condition of the decode loop: accepting and no token may follow."""
        return self.is_accepting() and not self.can_continue()

    def consume(self, token_id: int) -> None:
        """Append token ``token_id``; raises TokenNotAllowed if its mask entry is False."""
        token_id = int(token_id)
        if not 0 <= token_id < len(self.vocab):
            raise TokenNotAllowed(token_id, b"", self._prefix,
                                  f"; token ids run from 0 to {len(self.vocab) - 1}")
        if self.budget is not None and not self.mask()[token_id]:
            raise TokenNotAllowed(token_id, self.vocab[token_id], self._prefix,
                                  f"; with {self.budget} tokens left the text could not end")
        self._advance(self.vocab[token_id], token_id)
        self.token_ids.append(token_id)
        if self.budget is not None:
            self.budget -= 1

    def consume_bytes(self, data: bytes | str) -> None:
        """Append raw bytes (str is UTF-8 encoded); raises TokenNotAllowed if any byte breaks
        the grammar. The bytes need not align with tokens (used for prompts and tests)."""
        data = data.encode("utf-8") if isinstance(data, str) else bytes(data)
        self._advance(data, None)

    def _advance(self, data: bytes, token_id: int | None) -> None:
        if not data and token_id is not None:
            raise TokenNotAllowed(token_id, data, self._prefix, "; empty tokens never are")
        state, step = self.state, self.grammar.automaton.step
        for i, b in enumerate(data):
            try:
                state = step(state, b)
            except LimitExceeded as exc:
                raise exc.at_prefix(self._prefix + data[:i]) from None
            if state is None:
                raise TokenNotAllowed(token_id, data, self._prefix)
        self.state = state
        self._prefix += data

    def copy(self) -> "Matcher":
        """An independent matcher at the same prefix (for branching over token paths)."""
        other = Matcher(self.grammar, self._index, self.state, self._prefix, self.max_trie_steps)
        other.token_ids = list(self.token_ids)
        other.budget = self.budget
        return other

    fork = copy

    def state_key(self):
        """A hashable key of the automaton state: matchers with equal keys allow the same futures
        (same masks from here on), so a walk over token paths can group or memoise on it. It is
        the automaton's ``cache_key``, or the prefix bytes when the automaton has none."""
        key = self.grammar.automaton.cache_key(self.state)
        return ("prefix", self._prefix) if key is None else key

    def __repr__(self) -> str:
        return f"<Matcher {self.grammar.kind} prefix={self._prefix[-30:]!r}>"


def check_nonempty(grammar: Grammar, source_text: str, syntax: str) -> Grammar:
    """Refuse a grammar whose language is empty (every mask would be all False): GrammarSyntaxError
    ``"syntax.matches_nothing"``, fields ``{"syntax"}`` ("regex" or "grammar", what was compiled)."""
    automaton = grammar.automaton
    start = automaton.start()
    if not automaton.is_accepting(start) and not automaton.can_continue(start):
        what = {"regex": "regular expression"}.get(syntax, syntax)
        raise GrammarSyntaxError(source_text, 0, f"the {what} matches no text at all "
                                 "(expected at least one complete text, found none)",
                                 "check empty character classes and unproductive rules",
                                 code="syntax.matches_nothing", syntax=syntax)
    return grammar
