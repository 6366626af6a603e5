"""The budget's two effects (``lesson.trampas.budget``) against a naive reference: every token path
of a small finite grammar walked with full forward passes, allowed sets by their definition
(``tests.lesson.finite``) and the budget rule written from its definition (a token is allowed when
some text can still be finished within the tokens left), with no masker in the loop; and the
budget sweep's picture (``lesson.trampas.budget_plot``) against the data it draws."""

from __future__ import annotations

import math
import re
from functools import lru_cache

import numpy as np
import pytest

from lesson.course import PROMPT, answer, name_of
from lesson.enumeration import enumerate_paths
from lesson.token_language import count_language
from lesson.trampas.budget import BudgetLanguage, BudgetSplit, BudgetSweep, budget_split
from lesson.trampas.budget_plot import BOTTOM, TOP, name_scale, sweep_desc, sweep_svg, sweep_table, x_of
from masker import BudgetTooSmall, compile_choice
from tests.lesson.finite import FiniteGrammar
from tests.lesson.reference import logsumexp, next_logp

NAMES = ["Benina", "Obdulia"]  # 15 and 16 tokens in their shortest paths: a budget of 16 keeps both
BUDGET = 16


def naive_budget_paths(model64, prompt_ids, grammar: FiniteGrammar, budget: int):
    """Yield (text, tokens, ln p, ln q~) for every path of at most ``budget`` tokens, q~ being the
    mask that allows v after a prefix of j tokens when some text is finished within budget - j
    tokens after it (shortest completions counted by brute force over the vocabulary)."""

    @lru_cache(maxsize=None)
    def shortest(prefix: bytes) -> float:
        if grammar.is_complete(prefix):
            return 0
        nxt = [shortest(prefix + grammar.vocab[v]) for v in grammar.brute_force_allowed_ids(prefix)]
        return 1 + min(nxt, default=math.inf)

    def walk(tokens, prefix, lp, lq):
        left = budget - len(tokens)
        logp = next_logp(model64, prompt_ids + list(tokens))
        allowed = [v for v in grammar.brute_force_allowed_ids(prefix)
                   if shortest(prefix + grammar.vocab[v]) <= left - 1]
        kept = logsumexp(logp[allowed])
        for v in allowed:
            nxt = prefix + grammar.vocab[v]
            a, b = lp + logp[v], lq + logp[v] - kept
            if grammar.is_complete(nxt):
                yield nxt, tokens + (v,), a, b
            else:
                yield from walk(tokens + (v,), nxt, a, b)

    yield from walk((), b"", 0.0, 0.0)


@pytest.fixture(scope="module")
def reference(model, tok):
    texts = [answer(n) for n in NAMES]
    return list(naive_budget_paths(model.astype(np.float64), tok.encode(PROMPT),
                                   FiniteGrammar(texts, tok.vocab), BUDGET))


def test_the_budget_language_enumerates_the_paths_within_the_budget_and_the_budget_aware_mask(
        model, tok, reference):
    grammar = compile_choice([answer(n) for n in NAMES])
    result = enumerate_paths(model, tok, PROMPT, BudgetLanguage(grammar, BUDGET))
    assert all(len(tokens) <= BUDGET for _, tokens, _, _ in reference)
    assert result.paths == len(reference)
    log_total = logsumexp([lp for _, _, lp, _ in reference])
    for text in {t for t, _, _, _ in reference}:
        lps = [lp for t, _, lp, _ in reference if t == text]
        lqs = [lq for t, _, _, lq in reference if t == text]
        row = result.row(text)
        assert row.conditional == pytest.approx(math.exp(logsumexp(lps) - log_total), rel=1e-9)
        assert row.masked == pytest.approx(sum(map(math.exp, lqs)), rel=1e-9)


