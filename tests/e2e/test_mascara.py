"""The lesson «La máscara» in the browser: one page load and one «Ejecutar todo», then every
live result is checked against the same computation in CPython and against the prose.

The page and the CPython results are module fixtures, so the model runs once in each.
Reference values come from ``lesson`` in CPython with the committed weights: the
grammar G (``figures.NAMES`` / ``figures.answer``), the masked samples for seeds 0..4 and
the exact enumeration of token paths.
"""
from __future__ import annotations

import json
import re
from types import SimpleNamespace

import jsonschema
import pytest

from lesson import compile_choice, compile_json_schema, compile_regex
from lesson.enumeration import enumerate_paths
from lesson.course import KEY, NAMES, PROMPT, answer, name_of
from lesson.mascara.figures import ANY_PATTERN, ANY_SCHEMA
from lesson.sampling import generate
from minigpt.bpe import load_tokenizer
from tests.e2e.helpers import site_model
from tests.e2e.helpers import lesson_after_run_all
from tests.e2e.test_offline import describe, run_axe

pytestmark = pytest.mark.e2e

PAGE = "mascara.html"
MASKED_SEEDS = range(5)  # the page's cell samples with seeds 0..4
PATTERN, SCHEMA = ANY_PATTERN, ANY_SCHEMA  # the page's cell «Una expresión regular y un JSON Schema»


@pytest.fixture(scope="module")
def cpython():
    """G, the masked samples and the enumeration, computed in CPython with the page's code."""
    tok, model = load_tokenizer(), site_model()
    texts = [answer(name) for name in NAMES]
    grammar = compile_choice(texts)
    return SimpleNamespace(
        texts=texts,
        masked=[generate(model, tok, PROMPT, grammar, seed=s).text for s in MASKED_SEEDS],
        enumeration=enumerate_paths(model, tok, PROMPT, grammar),
        regex=generate(model, tok, PROMPT, compile_regex(PATTERN), seed=0).text,
        schema=generate(model, tok, PROMPT, compile_json_schema(SCHEMA), seed=0).text)


@pytest.fixture(scope="module")
def page(run_all_pages):
    """The lesson after one «Ejecutar todo», every cell finished. The page's console errors,
    uncaught errors and requests to other origins are collected in ``page.problems``."""
    yield from lesson_after_run_all(run_all_pages, PAGE)


def texts_of(page, testid: str, cell: str = "Con y sin máscara") -> list[str]:
    return page.locator(f'[data-testid=cell][aria-label="{cell}"] [data-testid={testid}]').evaluate_all(
        "els => els.map(e => e.textContent)")


def enumeration_rows(page) -> list[dict]:
    return page.locator("[data-testid=enumeration-table] tbody tr").evaluate_all(
        "rows => rows.map(r => ({text: r.dataset.text, conditional: r.dataset.conditional,"
        " masked: r.dataset.masked}))")


def test_every_cell_runs_without_error(page):
    cells = page.locator("[data-testid=cell]")
    states = [cells.nth(i).get_attribute("data-state") for i in range(cells.count())]
    assert cells.count() >= 4 and states == ["done"] * cells.count(), states
    assert not page.problems


def test_masked_samples_are_texts_of_g_and_parse_as_json_in_the_page(page, cpython):
    samples = texts_of(page, "masked-sample")
    assert len(samples) == 5
    assert set(samples) <= set(cpython.texts)
    parsed = page.locator('[aria-label="Con y sin máscara"] [data-testid=masked-sample]').evaluate_all(
        "els => els.map(e => JSON.parse(e.textContent))")
    assert parsed == [json.loads(s) for s in samples]
    assert all(set(p) == {KEY} and p[KEY] in NAMES for p in parsed)


def test_unmasked_samples_never_open_a_brace(page):
    samples = texts_of(page, "unmasked-sample")
    assert len(samples) >= 3
    assert all(s.strip() for s in samples)
    assert not [s for s in samples if "{" in s]


