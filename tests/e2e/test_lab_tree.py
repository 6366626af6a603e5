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
from tests.e2e.lab_page import PAGE, TIMEOUT_MS, act, type_constraint, lab  # noqa: F401 (lab: a fixture)

pytestmark = pytest.mark.e2e


def token_ids(page) -> list[int]:
    titles = page.locator("[data-testid=lab-position] .tok").evaluate_all("els => els.map(e => e.title)")
    return [int(t.split()[-1]) for t in titles]


def branches(page) -> list[dict]:
    return page.locator("[data-testid=lab-branch]").evaluate_all(
        "els => els.map(e => ({text: e.dataset.text, state: e.dataset.state, parent: e.dataset.parent, "
        "from: e.dataset.from}))")


def test_a_branch_at_position_3_keeps_two_tokens_and_goes_on_allowed(lab):
    kind, constraint = "regex", "[a-zñ]{3,6} (de|del) [a-zñ]{3,6}"
    type_constraint(lab, kind, constraint)
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
def test_at_390_px_no_preset_scrolls_sideways(lab_phone, name):
    page = lab_phone
    page.locator("[data-testid=lab-preset]").select_option(name)
    act(page, lambda: page.locator("[data-testid=lab-generate]").click())
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390


def test_keyboard_only_generate_open_a_position_branch_and_stop_with_esc(lab):
    type_constraint(lab, "regex", "[a-zñ ]{1,400}")
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
    # compare the new branch with its parent: Enter on the comparison's summary opens its table
    lab.locator("[data-testid=lab-branch-compare] summary").focus()
    lab.keyboard.press("Enter")
    assert lab.locator("[data-testid=lab-branch-compare]").evaluate("d => d.open")
    assert lab.locator('[data-testid=lab-branch-compare] tbody tr[data-position="2"]').is_visible()
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
    ("json_schema", '{"type": "object",\n "unevaluatedProperties": false}',
     "línea 2, columna 2: la palabra clave «unevaluatedProperties»", '"unevaluatedProperties"'),
    ("regex", "", "vacía", None),
])
def test_errors_are_in_spanish_and_marked_in_the_editor(lab, kind, text, words, span):
    type_constraint(lab, kind, text)
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
    type_constraint(lab, "regex", "mi [a-z]{3}")
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
        assert "«tokens como máximo» tiene que ser un entero de 1 a 200 (o vacío); ahora vale 2000" in text
    finally:
        context.close()


def test_a_finite_grammar_shows_each_branchs_exact_conditional_as_cpython_computes_it(lab):
    """«etiquetas»: every valid branch carries p(y | x, G) and its text's q̃ as the enumeration
    in CPython gives them (Pyodide's NumPy against CPython's, the same library code)."""
    from lesson.laboratorio.exact import exact_for
    from lesson.laboratorio.lab import Lab
    from minigpt.bpe import load_tokenizer
    from tests.e2e.helpers import site_model

    lab.locator("[data-testid=lab-preset]").select_option("etiquetas")
    act(lab, lambda: lab.locator("[data-testid=lab-generate]").click())
    if lab.locator("[data-testid=lab-choices]").get_attribute("data-position") != "1":
        act(lab, lambda: lab.locator('[data-testid=lab-position][data-position="1"]').click())
    other = lab.locator('[data-testid=lab-allowed-token][data-position="1"]:not([aria-current])').first
    act(lab, lambda: other.click())
    assert lab.locator("[data-testid=lab-exact]").get_attribute("data-exact") == "yes"
    rows = lab.locator("[data-testid=lab-branch][data-exact]").evaluate_all(
        "els => els.map(e => [e.dataset.text, Number(e.dataset.exact), Number(e.dataset.masked), e.innerText])")
    assert len(rows) == 2
    preset = PRESETS["etiquetas"]
    reference = exact_for(Lab(site_model(), load_tokenizer(), kind="choice", constraint=preset["constraint"],
                              prompt=preset["prompt"]))
    for text, exact, masked, words in rows:
        row = reference.of(text.encode())
        assert exact == pytest.approx(row.conditional, rel=1e-5) and masked == pytest.approx(row.masked, rel=1e-5)
        assert ("la máscara lo infla" in words) == (row.masked > row.conditional)


SMALL_TARGETS = """root => [...root.querySelectorAll('button, input, select, summary, textarea, [role=radio], label:has(input)')]
  .filter((el) => el.getClientRects().length && getComputedStyle(el).visibility !== 'hidden')
  .map((el) => { const r = el.getBoundingClientRect(); return [el.outerHTML.slice(0, 90), r.width, r.height]; })
  .filter(([, w, h]) => (w < 24 || h < 24) && !(w <= 1 && h <= 1))"""


def test_at_390_px_a_branched_tree_has_big_enough_targets_and_no_axe_violations(lab_phone):
    """WCAG 2.2 target size (minimum): every control of the form and of the result, the strip's
    position chips, the token buttons and the branch buttons included, is at least 24×24 px."""
    from tests.e2e.test_offline import describe, run_axe
    page = lab_phone
    page.locator("[data-testid=lab-preset]").select_option("etiquetas")
    act(page, lambda: page.locator("[data-testid=lab-generate]").click())
    other = page.locator("[data-testid=lab-allowed-token]:not([aria-current])").first
    act(page, lambda: other.click())
    for name in ("lab-branch-compare", "lab-legend"):  # opened (a summary's click toggles it)
        page.locator(f"[data-testid={name}]").evaluate("d => { d.open = false; }")
        page.locator(f"[data-testid={name}] summary").click()
    assert len(branches(page)) == 2
    small = page.locator("[data-lab]").evaluate(SMALL_TARGETS)
    assert not small, "\n".join(map(str, small))
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    violations = run_axe(page)
    assert not violations, describe(violations)
