"""The tiny automaton interface that every grammar kind implements.

The token-trie walk (``trie.py``), the brute-force reference mask and the ``Matcher`` use only
these five methods, so choices, regular expressions, JSON Schema and context-free grammars share
one mask routine (the same split as llguidance's toktrie). Implementations: ``dfa.Dfa`` (choices,
regular expressions, non-recursive grammars) and ``earley.EarleyAutomaton`` (recursive grammars).

A state is an immutable value; ``step`` never mutates it, so a matcher can be copied by copying
a reference and the trie walk can branch freely.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Protocol


class Automaton(Protocol):
    def start(self) -> object:
        """The state before any byte."""

    def step(self, state: object, byte: int) -> object | None:
        """The state after one more byte (0..255), or None when the bytes so far can no longer
        be extended to a complete text (the state would be dead). Every non-None state is alive."""

    def is_accepting(self, state: object) -> bool:
        """True when the bytes read so far are a complete text of the grammar."""

    def can_continue(self, state: object) -> bool:
        """True when at least one more byte keeps the state alive."""

    def cache_key(self, state: object) -> Hashable | None:
        """A key such that equal keys imply the same future (same allowed continuations), used
        to cache masks; None when the state cannot be keyed cheaply (the mask is not cached)."""