def test_masked_samples_are_the_ones_cpython_draws_with_the_same_seeds(page, cpython):
    assert texts_of(page, "masked-sample") == cpython.masked


def test_enumeration_table_is_two_distributions_over_g(page, cpython):
    rows = enumeration_rows(page)
    assert sorted(r["text"] for r in rows) == sorted(cpython.texts)
    for column in ("conditional", "masked"):
        values = [float(r[column]) for r in rows]
        assert all(0 < v < 1 for v in values), column
        assert sum(values) == pytest.approx(1, abs=1e-9), column


def test_enumeration_in_the_page_matches_cpython_and_the_prose(page, cpython):
    browser_p = float(page.locator("[data-testid=p-grammar]").get_attribute("data-value"))
    prose_p = float(page.locator("[data-testid=prose-p-grammar]").get_attribute("data-value"))
    expected = cpython.enumeration.p_grammar
    assert expected > 0  # no float64 underflow, so the comparison below means something
    assert browser_p == pytest.approx(expected, rel=1e-6)  # 6 significant digits
    assert prose_p == pytest.approx(expected, rel=1e-6)
    for row in enumeration_rows(page):
        reference = cpython.enumeration.row(row["text"])
        assert float(row["conditional"]) == pytest.approx(reference.conditional, abs=1e-9), row["text"]
        assert float(row["masked"]) == pytest.approx(reference.masked, abs=1e-9), row["text"]


def test_page_after_run_all_has_no_serious_accessibility_violations(page):
    violations = run_axe(page)  # the quiz options here are text, not math-only labels
    assert not violations, describe(violations)


def test_cells_question_answered_with_the_enumeration_shows_correcto(page, cpython):
    """The question that predicts the enumeration's winner under the mask from the walk's table,
    answered through the UI with CPython's largest q~ (each option's label opens with its name)."""
    top = max(cpython.enumeration.rows, key=lambda r: r.masked)
    question = page.locator("[data-testid=quiz-question]#q-cells")
    question.get_by_role("radio", name=re.compile("^" + re.escape(name_of(top.label)) + ",")).check()
    question.get_by_role("button", name="Comprobar").click()
    assert question.get_attribute("data-result") == "correct"
    assert question.locator("[data-testid=quiz-feedback]").inner_text().startswith("Correcto")


def test_a_regex_and_a_json_schema_on_the_model_match_cpython(page, cpython):
    cell = '[data-testid=cell][aria-label="Una expresión regular y un JSON Schema"]'
    (sentence,) = texts_of(page, "masked-sample", "Una expresión regular y un JSON Schema")
    assert re.fullmatch(PATTERN, sentence) and sentence == cpython.regex
    printed = page.locator(f"{cell} [data-testid=cell-output]").inner_text()
    jsonschema.validate(json.loads(cpython.schema), SCHEMA)
    assert repr(json.loads(cpython.schema)) in printed
    view = page.locator(f"{cell} [data-testid=positions-view]")
    assert view.locator("[data-position]").count() == view.locator("[data-panel]").count() > 5


def test_positions_view_opens_one_position_on_click_and_with_the_arrow_keys(page):
    view = page.locator('[aria-label="Con y sin máscara"] [data-testid=positions-view]')
    visible = "els => els.filter(e => getComputedStyle(e).display !== 'none').map(e => e.dataset.panel)"
    first = view.locator("[data-panel]").evaluate_all(visible)
    assert len(first) == 1  # the first real choice is open
    view.locator('[data-position="2"]').click()
    assert view.locator("[data-panel]").evaluate_all(visible) == ["2"]
    page.keyboard.press("ArrowRight")
    assert view.locator("[data-panel]").evaluate_all(visible) == ["3"]
    panel = view.locator('[data-panel="3"]')
    assert "antes de la máscara" in panel.inner_text() and "masa conservada" in panel.inner_text()


