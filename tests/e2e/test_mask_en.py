"""The English edition of «La máscara» (``en/mask.html``) in the browser: one page load and one
«Run all», then the live results are checked against the same computation in CPython, as
``test_mascara.py`` does for the Spanish page, and the page's own text is checked for English
(its cells' labels and printed lines, its pictures)."""
from __future__ import annotations

import json
import re
from types import SimpleNamespace

import pytest

from lesson import compile_choice, compile_json_schema, compile_regex
from lesson.course import KEY, NAMES, PROMPT, answer, name_of
from lesson.enumeration import enumerate_paths
from lesson.mascara.figures import ANY_PATTERN, ANY_SCHEMA
from lesson.sampling import generate
from minigpt.bpe import load_tokenizer
from tests.e2e.helpers import lesson_after_run_all, site_model

pytestmark = pytest.mark.e2e

PAGE = "en/mask.html"
MASKED_SEEDS = range(5)
MASK_CELL = "With and without the mask"
ANY_CELL = "A regular expression and a JSON Schema"
REJECTION_CELL = "Rejection sampling with a reachable grammar"


@pytest.fixture(scope="module")
def cpython():
    tok, model = load_tokenizer(), site_model()
    texts = [answer(name) for name in NAMES]
    grammar = compile_choice(texts)
    return SimpleNamespace(
        texts=texts,
        masked=[generate(model, tok, PROMPT, grammar, seed=s).text for s in MASKED_SEEDS],
        enumeration=enumerate_paths(model, tok, PROMPT, grammar),
        regex=generate(model, tok, PROMPT, compile_regex(ANY_PATTERN), seed=0).text,
        schema=generate(model, tok, PROMPT, compile_json_schema(ANY_SCHEMA), seed=0).text)


@pytest.fixture(scope="module")
def page(run_all_pages):
    yield from lesson_after_run_all(run_all_pages, PAGE)


def texts_of(page, testid: str, cell: str = MASK_CELL) -> list[str]:
    return page.locator(f'[data-testid=cell][aria-label="{cell}"] [data-testid={testid}]').evaluate_all(
        "els => els.map(e => e.textContent)")


def output_of(page, cell: str) -> str:
    return page.locator(f'[data-testid=cell][aria-label="{cell}"] [data-testid=cell-output]').inner_text()


def enumeration_rows(page) -> list[dict]:
    return page.locator("[data-testid=enumeration-table] tbody tr").evaluate_all(
        "rows => rows.map(r => ({text: r.dataset.text, conditional: r.dataset.conditional,"
        " masked: r.dataset.masked}))")


def test_the_page_is_english_and_every_cell_runs_without_error(page):
    assert page.evaluate("document.documentElement.lang") == "en"
    cells = page.locator("[data-testid=cell]")
    states = [cells.nth(i).get_attribute("data-state") for i in range(cells.count())]
    assert cells.count() == 6 and states == ["done"] * cells.count(), states
    assert not page.problems


def test_masked_samples_are_the_ones_cpython_draws_and_parse_as_json(page, cpython):
    samples = texts_of(page, "masked-sample")
    assert samples == cpython.masked
    assert all(set(json.loads(s)) == {KEY} for s in samples)  # the key stays Spanish: "nombre"


def test_enumeration_in_the_page_matches_cpython_and_the_prose(page, cpython):
    browser_p = float(page.locator("[data-testid=p-grammar]").get_attribute("data-value"))
    prose_p = float(page.locator("[data-testid=prose-p-grammar]").get_attribute("data-value"))
    assert browser_p == pytest.approx(cpython.enumeration.p_grammar, rel=1e-6)
    assert prose_p == pytest.approx(cpython.enumeration.p_grammar, rel=1e-6)
    rows = enumeration_rows(page)
    assert sorted(r["text"] for r in rows) == sorted(cpython.texts)
    for row in rows:
        reference = cpython.enumeration.row(row["text"])
        assert float(row["conditional"]) == pytest.approx(reference.conditional, abs=1e-9)
        assert float(row["masked"]) == pytest.approx(reference.masked, abs=1e-9)


def test_the_english_names_picture_draws_the_enumeration_the_page_computes(page):
    picture = page.locator("[data-testid=names-picture]")
    bars = picture.locator("rect[data-kind]").evaluate_all(
        "els => els.map(e => [e.dataset.kind, e.dataset.name, e.dataset.value])")
    table = {name_of(r["text"]): r for r in enumeration_rows(page)}
    assert len(bars) == 2 * len(NAMES)
    for kind, name, value in bars:
        assert float(value) == pytest.approx(float(table[name][kind]), abs=1e-9), (kind, name)
    text = picture.text_content()
    assert "conditional p(g | x, G)" in text and "mask q̃(g | x)" in text
    assert "condicionada" not in text and not re.search(r"\d,\d{4}", text)
    factors = page.locator("[data-testid=factors-picture]").text_content()
    assert "closing quote" in factors and "comilla" not in factors


def test_a_regex_and_a_json_schema_on_the_model_match_cpython(page, cpython):
    (sentence,) = texts_of(page, "masked-sample", ANY_CELL)
    assert sentence == cpython.regex
    assert re.fullmatch(ANY_PATTERN, sentence)
    assert repr(json.loads(cpython.schema)) in output_of(page, ANY_CELL)


def test_the_prefix_cell_prints_english_questions(page):
    out = output_of(page, "A grammar with one text a prefix of another")
    assert "complete? True · can continue? True · finished? False" in out


def test_the_rejection_cell_prints_english_lines_with_decimal_points(page):
    out = output_of(page, REJECTION_CELL)
    assert re.search(r"1 / p\(H \| x\) = \d+\.\d tries per answer", out), out
    lines = re.findall(r"'(.+?) '\s+conditional (\d+\.\d+), mask (\d+\.\d+) · seen (\d+) of (\d+); "
                       r"expected: (\d+\.\d+) and (\d+\.\d+)", out)
    assert len(lines) == 3, out
    assert sum(int(seen) for _, _, _, seen, _, _, _ in lines) == int(lines[0][4])
    for _, cond, mask, _, n, exp_cond, exp_mask in lines:
        rounding = int(n) * 0.0005 + 0.05 + 1e-9
        assert float(exp_cond) == pytest.approx(int(n) * float(cond), abs=rounding)
        assert float(exp_mask) == pytest.approx(int(n) * float(mask), abs=rounding)


def test_the_cells_question_answered_with_the_enumeration_is_right(page, cpython):
    top = max(cpython.enumeration.rows, key=lambda r: r.masked)
    question = page.locator("[data-testid=quiz-question]#q-cells")
    question.get_by_role("radio", name=re.compile("^" + re.escape(name_of(top.label)) + ",")).check()
    question.locator("[data-testid=quiz-check]").click()
    assert question.get_attribute("data-result") == "correct"
