"""The trie walk gives the same mask as the brute-force reference, on random grammars and walks."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from masker import compile_choice, compile_regex
from masker.automaton import Automaton
from masker.trie import TokenTrie, brute_force_mask, trie_mask
from tests.masker.strategies import CHOICE_SETS, REGEXES
from tests.masker.vocabs import MIXED_VOCAB, TINY_VOCAB, trained_vocab

VOCABS = [MIXED_VOCAB, TINY_VOCAB] + ([trained_vocab()] if trained_vocab() else [])


def walk_and_compare(grammar, vocab, rng: random.Random, steps: int = 12) -> int:
    """Random token walk; at every prefix the trie mask must equal the brute-force mask.
    Returns the number of states compared."""
    matcher = grammar.matcher(vocab)
    compared = 0
    for _ in range(steps):
        fast, slow = matcher.mask(), matcher.brute_force_mask()
        np.testing.assert_array_equal(fast, slow, err_msg=f"{grammar} after {matcher.prefix_bytes!r}")
        compared += 1
        allowed = np.flatnonzero(fast)
        if len(allowed) == 0:
            break
        matcher.consume(int(rng.choice(allowed.tolist())))
    return compared


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pattern=REGEXES, seed=st.integers(0, 2**16), which=st.integers(0, len(VOCABS) - 1))
def test_trie_equals_brute_force_on_random_regexes(pattern, seed, which):
    walk_and_compare(compile_regex(pattern), VOCABS[which], random.Random(seed))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=CHOICE_SETS, seed=st.integers(0, 2**16), which=st.integers(0, len(VOCABS) - 1))
def test_trie_equals_brute_force_on_random_choices(texts, seed, which):
    grammar = compile_choice(texts)
    walk_and_compare(grammar, VOCABS[which], random.Random(seed))
    for text in texts:  # every text of the set can be produced byte by byte
        matcher = grammar.matcher(VOCABS[which])
        matcher.consume_bytes(text)
        assert matcher.is_accepting()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pattern=REGEXES, seed=st.integers(0, 2**16), which=st.integers(0, len(VOCABS) - 1))
def test_dfa_table_walk_equals_the_generic_step_walk(pattern, seed, which):
    """Dfa.allowed_tokens (table look-ups) gives the same ids, each once, as the base class's
    walk through step()."""
    grammar, vocab, rng = compile_regex(pattern), VOCABS[which], random.Random(seed)
    trie, matcher = TokenTrie(vocab), grammar.matcher(vocab)
    for _ in range(8):
        fast = grammar.automaton.allowed_tokens(matcher.state, trie, 10**9)
        generic = Automaton.allowed_tokens(grammar.automaton, matcher.state, trie, 10**9)
        assert len(set(fast)) == len(fast) and sorted(fast) == sorted(generic)
        if not fast:
            break
        matcher.consume(rng.choice(fast))


def test_trie_shares_prefixes():
    vocab = [b"a", b"ab", b"abc", b"b", b""]
    trie = TokenTrie(vocab)
    assert trie.n_nodes == 5  # root, a, ab, abc, b
    grammar = compile_regex("ab?c?")
    state = grammar.automaton.start()
    expected = [True, True, True, False, False]  # the empty token is never allowed
    assert trie_mask(grammar.automaton, state, trie).tolist() == expected
    assert brute_force_mask(grammar.automaton, state, vocab).tolist() == expected


def test_trie_rejects_non_bytes_vocab():
    with pytest.raises(TypeError, match="vocab\\[1\\] must be bytes"):
        compile_regex("a").matcher([b"a", "b"])
