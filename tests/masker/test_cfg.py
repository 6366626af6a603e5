"""compile_cfg: GBNF syntax and errors, accept/reject tables token by token, the DFA and Earley
routes as twins, trie mask vs brute force on random grammars, and the work limits."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from masker import GrammarSyntaxError, LimitExceeded, UnsupportedFeature, compile_cfg
from masker.dfa import Dfa
from masker.earley import EarleyAutomaton
from masker.gbnf_parse import parse_gbnf
from tests.masker.cfg_corpus import GRAMMARS
from tests.masker.naive_cfg import naive_accepts, sample_texts
from tests.masker.strategies import gbnf_grammars
from tests.masker.test_matcher_tables import walk
from tests.masker.test_trie_mask import VOCABS, walk_and_compare
from tests.masker.vocabs import TINY_VOCAB, vocab_params


@pytest.mark.parametrize("vocab", vocab_params() + [pytest.param(TINY_VOCAB, id="tiny")])
@pytest.mark.parametrize("name, gbnf, yes, no", GRAMMARS, ids=[g[0] for g in GRAMMARS])
def test_tables_token_by_token(name, gbnf, yes, no, vocab):
    grammar = compile_cfg(gbnf)
    for text in yes:
        assert grammar.accepts(text), (name, text)
        try:
            ok, matcher = walk(grammar, vocab, text)
        except ValueError:
            continue  # the tiny vocabulary cannot spell this text
        assert ok and matcher.is_accepting(), (name, text)
    for text in no:
        assert not grammar.accepts(text), (name, text)


@pytest.mark.parametrize("name, gbnf, yes, no", GRAMMARS, ids=[g[0] for g in GRAMMARS])
def test_earley_route_accepts_the_same_texts(name, gbnf, yes, no):
    grammar = compile_cfg(gbnf, engine="earley")
    assert isinstance(grammar.automaton, EarleyAutomaton)
    assert all(grammar.accepts(t) for t in yes) and not any(grammar.accepts(t) for t in no)


def test_regular_grammars_become_dfas_and_recursive_ones_earley():
    assert isinstance(compile_cfg('root ::= "a" b\nb ::= [0-9]+').automaton, Dfa)
    assert isinstance(compile_cfg('root ::= "(" root ")" | ""').automaton, EarleyAutomaton)
    with pytest.raises(GrammarSyntaxError, match="recursive"):
        compile_cfg('root ::= "(" root ")" | ""', engine="dfa")


def test_left_recursion_and_end_rule():
    matcher = compile_cfg('root ::= root "+" "1" | "1"').matcher([b"1", b"+", b"+1"])
    assert matcher.allowed_token_ids() == [0]
    matcher.consume(0)
    assert matcher.is_accepting() and matcher.can_continue() and not matcher.is_finished()
    assert matcher.allowed_token_ids() == [1, 2]
    matcher.consume(2)
    assert matcher.prefix_bytes == b"1+1" and matcher.is_accepting()


def test_balanced_parentheses_depth_and_cache():
    grammar = compile_cfg('root ::= "(" root ")" | ""')
    matcher = grammar.matcher([b"(", b")", b"()"])
    for depth in range(30):
        assert matcher.allowed_token_ids() == ([0, 2] if depth == 0 else [0, 1, 2])
        matcher.consume(0)
    for depth in range(30):
        matcher.consume(1)
    assert matcher.is_finished()


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(gbnf=gbnf_grammars(), seed=st.integers(0, 2**16), which=st.integers(0, len(VOCABS) - 1))
def test_trie_equals_brute_force_on_random_grammars(gbnf, seed, which):
    try:
        grammar = compile_cfg(gbnf, engine="earley")
    except GrammarSyntaxError:
        assume(False)  # empty language
    walk_and_compare(grammar, VOCABS[which], random.Random(seed), steps=10)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(gbnf=gbnf_grammars(), seed=st.integers(0, 2**16))
def test_dfa_and_earley_routes_give_equal_masks(gbnf, seed):
    try:
        dfa_grammar = compile_cfg(gbnf, engine="dfa")
    except GrammarSyntaxError:
        assume(False)  # recursive or empty
    except LimitExceeded:
        assume(False)  # (r1){0,10} of alternatives can need more than max_states DFA states
    earley = compile_cfg(gbnf, engine="earley")
    walk_twins(dfa_grammar, earley, VOCABS[0], random.Random(seed), gbnf)


def walk_twins(first, second, vocab, rng, label, steps: int = 10) -> None:
    """One random token walk through two grammars of the same language: at every prefix the
    same mask, the same acceptance and the same can-continue."""
    a, b = first.matcher(vocab), second.matcher(vocab)
    for _ in range(steps):
        np.testing.assert_array_equal(a.mask(), b.mask(), err_msg=f"{label!r} {a.prefix_bytes!r}")
        assert a.is_accepting() == b.is_accepting()
        assert a.can_continue() == b.can_continue()
        allowed = np.flatnonzero(a.mask()).tolist()
        if not allowed:
            break
        token_id = rng.choice(allowed)
        a.consume(token_id)
        b.consume(token_id)


@pytest.mark.parametrize("gbnf, error, pos, words", [
    ('root ::= "a" b', GrammarSyntaxError, 13, "'b' is used but never defined"),
    ('start ::= "a"', GrammarSyntaxError, 0, "no rule named 'root'"),
    ('root ::= "abc', GrammarSyntaxError, 9, "string opened here is not closed"),
    ('root ::= [a-', GrammarSyntaxError, 9, "class opened here is not closed"),
    ('root ::= ("a" | "b"', GrammarSyntaxError, 9, "group opened here is not closed"),
    ('root ::= "a"\nroot ::= "b"', GrammarSyntaxError, 13, "defined twice"),
    ('root ::= "\\q"', GrammarSyntaxError, 10, "unknown escape"),
    ('root ::= "\\xZ1"', GrammarSyntaxError, 10, "hex digits"),
    ('root ::= [z-a]', GrammarSyntaxError, 11, "start is after end"),
    ('root ::= "a"{3,1}', GrammarSyntaxError, 12, "min is greater"),
    ('root ::= <[123]>', UnsupportedFeature, 9, "token references"),
    ('root = "a"', GrammarSyntaxError, 5, "expected '::='"),
    ('root ::= "a" root', GrammarSyntaxError, 0, "matches no text"),
    ('root ::= *"a"', GrammarSyntaxError, 9, "nothing to repeat"),
])
def test_errors_name_position_and_reason(gbnf, error, pos, words):
    with pytest.raises(error) as info:
        compile_cfg(gbnf)
    assert info.value.pos == pos and words in str(info.value)
    assert "^" in str(info.value) and "fix:" in str(info.value)


def test_multiline_rules_and_comments():
    gbnf = """
    # a comment line
    root ::=
        "a"      # first
      | "b" c
    c ::= "c"
          "d"
    """
    grammar = compile_cfg(gbnf)
    assert grammar.accepts("a") and grammar.accepts("bcd") and not grammar.accepts("bc")


def test_earley_item_limit_raises_instead_of_freezing():
    ambiguous = 'root ::= x\nx ::= x x | x x x | "a" | ""'
    grammar = compile_cfg(ambiguous, max_items=300)
    matcher = grammar.matcher([b"a"])
    with pytest.raises(LimitExceeded, match=r"after \d+ bytes of text .*max_items=300"):
        for _ in range(200):
            matcher.consume(0)


def test_trie_step_limit_raises():
    grammar = compile_cfg('root ::= "(" root ")" root | [a-z]*')
    matcher = grammar.matcher([bytes([i]) for i in range(256)], max_trie_steps=100)
    with pytest.raises(LimitExceeded, match="max_trie_steps=100"):
        matcher.mask()


TEXT_CHARS = "ab(),ñ😀cz"


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(gbnf=gbnf_grammars(), texts=st.lists(st.text(TEXT_CHARS, max_size=5), max_size=6),
       seed=st.integers(0, 2**16))
def test_earley_agrees_with_a_naive_recognizer(gbnf, texts, seed):
    """Acceptance equals a naive fixpoint recognizer's on random texts; texts derived at random
    from the grammar are accepted; texts produced by random walks through our own masks are in
    the language."""
    try:
        grammar = compile_cfg(gbnf, engine="earley")
    except GrammarSyntaxError:
        assume(False)  # empty language
    rules, _ = parse_gbnf(gbnf)
    rng = random.Random(seed)
    for text in texts:
        assert grammar.accepts(text) == naive_accepts(rules, text), (gbnf, text)
    for text in sample_texts(rules, rng, 4):  # texts derived from the grammar itself
        assert grammar.accepts(text), (gbnf, text)
    for _ in range(3):
        matcher = grammar.matcher(VOCABS[0])
        for _ in range(6):
            if matcher.is_accepting() and rng.random() < 0.4:
                break
            allowed = np.flatnonzero(matcher.mask()).tolist()
            if not allowed:
                break
            matcher.consume(rng.choice(allowed))
        if matcher.is_accepting():
            assert naive_accepts(rules, matcher.prefix_bytes.decode("utf-8")), gbnf


def test_forgetting_shared_states_keeps_masks_right(monkeypatch):
    """When the hash-consing table is full it restarts empty; masks and acceptance stay right."""
    import masker.earley as earley
    monkeypatch.setattr(earley, "MAX_CANONICAL_STATES", 5)
    grammar = compile_cfg('root ::= "(" root ")" root | [a-c]*')
    fresh = compile_cfg('root ::= "(" root ")" root | [a-c]*')
    matcher = grammar.matcher(TINY_VOCAB)
    rng = random.Random(1)
    for _ in range(40):
        np.testing.assert_array_equal(matcher.mask(), matcher.brute_force_mask())
        matcher.consume(rng.choice(np.flatnonzero(matcher.mask()).tolist()))
    assert matcher.is_accepting() == fresh.accepts(matcher.prefix_bytes)


@pytest.mark.parametrize("lo, hi", [(0, 9), (0, 16), (3, 17), (9, 9), (0, 33), (16, 16),
                                    (12, 40), (5, None), (20, None)])
def test_large_repetition_counts_exactly(lo, hi):
    """Counts above 8 are lowered with doubling helpers (O(log n) rules); they must still
    count exactly, and agree with the DFA route."""
    bound = f"{{{lo},{'' if hi is None else hi}}}"
    gbnf = f'root ::= ("ab" | "c"){bound} "!"'
    earley, dfa = compile_cfg(gbnf, engine="earley"), compile_cfg(gbnf, engine="dfa")
    rng = random.Random(lo)
    for n in range((hi or lo) + 4):
        text = "".join(rng.choice(["ab", "c"]) for _ in range(n)) + "!"
        expected = lo <= n and (hi is None or n <= hi)
        assert earley.accepts(text) == expected == dfa.accepts(text), (gbnf, text)


def test_huge_bound_compiles_small_and_masks_right():
    grammar = compile_cfg('root ::= [a-c]{0,65535} "!"')
    assert len(grammar.automaton.prods) < 100
    assert grammar.accepts("ab" * 1000 + "!") and not grammar.accepts("d!")
    matcher = grammar.matcher(TINY_VOCAB)
    rng = random.Random(0)
    for _ in range(30):
        np.testing.assert_array_equal(matcher.mask(), matcher.brute_force_mask())
        matcher.consume(rng.choice(np.flatnonzero(matcher.mask()).tolist()))


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(gbnf=gbnf_grammars(), seed=st.integers(0, 2**16), which=st.integers(0, len(VOCABS) - 1))
def test_lexemes_and_productions_give_equal_masks(gbnf, seed, which):
    """The parts without recursion as DFAs inside Earley items (lexemes) or lowered to
    productions: the same masks and the same acceptance along random walks."""
    try:
        plain = compile_cfg(gbnf, engine="earley", lexemes=False)
    except GrammarSyntaxError:
        assume(False)  # empty language
    fast = compile_cfg(gbnf, engine="earley")
    walk_twins(plain, fast, VOCABS[which], random.Random(seed), gbnf)


def test_regular_parts_of_a_recursive_grammar_become_lexemes():
    """A string and a number inside a recursive grammar are each one DFA: an Earley set inside
    the string holds one item, and every letter leads to the same set."""
    gbnf = r'''root ::= value
value ::= "[" (value ("," value)*)? "]" | string | [0-9]+ ("." [0-9]+)?
string ::= "\"" [^"\\]* "\""'''
    fast, plain = compile_cfg(gbnf), compile_cfg(gbnf, lexemes=False)
    automaton = fast.automaton
    assert len(automaton.lexemes) == 2 and plain.automaton.lexemes == {}
    assert len(automaton.prods) < len(plain.automaton.prods)
    state = automaton.start()
    for b in b'[["ab':
        state = automaton.step(state, b)
    assert len(state.lexes) == 1 and not state.scans
    assert automaton.step(state, ord("c")) is automaton.step(state, ord("x"))
    assert fast.accepts('[["a b",1.5],[]]') and not fast.accepts('[["a"b]]')


@settings(max_examples=200, deadline=None)
@given(masks=st.lists(st.integers(0, 2**256 - 1) | st.sampled_from([1 << b for b in range(256)]),
                      max_size=8),
       parts=st.lists(st.lists(st.integers(0, 3), min_size=256, max_size=256), max_size=2))
def test_byte_classes_keep_apart_every_byte_some_terminal_tells_apart(masks, parts):
    from masker.earley import byte_classes
    cls = byte_classes(masks, parts)
    for b1 in range(0, 256, 7):
        for b2 in range(256):
            same = all(m >> b1 & 1 == m >> b2 & 1 for m in masks) and all(
                p[b1] == p[b2] for p in parts)
            assert (cls[b1] == cls[b2]) == same, (b1, b2)
