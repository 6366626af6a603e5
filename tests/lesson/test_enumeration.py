"""Exact enumeration: for a choice, a finite regex, an enum schema and a GBNF grammar, the batched,
cached walk over the masker's matcher equals a naive recursion with full forward passes over the
same texts (the naive oracle, no masker); the per-token conditional factors multiply to
p(y | x, G); columns sum to 1; path counts; limits fail before any model call."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from lesson import (LanguageTooLarge, compile_cfg, compile_choice, compile_json_schema, compile_regex,
                    count_paths, count_positions, enumerate_paths)
from lesson.course import NAMES, PROMPT, answer
from tests.lesson.finite import FiniteGrammar
from tests.lesson.reference import all_paths, log_p_grammar_after, logsumexp, next_logp

SMALL = ["sí", "no", "Benina."]  # a few dozen paths: the naive reference stays cheap
SHORT_PROMPT = "—¿Vendrá usted mañana?\n—"


@pytest.fixture(scope="module")
def m64(model):
    return model.astype(np.float64)


def naive_table(m64, tok, grammar, temperature=1.0, prompt=SHORT_PROMPT):
    paths = list(all_paths(m64, tok.encode(prompt), grammar, temperature))
    log_total = logsumexp(lp for _, _, lp, _ in paths)
    table = {}
    for text in grammar.texts:
        mine = [(lp, lq) for t, _, lp, lq in paths if t == text]
        table[text] = (len(mine), math.exp(logsumexp(lp for lp, _ in mine) - log_total),
                       sum(math.exp(lq) for _, lq in mine))
    return log_total, table, paths


# The same language written four ways, and the texts the naive oracle enumerates for it.
GRAMMARS = {
    "choice": (lambda: compile_choice(SMALL), SMALL),
    "regex": (lambda: compile_regex(r"(sí|no|Benina)\."), ["sí.", "no.", "Benina."]),
    "enum schema": (lambda: compile_json_schema({"enum": ["sí", "no"]}), ['"sí"', '"no"']),
    "gbnf": (lambda: compile_cfg('root ::= ("sí" | "no") ("," | ".")'), ["sí,", "sí.", "no,", "no."]),
}


@pytest.mark.parametrize("kind, temperature, batch_rows", [
    ("choice", 1.0, 256), ("choice", 0.7, 3), ("regex", 1.0, 2), ("enum schema", 1.3, 256), ("gbnf", 1.0, 5)])
def test_batched_walk_equals_naive_recursion(model, m64, tok, kind, temperature, batch_rows):
    make, texts = GRAMMARS[kind]
    grammar, oracle = make(), FiniteGrammar(texts, tok.vocab)
    result = enumerate_paths(model, tok, SHORT_PROMPT, grammar, temperature=temperature,
                             batch_rows=batch_rows)
    log_total, table, _ = naive_table(m64, tok, oracle, temperature)
    assert result.log_p_grammar == pytest.approx(log_total, rel=1e-10)
    assert result.forward_rows == oracle.positions() == result.counts.positions
    assert result.counts.n_texts == len(texts) == len(result.rows)
    for text, (n, conditional, masked) in table.items():
        row = result.row(text)
        assert row.paths == n
        assert row.conditional == pytest.approx(conditional, rel=1e-9, abs=1e-15)
        assert row.masked == pytest.approx(masked, rel=1e-9, abs=1e-15)


def test_per_token_conditional_factors_multiply_to_the_conditional(model, m64, tok):
    grammar = FiniteGrammar(SMALL, tok.vocab)  # the oracle for the factors, the masker for the table
    prompt_ids = tok.encode(SHORT_PROMPT)
    paths = list(all_paths(m64, prompt_ids, grammar))
    per_text: dict[bytes, float] = {}
    for text, tokens, _, _ in paths:
        log_factors = 0.0
        for j in range(len(tokens)):
            # p(y_j | x, y_<j, G) = p(y_j | x, y_<j) p(G | x, y_<=j) / p(G | x, y_<j)
            logp = next_logp(m64, prompt_ids + list(tokens[:j]))
            log_factors += (logp[tokens[j]] + log_p_grammar_after(m64, prompt_ids, grammar, tokens[:j + 1])
                            - log_p_grammar_after(m64, prompt_ids, grammar, tokens[:j]))
        per_text[text] = per_text.get(text, 0.0) + math.exp(log_factors)
    result = enumerate_paths(model, tok, SHORT_PROMPT, compile_choice(SMALL))
    for text in grammar.texts:
        assert per_text[text] == pytest.approx(result.row(text).conditional, rel=1e-9)
    assert sum(per_text.values()) == pytest.approx(1.0, abs=1e-12)


def test_lesson_table_columns_sum_to_one_and_counts_match(model, tok):
    grammar = compile_choice([answer(n) for n in NAMES])
    result = enumerate_paths(model, tok, PROMPT, grammar)
    assert abs(sum(r.conditional for r in result.rows) - 1) <= 1e-9
    assert abs(sum(r.masked for r in result.rows) - 1) <= 1e-9
    counts = count_paths(grammar, tok.vocab)
    assert {r.text: r.paths for r in result.rows} == counts
    assert result.forward_rows == count_positions(grammar, tok.vocab)
    assert [r.conditional for r in result.rows] == sorted((r.conditional for r in result.rows), reverse=True)
    assert result.expected_tries == pytest.approx(1 / result.p_grammar, rel=1e-12)
    assert result.years_at_one_ns == pytest.approx(result.expected_tries * 1e-9 / (365.25 * 86400))


def test_count_paths_equals_brute_force_segmentation(tok):
    texts = ["personaje", "señora", "Benina"]
    counts = count_paths(compile_choice(texts), tok.vocab)
    pieces = set(tok.vocab)
    for text in (t.encode() for t in texts):
        n = len(text)
        brute = sum(all(text[a:b] in pieces for a, b in zip((0,) + cuts, cuts + (n,)))
                    for k in range(n) for cuts in itertools.combinations(range(1, n), k))
        assert counts[text] == brute


def test_count_positions_equals_the_token_trie_walked_by_brute_force(tok):
    texts = ["personaje", "señora", "Benina"]
    oracle = FiniteGrammar(texts, tok.vocab)
    stack, rows = [b""], 0  # every token sequence whose bytes stay inside G, visited one by one
    while stack:
        written = stack.pop()
        for piece in tok.vocab:
            if oracle.is_prefix(written + piece) and not oracle.is_complete(written + piece):
                rows += 1
                stack.append(written + piece)
    assert count_positions(compile_choice(texts), tok.vocab) == rows


def test_bad_arguments_and_languages_fail_before_any_model_call(tok):
    class NoModel:  # any model call would raise AttributeError
        config = type("Config", (), {"n_ctx": 256})()

    with pytest.raises(ValueError, match="temperature"):
        enumerate_paths(NoModel(), tok, PROMPT, compile_choice(SMALL), temperature=0)
    with pytest.raises(LanguageTooLarge, match="infinite"):
        enumerate_paths(NoModel(), tok, PROMPT, compile_regex("sí+"))
    with pytest.raises(LanguageTooLarge, match=r"more than max_positions=100") as info:
        enumerate_paths(NoModel(), tok, PROMPT, compile_choice([answer(n) for n in NAMES]), max_positions=100)
    assert info.value.count == 1277 or info.value.count > 100
    with pytest.raises(LanguageTooLarge, match="max_paths=50"):
        enumerate_paths(NoModel(), tok, PROMPT, compile_json_schema({"type": "integer", "minimum": 0,
                                                                     "maximum": 999}), max_paths=50)
    with pytest.raises(ValueError, match="not a proper prefix"):
        enumerate_paths(NoModel(), tok, PROMPT, compile_choice(SMALL), answer_prefix=[tok.vocab.index(b"x")])


def test_answer_prefix_conditions_the_table(model, tok):
    grammar = compile_choice(SMALL)
    full = enumerate_paths(model, tok, SHORT_PROMPT, grammar)
    b = tok.vocab.index(b"B")
    after = enumerate_paths(model, tok, SHORT_PROMPT, grammar, answer_prefix=[b])
    assert [r.text for r in after.rows] == [b"Benina."] and after.rows[0].conditional == 1.0
    # every path of "Benina." starts with the token B, so p(Benina. | x) = p(B | x) p(G | x, B)
    assert full.row("Benina.").paths == after.rows[0].paths
    log_p_b = next_logp(model.astype(np.float64), tok.encode(SHORT_PROMPT))[b]
    assert full.row("Benina.").log_p == pytest.approx(log_p_b + after.log_p_grammar, rel=1e-10)
