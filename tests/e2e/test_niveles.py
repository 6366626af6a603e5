"""The lesson «Niveles de garantía» in the browser: one page load and one «Ejecutar todo»; the
live results are checked against the build's precomputed outputs, against the same computation in
CPython (``lesson.niveles.figures``) and against the issue's guarantees (levels 3 and 4 always meet
their format, JSON mode always parses, the hand-written mask agrees with the compiled one)."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from lesson import compile_choice, enumerate_paths
from lesson.niveles.levels import RETRY_QUESTIONS, retry_arithmetic
from lesson.niveles.figures import fsm, levels
from minigpt.bpe import load_tokenizer
from minigpt.gpt import load_model
from tests.e2e.helpers import lesson_after_run_all
from tests.e2e.test_offline import describe, run_axe

pytestmark = pytest.mark.e2e

PAGE = "niveles.html"
LEVEL_ROWS = """() => [...document.querySelectorAll('[data-testid=levels-table] tr[data-level]')].map(r =>
    ({level: +r.dataset.level, n: +r.dataset.n, parse: +r.dataset.parseRate, schema: +r.dataset.schemaRate}))"""
RETRY_ROWS = """() => [...document.querySelectorAll('[data-testid=retry-table] tr[data-k]')].map(r =>
    ({k: +r.dataset.k, per_question: +r.dataset.perQuestion, naive: +r.dataset.naive}))"""
AGREEMENT = """() => { const a = document.querySelector('[data-testid=fsm-agreement]');
    return a && {positions: +a.dataset.positions, mismatches: +a.dataset.mismatches}; }"""


@pytest.fixture(scope="module")
def cpython():
    """The levels, the retry rates and the machine check, computed in CPython with the page's code."""
    tok, model = load_tokenizer(), load_model()
    measured = levels(model, tok)
    ps = [enumerate_paths(model, tok, q, compile_choice(t)).p_grammar for q, t in RETRY_QUESTIONS]
    return SimpleNamespace(levels=measured, retry=retry_arithmetic(ps), fsm=fsm(model, tok))


@pytest.fixture(scope="module")
def page(browser, servers):
    """The lesson after one «Ejecutar todo»; ``page.before`` holds the precomputed results."""
    yield from lesson_after_run_all(browser, servers, PAGE, before=lambda lesson: SimpleNamespace(
        levels=lesson.evaluate(LEVEL_ROWS), retry=lesson.evaluate(RETRY_ROWS),
        agreement=lesson.evaluate(AGREEMENT)))


def test_every_cell_runs_without_error(page):
    cells = page.locator("[data-testid=cell]")
    states = [cells.nth(i).get_attribute("data-state") for i in range(cells.count())]
    assert cells.count() >= 9 and states == ["done"] * cells.count(), states
    assert not page.problems


def test_levels_table_has_the_guarantees_of_each_level(page):
    rows = {r["level"]: r for r in page.evaluate(LEVEL_ROWS)}
    assert sorted(rows) == [0, 1, 2, 3, 4]
    assert rows[0]["n"] >= 200
    for level in (3, 4):
        assert rows[level]["parse"] == 1 and rows[level]["schema"] == 1, rows[level]
    assert rows[2]["parse"] == 1
    assert all(0 <= r["parse"] <= 1 and 0 <= r["schema"] <= 1 for r in rows.values())


def test_levels_in_the_browser_equal_cpython_and_the_precomputed_table(page, cpython):
    live = {r["level"]: r for r in page.evaluate(LEVEL_ROWS)}
    assert page.before.levels == page.evaluate(LEVEL_ROWS)
    for level in (0, 2, 3, 4):
        ref = cpython.levels[level]
        assert (live[level]["n"], live[level]["parse"], live[level]["schema"]) == \
            (ref.n, ref.parse_rate, ref.schema_rate), level


def test_retry_arithmetic_in_the_browser_equals_cpython(page, cpython):
    live = page.evaluate(RETRY_ROWS)
    assert [r["k"] for r in live] == [1, 2, 3, 4, 5]
    for row, ref in zip(live, cpython.retry):
        assert row["per_question"] == pytest.approx(ref["per_question"], abs=1e-9)
        assert row["naive"] == pytest.approx(ref["naive"], abs=1e-9)
        assert row["per_question"] >= row["naive"] - 1e-12
    for row, pre in zip(live, page.before.retry):  # the build's CPython, to float64 rounding
        assert row == pytest.approx(pre, abs=1e-12)


def test_hand_written_mask_agrees_with_the_compiled_one(page, cpython):
    agreement = page.evaluate(AGREEMENT)
    assert agreement["mismatches"] == 0
    assert agreement["positions"] >= 500
    assert agreement == page.before.agreement
    assert agreement["positions"] == cpython.fsm["positions"]


def test_page_after_run_all_has_no_serious_accessibility_violations(page):
    violations = run_axe(page)
    assert not violations, describe(violations)


def test_cells_question_answered_through_the_ui(page):
    question = page.locator("[data-testid=quiz-question]#q-cells")
    question.get_by_role("radio", name="En ninguna.", exact=True).check()
    question.get_by_role("button", name="Comprobar").click()
    assert question.get_attribute("data-result") == "correct"
