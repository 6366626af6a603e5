"""The lesson «Corregir la distorsión» in the browser: one page load and one «Ejecutar todo», then
the live results are checked against the same computations in CPython (the cells are seeded, so
the browser must draw the same particles) and against the prose. The English edition
(``en/distortion.html``, «Correcting the distortion»): its exercise cell and its log-weight picture.
"""
from __future__ import annotations

import re
from types import SimpleNamespace

import pytest

import build

from lesson import compile_choice, convergence, enumerate_paths, importance_sample, smc
from lesson.course import NAMES, PROMPT, answer
from minigpt.bpe import load_tokenizer
from tests.e2e.helpers import site_model
from tests.e2e.helpers import lesson_after_run_all, set_code, wait_cell, without_python
from tests.e2e.test_offline import describe, run_axe

pytestmark = pytest.mark.e2e

PAGE = "distorsion.html"
SIZES, RUNS, THRESHOLD = [10, 100, 1000], 20, 0.2  # the cell «Convergencia»


@pytest.fixture(scope="module")
def cpython():
    """The cells' results computed in CPython with the page's code and seeds."""
    tok, model = load_tokenizer(), site_model()
    grammar = compile_choice([answer(n) for n in NAMES])
    exact = enumerate_paths(model, tok, PROMPT, grammar)
    return SimpleNamespace(
        exact=exact,
        draws=importance_sample(model, tok, PROMPT, grammar, 1000, seed=0),
        conv=convergence(model, tok, PROMPT, grammar, exact, sizes=SIZES, runs=RUNS, seed=0,
                         ess_threshold=THRESHOLD),
        particles=smc(model, tok, PROMPT, grammar, 20, ess_threshold=THRESHOLD, seed=0))


@pytest.fixture(scope="module")
def page(run_all_pages):
    yield from lesson_after_run_all(run_all_pages, PAGE)


def convergence_rows(page) -> list[dict]:
    return page.locator("[data-testid=cell] [data-testid=smc-convergence] tbody tr").evaluate_all(
        "rows => rows.map(r => ({method: r.dataset.method, n: +r.dataset.n, tv: +r.dataset.tv}))")


def test_every_cell_runs_without_error(page):
    cells = page.locator("[data-testid=cell]")
    states = [cells.nth(i).get_attribute("data-state") for i in range(cells.count())]
    assert cells.count() >= 5 and states == ["done"] * cells.count(), states
    assert not page.problems


def test_at_the_largest_n_both_corrections_beat_the_mask(page):
    rows = {(r["method"], r["n"]): r["tv"] for r in convergence_rows(page)}
    assert set(rows) == {(m, n) for m in ("mask", "is", "smc") for n in SIZES}
    largest = max(SIZES)
    assert rows[("is", largest)] < rows[("mask", largest)]
    assert rows[("smc", largest)] < rows[("mask", largest)]


def test_convergence_in_the_page_is_cpythons(page, cpython):
    for row in convergence_rows(page):
        expected = cpython.conv.row(row["method"], row["n"]).mean
        assert row["tv"] == pytest.approx(expected, abs=1e-9), row


def test_weighted_draws_and_particles_are_cpythons(page, cpython):
    weights = page.locator("[data-testid=cell] [data-testid=weights-summary]")
    assert float(weights.get_attribute("data-log-z")) == pytest.approx(cpython.draws.log_z[0], abs=1e-6)
    assert float(weights.get_attribute("data-ess")) == pytest.approx(cpython.draws.final_ess(0), rel=1e-6)
    particles = page.locator("[data-testid=cell] [data-testid=particles-summary][data-method=smc]")
    assert float(particles.get_attribute("data-log-z")) == pytest.approx(cpython.particles.log_z[0], abs=1e-6)
    paths = page.locator("[data-testid=cell] [data-testid=particle-paths]")
    assert paths.get_attribute("data-resampled") == ",".join(map(str, cpython.particles.resampled[0]))


