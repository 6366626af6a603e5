"""The «Laboratorio»'s branches in Chromium: a branch chosen at position 3 keeps the parent's first
two tokens, takes the chosen one and goes on with tokens the grammar allows (checked in CPython
with the masker's brute-force mask and ``accepts``); the link reopens the same tree, in a new tab
and by a fragment change in the same tab; with top-k and top-p every offered token has q̃ > 0 and
the button, the panel and the summary agree; at 390 px nothing scrolls sideways."""
from __future__ import annotations

import json
import re

import pytest

from lesson.laboratorio.lab import PRESETS, compile_constraint
from tests.e2e.helpers import open_lesson

pytestmark = pytest.mark.e2e
PAGE = "laboratorio.html"
TIMEOUT_MS = 120_000


@pytest.fixture(scope="module")
def lab(browser, servers):
    context = browser.new_context(service_workers="block", viewport={"width": 1100, "height": 900})
    problems: list[str] = []
    context.on("weberror", lambda error: problems.append(f"uncaught: {error.error}"))
    page = open_lesson(context, servers["plain"], PAGE)
    yield page
    context.close()
    assert not problems, problems


def act(page, do) -> None:
    """Do something that runs the lab, and wait until the view holds its output."""
    page.locator("[data-testid=lab-view]").evaluate("v => { v.dataset.state = 'clicked'; }")
    do()
    page.locator("[data-testid=lab-view][data-state=done]").wait_for(timeout=TIMEOUT_MS)
    assert page.locator("[data-testid=lab-error]").count() == 0, page.locator("[data-testid=lab-error]").inner_text()


def token_ids(page) -> list[int]:
    titles = page.locator("[data-testid=lab-position] .tok").evaluate_all("els => els.map(e => e.title)")
    return [int(t.split()[-1]) for t in titles]


def branches(page) -> list[dict]:
    return page.locator("[data-testid=lab-branch]").evaluate_all(
        "els => els.map(e => ({text: e.dataset.text, state: e.dataset.state, parent: e.dataset.parent, "
        "from: e.dataset.from}))")


def test_a_branch_at_position_3_keeps_two_tokens_and_goes_on_allowed(lab):
    kind, constraint = "regex", "[a-zñ]{3,6} (de|del) [a-zñ]{3,6}"
    lab.locator("[data-testid=lab-kind]").select_option(kind)
    lab.locator("[data-testid=lab-constraint] .cm-content").click()
    lab.keyboard.press("Control+A")
    lab.keyboard.press("Delete")
    lab.keyboard.insert_text(constraint)
    act(lab, lambda: lab.locator("[data-testid=lab-generate]").click())
    parent = token_ids(lab)
    act(lab, lambda: lab.locator('[data-testid=lab-position][data-position="3"]').click())
    buttons = lab.locator('[data-testid=lab-allowed-token][data-position="3"]')
    assert buttons.count() >= 2
    other = buttons.locator(":scope:not([aria-current])").first
    chosen = int(other.get_attribute("data-token-id"))
    act(lab, lambda: other.click())
    ids = token_ids(lab)
    assert ids[:2] == parent[:2] and ids[2] == chosen
    grammar = compile_constraint(kind, constraint)
    matcher = grammar.matcher(grammar_vocab())
    for t in ids:
        assert matcher.brute_force_mask()[t]
        matcher.consume(t)
    tree = branches(lab)
    assert len(tree) == 2 and tree[0]["parent"] == "" and tree[1]["parent"] == "0" and tree[1]["from"] == "3"
    assert tree[1]["state"] == "done" and grammar.accepts(tree[1]["text"])
    assert tree[1]["text"] == lab.locator("[data-testid=lab-output]").get_attribute("data-text")
    python = lab.locator("[data-testid=lab-python]").text_content()  # «El mismo experimento en Python»
    assert "La rama 2" in python and f"for t in {json.dumps(ids, separators=(',', ':'))}:" in python


def grammar_vocab():
    from minigpt.bpe import load_tokenizer
    return load_tokenizer().vocab


