"""compile_cfg agrees with llguidance (no forcing) on random token walks: 18 grammars through
llguidance's own GBNF -> Lark conversion under the 256-byte, hand-written and trained
vocabularies, and random grammars through ``oracle.ast_lark``."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from masker import GrammarSyntaxError, compile_cfg
from masker.gbnf_parse import parse_gbnf
from tests.masker.cfg_corpus import GRAMMARS
from tests.masker.oracle import OracleLimit, ast_lark, compare_walks, gbnf_lark, lark
from tests.masker.strategies import gbnf_grammars
from tests.masker.vocabs import MIXED_VOCAB, vocab_params


# llguidance's GBNF converter mangles \uHHHH escapes ("\u00f1" -> "\uf1"), so this one is
# given to it in Lark directly, with the characters written out.
LARK_VERSIONS = {"escapes": lark('start: "ñ" start | "A\\t" | /[à-å]/\n')}


@pytest.mark.parametrize("vocab", vocab_params())
@pytest.mark.parametrize("name, gbnf", [(g[0], g[1]) for g in GRAMMARS], ids=[g[0] for g in GRAMMARS])
def test_cfg_masks_match_llguidance(name, gbnf, vocab):
    oracle_grammar = LARK_VERSIONS.get(name) or gbnf_lark(gbnf)
    report = compare_walks(compile_cfg(gbnf), oracle_grammar, vocab, n_walks=6, seed=3)
    assert report.mismatches == [], report.mismatches
    assert report.states >= 20


def test_dot_differs_by_design():
    """GBNF '.' is any character in llama.cpp (newline included); llguidance converts it to a
    Lark /./ that excludes newline. Apart from byte 0x0A the allowed sets agree."""
    gbnf = 'root ::= "x" . "y"'
    report = compare_walks(compile_cfg(gbnf), gbnf_lark(gbnf), MIXED_VOCAB, n_walks=1)
    assert report.mismatches[0][0] == b"x"
    only_ours, only_oracle = report.mismatches[0][1], report.mismatches[0][2]
    assert {MIXED_VOCAB[i] for i in only_ours} == {b"\n"} and only_oracle == []


def test_greedy_lexemes_differ_by_design():
    """llguidance's converter turns `a ::= [a]+` into a greedy lexeme, so `root ::= a "a"`
    accepts nothing there, while as a context-free grammar (ours, llama.cpp, XGrammar) it
    accepts "aa", "aaa"... The allowed sets still agree; only the may-end bit differs."""
    gbnf = 'root ::= a "a"\na ::= [a]+'
    ours = compile_cfg(gbnf)
    assert ours.accepts("aa") and ours.accepts("aaa") and not ours.accepts("a")
    report = compare_walks(ours, gbnf_lark(gbnf), MIXED_VOCAB, n_walks=3, max_mismatches=50)
    assert report.mismatches
    for prefix, only_ours, only_oracle, (our_end, oracle_end) in report.mismatches:
        assert only_ours == only_oracle == [] and our_end and not oracle_end
        assert len(prefix) >= 2


def test_byte_ff_is_special_there_and_invalid_utf8_here():
    """llguidance treats token b"\\xff" (id 255) as a special token; 0xFF never occurs in UTF-8,
    so our masks never allow it either and the two agree on it."""
    from tests.masker.oracle import Oracle, tokenizer
    from tests.masker.vocabs import BYTE_VOCAB
    assert tokenizer(BYTE_VOCAB).is_special_token(255)
    gbnf = 'root ::= [^"]*'
    assert not compile_cfg(gbnf).matcher(BYTE_VOCAB).mask()[255]
    assert 255 not in Oracle(gbnf_lark(gbnf), BYTE_VOCAB).allowed()[0]


@settings(max_examples=50, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(gbnf=gbnf_grammars(), seed=st.integers(0, 2**16),
       engine=st.sampled_from(["auto", "earley"]))
def test_random_grammars_match_llguidance(gbnf, seed, engine):
    """Random (mostly recursive) grammars, given to llguidance as Lark with lowercase rules and
    one-character lexemes (``ast_lark``), where it behaves as a plain CFG."""
    try:
        grammar = compile_cfg(gbnf, engine=engine)
    except GrammarSyntaxError:
        assume(False)  # empty language
    rules, _ = parse_gbnf(gbnf)
    try:
        report = compare_walks(grammar, ast_lark(rules), MIXED_VOCAB, n_walks=3, max_steps=12,
                               seed=seed, min_states=5)
    except OracleLimit:
        assume(False)  # the oracle hit its own work limit: no verdict to compare with
    assert report.mismatches == [], (gbnf, report.mismatches)
