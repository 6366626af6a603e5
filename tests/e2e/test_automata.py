"""The lesson «Del esquema al autómata» in the browser: one page load and one «Ejecutar todo», then
the live results are checked against the same computations in CPython (``lesson.automata*`` with the
committed weights) and against Python's ``re`` and ``jsonschema``."""
from __future__ import annotations

import json
import re
from types import SimpleNamespace

import jsonschema
import pytest

from lesson import compile_json_schema, compile_regex, generate, sample_batch
from lesson.automata.figures import (DATE, DFA_DEPTHS, DIAGRAM, PHONE, PHONE_FREE_TOKENS, PHONE_N,
                                     PHONE_PROMPT, PROMPT, SCHEMA, WALK_PREFIX, WORD, order_figures)
from lesson.automata.trie import trie_walk
from lesson.automata.forced import compare_fast_forward
from lesson import sample_until_invalid
from minigpt.bpe import load_tokenizer
from tests.e2e.helpers import site_model
from tests.e2e.helpers import lesson_after_run_all, page_cell_sources, set_code
from tests.e2e.test_offline import describe, run_axe

pytestmark = pytest.mark.e2e

PAGE = "automata.html"


@pytest.fixture(scope="module")
def cpython():
    """What the page's cells compute, computed in CPython with the same code and defaults."""
    tok, model = load_tokenizer(), site_model()
    date = compile_regex(DATE)
    m = date.matcher(tok.vocab)
    m.consume_bytes(WALK_PREFIX)
    phone = compile_regex(PHONE)
    return SimpleNamespace(
        diagrams=[compile_regex(p).automaton for p in (DIAGRAM, WORD)],
        walk=trie_walk(date.automaton, m.state, tok.vocab),
        fast=compare_fast_forward(model, tok, PROMPT, compile_json_schema(SCHEMA), range(5)),
        phone=[g.text for g in sample_batch(model, tok, PHONE_PROMPT, phone, n=PHONE_N, seed=0)],
        free=sample_until_invalid(model, tok, PHONE_PROMPT, phone, n=PHONE_N, seed=0,
                                  max_tokens=PHONE_FREE_TOKENS),
        generate_phone=generate(model.astype("float64"), tok, PHONE_PROMPT, phone, seed=0).text)


@pytest.fixture(scope="module")
def page(run_all_pages):
    """The lesson after one «Ejecutar todo», every cell finished; console errors, uncaught errors
    and requests to other origins fail the module."""
    yield from lesson_after_run_all(run_all_pages, PAGE)


def test_every_cell_runs_without_error(page):
    cells = page.locator("[data-testid=cell]")
    states = [cells.nth(i).get_attribute("data-state") for i in range(cells.count())]
    assert cells.count() >= 8 and states == ["done"] * cells.count(), states
    outputs = page.locator("[data-testid=cell-output]").all_inner_texts()
    assert not [o for o in outputs if "precalculado" in o]  # every output is the browser's own
    assert not page.problems


def test_hand_loop_and_the_masker_agree_in_the_page(page):
    text = page.locator('[data-testid=cell][aria-label="El mismo bucle con compile_regex"] '
                        '[data-testid=cell-output]').inner_text()
    assert text.count("coinciden: True") == 6 and "False" not in text


def test_dfa_diagrams_count_the_masker_s_states(page, cpython):
    svgs = page.locator('[data-testid=cell][aria-label="Del patrón al autómata"] svg[data-testid=dfa-diagram]')
    found = svgs.evaluate_all("els => els.map(e => [+e.dataset.states, +e.dataset.accepting, "
                              "e.querySelectorAll('.dfa-state').length])")
    assert found == [[d.n_states, sum(d.accepting), d.n_states] for d in cpython.diagrams]


def test_trie_walk_in_the_page_is_cpython_s(page, cpython):
    walk = page.locator("[data-testid=trie-walk]")
    assert int(walk.get_attribute("data-steps")) == cpython.walk.steps
    assert int(walk.get_attribute("data-brute-steps")) == cpython.walk.brute_steps
    assert int(walk.get_attribute("data-allowed")) == len(cpython.walk.allowed)
    assert int(walk.get_attribute("data-pruned-root")) == cpython.walk.pruned_root
    assert int(walk.get_attribute("data-pruned-inside")) == cpython.walk.pruned_inside
    assert int(walk.get_attribute("data-unvisited")) == cpython.walk.unvisited
    assert int(walk.get_attribute("data-dead-steps")) == cpython.walk.dead_steps
    bars = walk.locator("svg[data-testid=trie-pruning] .trie-bar").evaluate_all(
        "gs => gs.map(g => [+g.dataset.length, g.dataset.counts.split(',').map(Number)])")
    assert bars == [[n, list(c)] for n, c in cpython.walk.by_length().items()]
    assert "igual que la máscara del enmascarador: True" in page.locator(
        '[aria-label="El trie y el índice"] [data-testid=cell-output]').inner_text()


