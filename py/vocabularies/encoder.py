"""Byte-level BPE as tiktoken encodes: split the text with the pre-tokenizer's pattern, then merge
each piece's bytes, the pair of lowest rank first, until no adjacent pair is a token.

Source of the algorithm: tiktoken's ``_byte_pair_merge`` (OpenAI, MIT licence), here with a plain
quadratic loop over a piece's parts; pieces are short (a word, a number of at most three digits,
a run of spaces or punctuation), so that costs little. The result is compared with ``tiktoken``
itself, built from the same ranks, in ``tests/vocabularies/test_bpe_encoder.py``.
"""

from __future__ import annotations

from .pretokenize import compile_pattern
from .store import Vocabulary


class BpeEncoder:
    """The encoder of a ``Vocabulary``: ``encode(text) -> list[int]`` (token ids, the canonical
    tokenization), ``decode(ids) -> bytes``. Special tokens are never produced: their text is
    encoded as plain text (tiktoken's ``encode_ordinary``)."""

    def __init__(self, vocab: Vocabulary):
        self.vocab = vocab
        self.ranks = {tok: i for i, tok in enumerate(vocab.tokens)}
        self.pattern = compile_pattern(vocab.pat_str)
        self._pieces: dict[bytes, list[int]] = {}

    def pieces(self, text: str) -> list[str]:
        """The pre-tokenizer's split of ``text``: pieces that join back into it."""
        return [m.group() for m in self.pattern.finditer(text)]

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` (a str; encoded as UTF-8): pre-tokenize, then merge each piece."""
        ids: list[int] = []
        for m in self.pattern.finditer(text):
            ids += self.merge(m.group().encode("utf-8"))
        return ids

    def merge(self, piece: bytes) -> list[int]:
        """The BPE merges of one piece's bytes: ids whose bytes join into ``piece``."""
        found = self._pieces.get(piece)
        if found is not None:
            return found
        ranks = self.ranks
        whole = ranks.get(piece)
        if whole is not None:
            found = [whole]
        else:
            parts = [piece[i:i + 1] for i in range(len(piece))]
            while len(parts) > 1:
                best, at = None, -1
                for i in range(len(parts) - 1):
                    rank = ranks.get(parts[i] + parts[i + 1])
                    if rank is not None and (best is None or rank < best):
                        best, at = rank, i
                if best is None:
                    break
                parts[at:at + 2] = [parts[at] + parts[at + 1]]
            found = [ranks[p] for p in parts]
        if len(self._pieces) < 100_000:
            self._pieces[piece] = found
        return found

    def decode(self, ids) -> bytes:
        """The bytes of token ids ``ids``; IndexError for an id outside the vocabulary."""
        tokens = self.vocab.tokens
        return b"".join(tokens[i] for i in ids)
