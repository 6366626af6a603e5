"""Bounded repetition as a counter beside a DFA state (``counted.py``, issue 12 part 2).

The counted automaton must be the expanded one in disguise: on random regexes, counted with a
tiny threshold (every repetition bound above 1 counted), it accepts the same texts, gives the
same masks (trie walk, brute force and the expanded DFA's masks along random walks, through
the cache that clamps the counts) on vocabularies with multi-byte tokens. Large bounds are
checked against the JSON Schema validator and llguidance, and their cost is counted: DFA states
and mask computations do not grow with the bound.
"""
from __future__ import annotations

import json
import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st
from test_json_schema_oracle import walk_compare
from test_json_schema_support import validator
from test_json_schema_tables import accepted

from masker import compile_json_schema, compile_regex
from masker.counted import CountedDfa
from masker.errors import LimitExceeded
from masker.matcher import Grammar
from masker.regex_fsm import ast_to_dfa
from masker.regex_parse import parse_regex
from masker.trie import brute_force_mask
from tests.masker.oracle import json_schema_lark
from tests.masker.strategies import REGEXES, TEXTS
from tests.masker.vocabs import BYTE_VOCAB, MIXED_VOCAB, TINY_VOCAB, trained_vocab

COUNTED_QUANTIFIERS = ["{2,5}", "{3}", "{0,4}", "{2,}", "{1,3}", "{4,6}"]


@st.composite
def counted_regexes(draw):
    """A random regex with one or two bounded repetitions, maybe nested."""
    inner = draw(REGEXES)
    q1, q2 = draw(st.sampled_from(COUNTED_QUANTIFIERS)), draw(st.sampled_from(COUNTED_QUANTIFIERS))
    other = draw(REGEXES)
    shape = draw(st.integers(0, 3))
    return [f"(?:{inner}){q1}", f"(?:{inner}){q1}(?:{other}){q2}",
            f"(?:(?:{inner}){q1},){q2}", f"(?:{inner}){q1}|(?:{other}){q2}"][shape]


def twins(pattern):
    """(counted, expanded) grammars of ``pattern``; an example whose expanded DFA passes the
    state limit (nested repetitions of large classes) is rejected: it has no twin."""
    node = parse_regex(pattern)
    counted = Grammar(ast_to_dfa(node, count_above=1), "regex", pattern)
    try:
        expanded = Grammar(ast_to_dfa(node, count_above=None), "regex", pattern)
    except LimitExceeded:
        reject()
    return counted, expanded


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pattern=counted_regexes(), texts=st.lists(TEXTS, max_size=10))
def test_counted_accepts_what_expanded_accepts(pattern, texts):
    counted, expanded = twins(pattern)
    rng = random.Random(pattern)
    for text in texts:
        assert counted.accepts(text) == expanded.accepts(text), (pattern, text)
    for _ in range(5):  # texts of the language, from random walks of the expanded DFA
        m = expanded.matcher(BYTE_VOCAB)
        for _ in range(30):
            ids = np.flatnonzero(m.mask())
            if len(ids) == 0 or (m.is_accepting() and rng.random() < 0.2):
                break
            m.consume(int(rng.choice(ids)))
        assert counted.accepts(m.prefix_bytes) == m.is_accepting(), (pattern, m.prefix_bytes)


VOCABS = [MIXED_VOCAB, TINY_VOCAB] + ([trained_vocab()] if trained_vocab() else [])


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pattern=counted_regexes(), seed=st.integers(0, 2**16),
       which=st.integers(0, len(VOCABS) - 1))
def test_counted_masks_equal_expanded_masks(pattern, seed, which):
    """Along random walks (twice, so the second walk reads masks cached under clamped keys):
    cached mask == brute force on the counted automaton == the expanded DFA's mask, and the
    accepting bit agrees."""
    counted, expanded = twins(pattern)
    if not isinstance(counted.automaton, CountedDfa):
        return
    vocab, rng = VOCABS[which], random.Random(seed)
    for _ in range(2):
        a, b = counted.matcher(vocab), expanded.matcher(vocab)
        for _ in range(25):
            mask = a.mask()
            np.testing.assert_array_equal(mask, b.mask(), err_msg=f"{pattern} {a.prefix_bytes!r}")
            np.testing.assert_array_equal(mask, brute_force_mask(
                counted.automaton, a.state, vocab))
            assert a.is_accepting() == b.is_accepting()
            ids = np.flatnonzero(mask)
            if len(ids) == 0:
                break
            t = int(rng.choice(ids))
            a.consume(t)
            b.consume(t)