def test_stack_plot_shows_earley_accepting_what_the_bounded_dfa_rejects(page):
    text = page.locator('[aria-label="La pila"] [data-testid=cell-output]').inner_text()
    assert "Earley acepta 20 niveles: True" in text and re.search(r"7 niveles:\s+False", text)
    assert page.locator("[data-testid=stack-plot] tbody tr").count() == 8
    # the prose says the cell stops at the last depth of DFA_DEPTHS («no calculado» past it)
    dfa_cells = page.locator("[data-testid=stack-plot] tbody tr td:nth-child(4)").all_inner_texts()
    # the third column: the current Earley set alone, the same at every depth («tiene siempre 4»)
    current = page.locator("[data-testid=stack-plot] tbody tr td:nth-child(3)").all_inner_texts()
    assert len(set(current)) == 1 and current[0].isdigit()
    assert sum(t != "no calculado" for t in dfa_cells) == DFA_DEPTHS[-1]
    assert dfa_cells[DFA_DEPTHS[-1]:] == ["no calculado"] * (8 - DFA_DEPTHS[-1])


def test_key_order_cell_prints_the_build_s_series(page):
    text = page.locator('[data-testid=cell][aria-label="Claves en orden fijo y en cualquier orden"] '
                        '[data-testid=cell-output]').inner_text()
    rows = re.findall(r"(\d+) claves?: orden fijo +(\d+) estados; cualquier orden +(\d+)", text)  # «1 clave», «2 claves»
    fig = order_figures()
    assert [tuple(map(int, r)) for r in rows] == list(zip(fig["keys"], fig["fixed"], fig["any"]))
    for k in fig["keys"]:  # the noun agrees with the count
        assert re.search(rf"(?m)^{k} {'clave' if k == 1 else 'claves'}: ", text), (k, text)


def test_stack_plot_titles_both_axes_in_the_page(page):
    titles = page.locator("[data-testid=stack-plot] svg text.axis-title").evaluate_all(
        "ts => ts.map(t => t.dataset.axis)")
    assert sorted(titles) == ["x", "y"]


def test_fast_forward_needs_fewer_calls_and_writes_valid_texts(page, cpython):
    view = page.locator("[data-testid=fast-forward]")
    stepwise = int(view.get_attribute("data-calls-stepwise"))
    fast = int(view.get_attribute("data-calls-fast-forward"))
    assert fast < stepwise and int(view.get_attribute("data-forced")) > 0
    assert (stepwise, fast) == cpython.fast.calls
    assert int(view.get_attribute("data-forced")) == cpython.fast.forced
    texts = view.locator("[data-testid=fast-forward-text]").all_inner_texts()
    assert len(texts) == int(view.get_attribute("data-n")) == 5
    grammar = compile_json_schema(SCHEMA)
    for text in texts:
        assert grammar.accepts(text)
        jsonschema.validate(json.loads(text), SCHEMA)
    assert texts == [r.gen.text for r in cpython.fast.fast]


def test_phone_samples_are_all_valid_rechecked_with_re(page, cpython):
    samples = page.locator("[data-testid=phone-samples]")
    n, invalid = int(samples.get_attribute("data-n")), int(samples.get_attribute("data-invalid"))
    texts = json.loads(samples.get_attribute("data-texts"))
    assert n >= 1000 and len(texts) == n and invalid == 0
    assert [t for t in texts if not re.fullmatch(PHONE, t)] == []
    assert texts == cpython.phone
    free = page.locator("[data-testid=phone-unmasked]")
    assert int(free.get_attribute("data-n")) == PHONE_N
    assert int(free.get_attribute("data-valid")) == cpython.free.hits


EXERCISE = '[data-testid=cell][aria-label="Tu DFA del teléfono"]'
WRONG_FIRST_DIGIT = """cifras = b"0123456789"
telefono = {0: {b: 1 for b in b"56789"}, 11: {}}
for s in (1, 2, 4, 5, 6, 8, 9, 10):
    telefono[s] = {b: s + 1 for b in cifras}
for s in (3, 7):
    telefono[s] = {ord(" "): s + 1}
aceptacion_tel = {11}
"""


