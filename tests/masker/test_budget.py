"""Budget-aware masks (``Matcher.mask(budget=k)``, ``set_budget``, ``min_tokens_to_finish``)
against brute force: every token sequence of a small vocabulary, walked with the plain mask.

The oracle knows nothing of ``budget.py``: the shortest completion of a prefix is found by
trying every token sequence up to a length (prefixes deduplicated by their bytes only), and a
token is allowed under budget k when the plain mask allows it and some sequence of at most
k - 1 more tokens then completes the text.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from masker import (BudgetTooSmall, compile_cfg, compile_choice, compile_json_schema,
                    compile_regex)
from masker.counted import CountedDfa
from masker.dfa import Dfa
from masker.earley import EarleyAutomaton

from tests.masker.strategies import REGEXES
from tests.masker.vocabs import trained_vocab

SMALL_VOCAB = [s.encode() for s in ["a", "b", "ab", "abc", "1", "12", "2", "-", "(", ")", "x",
                                    "((", "))", "[", "]", "{", "}", '"', '{"', '":', ",", "0", "n", "null", "r",
                                    "ñ", "\xf1o", "s\xed", "no"]] + [b"\xc3", b"\xb1"]


def brute_min_tokens(matcher, limit: int) -> int | None:
    """Shortest completion in tokens, at most ``limit``, by breadth-first search over token
    sequences (plain masks); None when none fits."""
    level = {matcher.prefix_bytes: matcher}
    for depth in range(limit + 1):
        if any(m.is_accepting() for m in level.values()):
            return depth
        if depth == limit:
            return None
        nxt = {}
        for m in level.values():
            for t in m.allowed_token_ids():
                m2 = m.copy()
                m2.consume(t)
                nxt.setdefault(m2.prefix_bytes, m2)
        level = nxt
        if not level:
            return None
    return None


def brute_budget_mask(matcher, budget: int) -> set[int]:
    if budget <= 0:
        return set()
    out = set()
    for t in matcher.allowed_token_ids():
        m2 = matcher.copy()
        m2.consume(t)
        if brute_min_tokens(m2, budget - 1) is not None:
            out.add(t)
    return out


def grammar_cases():
    recursive = {"$defs": {"c": {"type": "object", "properties": {
        "r": {"type": "array", "items": {"$ref": "#/$defs/c"}, "maxItems": 2}},
        "required": ["r"], "additionalProperties": False}}, "$ref": "#/$defs/c"}
    return [
        pytest.param(compile_choice(["ab", "abc", "no", "12-2"]), Dfa, id="choice"),
        pytest.param(compile_regex(r"(ab|1)+-?2{0,3}"), Dfa, id="regex"),
        pytest.param(compile_regex(r"a{2,40}b"), CountedDfa, id="counted"),
        pytest.param(compile_json_schema({"enum": ["no", "si", None]}), Dfa, id="json_enum"),
        pytest.param(compile_json_schema({"type": "array", "items": {"enum": [1, 12]},
                                          "maxItems": 40}), CountedDfa, id="json_counted"),
        pytest.param(compile_json_schema(recursive), EarleyAutomaton, id="json_recursive"),
        pytest.param(compile_cfg('root ::= "a" root "b" | "x"'), EarleyAutomaton, id="cfg_earley"),
        pytest.param(compile_cfg('root ::= "(" root ")" | "ab" | ""'), EarleyAutomaton,
                     id="cfg_parens"),
        pytest.param(compile_cfg('root ::= ("a" | "12")+ "-"'), Dfa, id="cfg_dfa"),
    ]


def walks(grammar, vocab, n_walks: int = 4, length: int = 4, seed: int = 0):
    """Matchers at the start and along a few random plain token walks."""
    rng = random.Random(seed)
    out = [grammar.matcher(vocab)]
    for _ in range(n_walks):
        m = grammar.matcher(vocab)
        for _ in range(length):
            ids = m.allowed_token_ids()
            if not ids:
                break
            m.consume(rng.choice(ids))
            out.append(m.copy())
    return out


@pytest.mark.parametrize("grammar, kind", grammar_cases())
def test_budget_mask_equals_brute_force(grammar, kind):
    assert type(grammar.automaton) is kind  # each route is covered
    restricted = 0  # cases where the budget removed tokens the plain mask allows
    for matcher in walks(grammar, SMALL_VOCAB):
        for budget in range(0, 6):
            reference = brute_budget_mask(matcher, budget)
            if not reference and not matcher.is_accepting():
                with pytest.raises(BudgetTooSmall):
                    matcher.mask(budget=budget)
                continue
            got = set(matcher.mask(budget=budget).nonzero()[0].tolist())
            assert got == reference, (matcher.prefix_bytes, budget)
            restricted += budget > 0 and got != set(matcher.allowed_token_ids())
    assert restricted > 0


@pytest.mark.parametrize("grammar, kind", grammar_cases())
def test_min_tokens_equals_brute_force(grammar, kind):
    for matcher in walks(grammar, SMALL_VOCAB, seed=1):
        assert matcher.min_tokens_to_finish(7) == brute_min_tokens(matcher, 7), matcher.prefix_bytes


@pytest.mark.parametrize("grammar, kind", grammar_cases())
def test_budgeted_walks_always_finish(grammar, kind):
    """Any walk that takes only budget-allowed tokens ends complete within the budget."""
    rng = random.Random(2)
    start = grammar.matcher(SMALL_VOCAB)
    need = start.min_tokens_to_finish(40)
    assert need is not None
    for budget in (need, need + 1, need + 3):
        for _ in range(10):
            m = grammar.matcher(SMALL_VOCAB)
            m.set_budget(budget)
            while not m.is_finished():
                m.consume(rng.choice(m.allowed_token_ids()))
            assert m.is_accepting() and len(m.token_ids) <= budget and m.budget >= 0


def test_budget_too_small_at_the_start_names_the_need():
    grammar = compile_regex(r"\d{4}-\d{2}-\d{2}")
    m = grammar.matcher(SMALL_VOCAB)
    need = brute_min_tokens(m, 12)
    with pytest.raises(BudgetTooSmall) as info:
        m.set_budget(need - 1)
    assert info.value.needed == need and info.value.budget == need - 1
    assert f"needs {need} tokens" in str(info.value) and "budget is" in str(info.value)
    m.set_budget(need)  # fits exactly: accepted
    assert m.budget == need


def test_unreachable_completion_and_bad_budget():
    grammar = compile_regex("ab")
    m = grammar.matcher([b"a"])  # no "b" token: no completion at all
    assert m.min_tokens_to_finish(10) is None
    with pytest.raises(BudgetTooSmall) as info:
        m.set_budget(5)
    assert info.value.needed is None
    with pytest.raises(ValueError):
        grammar.matcher(SMALL_VOCAB).mask(budget=-1)


def test_consume_refuses_a_token_that_breaks_the_budget():
    m = compile_regex("a+b").matcher(SMALL_VOCAB)
    m.set_budget(2)
    m.consume(SMALL_VOCAB.index(b"a"))
    with pytest.raises(Exception):
        m.consume(SMALL_VOCAB.index(b"a"))  # then "b" would need a third token
    m.consume(SMALL_VOCAB.index(b"b"))
    assert m.is_finished() and m.budget == 0


def test_distances_are_cached_per_grammar_and_vocabulary():
    grammar = compile_regex(r"(ab|1)+")
    a, b = grammar.matcher(SMALL_VOCAB), grammar.matcher(SMALL_VOCAB)
    a.mask(budget=3)
    assert a._distances() is b._distances()
    assert grammar.matcher(SMALL_VOCAB[:5])._index.distances is None  # another vocabulary


@pytest.mark.skipif(trained_vocab() is None, reason="trained vocabulary missing")
def test_trained_vocabulary_json_schema():
    """The lesson's record schema under the model's 512 tokens: a random budget-aware walk of
    the shortest budget always ends on valid JSON."""
    import json
    vocab = trained_vocab()
    schema = {"type": "object", "properties": {"nombre": {"type": "string", "maxLength": 30},
                                               "edad": {"type": "integer"}},
              "required": ["nombre", "edad"], "additionalProperties": False}
    grammar = compile_json_schema(schema)
    rng = random.Random(3)
    need = grammar.matcher(vocab).min_tokens_to_finish()
    for _ in range(5):
        m = grammar.matcher(vocab)
        m.set_budget(need + 2)
        while not m.is_finished():
            m.consume(rng.choice(m.allowed_token_ids()))
        assert len(m.token_ids) <= need + 2
        json.loads(m.prefix_bytes)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pattern=REGEXES, budget=st.integers(0, 4), seed=st.integers(0, 3))
def test_random_regexes_budget_mask(pattern, budget, seed):
    grammar = compile_regex(pattern)
    vocab = [bytes([c]) for c in b"ab12 _."] + ["ñ".encode(), "é".encode(), b"ab", b"12",
                                                  "😀".encode(), b"\xc3", b"\xb1"]
    for matcher in walks(grammar, vocab, n_walks=2, length=3, seed=seed):
        reference = brute_budget_mask(matcher, budget)
        if not reference and not matcher.is_accepting():
            with pytest.raises(BudgetTooSmall):
                matcher.mask(budget=budget)
        else:
            assert set(matcher.mask(budget=budget).nonzero()[0].tolist()) == reference
        assert matcher.min_tokens_to_finish(4) == brute_min_tokens(matcher, 4)
