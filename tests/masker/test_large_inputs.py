"""Large machine-generated inputs (as the JSON Schema compiler emits) compile, stay correct,
and deep nesting fails with LimitExceeded instead of a Python RecursionError."""

from __future__ import annotations

import random
import re

import pytest

from masker import LimitExceeded, compile_cfg, compile_choice, compile_regex
from masker.dfa import Dfa
from tests.masker.vocabs import BYTE_VOCAB

STRING = r'"([^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"'
NUMBER = r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?"


def test_long_object_regex():
    pattern = r"\{" + ",".join(rf'("k{i}":({STRING}|{NUMBER}))?' for i in range(30)) + r"\}"
    assert len(pattern) > 3000
    grammar = compile_regex(pattern)
    python = re.compile(pattern, re.ASCII)
    for text in ['{}', '{"k0":1,"k1":"a\\n"}', '{"k0":1,"k1":"a\\q"}', '{"k29":-0.5e3,}',
                 '{' + ",".join(f'"k{i}":{i}' for i in range(30)) + '}']:
        assert grammar.accepts(text) == bool(python.fullmatch(text)), text


def test_two_thousand_choices():
    rng = random.Random(0)
    words = sorted({"".join(rng.choice("abcdeñó") for _ in range(rng.randint(1, 9)))
                    for _ in range(2000)})
    grammar = compile_choice(words)
    assert all(grammar.accepts(w) for w in words[::50])
    assert not grammar.accepts(words[0] + "zz")


def test_hundreds_of_rules():
    chain = ["root ::= r0"] + [f'r{i} ::= "k{i}=" [0-9]+ ("," r{i + 1})?' for i in range(399)]
    grammar = compile_cfg("\n".join(chain + ['r399 ::= "end"']))
    matcher = grammar.matcher(BYTE_VOCAB)
    matcher.consume_bytes("k0=1,k1=22")
    assert matcher.is_accepting() and set(matcher.allowed_token_ids()) == set(b"0123456789,")

    rules = ['root ::= v', 'v ::= "[" (v ("," v)*)? "]" | ' + " | ".join(f"w{i}" for i in range(300))]
    rules += [f'w{i} ::= "w{i}" [a-z]*' for i in range(300)]
    grammar = compile_cfg("\n".join(rules))
    assert grammar.accepts("[[w12abc,w7],w299]") and not grammar.accepts("[w300]")


def test_wide_regular_grammar_becomes_a_dfa():
    rules = ["root ::= " + " | ".join(f"r{i}" for i in range(200))]
    rules += [f'r{i} ::= "x{i}" [a-z]{{0,3}}' for i in range(200)]
    grammar = compile_cfg("\n".join(rules))
    assert isinstance(grammar.automaton, Dfa)
    assert grammar.accepts("x199abc") and not grammar.accepts("x200")


@pytest.mark.parametrize("build", [
    lambda: compile_regex("(" * 3000 + "a" + ")" * 3000),
    lambda: compile_cfg("root ::= " + "(" * 3000 + '"a"' + ")" * 3000),
])
def test_deep_nesting_is_a_clear_limit(build):
    with pytest.raises(LimitExceeded, match="nests too deeply"):
        build()


def test_dfa_state_limit():
    with pytest.raises(LimitExceeded, match="max_states=50"):
        compile_regex("[ab]*a[ab]{8}", max_states=50)  # the classic exponential DFA
