"""The language as the vocabulary sees it: the masker's allowed sets equal the definition checked
over every token (the naive oracle), counts of texts, paths and positions equal plain recursion,
forced positions follow their definition, and limits fail at once with the limit and the count."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lesson import LanguageTooLarge, count_language, count_paths, count_positions
from lesson.course import NAMES, answer
from lesson.mascara.figures import UTF8_PREFIX
from lesson.token_language import allowed_ids, forced_kind
from masker import compile_cfg, compile_choice, compile_json_schema, compile_regex
from tests.lesson.finite import FiniteGrammar

BYTES = [bytes([b]) for b in range(256)]
TINY = BYTES + [b"Be", b"ni", b"na", b'{"', b"\xc3", b"\xc3\xb1", b"a\xc3", b'"}', b"ab", b"abc"]


def prefixes(texts: list[bytes]):
    seen = set()
    for text in texts:
        for i in range(len(text)):
            if text[:i] not in seen:
                seen.add(text[:i])
                yield text[:i]


LESSON = [answer(n) for n in NAMES] + [answer("Doña Paca")]


@pytest.mark.parametrize("texts", [LESSON, ["sí", "no", "quizá"], ["ña", "o"]])
def test_masker_allowed_sets_and_forced_positions_equal_the_definition(tok, texts):
    oracle = FiniteGrammar(texts, tok.vocab)
    grammar = compile_choice(texts)
    for prefix in prefixes(oracle.texts):
        matcher = grammar.matcher(tok.vocab)
        matcher.consume_bytes(prefix)
        allowed = allowed_ids(matcher)
        assert allowed.tolist() == oracle.brute_force_allowed_ids(prefix), prefix
        assert forced_kind(matcher, allowed) == oracle.forced_kind(prefix), prefix


def test_partial_utf8_tokens_are_allowed_mid_letter(tok):
    matcher = compile_choice([answer("Doña Paca")]).matcher(tok.vocab)
    matcher.consume_bytes(UTF8_PREFIX)
    pieces = {tok.vocab[t] for t in allowed_ids(matcher).tolist()}
    assert b"\xc3" in pieces and "ñ".encode() in pieces
    matcher.consume_bytes(b"\xc3")
    assert [tok.vocab[t] for t in allowed_ids(matcher).tolist()] == [b"\xb1"]


texts_strategy = st.lists(st.text(alphabet="ab\u00f1c{}\"", min_size=1, max_size=5),
                          min_size=1, max_size=5, unique=True).filter(
    lambda ts: not any(a != b and b.startswith(a) for a in ts for b in ts))


@settings(max_examples=60, deadline=None)
@given(texts_strategy)
def test_counts_equal_plain_recursion_and_dynamic_programming(texts):
    oracle = FiniteGrammar(texts, TINY)
    counts = count_language(compile_choice(texts), TINY)
    assert counts.texts == oracle.path_counts()
    assert counts.paths == sum(oracle.path_counts().values())
    assert counts.positions == oracle.positions()
    assert counts.n_texts == len(oracle.texts)
    assert counts.longest_bytes == max(map(len, oracle.texts))
    for prefix in prefixes(oracle.texts):
        matcher = compile_choice(texts).matcher(TINY)
        matcher.consume_bytes(prefix)
        assert forced_kind(matcher, allowed_ids(matcher)) == oracle.forced_kind(prefix)


def test_forced_split_differs_from_a_chain_that_still_branches():
    # after "" the allowed tokens are a, ab, abc: a chain, but "ab" may go on with "c" or "d"
    matcher = compile_choice(["abc", "abd"]).matcher(TINY)
    assert forced_kind(matcher, allowed_ids(matcher)) is None
    matcher = compile_choice(["abc"]).matcher(TINY)
    assert forced_kind(matcher, allowed_ids(matcher)) == "split"
    matcher.consume_bytes(b"ab")
    assert forced_kind(matcher, allowed_ids(matcher)) == "token"


def test_every_grammar_kind_with_a_finite_language_is_counted_alike(tok):
    """The same two texts as a choice, a regex, an enum schema and a GBNF grammar."""
    texts = ['"sí"', '"no"']
    kinds = [compile_choice(texts), compile_regex('"(sí|no)"'), compile_json_schema({"enum": ["sí", "no"]}),
             compile_cfg('root ::= "\\"" answer "\\""\nanswer ::= "sí" | "no"')]
    oracle = FiniteGrammar(texts, tok.vocab)
    for grammar in kinds:
        counts = count_language(grammar, tok.vocab)
        assert counts.texts == oracle.path_counts(), grammar
        assert counts.positions == oracle.positions(), grammar


def test_end_rule_with_texts_that_are_prefixes_of_others():
    grammar = compile_choice(["ab", "abc"])
    assert count_paths(grammar, TINY) == {b"abc": 3}  # a|b|c, ab|c, abc: "ab" never ends
    stop = count_language(grammar, TINY, stop_at_accept=True)
    # stopping at the first complete text: "ab" (a|b, ab), and "abc" only by the token that
    # jumps over the end of "ab"
    assert stop.texts == {b"ab": 2, b"abc": 1}


def test_infinite_language_is_refused_at_once():
    with pytest.raises(LanguageTooLarge, match="infinite") as info:
        count_language(compile_regex("a(b)*c"), TINY)
    assert info.value.limit == "finite language" and info.value.count is None
    cfg = compile_cfg('root ::= "(" root ")" | "x"')  # Earley: every depth a new state
    with pytest.raises(LanguageTooLarge, match="max_tokens=30") as info:
        count_language(cfg, BYTES, max_tokens=30)
    assert info.value.limit == "max_tokens"


def test_limits_name_the_keyword_and_the_count():
    grammar = compile_regex("[ab]{6}")  # 64 texts over single bytes
    with pytest.raises(LanguageTooLarge, match="has 64 token paths, more than max_paths=10") as info:
        count_language(grammar, BYTES, max_paths=10)
    assert (info.value.limit, info.value.value, info.value.count) == ("max_paths", 10, 64)
    with pytest.raises(LanguageTooLarge, match="max_positions=20"):
        count_positions(grammar, BYTES, max_positions=20)
    assert count_positions(grammar, BYTES) == 2 + 4 + 8 + 16 + 32


def test_counting_does_not_depend_on_the_number_of_paths():
    """Memoised on automaton states: 2^40 paths are counted without visiting them."""
    counts = count_language(compile_regex("[ab]{40}"), BYTES, max_paths=2 ** 41,
                            max_positions=2 ** 41, texts=False)
    assert counts.paths == 2 ** 40 and counts.longest_tokens == 40
