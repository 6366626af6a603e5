"""The lesson «Trampas y decisiones» in the browser, in both editions (``trampas.html`` and the
English ``en/pitfalls.html``): one page load and one «Ejecutar todo» each, then the live results
are checked against the same computations in CPython and against the prose.

Deterministic results (the budget demo, the exact field-order distributions) must equal
CPython's; measured times (the enum scaling) are only checked for shape, never for value.
"""
from __future__ import annotations

import re

import pytest

from lesson.course import NAMES, PROMPT, answer, name_of
from lesson.trampas import budget_split
from lesson.trampas.studies import budget_demo, field_order
from masker import compile_choice
from minigpt.bpe import load_tokenizer
from tests.e2e.helpers import site_model
from tests.e2e.helpers import lesson_after_run_all
from tests.e2e.test_offline import describe, run_axe

pytestmark = pytest.mark.e2e

PAGES = {"es": "trampas.html", "en": "en/pitfalls.html"}  # the two editions
BUDGET, BUDGET_N = 22, 40  # the page's cell «Presupuesto: cortar o enmascarar»
ENUM_SIZES = [10, 100, 1000, 10000]
SPLIT_BUDGET = 16  # the page's cell «Los dos efectos del presupuesto»


@pytest.fixture(scope="module")
def cpython():
    tok, model = load_tokenizer(), site_model()
    names = compile_choice([answer(n) for n in NAMES])
    return {"order": field_order(model, tok),
            "budget": budget_demo(model, tok, budget=BUDGET, n=BUDGET_N, seed=0),
            "split": budget_split(model, tok, PROMPT, names, SPLIT_BUDGET, label=name_of)}


@pytest.fixture(scope="module", params=sorted(PAGES))
def page(request, run_all_pages):
    """The lesson (each edition in turn) after one «Ejecutar todo», every cell finished; console
    errors, uncaught errors and requests to other origins fail the module. ``page.language``: the
    edition's language."""
    for lesson in lesson_after_run_all(run_all_pages, PAGES[request.param]):
        lesson.language = request.param
        yield lesson


def test_every_cell_runs_without_error(page):
    cells = page.locator("[data-testid=cell]")
    states = [cells.nth(i).get_attribute("data-state") for i in range(cells.count())]
    assert cells.count() >= 8 and states == ["done"] * cells.count(), states
    assert not page.problems


def test_budget_demo_aware_is_always_valid_and_plain_is_not(page, cpython):
    demo = page.locator("[data-testid=budget-demo]")
    assert demo.count() == 1
    assert int(demo.get_attribute("data-budget")) == BUDGET
    assert int(demo.get_attribute("data-n")) == BUDGET_N
    aware = float(demo.get_attribute("data-valid-aware"))
    plain = float(demo.get_attribute("data-valid-plain"))
    assert aware == 1.0 and plain < 1.0
    assert plain == cpython["budget"].valid_plain


def test_field_order_distributions_sum_to_one_and_match_cpython(page, cpython):
    view = page.locator("[data-testid=field-order]")
    cells = view.locator("td[data-order]").evaluate_all(
        "els => els.map(e => [e.dataset.kind, e.dataset.order, e.dataset.name, e.dataset.q || e.dataset.p])")
    reference = cpython["order"]
    by_order: dict[tuple[str, str], dict[str, float]] = {}
    for kind, order, name, value in cells:
        by_order.setdefault((kind, order), {})[name] = float(value)
    assert set(by_order) == {(k, o) for k in reference.KINDS for o in reference.ORDERS}
    for (kind, order), dist in by_order.items():
        assert sum(dist.values()) == pytest.approx(1, abs=1e-9), (kind, order)
        for name, value in dist.items():
            assert value == pytest.approx(reference.answers[kind][order][name], abs=1e-9), (order, name)
    assert float(view.get_attribute("data-tv")) == pytest.approx(reference.tv("masked"), abs=1e-9)
    assert float(view.get_attribute("data-tv-exact")) == pytest.approx(reference.tv("exact"), abs=1e-9)
    prose = float(page.locator("[data-testid=prose-tv]").get_attribute("data-value"))
    assert prose == pytest.approx(reference.tv("masked"), abs=1e-9)


def test_budget_split_matches_cpython(page, cpython):
    rows = page.locator("[data-testid=budget-split] tbody tr").evaluate_all(
        "rows => rows.map(r => [r.dataset.text, r.dataset.p, r.dataset.target, r.dataset.masked])")
    reference = cpython["split"]
    assert [text for text, _, _, _ in rows] == reference.labels
    for (_, p, target, masked), p0, t0, q0 in zip(rows, reference.p, reference.target, reference.masked):
        assert (float(p), float(target), float(masked)) == pytest.approx((p0, t0, q0), abs=1e-9)


def test_enum_scaling_has_one_measured_row_per_size(page):
    rows = page.locator("[data-testid=enum-scaling] tbody tr").evaluate_all(
        "rows => rows.map(r => [r.dataset.size, r.dataset.compileMs, r.dataset.maskUs])")
    assert [int(size) for size, _, _ in rows] == ENUM_SIZES
    for _, compile_ms, mask_us in rows:
        assert float(compile_ms) >= 0 and float(mask_us) >= 0
    assert page.locator("[data-testid=cell][data-cell=enums] svg[role=img]").count() == 1


def test_page_after_run_all_has_no_serious_accessibility_violations(page):
    violations = run_axe(page)
    assert not violations, describe(violations)


def test_budget_question_answered_right_shows_correcto(page):
    question = page.locator("[data-testid=quiz-question]#q-budget")
    question.locator("[data-testid=quiz-option][data-correct=true] input").check()
    question.locator("[data-testid=quiz-check]").click()
    assert question.get_attribute("data-result") == "correct"


def test_the_live_views_speak_the_pages_language(page, cpython):
    """The views the page's kernel printed are in the edition's language: English words and
    decimal points on the English page, Spanish ones and decimal commas on the Spanish page."""
    demo = page.locator("[data-testid=budget-demo]").inner_text()
    split = page.locator("[data-testid=budget-split]").locator("xpath=..").inner_text()
    tv = cpython["split"].tv_budget
    if page.language == "en":
        assert demo.startswith("Budget: 22 tokens") and "budget-aware mask" in demo
        assert f"{tv:.3f}" in split and "Total variation distance" in split
        assert not re.search(r"\d,\d{1,2}(?!\d)", demo + split)
    else:
        assert demo.startswith("Presupuesto: 22 tokens") and "respeta el presupuesto" in demo
        assert f"{tv:.3f}".replace(".", ",") in split and "Distancia de variación total" in split
