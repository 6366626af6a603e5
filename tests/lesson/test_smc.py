"""Importance sampling and SMC (lesson.smc) against exact answers.

The small case: a tiny GPT with random weights (the project's own ``GPT`` class and key/value cache,
4 layers narrowed to 1, 16 wide) over a 258-token vocabulary (the 256 bytes and two merges, so a
text has several token paths), and a three-text grammar. Its exact p(G | x) and conditional come
from ``tests.lesson.reference.all_paths``: every path by plain recursion, every probability from a
full forward pass (no cache, no batching), every allowed set by brute force. On it:

- the mean over many runs of each estimate of p(G | x) (importance sampling: the mean weight;
  SMC: the mean of the final weights, which carry the means of the resampled groups) is within
  5 standard errors of the exact value;
- both conditional estimates approach the exact conditional as N grows, while the mask's own
  frequencies stay at the mask's distance.

On the lesson's model and grammar: the same against ``enumerate_paths``.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lesson import convergence, enumerate_paths, generate, importance_sample, smc
from lesson.course import NAMES, PROMPT, answer
from lesson.smc import systematic_resample, total_variation
from lesson.smc_views import PathsView, WeightsView
from masker import compile_choice
from minigpt.bpe import Tokenizer
from minigpt.config import GPTConfig, parameter_shapes
from minigpt.gpt import GPT
from tests.lesson.finite import FiniteGrammar
from tests.lesson.reference import all_paths, logsumexp

TEXTS = ["abcab{", "bcaab{", "aacba{"]  # prefix-free; "ab" and "aa" give several token paths
PROMPT_SMALL = "x"


@pytest.fixture(scope="module")
def small():
    """(model, tokenizer, grammar, exact conditional by text, ln p(G | x), exact masked by text)."""
    tok = Tokenizer([(ord("a"), ord("b")), (ord("a"), ord("a"))])
    cfg = GPTConfig(vocab_size=len(tok.vocab), n_ctx=12, n_layer=1, n_head=1, n_embd=16, dropout=0.0)
    rng = np.random.default_rng(6)  # a seed whose conditional is spread over all three texts
    params = {n: (rng.standard_normal(s) * (0.6 if n == "wte" else 0.3)).astype(np.float32)
              for n, s in parameter_shapes(cfg).items()}
    model = GPT(cfg, params)
    naive = FiniteGrammar(TEXTS, tok.vocab)
    paths = list(all_paths(model.astype(np.float64), tok.encode(PROMPT_SMALL), naive))
    log_z = logsumexp(lp for _, _, lp, _ in paths)
    conditional, masked = {}, {}
    for text, _, lp, lq in paths:
        conditional[text] = conditional.get(text, 0.0) + math.exp(lp - log_z)
        masked[text] = masked.get(text, 0.0) + math.exp(lq)
    return model, tok, compile_choice(TEXTS), conditional, log_z, masked


def within(values: np.ndarray, exact: float, sds: float = 5.0) -> bool:
    se = values.std(ddof=1) / math.sqrt(len(values))
    return abs(values.mean() - exact) <= sds * se + 1e-12 * exact


def test_small_case_is_a_real_test(small):
    _, _, _, conditional, log_z, masked = small
    assert set(conditional) == {t.encode() for t in TEXTS}
    assert min(conditional.values()) > 0.05  # every text matters
    assert total_variation(conditional, masked) > 0.2  # and the mask distorts here too


def test_importance_sampling_is_unbiased_for_p_grammar(small):
    model, tok, grammar, _, log_z, _ = small
    for n in (1, 3):
        r = importance_sample(model, tok, PROMPT_SMALL, grammar, n, runs=20000, seed=n)
        estimates = np.exp(r.log_z - log_z)  # p^(G | x) / p(G | x)
        assert within(estimates, 1.0), (n, estimates.mean())


@pytest.mark.parametrize("threshold", [0.9, 1.0])
def test_smc_is_unbiased_for_p_grammar(small, threshold):
    model, tok, grammar, _, log_z, _ = small
    r = smc(model, tok, PROMPT_SMALL, grammar, 4, ess_threshold=threshold, runs=20000, seed=11)
    assert sum(len(x) for x in r.resampled) > 10000  # it did resample, often
    estimates = np.exp(r.log_z - log_z)
    assert within(estimates, 1.0), estimates.mean()


def test_both_estimates_approach_the_exact_conditional(small):
    model, tok, grammar, conditional, _, masked = small
    mask_tv = total_variation(masked, conditional)
    for method in ("is", "smc"):
        means = []
        for n in (10, 1000):
            if method == "is":
                r = importance_sample(model, tok, PROMPT_SMALL, grammar, n, runs=20, seed=3)
            else:
                r = smc(model, tok, PROMPT_SMALL, grammar, n, ess_threshold=0.9, runs=20, seed=3)
            means.append(np.mean([r.tv(conditional, i) for i in range(20)]))
        assert means[1] < means[0] / 3, (method, means)
        assert means[1] < mask_tv / 4, (method, means, mask_tv)
    # the unweighted draws estimate the mask's distribution, not the conditional
    r = importance_sample(model, tok, PROMPT_SMALL, grammar, 3000, seed=4)
    assert total_variation(r.frequencies(0), masked) < 0.05
    assert r.tv(conditional, weighted=False) == pytest.approx(mask_tv, abs=0.05)


def test_weights_are_the_products_of_kept_masses(small):
    """Each particle's ln w is ln p - ln q~ of its own path: the path is read back from the naive
    enumeration, where the text has a single path or all its paths share ln p - ln q~."""
    model, tok, grammar, _, _, _ = small
    naive = FiniteGrammar(TEXTS, tok.vocab)
    by_text = {}
    for text, _, lp, lq in all_paths(model.astype(np.float64), tok.encode(PROMPT_SMALL), naive):
        by_text.setdefault(text, set()).add(round(lp - lq, 9))
    r = importance_sample(model, tok, PROMPT_SMALL, grammar, 200, seed=5)
    for text, lw in zip(r.texts[0], r.log_weights[0].tolist()):
        assert any(abs(lw - v) < 1e-6 for v in by_text[text]), text


def test_threshold_zero_is_importance_sampling(small):
    model, tok, grammar, _, _, _ = small
    a = importance_sample(model, tok, PROMPT_SMALL, grammar, 50, runs=3, seed=9)
    b = smc(model, tok, PROMPT_SMALL, grammar, 50, ess_threshold=0.0, runs=3, seed=9)
    assert a.texts == b.texts
    np.testing.assert_allclose(a.log_weights, b.log_weights)
    assert b.resampled == [[], [], []]


def test_results_are_consistent_and_deterministic(small):
    model, tok, grammar, _, _, _ = small
    r = smc(model, tok, PROMPT_SMALL, grammar, 30, ess_threshold=0.7, runs=2, seed=2)
    again = smc(model, tok, PROMPT_SMALL, grammar, 30, ess_threshold=0.7, runs=2, seed=2)
    assert r.texts == again.texts and np.array_equal(r.log_z, again.log_z)
    for run in range(2):
        assert sum(r.estimate(run).values()) == pytest.approx(1.0)
        assert 1.0 <= r.final_ess(run) <= 30 + 1e-9
        assert all(t in {x.encode() for x in TEXTS} for t in r.texts[run])
    assert r.ess.shape == (len(r.history), 2)
    assert all(len(step.labels) == 30 and step.weights.sum() == pytest.approx(1.0) for step in r.history)
    for step in r.history:
        if step.ancestors is not None:
            assert step.ancestors.shape == (30,) and step.ancestors.max() < 30
    assert r.particle_steps >= r.forward_rows  # rows are shared by particles with the same prefix


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=1, max_size=40),
       st.floats(min_value=0.0, max_value=0.999999))
def test_systematic_resampling_copies_each_particle_floor_or_ceil_of_k_w(raw, u):
    weights = np.array(raw) + 1e-3
    weights /= weights.sum()
    k = len(weights)
    counts = np.bincount(systematic_resample(weights, u), minlength=k)
    assert counts.sum() == k
    expected = k * weights
    assert np.all(counts >= np.floor(expected - 1e-9)) and np.all(counts <= np.ceil(expected + 1e-9))


def test_bad_input_is_refused_with_a_clear_error(small):
    model, tok, grammar, _, _, _ = small
    with pytest.raises(ValueError, match="at least 1"):
        importance_sample(model, tok, PROMPT_SMALL, grammar, 0)
    with pytest.raises(ValueError, match="ess_threshold"):
        smc(model, tok, PROMPT_SMALL, grammar, 5, ess_threshold=1.5)
    with pytest.raises(ValueError, match="temperature"):
        smc(model, tok, PROMPT_SMALL, grammar, 5, temperature=0)
    with pytest.raises(ValueError, match="ran out of tokens"):
        importance_sample(model, tok, PROMPT_SMALL, grammar, 5, max_tokens=1)
    with pytest.raises(ValueError, match="max_tokens"):
        importance_sample(model, tok, PROMPT_SMALL, grammar, 5, max_tokens=100)
    r = smc(model, tok, PROMPT_SMALL, grammar, 5, runs=2)
    for method in (r.estimate, r.frequencies, r.weights, r.final_ess):
        with pytest.raises(IndexError, match=r"run must be 0 \.\. 1"):
            method(2)
        with pytest.raises(IndexError, match="run must be"):
            method(-1)
    with pytest.raises(ValueError, match="sizes is empty"):
        convergence(model, tok, PROMPT_SMALL, grammar, {}, sizes=[])


def test_views_render_extreme_weights(small):
    model, tok, grammar, conditional, _, _ = small
    r = smc(model, tok, PROMPT_SMALL, grammar, 8, ess_threshold=1.0, seed=1)
    r.log_weights[0] = np.array([-1e300, -700.0, 0, 0, -1e-300, -50, -np.inf, -3])
    r.texts[0][6] = None
    for html in (r._repr_html_(), WeightsView(r, conditional)._repr_html_(), PathsView(r, TEXTS)._repr_html_()):
        assert "NaN" not in html and "nan" not in html


# --- the lesson's model and grammar -------------------------------------------------------------

@pytest.fixture(scope="module")
def lesson(model, tok):
    grammar = compile_choice([answer(n) for n in NAMES])
    return grammar, enumerate_paths(model, tok, PROMPT, grammar)


def test_the_weight_of_a_masked_sample_is_its_product_of_kept_masses(model, tok, lesson):
    grammar, _ = lesson
    y = generate(model, tok, PROMPT, grammar, seed=0)
    assert y.log_p - y.log_q == pytest.approx(sum(math.log(p.kept_mass) for p in y.positions), abs=1e-9)


def test_lesson_estimates_recover_the_exact_table(model, tok, lesson):
    grammar, exact = lesson
    mask_tv = 0.5 * sum(abs(r.conditional - r.masked) for r in exact.rows)
    draws = importance_sample(model, tok, PROMPT, grammar, 3000, seed=1)
    assert draws.tv(exact) < 0.1 < mask_tv - 0.2
    assert draws.tv(exact, weighted=False) == pytest.approx(mask_tv, abs=0.06)
    # every row the model ran is a distinct prefix of a path: never more than the enumeration ran
    assert draws.forward_rows <= exact.forward_rows
    particles = smc(model, tok, PROMPT, grammar, 3000, ess_threshold=0.2, seed=1)
    assert particles.tv(exact) < 0.1
    assert abs(particles.log_z[0] - exact.log_p_grammar) < 0.3


def test_lesson_convergence_table(model, tok, lesson):
    grammar, exact = lesson
    conv = convergence(model, tok, PROMPT, grammar, exact, sizes=(10, 1000), runs=8, ess_threshold=0.2)
    assert [(r.method, r.n) for r in conv.rows] == [(m, n) for n in (10, 1000) for m in ("mask", "is", "smc")]
    for method in ("is", "smc"):
        assert conv.row(method, 1000).mean < conv.row("mask", 1000).mean / 3
        assert conv.row(method, 1000).mean < conv.row(method, 10).mean
    assert conv.row("mask", 1000).mean == pytest.approx(conv.exact_tv, abs=0.06)
    html = conv._repr_html_()
    assert html.count('data-method="') == 6 and 'data-testid="smc-convergence"' in html
