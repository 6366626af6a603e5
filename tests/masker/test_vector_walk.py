"""The vectorized trie walk (``TrieArrays.walk_dfa``: NumPy, a trie level at a time) gives the
same tokens as the Python walk and as brute force: on random DFAs, regexes and JSON schemas
(DFAs and Earley's lexemes), at 256 and 512 tokens, and on ``cl100k_base`` and ``o200k_base``
at the states a tokenized JSON answer passes through."""
from __future__ import annotations

import json
import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from masker import compile_json_schema, compile_regex
from masker.dfa import Dfa
from masker.trie import TokenTrie, brute_force_mask, trie_mask
from tests.masker.strategies import REGEXES
from tests.masker.vocabs import BYTE_VOCAB, MIXED_VOCAB, trained_vocab

SMALL = [BYTE_VOCAB, MIXED_VOCAB] + ([trained_vocab()] if trained_vocab() else [])
_TRIES: dict[int, tuple[TokenTrie, TokenTrie]] = {}


def tries(vocab) -> tuple[TokenTrie, TokenTrie]:
    """The vocabulary's trie twice: walked in Python, and vectorized."""
    key = id(vocab)
    if key not in _TRIES:
        python, vector = TokenTrie(vocab), TokenTrie(vocab)
        python.vectorized, vector.vectorized = False, True
        _TRIES[key] = (python, vector)
    return _TRIES[key]


def assert_walks_agree(automaton, state, vocab, brute: bool = True) -> np.ndarray:
    """Python walk = vectorized walk (small levels in Python, as by default) = vectorized walk
    with NumPy at every level (``SMALL_LEVEL = 0``) [= brute force]."""
    import masker.trie as trie_module
    python, vector = tries(vocab)
    slow = trie_mask(automaton, state, python, max_steps=10**8)  # no limit for the reference
    fast = trie_mask(automaton, state, vector)
    np.testing.assert_array_equal(fast, slow)
    saved, trie_module.SMALL_LEVEL = trie_module.SMALL_LEVEL, 0
    try:
        # the caches keyed by state hold walks made with the small levels: walk afresh
        getattr(automaton, "_inside_cache", {}).clear()
        np.testing.assert_array_equal(trie_mask(automaton, state, vector), slow)
    finally:
        trie_module.SMALL_LEVEL = saved
        getattr(automaton, "_inside_cache", {}).clear()
    if brute:
        np.testing.assert_array_equal(fast, brute_force_mask(automaton, state, vocab))
    return fast


@st.composite
def random_dfas(draw):
    """A DFA with random moves (-1: dead) over a few byte classes; states need not be alive."""
    n_states = draw(st.integers(1, 6))
    n_classes = draw(st.integers(1, 4))
    table = [[draw(st.integers(-1, n_states - 1)) for _ in range(n_classes)]
             for _ in range(n_states)]
    cuts = sorted(draw(st.lists(st.integers(1, 255), max_size=n_classes - 1, unique=True)))
    byte_class, c = [], 0
    for b in range(256):
        if c < len(cuts) and b == cuts[c]:
            c += 1
        byte_class.append(c)
    accepting = [draw(st.booleans()) for _ in range(n_states)]
    return Dfa(table, accepting, byte_class), draw(st.integers(0, n_states - 1))


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(dfa_state=random_dfas(), which=st.integers(0, len(SMALL) - 1))
def test_random_dfas(dfa_state, which):
    dfa, state = dfa_state
    assert_walks_agree(dfa, state, SMALL[which])


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(pattern=REGEXES, seed=st.integers(0, 2**16), which=st.integers(0, len(SMALL) - 1))
def test_random_regexes_along_a_walk(pattern, seed, which):
    walk_agreeing(compile_regex(pattern).automaton, SMALL[which], random.Random(seed), 6)


def walk_agreeing(automaton, vocab, rng: random.Random, steps: int) -> None:
    """A random walk of ``steps`` tokens through the mask, the walks compared at every state."""
    state = automaton.start()
    for _ in range(steps):
        mask = assert_walks_agree(automaton, state, vocab)
        allowed = np.flatnonzero(mask)
        if not allowed.size:
            break
        for b in vocab[int(rng.choice(allowed.tolist()))]:
            state = automaton.step(state, b)