def test_prose_quotes_the_same_convergence_as_the_cell(page, cpython):
    """The page was built with the prose figures of lesson.distorsion.figures: the table of the
    precomputed output and the live one hold the same numbers, and the prose's text shows them."""
    prose = page.locator("article").inner_text()
    largest = max(SIZES)
    for method in ("is", "smc"):
        shown = f"{cpython.conv.row(method, largest).mean:.3f}".replace(".", ",")
        assert shown in prose, (method, shown)


def test_page_after_run_all_has_no_serious_accessibility_violations(page):
    violations = run_axe(page)
    assert not violations, describe(violations)


def test_linked_from_the_index_and_from_la_mascara(page, servers):
    built = {spec["out"] for spec in build.PAGES}  # BUILD_ONLY=distorsion builds the index alone
    for source in [s for s in ("index.html", "mascara.html") if s in built]:
        served = page.evaluate(f"async () => (await fetch('{source}')).text()")
        assert 'href="distorsion.html"' in served, source


WRONG_ANSWER = '''import numpy as np
from lesson.distorsion import comprobar_remuestreo

def sistematico(pesos, u):
    M = len(pesos)
    acumulada = np.cumsum(pesos) / np.sum(pesos)
    return [int(np.searchsorted(acumulada, u + k / M)) for k in range(M)]

comprobar_remuestreo(sistematico)
'''
RIGHT_ANSWER = '''import numpy as np
from lesson.distorsion import comprobar_remuestreo

def sistematico(pesos, u):
    M = len(pesos)
    acumulada = np.cumsum(pesos) / np.sum(pesos)
    elegidos = []
    for k in range(M):
        i = 0
        while i < M - 1 and acumulada[i] <= (u + k) / M:
            i += 1
        elegidos.append(i)
    return elegidos

comprobar_remuestreo(sistematico)
'''


def run_exercise(page, code: str):
    cell = page.locator("[data-testid=cell][data-cell=remuestreo]")
    set_code(page, cell, code)
    cell.locator("[data-testid=cell-run]").click()
    assert wait_cell(cell) == "done"
    return cell.locator("[data-testid=cell-output] [data-testid=resampling-check]")


def test_the_exercise_checks_the_readers_own_edits(page):
    """The starter (run by «Ejecutar todo») is not yet right; a wrong edit is told the first index
    that differs, with the hint; a right edit is told it is correct."""
    cell = page.locator("[data-testid=cell][data-cell=remuestreo]")
    starter = cell.locator("[data-testid=resampling-check]")
    assert starter.get_attribute("data-ok") == "false" and "0 índices" in starter.inner_text()
    report = run_exercise(page, WRONG_ANSWER)
    assert report.get_attribute("data-ok") == "false"
    # u + k/M instead of (u + k)/M: the point of k = 0 is already 0.3, past particle 0
    assert report.get_attribute("data-index") == "0"
    text = report.inner_text()
    assert "el primer índice distinto es k = 0" in text and "la partícula 0" in text
    assert "0,060; 0,260; 0,460; 0,660; 0,860" in text
    report = run_exercise(page, RIGHT_ANSWER)
    assert report.get_attribute("data-ok") == "true" and "Correcto" in report.inner_text()
    assert not page.problems


def test_the_weight_picture_reads_at_390_px(browser, servers):
    """The log-weight picture fits a phone's width, keeps its text legible, and says what it shows."""
    context = browser.new_context(viewport={"width": 390, "height": 800})
    try:
        phone = without_python(context.new_page())
        phone.goto(servers["plain"] + PAGE)
        svg = phone.locator("[data-testid=weight-curves] svg")
        box = svg.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390
        smallest = svg.locator("text").evaluate_all(
            "ts => Math.min(...ts.map(t => t.getBoundingClientRect().height))")
        assert smallest >= 10, smallest
        assert svg.get_attribute("role") == "img" and "Benina" in svg.get_attribute("aria-label")
        assert phone.locator("[data-testid=weight-curves] details table").count() == 1
    finally:
        context.close()