# the cell ran again: finished, with another output than before (it was already «done»)
NEW_OUTPUT = """([selector, old]) => {
  const cell = document.querySelector(selector);
  return ['done', 'error'].includes(cell.dataset.state)
    && cell.querySelector('[data-testid=cell-output]').innerText !== old;
}"""


def exercise_with(page, dfa_code: str) -> str:
    """The exercise cell with the reader's DFA replaced by ``dfa_code`` (the import and the check
    as the page has them), run; its output's text."""
    source = next(s for s in page_cell_sources(page) if "check_phone_dfa(telefono" in s)
    head = source.split("cifras =")[0]
    tail = "informe =" + source.split("informe =")[1]
    cell = page.locator(EXERCISE)
    before = cell.locator("[data-testid=cell-output]").inner_text()
    set_code(page, cell, head + dfa_code + "\n" + tail)
    cell.locator("[data-testid=cell-run]").click()
    page.wait_for_function(NEW_OUTPUT, arg=[EXERCISE, before], timeout=60_000)
    assert cell.get_attribute("data-state") == "done"
    return cell.locator("[data-testid=cell-output]").inner_text()


def test_exercise_reports_the_first_difference_then_says_correct(page, cpython):
    # after «Ejecutar todo»: the page's starter, wrong after «600 0»
    check = page.locator(EXERCISE + " [data-testid=dfa-check]")
    assert check.get_attribute("data-ok") == "false" and check.get_attribute("data-prefix") == "600␣0"
    assert "tu DFA (en su estado 5) acepta el byte «␣»" in check.inner_text()
    # a wrong answer of the reader's own: a 5 allowed first
    text = exercise_with(page, WRONG_FIRST_DIGIT)
    assert "Al principio (prefijo vacío) las máscaras difieren" in text
    assert "Tu DFA permite 1 token que el enmascarador no: «5»" in text and "6–9" in text
    assert "tu bucle:" not in text
    # the right answer: the page's own solution
    solution = page.locator("[data-testid=phone-solution]").text_content()
    text = exercise_with(page, solution)
    assert page.locator(EXERCISE + " [data-testid=dfa-check]").get_attribute("data-ok") == "true"
    assert text.startswith("Correcto")
    mine = re.search(r"tu bucle: (.*)", text).group(1)
    theirs = re.search(r"generate: (.*)", text).group(1)
    assert re.fullmatch(PHONE, mine) and mine == theirs == cpython.generate_phone


def test_quiz_on_keys_in_any_order_answers_correcto(page):
    question = page.locator("[data-testid=quiz-question]#q-order")
    question.locator("[data-testid=quiz-option][data-correct=true] input").check()
    question.get_by_role("button", name="Comprobar").click()
    assert question.get_attribute("data-result") == "correct"


def test_page_after_run_all_has_no_serious_accessibility_violations(page):
    violations = run_axe(page)
    assert not violations, describe(violations)


# ---------------------------------------------------------------- the English edition

PAGE_EN = "en/automata.html"
EXERCISE_EN = '[data-testid=cell][data-cell=ejercicio]'
WRONG_FIRST_DIGIT_EN = """digits = b"0123456789"
phone = {0: {b: 1 for b in b"56789"}, 11: {}}
for s in (1, 2, 4, 5, 6, 8, 9, 10):
    phone[s] = {b: s + 1 for b in digits}
for s in (3, 7):
    phone[s] = {ord(" "): s + 1}
phone_accepting = {11}
"""
# labels of the package's views and of the Spanish cells' prints, none of them an English word
SPANISH_IN_OUTPUT = re.compile(r"\b(estados?|aceptación|permitidos?|coinciden|elegido|pasa al|"
                               r"respuesta|aristas|recorrido|ramas|pasos|profundidad|ítems|"
                               r"calculado|muestras|llamadas|bucle|adelanto|partición|veces|"
                               r"válidas|Tras|Correcto|Pista|enmascarador|patrón|claves|"
                               r"índice|máscara|niveles|acepta)\b")


@pytest.fixture(scope="module")
def page_en(run_all_pages):
    """The English lesson after one «Run all», every cell finished."""
    yield from lesson_after_run_all(run_all_pages, PAGE_EN)


def cell_output(page, name: str) -> str:
    return page.locator(f"[data-testid=cell][data-cell={name}] [data-testid=cell-output]").inner_text()


