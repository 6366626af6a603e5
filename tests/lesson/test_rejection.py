"""Rejection sampling: accepted answers are texts of G with the conditional distribution, tries
per answer average 1 / p(G | x), and early abort saves passes but not tries."""

from __future__ import annotations

import math

import pytest

from lesson import compile_choice, compile_regex, enumerate_paths, rejection_sample
from lesson.course import PROMPT
from tests.lesson.finite import FiniteGrammar
from minigpt.bpe import load_tokenizer
from minigpt.gpt import load_model

TEXTS = ["Y ", "Rosalía "]  # p(G | x) is about 0.19 for the lesson prompt: about 5 tries per answer


@pytest.fixture(scope="module")
def run():
    tok, model = load_tokenizer(), load_model()
    grammar = compile_choice(TEXTS)
    exact = enumerate_paths(model, tok, PROMPT, grammar)
    return FiniteGrammar(TEXTS, tok.vocab), exact, rejection_sample(model, tok, PROMPT, grammar, accepted=200, seed=3)


def test_accepted_answers_follow_the_conditional_distribution(run):
    grammar, exact, result = run
    assert len(result.accepted) == 200 and result.tries[-1].accepted
    assert all(grammar.contains(t.text) for t in result.accepted)
    assert not any(grammar.is_prefix(t.text) for t in result.tries if not t.accepted)
    for row in exact.rows:  # binomial counts within 4 standard deviations
        n, p = 200, row.conditional
        assert abs(result.counts().get(row.text, 0) - n * p) <= 4 * math.sqrt(n * p * (1 - p))
    # the band above also holds the mask's expected counts; the likelihood ratio tells them apart:
    # the 200 answers are more likely under the conditional than under the mask (about e^5 to 1
    # expected, KL(conditional || mask) of about 0.03 nats per answer)
    log_ratio = sum(result.counts().get(row.text, 0) * math.log(row.conditional / row.masked)
                    for row in exact.rows)
    assert log_ratio > math.log(20), log_ratio


def test_tries_per_answer_average_one_over_p_grammar(run):
    _, exact, result = run
    p = exact.p_grammar
    sd_of_mean = math.sqrt(1 - p) / p / math.sqrt(len(result.accepted))  # geometric law
    assert abs(result.mean_tries - 1 / p) <= 4 * sd_of_mean


def test_early_abort_saves_passes_not_tries(run):
    _, _, result = run
    assert all(1 <= t.passes <= t.passes_full for t in result.tries)
    assert all(t.passes == t.passes_full for t in result.accepted)
    assert result.passes < result.passes_full


def test_same_seed_same_tries():
    tok, model = load_tokenizer(), load_model()
    grammar = compile_choice(TEXTS)
    a = rejection_sample(model, tok, PROMPT, grammar, accepted=5, seed=1, batch=16)
    b = rejection_sample(model, tok, PROMPT, grammar, accepted=5, seed=1, batch=7)
    assert a.tries == b.tries  # each try has its own generator: the batch size does not matter
    with pytest.raises(ValueError, match="too small"):
        rejection_sample(model, tok, PROMPT, compile_choice(["{"]), accepted=1, max_tries=50)


def test_any_grammar_even_an_infinite_one_with_early_abort(model, tok):
    """A regex with unbounded repetition: tries are decided at the first refused byte, or run to
    the token budget; accepted answers are texts of the grammar."""
    grammar = compile_regex("(Y|Rosalía) [a-záéíóúñ]+ ")
    result = rejection_sample(model, tok, PROMPT, grammar, accepted=5, seed=0, max_tokens=12, max_tries=2000)
    assert len(result.accepted) == 5
    assert all(grammar.accepts(t.text) for t in result.accepted)
    assert all(not grammar.accepts(t.text) for t in result.tries if not t.accepted)
    assert all(t.passes <= t.passes_full <= 12 for t in result.tries)
    assert result.passes < result.passes_full
