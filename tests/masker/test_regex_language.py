"""The regex compiler accepts exactly the texts Python's ``re`` (ASCII flag) fully matches."""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from masker import GrammarSyntaxError, UnsupportedFeature, compile_regex
from tests.masker.strategies import REGEXES, TEXTS


def random_texts(grammar, rng: random.Random, n: int, max_len: int = 12) -> list[bytes]:
    """Texts our automaton accepts, found by random byte walks that stop when accepting."""
    dfa, out = grammar.automaton, []
    for _ in range(n * 4):
        state, data = dfa.start(), bytearray()
        for _ in range(max_len * 4):
            if dfa.is_accepting(state) and (rng.random() < 0.3 or not dfa.can_continue(state)):
                out.append(bytes(data))
                break
            options = [b for b in range(256) if dfa.step(state, b) is not None]
            if not options:
                break
            b = rng.choice(options)
            data.append(b)
            state = dfa.step(state, b)
        if len(out) >= n:
            break
    return out


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pattern=REGEXES, texts=st.lists(TEXTS, max_size=8), seed=st.integers(0, 2**16))
def test_same_language_as_python_re(pattern, texts, seed):
    grammar = compile_regex(pattern)
    compiled = re.compile(pattern, re.ASCII)
    for text in texts:
        assert grammar.accepts(text) == bool(compiled.fullmatch(text)), (pattern, text)
    for data in random_texts(grammar, random.Random(seed), 5):
        text = data.decode("utf-8")  # raises if the DFA let invalid UTF-8 through
        assert compiled.fullmatch(text), (pattern, text)


@pytest.mark.parametrize("pattern, yes, no", [
    (r"a*", ["", "a", "aaaa"], ["b", "ab"]),
    (r"1|12|123", ["1", "12", "123"], ["", "2", "1234", "13"]),
    (r"-?\d+(\.\d+)?", ["0", "-12", "3.14"], ["-", "1.", ".5", "١"]),
    (r"[^\n]*", ["ñ«»—😀", "", "\t"], ["a\nb"]),
    (r"\w+\s\W", ["ab_1 !", "x\t«"], ["ñ !", "ab !a"]),
    (r"^(señor|señora)$", ["señor", "señora"], ["seño", "señorr", "^señor"]),
    (r"\x41\u00f1\U0001F600\N{EM DASH}", ["Añ😀—"], ["Añ😀-"]),
    (r"[\]\-a]{2}", ["]-", "a]"], ["b]", "]"]),
    (r"a{2,3}?b{,2}", ["aa", "aaabb"], ["a", "aaaa", "aabbb"]),
    (r"{x}|a{", ["{x}", "a{"], ["x"]),
    (r"(?P<n>ab)(?#comment)c", ["abc"], ["ab"]),
    (r".", ["ñ", "😀", "a"], ["\n", "", "ab"]),
    (r"[^a]", ["\n", "é"], ["a"]),
])
def test_accept_reject_table(pattern, yes, no):
    grammar = compile_regex(pattern)
    for text in yes:
        assert grammar.accepts(text), (pattern, text)
    for text in no:
        assert not grammar.accepts(text), (pattern, text)


def test_only_valid_utf8_is_accepted():
    grammar = compile_regex(r"[^a]")
    assert grammar.accepts("\ud7ff".encode("utf-8"))
    for bad in [b"\xc0\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xff", b"\xc3"]:
        assert not grammar.accepts(bad), bad


def test_large_bounds_stay_linear():
    grammar = compile_regex(r"[a-z]{0,3000}")
    assert grammar.accepts("a" * 3000) and not grammar.accepts("a" * 3001)
    assert grammar.automaton.n_states <= 3002


@pytest.mark.parametrize("pattern, error, pos, words", [
    (r"(a)\1", UnsupportedFeature, 3, "backreference"),
    (r"a(?=b)", UnsupportedFeature, 1, "lookahead"),
    (r"(?<!x)a", UnsupportedFeature, 0, "lookbehind"),
    (r"a^b", UnsupportedFeature, 1, "anchor"),
    (r"a$b", UnsupportedFeature, 1, "anchor"),
    (r"(?i)abc", UnsupportedFeature, 0, "inline flags"),
    (r"\bword", UnsupportedFeature, 0, "word boundary"),
    (r"a*+", UnsupportedFeature, 2, "possessive"),
    (r"\p{L}", UnsupportedFeature, 0, "Unicode property"),
    (r"*a", GrammarSyntaxError, 0, "nothing to repeat"),
    (r"(ab", GrammarSyntaxError, 0, "missing ')'"),
    (r"ab)", GrammarSyntaxError, 2, "unbalanced"),
    (r"[b-a]", GrammarSyntaxError, 2, "bad character range"),
    (r"[abc", GrammarSyntaxError, 0, "missing ']'"),
    (r"a{3,1}", GrammarSyntaxError, 1, "min is greater"),
    (r"\xZZ", GrammarSyntaxError, 0, "hex digits"),
    (r"\q", GrammarSyntaxError, 0, "bad escape"),
    (r"a**", GrammarSyntaxError, 2, "multiple repeat"),
    (r"[^\x00-\U0010ffff]", GrammarSyntaxError, 0, "matches no text"),
])
def test_errors_name_position_and_reason(pattern, error, pos, words):
    with pytest.raises(error) as info:
        compile_regex(pattern)
    assert info.value.pos == pos
    assert words in str(info.value)
    lines = str(info.value).splitlines()
    assert lines[1].strip() == pattern and lines[2].index("^") == lines[1].index(pattern) + pos
    assert "fix:" in str(info.value)


@pytest.mark.parametrize("pattern, n_states", [
    ("(a|b)*c", 2), ("(ab|a)(bc|c)?", 5), ("a*|b*", 3), ("(x|xy|xyz)", 4),
    ("[a-z]{0,30}", 31),
])
def test_dfa_is_minimal(pattern, n_states):
    """Equivalent prefixes share one state (and so one cached mask)."""
    assert compile_regex(pattern).automaton.n_states == n_states


def test_large_bound_is_a_counter_not_states():
    """Above 32 the bound is a counter beside the DFA state (counted.py): the DFA keeps the
    loop's few states (start, loop, body, end marker states), expanded it would need 3001."""
    from masker.regex_fsm import ast_to_dfa
    from masker.regex_parse import parse_regex
    assert compile_regex("[a-z]{0,3000}").automaton.n_states <= 5
    assert ast_to_dfa(parse_regex("[a-z]{0,3000}"), count_above=None).n_states == 3001


@pytest.mark.parametrize("pattern", ["a{,}", "a{,}b", "a{}", "a{,2}", "a{2,}", "a{ 2}", "a{2", "a{,x}", "(ab){,}c"])
@pytest.mark.parametrize("text", ["", "a", "aa", "aaa", "a{,}", "a{}", "a{,}b", "ab", "b", "a{ 2}", "a{2",
                                  "a{,x}", "ababc", "c"])
def test_braces_are_read_as_pythons_re_reads_them(pattern, text):
    """«{,}» is the repetition {0,} and «{}» two literal characters, as in Python's re (a property
    test of the «Laboratorio» found the masker reading «{,}» as text)."""
    assert compile_regex(pattern).accepts(text.encode()) == (re.fullmatch(pattern, text) is not None)