def test_long_string_mask_near_the_end_of_the_count():
    """maxLength 40 > 32 is counted: walking 'a's token by token, the mask allows the longer
    tokens only while the remaining count can hold them, and the closing quote always."""
    vocab = [b'"', b"a", b"aa", b"aaaa", b'a"', b'aa"']
    g = compile_json_schema({"type": "string", "minLength": 35, "maxLength": 40})
    assert isinstance(g.automaton, CountedDfa)
    m = g.matcher(vocab)
    m.consume(0)
    for n in range(41):
        allowed = {vocab[i] for i in np.flatnonzero(m.mask())}
        expect = {t for t in vocab if n + t.count(b"a") <= 40 and (
            not t.endswith(b'"') or n + t.count(b"a") >= 35)}
        assert allowed == expect, n
        assert m.is_accepting() is False
        if n < 40:
            m.consume(1)
    m.consume(0)
    assert m.is_accepting() and not m.can_continue()


LONG = {
    "max_length_8192": ({"type": "string", "maxLength": 8192},
                        ['"' + "a" * 8192 + '"', '""', '"' + "ñ" * 8192 + '"',
                         '"' + "\\n" * 8192 + '"'],
                        ['"' + "a" * 8193 + '"', '"' + "\\n" * 8193 + '"']),
    "min_length_40": ({"type": "string", "minLength": 40},
                      ['"' + "x" * 40 + '"', '"' + "é" * 100 + '"'], ['"' + "x" * 39 + '"']),
    "max_items_10000": ({"type": "array", "items": {"type": "integer"}, "maxItems": 10000},
                        ["[]", "[" + ",".join(["7"] * 10000) + "]"],
                        ["[" + ",".join(["7"] * 10001) + "]"]),
    "nested": ({"type": "array", "items": {"type": "string", "maxLength": 50}, "minItems": 34,
                "maxItems": 40},
               ["[" + ",".join(['"' + "b" * 50 + '"'] * 34) + "]"],
               ["[" + ",".join(['"' + "b" * 50 + '"'] * 33) + "]",
                "[" + ",".join(['"' + "b" * 51 + '"'] * 34) + "]",
                "[" + ",".join(['"b"'] * 41) + "]"]),
}


@pytest.mark.parametrize("name", sorted(LONG))
def test_large_bounds_tables(name):
    schema, yes, no = LONG[name]
    grammar, check = compile_json_schema(schema), validator(schema)
    assert grammar.syntax == "regex" and isinstance(grammar.automaton, CountedDfa)
    vocab = trained_vocab() or BYTE_VOCAB
    for text in yes:
        assert check.is_valid(json.loads(text))
        assert accepted(grammar, vocab, text), text[:60]
    for text in no:
        assert not check.is_valid(json.loads(text))
        assert not accepted(grammar, vocab, text), text[:60]


ORACLE = {
    "str_33_40": {"type": "object", "properties": {
        "s": {"type": "string", "minLength": 33, "maxLength": 40}}, "required": ["s"],
        "additionalProperties": False},
    "items_34": {"type": "array", "items": {"enum": ["a", "bb", 1]}, "minItems": 2,
                 "maxItems": 34},
}


@pytest.mark.parametrize("vocab", [pytest.param(BYTE_VOCAB, id="bytes256")] + (
    [pytest.param(trained_vocab(), id="trained512")] if trained_vocab() else []))
@pytest.mark.parametrize("name", sorted(ORACLE))
def test_counted_allowed_sets_match_llguidance(name, vocab):
    schema = ORACLE[name]
    grammar = compile_json_schema(schema)
    assert isinstance(grammar.automaton, CountedDfa)
    states, bad, _ = walk_compare(grammar, json_schema_lark(schema), vocab, seed=3, n_walks=6,
                                  max_steps=80)
    assert bad == []
    assert states >= 40


def test_cost_does_not_grow_with_the_bound():
    """Work counted, not timed: DFA states and distinct mask computations along a 3,000-token
    walk are the same for maxLength 100 and 8,192 (the mask cache keys clamp the count)."""
    vocab = trained_vocab() or BYTE_VOCAB
    sizes, misses = [], []
    for n in (100, 8192):
        g = compile_json_schema({"type": "string", "maxLength": n})
        sizes.append(g.automaton.n_states)
        rng, m = random.Random(0), g.matcher(vocab)
        m.consume_bytes('"')
        for _ in range(3000):
            inside = [i for i in np.flatnonzero(m.mask()) if b'"' not in vocab[i]]
            if not inside:  # the count is full: start another string
                m = g.matcher(vocab)
                m.consume_bytes('"')
                continue
            m.consume(int(rng.choice(inside)))
        misses.append(len(m._index.masks))  # masks computed: one per distinct mask key
    assert sizes[0] == sizes[1] and sizes[1] < 40
    assert misses[1] <= misses[0] + 5 and misses[1] < 200, misses


def test_huge_bound_compiles_at_once():
    """`[a-z]{1,65536}` used to be refused after seconds; counted, it is a 4-state DFA."""
    g = compile_regex("[a-z]{1,65536}")
    assert g.automaton.n_states <= 5
    assert g.accepts("a" * 65536) and not g.accepts("a" * 65537) and not g.accepts("")
