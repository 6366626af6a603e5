"""The lesson «Niveles de garantía» in the browser: one page load and one «Ejecutar todo»; the
live results are checked against the build's precomputed outputs, against the same computation in
CPython (``lesson.niveles.figures``) and against the issue's guarantees (levels 3 and 4 always meet
their format, JSON mode always parses, the hand-written mask agrees with the compiled one)."""
from __future__ import annotations

import re
from types import SimpleNamespace

import pytest

from lesson import compile_choice, enumerate_paths
from lesson.niveles.levels import RETRY_QUESTIONS, depth_counts, first_nested, retry_arithmetic
from lesson.niveles.figures import fsm, levels
from minigpt.bpe import load_tokenizer
from tests.e2e.helpers import site_model
from tests.e2e.helpers import lesson_after_run_all, read_before_run_all
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
    tok, model = load_tokenizer(), site_model()
    measured = levels(model, tok)
    ps = [enumerate_paths(model, tok, q, compile_choice(t)).p_grammar for q, t in RETRY_QUESTIONS]
    return SimpleNamespace(levels=measured, retry=retry_arithmetic(ps), fsm=fsm(model, tok))


@pytest.fixture(scope="module")
def page(run_all_pages):
    """The lesson after one «Ejecutar todo»; ``page.before["levels"]``, ``["retry"]`` and
    ``["agreement"]`` hold the precomputed results."""
    yield from lesson_after_run_all(run_all_pages, PAGE)


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
    assert page.before["levels"] == page.evaluate(LEVEL_ROWS)
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
    for row, pre in zip(live, page.before["retry"]):  # the build's CPython, to float64 rounding
        assert row == pytest.approx(pre, abs=1e-12)


def test_hand_written_mask_agrees_with_the_compiled_one(page, cpython):
    agreement = page.evaluate(AGREEMENT)
    assert agreement["mismatches"] == 0
    assert agreement["positions"] >= 500
    assert agreement == page.before["agreement"]
    assert agreement["positions"] == cpython.fsm["positions"]


def test_page_after_run_all_has_no_serious_accessibility_violations(page):
    violations = run_axe(page)
    assert not violations, describe(violations)


DEPTHS = """() => [...document.querySelectorAll('[data-testid=depth-table] tr[data-depth]')].map(r =>
    [+r.dataset.depth, +r.dataset.count])"""


def test_pictures_and_the_nested_answer_after_run_all(page, cpython):
    plot = page.locator("[data-testid=retry-plot]")
    assert plot.count() == 1 and plot.get_attribute("role") == "img"
    assert plot.locator("polyline[data-series=per_question]").count() == 1
    assert plot.locator("polyline[data-series=naive]").count() == 1
    depths = page.evaluate(DEPTHS)
    assert depths == [[d, c] for d, c in depth_counts(cpython.levels[4].texts).items()]
    assert page.locator("[data-testid=depth-plot]").count() == 1
    index, text = first_nested(cpython.levels[4].texts)
    output = page.locator("[data-cell=nivel4] [data-testid=cell-output]").inner_text()
    assert f"la primera que anida es la número {index + 1}: {text}" in output


def test_every_question_has_one_right_option_and_feedback_for_each(page):
    questions = page.locator("[data-testid=quiz-question]")
    assert questions.count() >= 8
    for i in range(questions.count()):
        q = questions.nth(i)
        assert q.locator("[data-correct=true]").count() == 1, q.get_attribute("id")


def test_budget_question_wrong_then_right_through_the_ui(page):
    question = page.locator("[data-testid=quiz-question]#q-budget")
    question.get_by_role("radio", name="Que el modelo no sabe escribir el objeto.", exact=True).check()
    question.get_by_role("button", name="Comprobar").click()
    assert question.get_attribute("data-result") == "wrong"
    assert "la más corta necesita" in question.locator("[data-testid=quiz-feedback]").inner_text()
    question.get_by_role("radio", name="Nada del modelo: con 12 tokens no cabe ninguna respuesta válida.",
                         exact=True).check()
    question.get_by_role("button", name="Comprobar").click()
    assert question.get_attribute("data-result") == "correct"


