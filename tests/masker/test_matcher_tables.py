"""Accept/reject tables walked token by token, and the matcher's contract (end rule, errors)."""

from __future__ import annotations

import numpy as np
import pytest

from masker import TokenNotAllowed, compile_choice, compile_regex
from tests.masker.vocabs import BYTE_VOCAB, TINY_VOCAB, vocab_params


def tokenize_greedy(text: bytes, vocab: list[bytes]) -> list[int]:
    """Longest-match tokenization (any split works: the mask allows every grammatical one)."""
    ids, i = [], 0
    by_bytes = {tok: i for i, tok in enumerate(vocab)}
    longest = max(map(len, vocab))
    while i < len(text):
        for n in range(min(longest, len(text) - i), 0, -1):
            if text[i:i + n] in by_bytes:
                ids.append(by_bytes[text[i:i + n]])
                i += n
                break
        else:
            raise ValueError(f"cannot tokenize {text[i:]!r}")
    return ids


def walk(grammar, vocab, text: str) -> tuple[bool, object]:
    """Feed ``text`` token by token; every token must be in the mask before it is consumed.
    Returns (True, matcher) when every token was allowed, (False, matcher) at the first refusal."""
    matcher = grammar.matcher(vocab)
    for token_id in tokenize_greedy(text.encode("utf-8"), vocab):
        if not matcher.mask()[token_id]:
            with pytest.raises(TokenNotAllowed):
                matcher.consume(token_id)
            return False, matcher
        matcher.consume(token_id)
    return True, matcher


TABLES = [  # (kind, grammar source, accepted texts, rejected texts)
    ("regex", "a*", ["", "a", "aaaa"], ["b", "aab"]),
    ("regex", "1|12|123", ["1", "12", "123"], ["2", "1234", "13"]),
    ("choice", ["1", "12", "123"], ["1", "12", "123"], ["2", "1234", "13"]),
    ("choice", ["señor", "señora", "señorita"], ["señor", "señorita"], ["señorr", "seño"]),
    ("regex", "«[a-zñáéíóú ]+»", ["«año»", "«el señor»"], ["«Año»", "<año>"]),
    ("regex", '\\{"[a-z]+":[0-9]+\\}', ['{"a":1}', '{"año":1}'[:0] + '{"ab":12}'], ['{"a":}', '{a:1}']),
    ("regex", "😀+—?", ["😀😀—", "😀"], ["—", "😀-"]),
    ("regex", r'"(\\.|[^"\\])*"', ['"a\\"b"', '""', '"ñ\\\\"'], ['"a"b"', '"\\"']),
]


@pytest.mark.parametrize("vocab", vocab_params() + [pytest.param(TINY_VOCAB, id="tiny")])
@pytest.mark.parametrize("kind, source, yes, no", TABLES)
def test_tables(kind, source, yes, no, vocab):
    grammar = compile_regex(source) if kind == "regex" else compile_choice(source)
    for text in yes:
        try:
            ok, matcher = walk(grammar, vocab, text)
        except ValueError:
            continue  # the tiny vocabulary cannot spell this text
        assert ok and matcher.is_accepting(), (source, text)
    for text in no:
        try:
            ok, matcher = walk(grammar, vocab, text)
        except ValueError:
            continue
        assert not (ok and matcher.is_accepting()), (source, text)


def test_end_rule_accepting_is_not_finished():
    matcher = compile_regex("1|12|123").matcher(BYTE_VOCAB)
    matcher.consume(ord("1"))
    assert matcher.is_accepting() and matcher.can_continue() and not matcher.is_finished()
    assert matcher.allowed_token_ids() == [ord("2")]
    matcher.consume(ord("2"))
    matcher.consume(ord("3"))
    assert matcher.is_accepting() and not matcher.can_continue() and matcher.is_finished()
    assert not matcher.mask().any()


def test_star_is_accepting_everywhere_and_never_finished():
    matcher = compile_regex("a*").matcher(BYTE_VOCAB)
    for _ in range(5):
        assert matcher.is_accepting() and not matcher.is_finished()
        assert matcher.allowed_token_ids() == [ord("a")]
        matcher.consume(ord("a"))


def test_multibyte_character_split_across_tokens():
    vocab = [b"a", b"\xc3", b"\xb1", b"\xb1o", b"a\xc3"]
    matcher = compile_regex("añ+o").matcher(vocab)
    assert matcher.allowed_token_ids() == [0, 4]
    matcher.consume(4)  # "a" plus the first byte of "ñ"
    assert matcher.allowed_token_ids() == [2, 3] and not matcher.is_accepting()
    matcher.consume(2)
    assert matcher.allowed_token_ids() == [1]  # "o" alone is not a token here
    matcher.consume(1)
    assert matcher.allowed_token_ids() == [2, 3]
    matcher.consume(3)
    assert matcher.is_finished() and matcher.prefix_bytes == "añño".encode()


def test_token_spanning_two_symbols():
    vocab = [b"{", b'"', b'{"', b"a", b'"}', b"}"]
    matcher = compile_regex('\\{"a"\\}').matcher(vocab)
    assert matcher.allowed_token_ids() == [0, 2]
    matcher.consume(2)
    matcher.consume(3)
    assert matcher.allowed_token_ids() == [1, 4]


def test_consume_refusal_leaves_matcher_unchanged_and_copy_is_independent():
    matcher = compile_choice(["sí", "no"]).matcher(BYTE_VOCAB)
    matcher.consume(ord("s"))
    with pytest.raises(TokenNotAllowed, match="not allowed after the prefix"):
        matcher.consume(ord("x"))
    with pytest.raises(TokenNotAllowed, match="token ids run from 0 to 255"):
        matcher.consume(999)
    assert matcher.prefix_bytes == b"s"
    branch = matcher.copy()
    branch.consume_bytes("í")
    assert branch.is_finished() and not matcher.is_accepting()
    assert matcher.token_ids == [ord("s")] and branch.token_ids == [ord("s")]


def test_mask_is_read_only_and_cached():
    matcher = compile_regex("[ab]+").matcher(BYTE_VOCAB)
    mask = matcher.mask()
    assert mask.dtype == np.bool_ and mask.shape == (256,)
    with pytest.raises(ValueError):
        mask[0] = True
    matcher.consume(ord("a"))
    again = compile_regex("[ab]+").matcher(BYTE_VOCAB)
    assert matcher.mask().sum() == 2 and again.mask().sum() == 2
