"""Vocabularies shared by the masker tests: the 256-byte one, the trained 512-token one (when
weights/merges.txt exists) and tiny hand-written ones, including partial UTF-8 tokens."""

from __future__ import annotations

import pytest

BYTE_VOCAB = [bytes([i]) for i in range(256)]

# Hand-written: whole words, pieces that span grammar symbols, and split multi-byte characters.
SPANISH_PIECES = ["a", "b", "c", "1", "2", "3", "12", "123", "ab", "abc", "ñ", "é", "ó", "«", "»",
                  "—", "😀", "{", "}", '"', '{"', '"}', ",", ":", " ", "\n", "(", ")", "[", "]",
                  "+", "*", "x", "año", "señor", "Benina", "ina", "Ben", "\\", '\\"', "-", ".", "0"]
TINY_VOCAB = [s.encode() for s in SPANISH_PIECES] + [
    b"\xc3", b"\xb1", b"\xa9", b"\xe2\x80", b"\x94", b"\xf0\x9f", b"\x98\x80", b"\xc2", b"\xab",
    b"a\xc3", b"\xb1o", b"\xe2", b"\x80\x94 "]
MIXED_VOCAB = BYTE_VOCAB + TINY_VOCAB


def trained_vocab() -> list[bytes] | None:
    """The model's 512-token vocabulary, or None while weights/merges.txt does not exist."""
    try:
        from minigpt.bpe import load_tokenizer
        return list(load_tokenizer().vocab)
    except (ImportError, FileNotFoundError, OSError):
        return None


def vocab_params():
    """pytest params: byte, tiny, and trained (skipped with the reason when missing)."""
    trained = trained_vocab()
    return [
        pytest.param(BYTE_VOCAB, id="bytes256"),
        pytest.param(MIXED_VOCAB, id="mixed"),
        pytest.param(trained, id="trained512", marks=pytest.mark.skipif(
            trained is None, reason="weights/merges.txt not built yet: trained vocabulary missing")),
    ]