def test_budget_split_separates_the_target_from_the_mask(model, tok, reference):
    grammar = compile_choice([answer(n) for n in NAMES])
    split = budget_split(model, tok, PROMPT, grammar, BUDGET, label=name_of)
    full = enumerate_paths(model, tok, PROMPT, grammar)
    assert split.labels == [name_of(r.text) for r in full.rows]
    assert split.p == pytest.approx([r.conditional for r in full.rows], rel=1e-12)
    for values in (split.p, split.target, split.masked):
        assert sum(values) == pytest.approx(1, abs=1e-12)
    # The target from the naive paths: p of each text's paths within the budget, renormalised.
    log_within = logsumexp([lp for _, _, lp, _ in reference])
    target = {name_of(t): 0.0 for t in (answer(n) for n in NAMES)}
    for text, _, lp, _ in reference:
        target[name_of(text)] += math.exp(lp - log_within)
    assert split.target == pytest.approx([target[g] for g in split.labels], rel=1e-9)
    tv = 0.5 * sum(abs(p - target[g]) for g, p in zip(split.labels, split.p))
    assert split.tv_budget == pytest.approx(tv, rel=1e-6, abs=1e-15)
    # At most the mass of the paths that do not fit (equal when whole texts drop out).
    assert split.tv_budget <= 1 - math.exp(log_within - full.log_p_grammar) + 1e-12
    assert split.tv_mask == pytest.approx(
        0.5 * sum(abs(t - q) for t, q in zip(split.target, split.masked)))
    html = split._repr_html_()
    assert html.count("<tr data-text=") == len(NAMES)
    assert f'data-tv-mask="{split.tv_mask!r}"' in html


def test_a_budget_no_text_fits_is_refused_and_keys_carry_the_tokens_left(tok):
    grammar = compile_choice([answer(n) for n in NAMES])
    with pytest.raises(BudgetTooSmall):
        BudgetLanguage(grammar, 14).matcher(tok.vocab)
    m = BudgetLanguage(grammar, BUDGET).matcher(tok.vocab)
    child = m.fork()
    child.consume(int(np.flatnonzero(m.mask())[0]))
    assert child.budget == BUDGET - 1 and m.budget == BUDGET
    assert child.state_key()[1] == BUDGET - 1
    # Counting the restricted language agrees with the naive walk's paths (no model needed).
    assert count_language(BudgetLanguage(grammar, 15), tok.vocab).texts == {answer("Benina").encode(): 4}


def test_excluded_lists_the_texts_with_no_path_within_the_budget():
    split = BudgetSplit(3, ["a", "b"], [0.6, 0.4], [0.0, 1.0], [0.0, 1.0])
    assert split.excluded == ["a"] and split.tv_budget == pytest.approx(0.6)
    assert split.tv_mask == 0


SWEEP = BudgetSweep([18, 20, 22, 24], [0.0, 0.0, 0.25, 1.0], [1.0, 1.0, 1.0, 1.0],
                    [0.0, 4.5, 9.0, 12.0], 12.0, 40)


def _polylines(svg: str) -> list[list[tuple[float, float]]]:
    return [[tuple(map(float, p.split(","))) for p in pts.split()]
            for pts in re.findall(r'<polyline points="([^"]*)"', svg)]


def test_the_sweep_picture_draws_the_data_it_is_given():
    svg = sweep_svg(SWEEP)
    cut, aware, free, name = _polylines(svg)
    top, bottom = TOP
    for (x, y), k, v in zip(cut, SWEEP.budgets, SWEEP.valid_cut):
        assert x == pytest.approx(x_of(SWEEP, k), abs=0.05)
        assert (bottom - y) / (bottom - top) == pytest.approx(v, abs=0.002)  # y maps back to the share
    assert [y for _, y in aware] == pytest.approx([top] * len(aware), abs=0.05)  # all valid
    vmax = name_scale(SWEEP)
    for (_, y), v in zip(name, SWEEP.name_aware):
        assert (BOTTOM[1] - y) / (BOTTOM[1] - BOTTOM[0]) * vmax == pytest.approx(v, abs=0.02)
    assert [y for _, y in free] == pytest.approx([BOTTOM[0]] * len(free), abs=0.05)  # the top
    assert [x for x, _ in cut] == sorted(x for x, _ in cut)


def test_the_sweep_picture_has_a_text_alternative_with_decimal_commas():
    svg = sweep_svg(SWEEP)
    assert 'role="img"' in svg and "<title" in svg and 'viewBox="0 0 ' in svg
    desc = sweep_desc(SWEEP)
    assert "22 tokens: válidas 25,0\u202f%" in desc and "4,5 caracteres" in desc
    assert not re.search(r"\d\.\d", desc + sweep_table(SWEEP))
    assert sweep_table(SWEEP).count("<tr>") == 1 + len(SWEEP.budgets)
    assert sweep_table(SWEEP).startswith('<div class="table-scroll"')  # scrolls on a phone
