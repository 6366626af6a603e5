"""FiniteGrammar: allowed sets equal the definition checked over every token (brute force) and the
masker's independent choice automaton; clear errors for grammars that cannot be used."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lesson.figures import KEY, NAMES, UTF8_PREFIX, answer
from lesson.grammar import FiniteGrammar, GrammarError
from masker import compile_choice
from minigpt.bpe import load_tokenizer

BYTES = [bytes([b]) for b in range(256)]
TINY = BYTES + [b"Be", b"ni", b"na", b'{"', b"\xc3", b"\xc3\xb1", b"a\xc3", b'"}']


@pytest.fixture(scope="module")
def vocab():
    return load_tokenizer().vocab


def prefixes(texts: list[bytes]):
    seen = set()
    for text in texts:
        for i in range(len(text) + 1):
            if text[:i] not in seen:
                seen.add(text[:i])
                yield text[:i]


LESSON = [answer(n) for n in NAMES] + [answer("Doña Paca")]
SPANISH = ["sí", "no", "señora", "señorita", "«ñ»", "año—", "😀x"]


@pytest.mark.parametrize("texts", [LESSON, ["sí", "no", "quizá"], ["ñ", "ña", "o"][1:]])
def test_allowed_sets_equal_brute_force_and_the_masker_at_every_prefix(vocab, texts):
    grammar = FiniteGrammar(texts, vocab)
    reference = compile_choice(texts)
    for prefix in prefixes(grammar.texts):
        allowed = grammar.allowed_ids(prefix)
        assert allowed == grammar.brute_force_allowed_ids(prefix), prefix
        matcher = reference.matcher(vocab)
        matcher.consume_bytes(prefix)
        assert allowed == matcher.allowed_token_ids(), prefix
        assert (allowed == []) == grammar.is_complete(prefix)


def test_partial_utf8_tokens_are_allowed_mid_letter(vocab):
    grammar = FiniteGrammar([answer("Doña Paca")], vocab)
    prefix = UTF8_PREFIX.encode()  # the text up to the ñ
    pieces = {vocab[t] for t in grammar.allowed_ids(prefix)}
    assert b"\xc3" in pieces and "ñ".encode() in pieces
    assert [vocab[t] for t in grammar.allowed_ids(prefix + b"\xc3")] == [b"\xb1"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet="ab\u00f1\u00e9\U0001F600{}\"", min_size=1, max_size=6),
                min_size=1, max_size=5, unique=True), st.data())
def test_random_grammars_agree_with_brute_force(texts, data):
    encoded = sorted({t.encode() for t in texts})
    if any(b.startswith(a) for a, b in zip(encoded, encoded[1:])):
        with pytest.raises(GrammarError, match="proper prefix"):
            FiniteGrammar(texts, TINY)
        return
    grammar = FiniteGrammar(texts, TINY)
    text = data.draw(st.sampled_from(grammar.texts))
    prefix = text[:data.draw(st.integers(0, len(text)))]
    assert grammar.allowed_ids(prefix) == grammar.brute_force_allowed_ids(prefix)
    off_grammar = prefix + b"z"
    assert grammar.allowed_ids(off_grammar) == grammar.brute_force_allowed_ids(off_grammar) == []


def test_forced_means_a_single_text_continuation(vocab):
    grammar = FiniteGrammar([answer(n) for n in NAMES], vocab)
    assert grammar.is_forced(b"")  # only "{"
    assert grammar.is_forced(b'{"')  # the key: one text, several splits
    key = f'{{"{KEY}":"'.encode()
    assert not grammar.is_forced(key)  # the initials
    assert grammar.is_forced(key + b"F")  # only Frasquito starts with F
    tiny = FiniteGrammar(["ab", "ac"], TINY)
    assert not tiny.is_forced(b"a") and tiny.is_forced(b"")


def test_end_token_is_allowed_exactly_when_the_text_is_complete():
    end = 10  # "\n"
    grammar = FiniteGrammar(["Be", "Benina"], TINY, end_token=end)
    assert end in grammar.allowed_ids(b"Be") and TINY.index(b"ni") in grammar.allowed_ids(b"Be")
    assert end not in grammar.allowed_ids(b"B")
    assert grammar.allowed_ids(b"Benina") == [end]
    for prefix in prefixes(grammar.texts):
        assert grammar.allowed_ids(prefix) == grammar.brute_force_allowed_ids(prefix)
    with pytest.raises(GrammarError, match="cannot be written: at byte 1"):
        FiniteGrammar(["a\nb"], TINY, end_token=end)  # the end token is never used as plain bytes


@pytest.mark.parametrize("texts, vocab, kwargs, message", [
    ([], BYTES, {}, "no texts"),
    (["sí", ""], BYTES, {}, "empty"),
    ("Benina", BYTES, {}, "list of texts"),
    (["Benina", "Benina Casia"], BYTES, {}, "'Benina' is a proper prefix of 'Benina Casia'"),
    (["a", 3], BYTES, {}, "str or bytes"),
    (["a"], BYTES[:200], {}, "lacks the single byte 0xc8"),
    (["a"], BYTES, {"end_token": 999}, "end_token must be a token id"),
])
def test_bad_grammars_are_refused_with_a_clear_message(texts, vocab, kwargs, message):
    with pytest.raises(GrammarError, match=message.replace("(", r"\(")):
        FiniteGrammar(texts, vocab, **kwargs)


def test_duplicates_are_dropped_and_order_kept():
    grammar = FiniteGrammar(["no", "sí", "no"], BYTES)
    assert grammar.texts == [b"no", "sí".encode()] and len(grammar) == 2
    assert grammar.contains("sí") and not grammar.contains("s")