SCHEMAS = [
    {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
     "required": ["name", "age"]},
    {"type": "array", "items": {"type": "object", "properties": {"id": {"type": "integer"},
                                                                  "tags": {"type": "array",
                                                                           "items": {"type": "string"}}}}},
    {"$defs": {"node": {"type": "object", "properties": {
        "label": {"type": "string"},
        "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}},
     "$ref": "#/$defs/node"},
    {"enum": ["rojo", "verde", "azul", "«amarillo»"]},
    # counted repetitions (bounds above 32): a CountedDfa, and inside Earley (any extra value)
    {"type": "object", "properties": {"s": {"type": "string", "maxLength": 40}},
     "required": ["s"], "additionalProperties": False},
    {"type": "object", "properties": {"a": {"type": ["string", "null"], "maxLength": 256}}},
]
INSTANCES = [
    {"name": "Juliana \"la\" de Bringas — ñ 😀", "age": 34},
    [{"id": 1, "tags": ["a", "b\\c"]}, {"id": -20}],
    {"label": "raíz", "children": [{"label": "hoja \u00e9", "children": []}]},
    "«amarillo»",
    {"s": "x" * 35 + "ñé"},
    {"a": "example string", "zz": [1, {"k": None}, "libre"]},
]


def states_along(automaton, data: bytes):
    """The automaton's state before each byte of ``data`` (and after the last)."""
    state = automaton.start()
    out = [state]
    for b in data:
        state = automaton.step(state, b)
        assert state is not None
        out.append(state)
    return out


@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow])
@given(pattern=REGEXES, bound=st.integers(33, 40), seed=st.integers(0, 2**16),
       which=st.integers(0, len(SMALL) - 1))
def test_random_counted_regexes_along_a_walk(pattern, bound, seed, which):
    """A repetition bounded above 32 is counted (``CountedDfa``), walked with ``walk_rows``."""
    automaton = compile_regex(f"(?:(?:{pattern})b){{1,{bound}}}x").automaton
    assert type(automaton).__name__ == "CountedDfa"
    walk_agreeing(automaton, SMALL[which], random.Random(seed), 8)


@pytest.mark.parametrize("which", range(len(SMALL)))
@pytest.mark.parametrize("case", range(len(SCHEMAS)))
def test_schemas_small_vocabularies(case, which):
    automaton = compile_json_schema(SCHEMAS[case]).automaton
    data = json.dumps(INSTANCES[case], ensure_ascii=False, separators=(",", ":")).encode()
    for state in states_along(automaton, data):
        assert_walks_agree(automaton, state, SMALL[which])


@pytest.fixture(scope="module", params=["cl100k_base", "o200k_base"])
def big(request):
    from sitebuild import vocabularies
    from vocabularies import BpeEncoder
    vocab = vocabularies.read(request.param)
    return vocab.tokens, BpeEncoder(vocab)


@pytest.mark.parametrize("case", range(len(SCHEMAS)))
def test_schemas_on_real_vocabularies(big, case):
    """The states the canonical tokenization passes through: at about eight of them vectorized =
    brute force over every token, at two also = the Python walk; at every one the vectorized
    mask allows the canonical token."""
    tokens, encoder = big
    automaton = compile_json_schema(SCHEMAS[case]).automaton
    text = json.dumps(INSTANCES[case], ensure_ascii=False, separators=(",", ":"))
    ids = encoder.encode(text)
    state, states = automaton.start(), []
    for i in ids:
        states.append(state)
        for b in tokens[i]:
            state = automaton.step(state, b)
    python, vector = tries(tokens)
    brute = set(range(0, len(states), max(1, len(states) // 8)))
    walked = {0, len(states) // 2}  # the Python walk takes seconds here
    for k, state in enumerate(states):
        mask = trie_mask(automaton, state, vector)
        if k in brute:
            np.testing.assert_array_equal(mask, brute_force_mask(automaton, state, tokens))
        if k in walked:
            np.testing.assert_array_equal(mask, trie_mask(automaton, state, python, 10**8))
        assert mask[ids[k]], f"token {k} of the canonical tokenization must be allowed"


@pytest.mark.parametrize("pattern", [r"\d{4}-\d{2}-\d{2}", r"[A-Za-zñ ]{3,20}!", r"(sí|no), señor"])
def test_regexes_on_real_vocabularies(big, pattern):
    tokens, _ = big
    automaton = compile_regex(pattern).automaton
    for state in range(automaton.n_states) if hasattr(automaton, "n_states") else [0]:
        assert_walks_agree(automaton, state, tokens, brute=state == 0)


def test_large_vocabularies_walk_vectorized_by_default(big):
    tokens, _ = big
    assert TokenTrie(tokens).vectorized
    assert not TokenTrie(BYTE_VOCAB).vectorized


ARRAY_FIELDS = ("count", "edge", "token", "extra_nodes", "extra_ids")


def assert_same_arrays(numpy_built, python_built):
    for name in ARRAY_FIELDS:
        np.testing.assert_array_equal(getattr(numpy_built, name), getattr(python_built, name),
                                      err_msg=name)
    inner = python_built.count > 0
    np.testing.assert_array_equal(numpy_built.first[inner], python_built.first[inner])


@settings(max_examples=200)
@given(vocab=st.lists(st.binary(max_size=6), max_size=40))
def test_numpy_built_arrays_equal_the_python_tries(vocab):
    """``TrieArrays.from_vocab`` (sorting, common prefixes) = the arrays read off the Python
    trie, on random vocabularies with empty and repeated tokens."""
    from masker.trie import TrieArrays
    trie = TokenTrie(vocab)
    trie.vectorized = False
    assert_same_arrays(TrieArrays.from_vocab(trie.vocab), TrieArrays(trie))


def test_numpy_built_arrays_on_a_real_vocabulary(big, monkeypatch):
    import masker.trie as trie_module
    tokens, _ = big
    fast = TokenTrie(tokens)
    monkeypatch.setattr(trie_module, "VECTOR_MIN_TOKENS", 10**9)
    slow = TokenTrie(tokens)
    assert fast._lists is None and slow._arrays is None  # each built its own way
    assert_same_arrays(fast.arrays, slow.arrays)
    # and the Python lists read back off the arrays are the Python trie's
    for name in ("children", "tokens", "child_bits"):
        assert getattr(fast, name) == getattr(slow, name), name