def test_level_3_prints_each_name_s_conditional_and_masked_probability(page):
    """The q-names quiz quotes these lines: the live cell prints them from the first cell's
    enumeration, as the build did."""
    from lesson import compile_json_schema, enumerate_paths
    from lesson.niveles.levels import PROMPT, SCHEMA
    from lesson.numbers import es_decimal
    e = enumerate_paths(site_model(), load_tokenizer(), PROMPT, compile_json_schema(SCHEMA))
    output = page.locator("[data-cell=nivel3] [data-testid=cell-output]").inner_text()
    for row in e.rows:
        name = row.label.split('"')[3]
        assert (f"{name}: condicionada {es_decimal(row.conditional, 4)}, "
                f"con máscara {es_decimal(row.masked, 4)}") in output


# ---------------------------------------------------------------- the English edition

PAGE_EN = "en/levels.html"
for _page in (PAGE, PAGE_EN):  # the precomputed results, read before «Ejecutar todo»
    read_before_run_all(_page, "levels", lambda lesson: lesson.evaluate(LEVEL_ROWS))
    read_before_run_all(_page, "retry", lambda lesson: lesson.evaluate(RETRY_ROWS))
    read_before_run_all(_page, "agreement", lambda lesson: lesson.evaluate(AGREEMENT))


@pytest.fixture(scope="module")
def page_en(run_all_pages):
    """The English lesson after one «Run all»; ``page_en.before`` holds the precomputed results."""
    yield from lesson_after_run_all(run_all_pages, PAGE_EN)


def test_english_edition_measures_what_the_spanish_one_does(page_en, cpython):
    """Every cell runs; the live levels, retry rates and mask check equal the precomputed ones and
    CPython's (the English cells compute what the Spanish ones do)."""
    cells = page_en.locator("[data-testid=cell]")
    states = [cells.nth(i).get_attribute("data-state") for i in range(cells.count())]
    assert cells.count() >= 9 and states == ["done"] * cells.count(), states
    assert not page_en.problems
    live = {r["level"]: r for r in page_en.evaluate(LEVEL_ROWS)}
    assert page_en.before["levels"] == page_en.evaluate(LEVEL_ROWS)
    for level in (0, 2, 3, 4):
        ref = cpython.levels[level]
        assert (live[level]["n"], live[level]["parse"], live[level]["schema"]) == \
            (ref.n, ref.parse_rate, ref.schema_rate), level
    for row, ref in zip(page_en.evaluate(RETRY_ROWS), cpython.retry):
        assert row["per_question"] == pytest.approx(ref["per_question"], abs=1e-9)
    agreement = page_en.evaluate(AGREEMENT)
    assert agreement == page_en.before["agreement"] and agreement["mismatches"] == 0
    assert agreement["positions"] == cpython.fsm["positions"]


def test_english_outputs_speak_english_with_english_numbers(page_en, cpython):
    from lesson import compile_json_schema, enumerate_paths
    from lesson.niveles.levels import PROMPT, SCHEMA
    from lesson.numbers import en_decimal
    table = page_en.locator("[data-cell=tabla] [data-testid=cell-output]").inner_text()
    assert "not measured: 0 valid of 200" in table and "level 4 against level 3" in table
    assert "sin medir" not in table and not re.search(r"\d,\d\d?\b", table)
    index, text = first_nested(cpython.levels[4].texts)
    output = page_en.locator("[data-cell=nivel4] [data-testid=cell-output]").inner_text()
    assert f"the first one that nests is number {index + 1}: {text}" in output
    assert "Answers by the depth of parentheses of their note" in output
    e = enumerate_paths(site_model(), load_tokenizer(), PROMPT, compile_json_schema(SCHEMA))
    output = page_en.locator("[data-cell=nivel3] [data-testid=cell-output]").inner_text()
    for row in e.rows:
        name = row.label.split('"')[3]
        assert f"{name}: conditional {en_decimal(row.conditional, 4)}, masked {en_decimal(row.masked, 4)}" in output
    plot = page_en.locator("[data-testid=retry-plot]")
    assert plot.get_attribute("aria-label").startswith("Probability of failing k tries in a row. k = 1:")


def test_english_budget_question_wrong_then_right_through_the_ui(page_en):
    question = page_en.locator("[data-testid=quiz-question]#q-budget")
    question.get_by_role("radio", name="That the model cannot write the object.", exact=True).check()
    question.get_by_role("button", name="Check").click()
    assert question.get_attribute("data-result") == "wrong"
    assert "the shortest needs" in question.locator("[data-testid=quiz-feedback]").inner_text()
    question.get_by_role("radio", name="Nothing about the model: no valid answer fits in 12 tokens.",
                         exact=True).check()
    question.get_by_role("button", name="Check").click()
    assert question.get_attribute("data-result") == "correct"
