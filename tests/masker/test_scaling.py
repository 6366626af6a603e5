"""Compile cost that grows with the schema, counted as work (states built, moves followed,
refinement visits, comparisons), never timed (issue 12, part 2).

- a finite set of texts becomes its minimal DFA directly (``literal_dfa``): the same language
  and the same number of states as Thompson + subset construction + Hopcroft, work linear in
  the total length, no state limit that the plain list of texts would not hit;
- an enum inside a larger schema goes through the NFA route, whose every counter grows
  linearly with the number of values;
- ``ir.alt`` de-duplicates by hashing, not by comparing each branch with every earlier one.
"""
from __future__ import annotations

import json
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from masker import compile_choice, compile_json_schema
from masker.dfa import determinize
from masker.errors import LimitExceeded
from masker.grammar_ast import Alt, Repeat, literal
from masker.json_schema import ir
from masker.literal_dfa import literal_set_dfa
from masker.nfa import build_nfa


def words(n, seed=0, letters="abcdefghijklmnopqrstuvwxyz"):
    rng, out = random.Random(seed), set()
    while len(out) < n:
        out.add("".join(rng.choice(letters) for _ in range(rng.randint(5, 12))))
    return sorted(out)


def accepts(dfa, data: bytes) -> bool:
    state = 0
    for b in data:
        state = dfa.step(state, b)
        if state is None:
            return False
    return dfa.is_accepting(state)


def thompson_dfa(texts):
    """The reference: each text as its own Thompson chain (``Repeat(x, 1, 1)`` hides that the
    branches are literals), subset construction, Hopcroft."""
    node = Alt(tuple(Repeat(literal(t), 1, 1) for t in texts))
    nfa, start, accept = build_nfa(node)
    return determinize(nfa, start, accept, max_states=10**6)


TEXTS = st.lists(st.text(alphabet="abñ€😀", max_size=6), min_size=1, max_size=12)


@settings(max_examples=150, deadline=None)
@given(TEXTS, st.lists(st.text(alphabet="abñ€😀", max_size=7), max_size=12))
def test_literal_dfa_is_the_minimal_dfa_of_the_set(texts, probes):
    dfa, _ = literal_set_dfa([t.encode() for t in texts])
    reference = thompson_dfa(texts)
    assert dfa.n_states == reference.n_states  # minimal DFAs are unique up to renaming
    for text in texts + probes + [t[:-1] for t in texts] + [t + "a" for t in texts]:
        data = text.encode()
        assert accepts(dfa, data) == (text in texts) == accepts(reference, data), text
        for i in range(len(data) + 1):  # every DFA state is alive: a dead prefix is refused
            prefix_alive = any(t.encode().startswith(data[:i]) for t in texts)
            state = 0
            for b in data[:i]:
                state = None if state is None else dfa.step(state, b)
            assert (state is not None) == prefix_alive


def test_choice_of_10000_words_is_linear_and_never_hits_a_state_limit():
    small, big = words(1_000), words(10_000, seed=1)
    works, sizes = [], []
    for texts in (small, big):
        total = sum(len(t.encode()) for t in texts)
        dfa, work = literal_set_dfa([t.encode() for t in texts])
        assert work <= 2 * total + len(texts) + 1
        assert dfa.n_states <= total + 1
        works.append(work)
        sizes.append(total)
    assert works[1] / works[0] <= 1.2 * sizes[1] / sizes[0]
    grammar = compile_choice(big)  # default: no limit below the texts' own size
    assert grammar.automaton.n_states > 20_000  # what the old default refused
    assert grammar.accepts(big[1234]) and not grammar.accepts(big[1234][:-1] + "!")
    with pytest.raises(LimitExceeded, match="max_states"):
        compile_choice(big, max_states=1000)  # an explicit, smaller limit still holds


@pytest.mark.parametrize("n", [300, 3_000])
def test_enum_inside_an_object_counts(n):
    """Every counter of the NFA route grows about linearly with the values (10x values ->
    at most 12x work), and the DFA keeps the values' trie size, not a product."""
    texts = words(n, seed=n)
    schema = {"type": "object", "properties": {"k": {"enum": texts}, "n": {"type": "integer"}},
              "required": ["k"], "additionalProperties": False}
    grammar = compile_json_schema(schema)
    assert grammar.syntax == "regex"
    work = dict(grammar.automaton.build_work)
    work["states"] = grammar.automaton.n_states
    total = sum(len(t) + 2 for t in texts)
    for key, value in work.items():
        assert value <= 4 * total + 200, (key, value)
    if n == 3_000:
        smaller = compile_json_schema(dict(schema, properties={
            "k": {"enum": words(300, seed=300)}, "n": {"type": "integer"}}))
        before = dict(smaller.automaton.build_work, states=smaller.automaton.n_states)
        for key, value in work.items():
            assert value <= 12 * before[key], (key, value, before[key])