def test_the_cover_view_opens_every_token_of_a_position_searchable(page):
    """The pre-rendered view at the top: a position's whole vocabulary, the removed ones grey."""
    cover = page.locator("[data-testid=cover-view]")
    visible = cover.locator("[data-panel]").evaluate_all(
        "els => els.filter(e => getComputedStyle(e).display !== 'none').map(e => e.dataset.panel)")
    panel = cover.locator(f'[data-panel="{visible[0]}"]')
    panel.locator("[data-testid=pv-all] summary").click()
    panel.locator(".pv-all-body[data-filled]").wait_for()  # the list is built on the toggle event
    rows = panel.locator(".pv-all-list li")
    assert rows.count() == 512
    kept = panel.locator(".pv-all-list li:not(.out)").count()
    assert 1 <= kept < 512
    panel.locator(".pv-all-search").fill("J")
    shown = panel.locator(".pv-all-list li:not([hidden])")
    assert 0 < shown.count() < 512
    assert all("j" in t.lower() for t in shown.evaluate_all("els => els.map(e => e.dataset.label)"))
    n = shown.count()
    allowed = panel.locator(".pv-all-list li:not([hidden]):not(.out)").count()
    status = panel.locator(".pv-all-body [role=status]").inner_text()
    assert status.startswith(f"{n} de los 512 tokens contiene{'' if n == 1 else 'n'} «J»"), status
    if n > 1:
        ending = ("ninguno está permitido" if allowed == 0 else "todos están permitidos" if allowed == n
                  else f"{allowed} de ellos {'está permitido' if allowed == 1 else 'están permitidos'}")
        assert status.endswith("; " + ending), status


def test_the_picture_draws_the_enumeration_the_page_computes(page):
    """The build-time picture of the five names and the live enumeration table agree: each bar's
    probability is the table's value for that name, to 9 decimals."""
    bars = page.locator("[data-testid=names-picture] rect[data-kind]").evaluate_all(
        "els => els.map(e => [e.dataset.kind, e.dataset.name, e.dataset.value])")
    table = {name_of(r["text"]): r for r in enumeration_rows(page)}
    assert len(bars) == 2 * len(NAMES) and {name for _, name, _ in bars} == set(NAMES)
    for kind, name, value in bars:
        assert float(value) == pytest.approx(float(table[name][kind]), abs=1e-9), (kind, name)
    assert page.locator("[data-testid=names-picture] title").count() == 1


def test_the_rejection_cell_prints_the_counts_each_distribution_expects(page):
    """The live rejection cell prints, per text, how often it came and what each column expects:
    n times the exact conditional and n times the mask's probability of that same cell's table."""
    out = page.locator('[data-testid=cell][aria-label="Muestreo por rechazo con una gramática alcanzable"] '
                       "[data-testid=cell-output]").inner_text()
    lines = re.findall(r"'(.+?) '\s+condicionada (\d+,\d+), máscara (\d+,\d+) · vistas (\d+) de (\d+); "
                       r"esperadas: (\d+,\d+) y (\d+,\d+)", out)
    assert len(lines) == 3, out
    number = lambda s: float(s.replace(",", "."))  # noqa: E731
    assert sum(int(seen) for _, _, _, seen, _, _, _ in lines) == int(lines[0][4])
    for _, cond, mask, _, n, exp_cond, exp_mask in lines:
        rounding = int(n) * 0.0005 + 0.05 + 1e-9  # the columns print 3 decimals, the counts 1
        assert number(exp_cond) == pytest.approx(int(n) * number(cond), abs=rounding)
        assert number(exp_mask) == pytest.approx(int(n) * number(mask), abs=rounding)


def test_the_prefix_question_answered_right_through_the_page(page):
    question = page.locator("[data-testid=quiz-question]#q-prefix")
    question.locator("[data-testid=quiz-option][data-correct=true] input").check()
    question.get_by_role("button", name="Comprobar").click()
    assert question.get_attribute("data-result") == "correct"