def test_the_link_reopens_the_same_tree_in_a_new_tab_and_in_the_same_one(lab, browser, servers):
    if len(branches(lab)) < 2:
        pytest.skip("needs the branch of the test before")
    url, tree = lab.url, branches(lab)
    assert "tree=" in url and len(url.split("#", 1)[1]) < 1200
    context = browser.new_context(service_workers="block")
    try:
        page = open_lesson(context, servers["plain"], PAGE + "#" + url.split("#", 1)[1])
        page.locator("[data-testid=lab-output][data-state=done]").wait_for(timeout=TIMEOUT_MS)
        page.wait_for_function("n => document.querySelectorAll('[data-testid=lab-branch]').length === n",
                               arg=len(tree), timeout=TIMEOUT_MS)
        assert branches(page) == tree
        # the same tab, a link to another tree: only the fragment changes
        act(lab, lambda: lab.locator("[data-testid=lab-generate]").click())
        assert len(branches(lab)) == 1
        act(lab, lambda: lab.evaluate("u => { location.hash = u; }", url.split("#", 1)[1]))
        lab.wait_for_function("n => document.querySelectorAll('[data-testid=lab-branch]').length === n",
                              arg=len(tree), timeout=TIMEOUT_MS)
        assert branches(lab) == tree
    finally:
        context.close()


def test_with_top_k_and_top_p_every_offered_token_has_q_and_the_numbers_agree(lab):
    lab.locator("[data-testid=lab-preset]").select_option("etiquetas")
    lab.locator("[data-testid=lab-top-k]").fill("20")
    lab.locator("[data-testid=lab-top-p]").fill("0.9")
    act(lab, lambda: lab.locator("[data-testid=lab-step]").click())
    log_q = 0.0
    for j in range(2, 4):
        if lab.locator("[data-testid=lab-output]").get_attribute("data-state") == "done":
            break
        qs = lab.locator("[data-testid=lab-allowed-token]").evaluate_all("els => els.map(e => Number(e.dataset.q))")
        assert qs and all(q > 0 for q in qs) and sum(qs) == pytest.approx(1, abs=1e-9)
        last = lab.locator("[data-testid=lab-allowed-token]").last
        label, q = last.get_attribute("aria-label"), float(last.get_attribute("data-q"))
        act(lab, lambda: last.click())
        panel = lab.locator(f'[data-panel="{j}"] .pv-head').text_content()
        shown = re.search(r"q̃ = ([0-9,]+)", panel).group(1)
        assert f"q̃ {shown}" in label and shown != "0,000"
    summary = lab.locator(".lab-summary").text_content()
    assert "−∞" not in summary
    lab.locator("[data-testid=lab-top-k]").fill("")
    lab.locator("[data-testid=lab-top-p]").fill("")


def test_the_search_filters_the_open_positions_tokens(lab):
    lab.locator("[data-testid=lab-preset]").select_option("fecha")
    act(lab, lambda: lab.locator("[data-testid=lab-step]").click())
    all_tokens = lab.locator("[data-testid=lab-allowed-token]").count()
    lab.locator("[data-testid=lab-token-search]").fill("1")
    visible = lab.locator("[data-testid=lab-allowed-token]:visible")
    assert 0 < visible.count() < all_tokens
    assert all("1" in t for t in visible.evaluate_all("els => els.map(e => e.dataset.label)"))


@pytest.mark.parametrize("name", list(PRESETS))
def test_at_390_px_no_preset_scrolls_sideways(browser, servers, name):
    context = browser.new_context(service_workers="block", viewport={"width": 390, "height": 844})
    try:
        page = open_lesson(context, servers["plain"], PAGE)
        page.locator("[data-testid=lab-preset]").select_option(name)
        act(page, lambda: page.locator("[data-testid=lab-generate]").click())
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    finally:
        context.close()


def test_keyboard_only_generate_open_a_position_branch_and_stop_with_esc(lab):
    lab.locator("[data-testid=lab-kind]").select_option("regex")
    lab.locator("[data-testid=lab-constraint] .cm-content").click()
    lab.keyboard.press("Control+A")
    lab.keyboard.press("Delete")
    lab.keyboard.insert_text("[a-zñ ]{1,400}")
    lab.locator("[data-testid=lab-max-tokens]").fill("200")
    lab.locator("[data-testid=lab-generate]").focus()
    lab.locator("[data-testid=lab-view]").evaluate("v => { v.dataset.state = 'clicked'; }")
    lab.keyboard.press("Enter")
    lab.locator("[data-testid=lab-view][data-state=running]").wait_for(timeout=TIMEOUT_MS)
    assert lab.evaluate("() => document.activeElement.dataset.testid") == "lab-generate"  # focus kept
    lab.keyboard.press("Escape")
    lab.locator("[data-testid=lab-view][data-state=done]").wait_for(timeout=TIMEOUT_MS)
    (branch,) = branches(lab)
    assert branch["state"] == "idle" and len(branch["text"]) >= 1
    assert "detenida" in lab.locator("[data-testid=lab-branch]").inner_text()
    assert lab.locator("[data-testid=lab-error]").count() == 0  # stopping is not an error
    assert len(token_ids(lab)) < 200
    # keyboard: into the strip, an arrow opens the next position, Tab to its tokens, Enter branches
    lab.locator('[data-testid=lab-position][data-position="1"] input').focus()
    act(lab, lambda: lab.keyboard.press("ArrowRight"))
    assert lab.evaluate("() => document.activeElement.closest('[data-testid=lab-position]')?.dataset.position") == "2"
    lab.locator('[data-testid=lab-allowed-token][data-position="2"]:not([aria-current])').first.focus()
    act(lab, lambda: lab.keyboard.press("Enter"))
    assert len(branches(lab)) == 2 and branches(lab)[1]["from"] == "2"
    # the focused control is never under the sticky kernel bar
    lab.locator("[data-testid=lab-compare]").focus()
    lab.keyboard.press("Shift+Tab")
    top = lab.evaluate("() => document.activeElement.getBoundingClientRect().top")
    bar = lab.evaluate("() => document.querySelector('.kernel-bar').getBoundingClientRect().bottom")
    assert top >= bar - 1
    lab.locator("[data-testid=lab-max-tokens]").fill("120")


