"""Exact enumeration: the batched, cached walk equals a naive recursion with full forward passes;
the per-token conditional factors multiply to p(y | x, G); columns sum to 1; path counts."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from lesson import FiniteGrammar, count_paths, count_positions, enumerate_paths
from lesson.figures import NAMES, PROMPT, answer
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


@pytest.mark.parametrize("temperature, end, batch_rows", [(1.0, False, 256), (0.7, False, 3), (1.0, True, 2)])
def test_batched_walk_equals_naive_recursion(model, m64, tok, temperature, end, batch_rows):
    texts = ["sí", "si", "Be", "Benina"] if end else SMALL
    grammar = FiniteGrammar(texts, tok.vocab, end_token=tok.vocab.index(b"\n") if end else None)
    result = enumerate_paths(model, tok, SHORT_PROMPT, grammar, temperature=temperature,
                             batch_rows=batch_rows)
    log_total, table, _ = naive_table(m64, tok, grammar, temperature)
    assert result.log_p_grammar == pytest.approx(log_total, rel=1e-10)
    assert result.forward_rows == count_positions(grammar)
    for text, (n, conditional, masked) in table.items():
        row = result.row(text)
        assert row.paths == n
        assert row.conditional == pytest.approx(conditional, rel=1e-9, abs=1e-15)
        assert row.masked == pytest.approx(masked, rel=1e-9, abs=1e-15)


def test_per_token_conditional_factors_multiply_to_the_conditional(model, m64, tok):
    grammar = FiniteGrammar(SMALL, tok.vocab)
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
    result = enumerate_paths(model, tok, SHORT_PROMPT, grammar)
    for text in grammar.texts:
        assert per_text[text] == pytest.approx(result.row(text).conditional, rel=1e-9)
    assert sum(per_text.values()) == pytest.approx(1.0, abs=1e-12)


def test_lesson_table_columns_sum_to_one_and_counts_match(model, tok):
    grammar = FiniteGrammar([answer(n) for n in NAMES], tok.vocab)
    result = enumerate_paths(model, tok, PROMPT, grammar)
    assert abs(sum(r.conditional for r in result.rows) - 1) <= 1e-9
    assert abs(sum(r.masked for r in result.rows) - 1) <= 1e-9
    counts = count_paths(grammar)
    assert {r.text: r.paths for r in result.rows} == counts
    assert result.forward_rows == count_positions(grammar)
    assert [r.conditional for r in result.rows] == sorted((r.conditional for r in result.rows), reverse=True)
    assert result.expected_tries == pytest.approx(1 / result.p_grammar, rel=1e-12)
    assert result.years_at_one_ns == pytest.approx(result.expected_tries * 1e-9 / (365.25 * 86400))


def test_count_paths_equals_brute_force_segmentation(tok):
    texts = ["personaje", "señora", "Benina"]
    grammar = FiniteGrammar(texts, tok.vocab)
    pieces = set(tok.vocab)
    for text in grammar.texts:
        n = len(text)
        brute = sum(all(text[a:b] in pieces for a, b in zip((0,) + cuts, cuts + (n,)))
                    for k in range(n) for cuts in itertools.combinations(range(1, n), k))
        assert count_paths(grammar)[text] == brute


def test_count_positions_equals_the_token_trie_walked_by_brute_force(tok):
    for texts, end in [(["personaje", "señora", "Benina"], None), (["sí", "si", "Be", "Benina"], b"\n")]:
        grammar = FiniteGrammar(texts, tok.vocab, end_token=tok.vocab.index(end) if end else None)
        stack, rows = [b""], 0  # every token sequence whose bytes stay inside G, visited one by one
        while stack:
            written = stack.pop()
            for t, piece in enumerate(tok.vocab):
                if t == grammar.end_token or not grammar.is_prefix(written + piece):
                    continue
                if end or not grammar.is_complete(written + piece):
                    rows += 1
                    stack.append(written + piece)
        assert count_positions(grammar) == rows


def test_temperature_must_be_positive(model, tok):
    with pytest.raises(ValueError, match="temperature"):
        enumerate_paths(model, tok, PROMPT, FiniteGrammar(SMALL, tok.vocab), temperature=0)
