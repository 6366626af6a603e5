"""Token trie and the two mask routines: the fast trie walk and its brute-force twin.

A vocabulary is a list of ``bytes`` (token id = index). The trie stores every token's bytes once;
tokens that share a prefix share nodes, so the automaton steps each shared prefix once, and a
dead state prunes a whole subtree (llguidance's toktrie and lm-format-enforcer's prefix tree work
the same way). ``trie_mask`` asks the automaton for the walk (``Automaton.allowed_tokens``: one
``step`` per trie edge, or a DFA's table look-ups), so it depends on the automaton interface
only. ``brute_force_mask`` runs the automaton over every token's bytes separately; it is the
reference the trie walk is tested against.

A token is allowed when every byte of it keeps the automaton alive (the state after it can still
reach a complete text). An empty token (``b""``) is never allowed: it would not advance.
"""

from __future__ import annotations

import numpy as np

from .automaton import Automaton

DEFAULT_MAX_TRIE_STEPS = 200_000


class TokenTrie:
    """Byte trie over a vocabulary.

    ``children[node]``: tuple of ``(byte, child)``; ``tokens[node]``: ids of the tokens that end
    at ``node``; node 0 is the root (the empty prefix). ``n_nodes`` is at most 1 + total bytes.
    ``child_at[node]``: dict byte -> child, and ``child_bits[node]``: int whose bit b is set when
    byte b has a child, for walks that visit only the bytes a state allows (``earley.py``).
    """

    def __init__(self, vocab: list[bytes]):
        for i, tok in enumerate(vocab):
            if not isinstance(tok, (bytes, bytearray)):
                raise TypeError(f"vocab[{i}] must be bytes, got {type(tok).__name__}")
        self.vocab = [bytes(t) for t in vocab]
        child_maps: list[dict[int, int]] = [{}]
        tokens: list[list[int]] = [[]]
        for token_id, tok in enumerate(self.vocab):
            node = 0
            for b in tok:
                nxt = child_maps[node].get(b)
                if nxt is None:
                    nxt = len(child_maps)
                    child_maps[node][b] = nxt
                    child_maps.append({})
                    tokens.append([])
                node = nxt
            if tok:
                tokens[node].append(token_id)
        self.children = [tuple(sorted(m.items())) for m in child_maps]
        self.tokens = [tuple(t) for t in tokens]
        self.child_at = child_maps
        self.child_bits = [sum(1 << b for b in m) for m in child_maps]

    @property
    def n_nodes(self) -> int:
        return len(self.children)


def trie_mask(automaton: Automaton, state: object, trie: TokenTrie,
              max_steps: int = DEFAULT_MAX_TRIE_STEPS) -> np.ndarray:
    """Allowed tokens after ``state``: ``bool (len(vocab),)``, by a depth-first walk of the trie
    (``automaton.allowed_tokens``).

    The generic walk costs one ``automaton.step`` per trie edge and raises LimitExceeded after
    ``max_steps`` steps (only reachable with an automaton whose step is itself limited, e.g.
    Earley); a DFA's walk is bounded by the trie size and needs no limit.
    """
    mask = np.zeros(len(trie.vocab), dtype=bool)
    mask[automaton.allowed_tokens(state, trie, max_steps)] = True
    return mask


def brute_force_mask(automaton: Automaton, state: object, vocab: list[bytes]) -> np.ndarray:
    """Reference twin of ``trie_mask``: run the automaton over each token's bytes on its own.
    Returns ``bool (len(vocab),)``; passes on what ``automaton.step`` raises."""
    mask = np.zeros(len(vocab), dtype=bool)
    for token_id, tok in enumerate(vocab):
        st = state
        for b in tok:
            st = automaton.step(st, b)
            if st is None:
                break
        else:
            mask[token_id] = len(tok) > 0
    return mask
