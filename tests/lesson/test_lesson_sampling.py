"""Sampling with and without the mask, checked against full forward passes and brute-force
allowed sets: the records a reader sees are the model's real numbers."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lesson import FiniteGrammar, generate
from lesson.figures import NAMES, PROMPT, answer, name_of
from tests.lesson.reference import logsumexp, next_logp


@pytest.fixture(scope="module")
def grammar(tok):
    return FiniteGrammar([answer(n) for n in NAMES], tok.vocab)


@pytest.mark.parametrize("seed, temperature", [(0, 1.0), (1, 1.0), (7, 0.7), (3, 1.6)])
def test_masked_answer_is_a_text_of_g_and_its_records_are_the_models(model, tok, grammar, seed, temperature):
    gen = generate(model, tok, PROMPT, grammar, seed=seed, temperature=temperature)
    assert grammar.contains(gen.bytes) and name_of(gen.text) in NAMES
    m64, ids = model.astype(np.float64), tok.encode(PROMPT)
    prefix, log_p, log_kept_sum = b"", 0.0, 0.0
    for j, pos in enumerate(gen.positions):
        logp = next_logp(m64, ids + gen.token_ids[:j], temperature)  # no cache, full sequence
        allowed = grammar.brute_force_allowed_ids(prefix)
        assert [t for t, _ in pos.allowed] and sorted(t for t, _ in pos.allowed) == allowed
        kept = math.exp(logsumexp(logp[allowed]))
        assert pos.kept_mass == pytest.approx(kept, rel=1e-9)
        assert sum(q for _, q in pos.allowed) == pytest.approx(1.0, abs=1e-12)
        assert pos.p_chosen == pytest.approx(math.exp(logp[pos.chosen]), rel=1e-9)
        assert [t for t, _ in pos.top] == list(np.argsort(-logp, kind="stable")[:5])
        assert pos.forced == grammar.is_forced(prefix)
        log_p += logp[pos.chosen]
        log_kept_sum += math.log(kept)
        prefix += tok.vocab[pos.chosen]
    # the masked path probability equals p(y | x) / prod_j p(A_j | x, y_<j)
    assert gen.log_p == pytest.approx(log_p, rel=1e-9)
    assert gen.log_q == pytest.approx(log_p - log_kept_sum, rel=1e-9, abs=1e-9)


def test_near_zero_temperature_is_greedy_decoding(model, tok):
    gen = generate(model, tok, PROMPT, seed=5, temperature=1e-4, max_tokens=8)
    m64, ids = model.astype(np.float64), tok.encode(PROMPT)
    greedy = []
    for _ in range(8):
        greedy.append(int(np.argmax(next_logp(m64, ids + greedy))))
    assert gen.token_ids == greedy
    assert all(pos.allowed is None and pos.kept_mass is None for pos in gen.positions)


def test_same_seed_same_answer_and_unmasked_prose_has_no_brace(model, tok, grammar):
    first = generate(model, tok, PROMPT, grammar, seed=11)
    assert generate(model, tok, PROMPT, grammar, seed=11).token_ids == first.token_ids
    for seed in range(3):
        prose = generate(model, tok, PROMPT, seed=seed, max_tokens=30)
        assert len(prose.token_ids) == 30 and "{" not in prose.text


def test_end_token_generation_stops_on_it(model, tok):
    newline = tok.vocab.index(b"\n")
    grammar = FiniteGrammar(["Be", "Benina"], tok.vocab, end_token=newline)
    for seed in range(4):
        gen = generate(model, tok, "La señora", grammar, seed=seed)
        assert gen.token_ids[-1] == newline and gen.bytes in (b"Be", b"Benina")


def test_bad_arguments_are_refused(model, tok, grammar):
    with pytest.raises(ValueError, match="temperature"):
        generate(model, tok, PROMPT, grammar, temperature=0)
    with pytest.raises(ValueError, match="prompt must hold"):
        generate(model, tok, "", grammar)
    with pytest.raises(ValueError, match="do not fit"):
        generate(model, tok, PROMPT, max_tokens=300)