def test_english_cells_run_and_print_english(page_en):
    cells = page_en.locator("[data-testid=cell]")
    states = [cells.nth(i).get_attribute("data-state") for i in range(cells.count())]
    assert cells.count() >= 8 and states == ["done"] * cells.count(), states
    assert page_en.locator("html").get_attribute("lang") == "en"
    for name in ("mano", "bucle", "regex-bucle", "ruta", "trie", "orden", "pila", "adelanto", "telefonos"):
        text = cell_output(page_en, name)
        assert not SPANISH_IN_OUTPUT.findall(text), (name, SPANISH_IN_OUTPUT.findall(text))
        # a decimal comma (not a pattern's {1,2}), a Spanish power of ten or a thin-space group
        assert not re.search(r"(?<![{\d])\d,\d{1,2}(?![\d}])|·10|\u202f", text), (name, text)
    assert not page_en.problems


def test_english_hand_loop_and_the_masker_agree(page_en):
    text = cell_output(page_en, "regex-bucle")
    assert text.count("agree: True") == 6 and "False" not in text
    assert re.search(r"state 0: \d+ allowed, chose .* with q̃ = \d\.\d{3}; moves to state \d",
                     cell_output(page_en, "bucle"))


def test_english_views_compute_what_the_spanish_ones_do(page_en, cpython):
    walk = page_en.locator("[data-testid=trie-walk]")
    assert int(walk.get_attribute("data-steps")) == cpython.walk.steps
    assert int(walk.get_attribute("data-unvisited")) == cpython.walk.unvisited
    assert "same as the masker's mask: True" in cell_output(page_en, "trie")
    text = cell_output(page_en, "pila")
    assert "Earley accepts 20 levels: True" in text and re.search(r"7 levels:\s+False", text)
    dfa_cells = page_en.locator("[data-testid=stack-plot] tbody tr td:nth-child(4)").all_inner_texts()
    assert dfa_cells[DFA_DEPTHS[-1]:] == ["not computed"] * (8 - DFA_DEPTHS[-1])
    rows = re.findall(r"k = (\d+): fixed order +(\d+) states; any order +(\d+)", cell_output(page_en, "orden"))
    fig = order_figures()
    assert [tuple(map(int, r)) for r in rows] == list(zip(fig["keys"], fig["fixed"], fig["any"]))
    view = page_en.locator("[data-testid=fast-forward]")
    assert (int(view.get_attribute("data-calls-stepwise")),
            int(view.get_attribute("data-calls-fast-forward"))) == cpython.fast.calls
    samples = page_en.locator("[data-testid=phone-samples]")
    assert json.loads(samples.get_attribute("data-texts")) == cpython.phone
    assert "With the mask: 1,000 samples" in samples.inner_text()


def test_english_exercise_reports_in_english_then_says_correct(page_en, cpython):
    check = page_en.locator(EXERCISE_EN + " [data-testid=dfa-check]")
    assert check.get_attribute("data-ok") == "false" and check.get_attribute("data-prefix") == "600␣0"
    assert "your DFA (in its state 5) accepts the byte “␣”" in check.inner_text()
    source = next(s for s in page_cell_sources(page_en) if "check_phone_dfa(phone" in s)
    head, tail = source.split("digits =")[0], "report =" + source.split("report =")[1]
    cell = page_en.locator(EXERCISE_EN)

    def run(dfa_code: str) -> str:
        before = cell.locator("[data-testid=cell-output]").inner_text()
        set_code(page_en, cell, head + dfa_code + "\n" + tail)
        cell.locator("[data-testid=cell-run]").click()
        page_en.wait_for_function(NEW_OUTPUT, arg=[EXERCISE_EN, before], timeout=60_000)
        assert cell.get_attribute("data-state") == "done"
        return cell.locator("[data-testid=cell-output]").inner_text()

    text = run(WRONG_FIRST_DIGIT_EN)
    assert "At the start (empty prefix) the masks differ" in text
    assert "Your DFA allows 1 token that the masker does not: “5”" in text and "6–9" in text
    text = run(page_en.locator("[data-testid=phone-solution]").text_content())
    assert text.startswith("Correct")
    mine = re.search(r"your loop: (.*)", text).group(1)
    theirs = re.search(r"generate: +(.*)", text).group(1)
    assert re.fullmatch(PHONE, mine) and mine == theirs == cpython.generate_phone


def test_english_quiz_on_keys_in_any_order_answers_correct(page_en):
    question = page_en.locator("[data-testid=quiz-question]#q-order")
    question.locator("[data-testid=quiz-option][data-correct=true] input").check()
    question.locator("[data-testid=quiz-check]").click()
    assert question.get_attribute("data-result") == "correct"


def test_english_page_after_run_all_has_no_serious_accessibility_violations(page_en):
    violations = run_axe(page_en)
    assert not violations, describe(violations)