def test_alt_dedup_hashes_instead_of_comparing_pairs(monkeypatch):
    calls = {"eq": 0}
    original = ir.Lit.__eq__

    def counting_eq(self, other):
        calls["eq"] += 1
        return original(self, other)

    monkeypatch.setattr(ir.Lit, "__eq__", counting_eq)
    counts = []
    for n in (1_000, 10_000):
        calls["eq"] = 0
        lits = [ir.Lit(f'"{w}"') for w in words(n, seed=n)]
        node = ir.alt(*lits, *lits[:10])  # ten duplicates
        assert len(node.items) == n
        counts.append(calls["eq"])
    assert counts[1] <= 12 * max(counts[0], 1)
    assert counts[1] <= 100  # hash collisions only: no pairwise comparisons


def _gbnf_enum(texts):
    return " | ".join(json.dumps(t) for t in texts)


@pytest.mark.parametrize("vocab_name", ["mixed", "trained"])
def test_earley_enum_lowered_as_a_dfa_gives_the_same_masks(vocab_name, monkeypatch):
    """GBNF route (recursion): an alternation of literal texts is lowered as its minimal DFA
    (from 3 texts on here, 256 by default); masks equal the DFA route's and the brute force
    along random walks."""
    from masker import cfg_lowering, compile_cfg
    monkeypatch.setattr(cfg_lowering, "LITERAL_SET_MIN", 3)
    from tests.masker.vocabs import MIXED_VOCAB, trained_vocab
    vocab = MIXED_VOCAB if vocab_name == "mixed" else (trained_vocab() or MIXED_VOCAB)
    texts = words(200, seed=5) + ["ñandú", "año", "a", "ab", "", "«sí»"]
    grammar = f"root ::= item (\",\" item)*\nitem ::= {_gbnf_enum(texts)} | \"(\" root \")\"\n"
    flat = f"root ::= item (\",\" item){{0,3}}\nitem ::= {_gbnf_enum(texts)}\n"
    earley = compile_cfg(grammar)
    for g, twin in ((compile_cfg(flat, engine="earley"), compile_cfg(flat, engine="dfa")),
                    (earley, None)):
        rng = random.Random(1)
        for _ in range(6):
            a, b = g.matcher(vocab), twin.matcher(vocab) if twin else None
            for _ in range(25):
                mask = a.mask()
                np.testing.assert_array_equal(mask, a.brute_force_mask())
                if b is not None:
                    np.testing.assert_array_equal(mask, b.mask())
                    assert a.is_accepting() == b.is_accepting()
                ids = np.flatnonzero(mask)
                if len(ids) == 0:
                    break
                t = int(rng.choice(ids))
                a.consume(t)
                if b is not None:
                    b.consume(t)
    assert earley.accepts("ñandú,(a,(ab)),«sí»") and not earley.accepts("ñand,a")


def test_earley_enum_productions_grow_with_the_branching_not_the_texts():
    """Earley predicts every production of a nonterminal and scans them all: lowered as the
    set's DFA, no nonterminal has more productions than the bytes that can come next (26
    letters here), and the total grows linearly with the texts."""
    from collections import Counter

    from masker.cfg_lowering import Lowering
    from masker.gbnf_parse import parse_gbnf
    totals = []
    for n in (1_000, 10_000):
        texts = words(n, seed=n)
        text = f"root ::= {_gbnf_enum(texts)} | \"[\" root \"]\"\n"
        prods = Lowering(parse_gbnf(text)[0], 10**6, text).run()[0]
        fan_out = Counter(lhs for lhs, _ in prods)
        assert max(fan_out.values()) <= 27, max(fan_out.values())
        totals.append(sum(len(rhs) + 1 for _, rhs in prods))
        assert totals[-1] <= 2 * sum(len(t) + 2 for t in texts)
    assert totals[1] <= 12 * totals[0]
