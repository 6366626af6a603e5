"""The lesson «Del esquema al autómata» in the browser: one page load and one «Ejecutar todo», then
the live results are checked against the same computations in CPython (``lesson.automata*`` with the
committed weights) and against Python's ``re`` and ``jsonschema``."""
from __future__ import annotations

import json
import re
from types import SimpleNamespace

import jsonschema
import pytest

from lesson import compile_json_schema, compile_regex, sample_batch
from lesson.automata.figures import (DATE, DFA_DEPTHS, DIAGRAM, PHONE, PHONE_FREE_TOKENS, PHONE_N,
                                     PHONE_PROMPT, PROMPT, SCHEMA, WALK_PREFIX, WORD)
from lesson.automata.trie import trie_walk
from lesson.automata.forced import compare_fast_forward
from lesson import sample_until_invalid
from minigpt.bpe import load_tokenizer
from minigpt.gpt import load_model
from tests.e2e.helpers import lesson_after_run_all
from tests.e2e.test_offline import describe, run_axe

pytestmark = pytest.mark.e2e

PAGE = "automata.html"


@pytest.fixture(scope="module")
def cpython():
    """What the page's cells compute, computed in CPython with the same code and defaults."""
    tok, model = load_tokenizer(), load_model()
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
                                  max_tokens=PHONE_FREE_TOKENS))


@pytest.fixture(scope="module")
def page(browser, servers):
    """The lesson after one «Ejecutar todo», every cell finished; console errors, uncaught errors
    and requests to other origins fail the module."""
    yield from lesson_after_run_all(browser, servers, PAGE)


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
    assert "igual que la máscara del enmascarador: True" in page.locator(
        '[aria-label="El trie y el índice"] [data-testid=cell-output]').inner_text()


def test_stack_plot_shows_earley_accepting_what_the_bounded_dfa_rejects(page):
    text = page.locator('[aria-label="La pila"] [data-testid=cell-output]').inner_text()
    assert "Earley acepta 20 niveles: True" in text and re.search(r"6 niveles:\s+False", text)
    assert page.locator("[data-testid=stack-plot] tbody tr").count() == 8
    # the prose says the cell stops at the last depth of DFA_DEPTHS («—» past it)
    dfa_cells = page.locator("[data-testid=stack-plot] tbody tr td:nth-child(3)").all_inner_texts()
    assert sum(t != "—" for t in dfa_cells) == DFA_DEPTHS[-1] and dfa_cells[DFA_DEPTHS[-1]:] == ["—"] * 2


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


def test_quiz_on_the_index_size_answers_correcto(page):
    question = page.locator("[data-testid=quiz-question]#q-index")
    question.locator("[data-testid=quiz-option][data-correct=true] input").check()
    question.get_by_role("button", name="Comprobar").click()
    assert question.get_attribute("data-result") == "correct"


def test_page_after_run_all_has_no_serious_accessibility_violations(page):
    violations = run_axe(page)
    assert not violations, describe(violations)
