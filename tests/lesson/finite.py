"""The naive oracle for finite grammars: a set of texts and its allowed sets by the definition,
checking every token of the vocabulary. Independent of the masker (no automaton, no trie).

    A(prefix) = { v in V : prefix + bytes(v) is a prefix of some text g }

Texts must be prefix-free (no text a proper prefix of another), so that a path ends exactly when
its bytes are a text, which is the masker's end rule (``is_finished``) for such sets.
"""

from __future__ import annotations


class FiniteGrammar:
    """texts: list of str (UTF-8) or bytes; vocab: list of bytes (token id = index)."""

    def __init__(self, texts, vocab: list[bytes]):
        self.vocab = list(vocab)
        self.texts = list(dict.fromkeys(t.encode() if isinstance(t, str) else bytes(t) for t in texts))
        ordered = sorted(self.texts)
        for shorter, longer in zip(ordered, ordered[1:]):
            if longer.startswith(shorter):
                raise ValueError(f"{shorter!r} is a proper prefix of {longer!r}")

    def contains(self, text) -> bool:
        return (text.encode() if isinstance(text, str) else bytes(text)) in self.texts

    def is_prefix(self, prefix: bytes) -> bool:
        return any(g.startswith(prefix) for g in self.texts)

    def is_complete(self, prefix: bytes) -> bool:
        return prefix in self.texts

    def brute_force_allowed_ids(self, prefix: bytes) -> list[int]:
        return [v for v, piece in enumerate(self.vocab)
                if piece and any(g.startswith(prefix + piece) for g in self.texts)]

    def forced_kind(self, prefix: bytes) -> str | None:
        """"token" (one token allowed), "split" (several, but every text still possible goes on
        with the bytes of the longest allowed token), or None (a real choice)."""
        allowed = self.brute_force_allowed_ids(prefix)
        if len(allowed) == 1:
            return "token"
        longest = max((self.vocab[v] for v in allowed), key=len)
        rests = [g[len(prefix):] for g in self.texts if g.startswith(prefix)]
        return "split" if all(r.startswith(longest) for r in rests) else None

    def path_counts(self) -> dict[bytes, int]:
        """Per text, the token paths that spell it: ways[i] = sum over tokens v that start
        text[i:] of ways[i + len(v)] (dynamic programming over byte offsets)."""
        counts = {}
        for text in self.texts:
            ways = [0] * len(text) + [1]
            for i in range(len(text) - 1, -1, -1):
                ways[i] = sum(ways[i + len(p)] for p in self.vocab if p and text.startswith(p, i))
            counts[text] = ways[0]
        return counts

    def positions(self, prefix: bytes = b"") -> int:
        """Path prefixes that have not ended, below ``prefix`` (plain recursion)."""
        total = 0
        for v in self.brute_force_allowed_ids(prefix):
            nxt = prefix + self.vocab[v]
            if not self.is_complete(nxt):
                total += 1 + self.positions(nxt)
        return total
