"""The tiny automaton interface that every grammar kind implements.

The token-trie walk (``trie.py``), the brute-force reference mask and the ``Matcher`` use only
these methods, so choices, regular expressions, JSON Schema and context-free grammars share one
mask routine (the same split as llguidance's toktrie). Implementations: ``dfa.Dfa`` (choices,
regular expressions, non-recursive grammars) and ``earley.EarleyAutomaton`` (recursive grammars).

Five methods define the language: ``start``, ``step``, ``is_accepting``, ``can_continue`` and
``cache_key``. The sixth, ``allowed_tokens``, walks a token trie from a state; this base class
implements it with one ``step`` call per trie edge, and an automaton with a faster way to step
(the DFA's transition table) overrides it with a walk that must give the same tokens.

A state is an immutable value; ``step`` never mutates it, so a matcher can be copied by copying
a reference and the trie walk can branch freely.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Hashable
from typing import TYPE_CHECKING

from .errors import LimitExceeded

if TYPE_CHECKING:
    from .trie import TokenTrie


class Automaton(ABC):
    """Base class of every automaton: five abstract methods and the generic trie walk."""

    @abstractmethod
    def start(self) -> object:
        """The state before any byte."""

    @abstractmethod
    def step(self, state: object, byte: int) -> object | None:
        """The state after one more byte (0..255), or None when the bytes so far can no longer
        be extended to a complete text (the state would be dead). Every non-None state is alive."""

    @abstractmethod
    def is_accepting(self, state: object) -> bool:
        """True when the bytes read so far are a complete text of the grammar."""

    @abstractmethod
    def can_continue(self, state: object) -> bool:
        """True when at least one more byte keeps the state alive."""

    @abstractmethod
    def cache_key(self, state: object) -> Hashable | None:
        """A key such that equal keys imply the same future (same allowed continuations), used
        to cache masks; None when the state cannot be keyed cheaply (the mask is not cached)."""

    def mask_key(self, state: object, longest: int) -> Hashable | None:
        """The key the masks are cached under for a vocabulary whose tokens have at most
        ``longest`` bytes: equal keys imply the same allowed tokens from the state (not
        necessarily the same futures beyond one token). By default ``cache_key``; a counting
        automaton clamps its counts (``counted.CountedDfa``)."""
        return self.cache_key(state)

    def allowed_tokens(self, state: object, trie: TokenTrie, max_steps: int) -> list[int]:
        """Ids of the tokens of ``trie`` whose every byte keeps the automaton alive from
        ``state``, in no particular order (an override may list an id twice, return an int
        array, or a new bool array of ``len(trie.vocab)``: the mask itself); never the empty
        token.

        Depth-first walk of the trie: one ``step`` per trie edge, and a dead byte prunes its
        whole subtree. Raises LimitExceeded("max_trie_steps") after ``max_steps`` steps, and
        passes on what ``step`` raises (LimitExceeded for Earley's ``max_items``).
        """
        allowed: list[int] = []
        step, children, tokens = self.step, trie.children, trie.tokens
        stack = [(0, state)]
        steps = 0
        while stack:
            node, st = stack.pop()
            kids = children[node]
            steps += len(kids)
            if steps > max_steps:
                too_many_steps(max_steps)
            for byte, child in kids:
                nxt = step(st, byte)
                if nxt is None:
                    continue
                allowed.extend(tokens[child])
                if children[child]:
                    stack.append((child, nxt))
        return allowed


def too_many_steps(max_steps: int):
    """Raise the error of a trie walk that took more than ``max_steps`` steps."""
    raise LimitExceeded("computing one mask needed too many automaton steps", "max_trie_steps",
                        max_steps, "use a smaller vocabulary or grammar, or raise max_trie_steps",
                        code="limit.mask_steps")
