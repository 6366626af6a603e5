"""Intersection and difference of regular intermediate-form nodes (py/masker/json_schema/
boolean.py), checked against Python's ``re`` on the regex text the emitter writes for the same
nodes: the DFA of a node, the product of two, and the expression or the right-linear rules
written back, on random nodes and random strings (hypothesis)."""
from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from masker.json_schema.boolean import (NotRegular, TooLarge, product, to_dfa, to_expression,
                                        to_ir, to_rules)
from masker.json_schema.emit import to_regex
from masker.json_schema.ir import EMPTY, Lit, Ref, alt, chars, repeat, seq

LEAVES = st.one_of(
    st.sampled_from([Lit("a"), Lit("b"), Lit("ab"), Lit("ñ"), EMPTY]),
    st.sampled_from([chars([(97, 98)]), chars([(98, 99)]), chars([(97, 99), (241, 241)])]),
)


def _extend(children):
    return st.one_of(
        st.lists(children, min_size=2, max_size=3).map(lambda xs: seq(*xs)),
        st.lists(children, min_size=2, max_size=3).map(lambda xs: alt(*xs)),
        st.tuples(children, st.integers(0, 2), st.sampled_from([None, 0, 1, 2])).map(
            lambda t: repeat(t[0], t[1], None if t[2] is None else t[1] + t[2])),
    )


NODES = st.recursive(LEAVES, _extend, max_leaves=6)
TEXTS = st.lists(st.text("abcñ", max_size=6), min_size=1, max_size=12)


def matches(node, text: str) -> bool:
    return re.fullmatch(to_regex({"root": node}), text) is not None


@settings(max_examples=200, deadline=None)
@given(NODES, TEXTS)
def test_the_dfa_of_a_node_accepts_what_its_regex_matches(node, texts):
    dfa = to_dfa(node, {})
    for text in texts:
        assert dfa.accepts(text) == matches(node, text), (to_regex({"root": node}), text)


@settings(max_examples=200, deadline=None)
@given(NODES, NODES, TEXTS)
def test_intersection_and_difference_are_exact(a, b, texts):
    da, db = to_dfa(a, {}), to_dfa(b, {})
    both, only_a = product(da, db, "and"), product(da, db, "minus")
    for text in texts:
        in_a, in_b = matches(a, text), matches(b, text)
        assert both.accepts(text) == (in_a and in_b), text
        assert only_a.accepts(text) == (in_a and not in_b), text


@settings(max_examples=200, deadline=None)
@given(NODES, NODES, TEXTS)
def test_written_back_as_an_expression_the_language_is_the_same(a, b, texts):
    dfa = product(to_dfa(a, {}), to_dfa(b, {}), "minus")
    expression = to_expression(dfa)
    assert expression is not None  # small inputs never reach the size limit
    for text in texts:
        assert matches(expression, text) == dfa.accepts(text), (to_regex({"root": expression}), text)


@settings(max_examples=60, deadline=None)
@given(NODES, NODES, TEXTS)
def test_written_back_as_right_linear_rules_the_language_is_the_same(a, b, texts):
    from masker import compile_cfg
    from masker.json_schema.emit import to_gbnf
    dfa = product(to_dfa(a, {}), to_dfa(b, {}), "minus")
    rules: dict = {}
    rules["root"] = to_rules(dfa, "d", rules)
    grammar = compile_cfg(to_gbnf(rules)) if any(dfa.accepting) else None
    for text in texts:
        assert (grammar is not None and grammar.accepts(text)) == dfa.accepts(text), text


def test_right_linear_rules_spell_the_same_language_when_read_as_a_grammar():
    from masker import compile_cfg
    from masker.json_schema.emit import to_gbnf
    a = repeat(alt(Lit("ab"), chars([(97, 99)])), 0, None)
    b = seq(Lit("a"), repeat(chars([(97, 99)]), 0, None))
    dfa = product(to_dfa(a, {}), to_dfa(b, {}), "minus")
    rules: dict = {}
    rules["root"] = to_rules(dfa, "d", rules)
    grammar = compile_cfg(to_gbnf(rules))
    for text in ["", "b", "bc", "ba", "a", "ab", "cab", "abc", "d"]:
        assert grammar.accepts(text) == (matches(a, text) and not matches(b, text)), text


def test_a_limit_says_how_large_the_automaton_got():
    # (a|b)* a (a|b){12}: the DFA needs 2^13 states
    node = seq(repeat(chars([(97, 98)]), 0, None), Lit("a"), repeat(chars([(97, 98)]), 12, 12))
    with pytest.raises(TooLarge) as info:
        to_dfa(node, {}, max_states=500)
    assert info.value.states == 501 and info.value.limit == 500


def test_a_recursive_rule_is_not_regular():
    rules = {"v": alt(Lit("x"), seq(Lit("["), Ref("v"), Lit("]")))}
    with pytest.raises(NotRegular) as info:
        to_dfa(Ref("v"), rules)
    assert info.value.name == "v"
    with pytest.raises(NotRegular):
        to_dfa(Ref("w"), {"w": Lit("x")}, unfinished=frozenset({"w"}))


def test_to_ir_falls_back_to_rules_past_the_size_limit():
    node = seq(repeat(chars([(97, 98)]), 0, None), Lit("a"), repeat(chars([(97, 98)]), 4, 4))
    dfa = to_dfa(node, {})
    rules: dict = {}
    assert isinstance(to_ir(dfa, "d", rules, max_size=10), Ref) and rules
    assert not isinstance(to_ir(dfa, "e", {}, max_size=10**6), Ref)