# The English edition (en/distortion.html): the same exercise and picture, in English. The page is
# opened without «Run all»: the exercise cell needs no model, and the picture is built in.
EN_PAGE = "en/distortion.html"
EN_WRONG_ANSWER = '''import numpy as np
from lesson.distorsion import check_resampling

def systematic(weights, u):
    M = len(weights)
    cumulative = np.cumsum(weights) / np.sum(weights)
    return [int(np.searchsorted(cumulative, u + k / M)) for k in range(M)]

check_resampling(systematic)
'''
EN_RIGHT_ANSWER = '''import numpy as np
from lesson.distorsion import check_resampling

def systematic(weights, u):
    M = len(weights)
    cumulative = np.cumsum(weights) / np.sum(weights)
    chosen = []
    for k in range(M):
        i = 0
        while i < M - 1 and cumulative[i] <= (u + k) / M:
            i += 1
        chosen.append(i)
    return chosen

check_resampling(systematic)
'''
SPANISH_WORDS = ("Aún no", "índice", "partícula", "posición", "comilla", "pesos", "Correcto")


@pytest.fixture
def english(shared_pages):
    """The English page as it loaded (the session's tab, ``SharedPages``), kernel ready."""
    with shared_pages.checked():
        yield shared_pages.get(EN_PAGE)


def test_the_english_exercise_checks_the_readers_own_edits(english):
    """The precomputed report of the starter is English; a wrong edit is told, in English and with
    decimal points, the first index that differs; a right edit is told it is correct."""
    page = english
    cell = page.locator("[data-testid=cell][data-cell=remuestreo]")
    starter = cell.locator("[data-testid=resampling-check]")
    assert starter.get_attribute("data-ok") == "false"
    text = starter.inner_text()
    assert "Not yet" in text and "0 indices" in text, text
    report = run_exercise(page, EN_WRONG_ANSWER)
    assert report.get_attribute("data-ok") == "false" and report.get_attribute("data-index") == "0"
    text = report.inner_text()
    assert "the first index that differs is k = 0" in text and "falls in particle 0" in text, text
    assert "[0.060, 0.260, 0.460, 0.660, 0.860]" in text, text
    assert not any(word in text for word in SPANISH_WORDS), text
    report = run_exercise(page, EN_RIGHT_ANSWER)
    assert report.get_attribute("data-ok") == "true"
    assert "Correct: your function gives the same indices as the library" in report.inner_text()
    assert not page.problems


def test_the_english_weight_picture_is_english_and_reads_at_390_px(browser, servers):
    """The English page's log-weight picture: English words, decimal points, the same dots as the
    Spanish page's, and it fits a phone's width with legible text."""
    context = browser.new_context(viewport={"width": 390, "height": 800})
    try:
        phone = without_python(context.new_page())
        phone.goto(servers["plain"] + PAGE)
        dots_es = phone.locator("[data-testid=weight-curves] svg circle[data-position]").evaluate_all(
            "cs => cs.map(c => [c.dataset.curve, c.dataset.position, c.dataset.logW, c.getAttribute('cy')])")
        phone.goto(servers["plain"] + EN_PAGE)
        figure = phone.locator("[data-testid=weight-curves]")
        svg = figure.locator("svg")
        box = svg.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390
        smallest = svg.locator("text").evaluate_all(
            "ts => Math.min(...ts.map(t => t.getBoundingClientRect().height))")
        assert smallest >= 10, smallest
        label = svg.get_attribute("aria-label")
        assert label.startswith("ln w of the prefix against the position, for Benina and "), label
        words = svg.locator("text").all_text_contents() + [label]
        assert "position j" in words
        shown = " ".join(words) + " " + figure.locator("details table").text_content()
        assert not any(word in shown for word in SPANISH_WORDS), shown
        assert not re.search(r"\d,\d", shown), shown
        dots_en = svg.locator("circle[data-position]").evaluate_all(
            "cs => cs.map(c => [c.dataset.curve, c.dataset.position, c.dataset.logW, c.getAttribute('cy')])")
        assert dots_en == dots_es and dots_en
    finally:
        context.close()