@pytest.mark.parametrize("kind, text, words, span", [
    ("gbnf", "root ::= [a-", "falta «]»", "["),
    ("json_schema", '{"type": "string", "pattern": "(abc"}', "«pattern» no es una expresión regular válida", "("),
    ("json_schema", '{"type": "integer",\n "minimum": 10,\n "maximum": 5}', "«minimum» vale 10 y «maximum» vale 5",
     '"maximum"'),
    ("json_schema", '{"type": "object",\n "if": {"type": "object"}}', "línea 2, columna 2: la palabra clave «if»", '"if"'),
    ("regex", "", "vacía", None),
])
def test_errors_are_in_spanish_and_marked_in_the_editor(lab, kind, text, words, span):
    lab.locator("[data-testid=lab-kind]").select_option(kind)
    lab.locator("[data-testid=lab-constraint] .cm-content").click()
    lab.keyboard.press("Control+A")
    lab.keyboard.press("Delete")
    if text:
        lab.keyboard.insert_text(text)
    lab.locator("[data-testid=lab-view]").evaluate("v => { v.dataset.state = 'clicked'; }")
    lab.locator("[data-testid=lab-generate]").click()
    lab.locator("[data-testid=lab-view][data-state=done]").wait_for(timeout=TIMEOUT_MS)
    error = lab.locator("[data-testid=lab-error]").inner_text()
    assert words in error and "Cómo arreglarlo" in error and "fix" not in error
    marked = lab.locator("[data-testid=lab-error-span]")
    if span is None:
        assert marked.count() == 0
    else:
        assert "".join(marked.all_text_contents()) == span
    assert "tree=" not in lab.url  # a failed experiment has no tree to share


def test_a_preset_keeps_one_undo_and_sets_every_setting(lab):
    lab.locator("[data-testid=lab-kind]").select_option("regex")
    lab.locator("[data-testid=lab-constraint] .cm-content").click()
    lab.keyboard.press("Control+A")
    lab.keyboard.press("Delete")
    lab.keyboard.insert_text("mi [a-z]{3}")
    lab.locator("[data-testid=lab-top-k]").fill("7")
    lab.locator("[data-testid=lab-preset]").select_option("etiquetas")
    assert lab.locator("[data-testid=lab-top-k]").input_value() == ""  # the preset sets every setting
    lab.locator("[data-testid=lab-preset-undo]").click()
    assert lab.locator("[data-testid=lab-constraint] .cm-content").inner_text() == "mi [a-z]{3}"
    assert lab.locator("[data-testid=lab-top-k]").input_value() == "7"
    assert lab.locator("[data-testid=lab-preset-undo]").is_hidden()
    lab.locator("[data-testid=lab-top-k]").fill("")


def test_a_budget_above_the_field_limit_is_said_in_spanish_from_a_link(browser, servers):
    context = browser.new_context(service_workers="block")
    try:
        page = open_lesson(context, servers["plain"], PAGE + "#kind=regex&constraint=%5Ba-z%5D%7B3%7D&max_tokens=2000")
        page.locator("[data-testid=lab-error]").wait_for(timeout=TIMEOUT_MS)
        text = page.locator("[data-testid=lab-error]").inner_text()
        assert "«tokens como máximo» debe ser un entero entre 1 y 200; ahora vale 2000" in text
    finally:
        context.close()
