"""The English «Laboratorio» (``en/lab.html``) in Chromium: the form, the result and the page's own
messages are English (Python's view in the kernel's language, lab.js through t()/tn()); a masker
error gets the curated English message (the Spanish catalog's twin), underlined in the editor; the
field check speaks English with English numbers; the search count agrees in English; and a link
holds the experiment in the same format in both editions: the English page's address opens the
same tree on the Spanish page, which writes the same address back."""
from __future__ import annotations

import re

import pytest

from tests.e2e.helpers import open_lesson
from tests.e2e.lab_page import TIMEOUT_MS, act, type_constraint

pytestmark = pytest.mark.e2e
PAGE_EN, PAGE_ES = "en/lab.html", "laboratorio.html"


@pytest.fixture(scope="module")
def lab_en(browser, servers):
    """One tab on the English lab for the whole module; fails the last test on an uncaught error."""
    context = browser.new_context(service_workers="block", viewport={"width": 1100, "height": 900})
    problems: list[str] = []
    context.on("weberror", lambda error: problems.append(f"uncaught: {error.error}"))
    page = open_lesson(context, servers["plain"], PAGE_EN)
    page.problems = problems
    page.base = servers["plain"]
    yield page
    context.close()
    assert not problems, problems


def generate(page) -> None:
    page.locator("[data-testid=lab-view]").evaluate("v => { v.dataset.state = 'clicked'; }")
    page.locator("[data-testid=lab-generate]").click()
    page.locator("[data-testid=lab-view][data-state=done]").wait_for(timeout=TIMEOUT_MS)


def test_the_form_and_the_result_are_english(lab_en):
    page = lab_en
    assert page.locator("html").get_attribute("lang") == "en"
    assert page.locator("[data-testid=lab-legend] summary").inner_text() == "How to read this"
    assert page.locator("#lab-preset option[value=nombres]").inner_text() == "The names from “The mask”"
    assert page.locator("[data-testid=lab-prompt]").input_value().startswith("¿Quién es la protagonista?")
    assert page.locator("#lab-temperature-value").inner_text() == "1.0"
    act(page, lambda: page.locator("[data-testid=lab-generate]").click())
    summary = page.locator(".lab-summary").inner_text()
    assert "list of options" in summary and "branch 1 of 1" in summary and "kept mass" in summary, summary
    assert not re.search(r"\d,\d", summary), summary
    assert "Branches" in page.locator(".lab-tree").inner_text()
    python = page.locator("[data-testid=lab-python]").text_content()
    assert "grammar = compile_choice(" in python and "gramatica" not in python
    status = page.locator("[data-testid=lab-status]").inner_text()
    assert "branch 1 of 1" in status


def test_the_token_search_counts_in_english(lab_en):
    page = lab_en
    search = page.locator("[data-testid=lab-token-search]")
    if search.count() == 0:
        pytest.skip("no open position with tokens")
    search.fill("zzzz")
    count = page.locator(".lab-search-count").inner_text()
    assert re.fullmatch(r"(none of the \d+ tokens allowed contains|the only token allowed does not contain) “zzzz”",
                        count), count
    search.fill("")


def test_a_link_opens_the_same_tree_in_either_edition(lab_en, browser):
    page = lab_en
    act(page, lambda: page.locator("[data-testid=lab-generate]").click())
    buttons = page.locator("[data-testid=lab-choices] [data-testid=lab-allowed-token]:not([aria-current])")
    assert buttons.count() >= 1
    act(page, lambda: buttons.first.click())
    output = page.locator("[data-testid=lab-output]")
    tree, text = output.get_attribute("data-tree"), output.get_attribute("data-text")
    assert "_" in tree  # two branches
    page.wait_for_function("() => location.hash.includes('tree=')")
    fragment = page.evaluate("location.hash")
    context = browser.new_context(service_workers="block", viewport={"width": 1100, "height": 900})
    try:
        spanish = open_lesson(context, page.base, PAGE_ES + fragment)
        spanish.locator("[data-testid=lab-output][data-state=done]").wait_for(timeout=TIMEOUT_MS)
        out = spanish.locator("[data-testid=lab-output]")
        assert (out.get_attribute("data-tree"), out.get_attribute("data-text")) == (tree, text)
        assert spanish.locator("[data-testid=lab-branch]").count() == page.locator("[data-testid=lab-branch]").count()
        assert "rama 2 de 2" in spanish.locator(".lab-summary").inner_text()
        spanish.wait_for_function("f => location.hash === f", arg=fragment)  # the same address, written back
    finally:
        context.close()


@pytest.mark.parametrize("kind, text, words, span", [
    ("regex", "(ab", ["syntax error at character 1: missing “)”: the group opened here is not closed"], "("),
    ("gbnf", "root ::= foo", ["error in the grammar at character 10: the rule “foo” is used here but defined "
                              "nowhere"], "f"),
    ("json_schema", '{"type": "string", "enum": ["a", "b]}', ["invalid JSON at character 34: the string that starts here is not closed"],
     '"'),
])
def test_a_masker_error_gets_its_curated_english_message(lab_en, kind, text, words, span):
    page = lab_en
    type_constraint(page, kind, text)
    generate(page)
    error = page.locator("[data-testid=lab-error]").inner_text()
    assert "This constraint cannot be used." in error and "How to fix it:" in error, error
    assert "position" not in error, error
    for said in words:
        assert said in error, error
    assert "".join(page.locator("[data-testid=lab-error-span]").all_text_contents()) == span
    assert page.locator("[data-testid=lab-status]").inner_text() == "Error: see the result."


def test_the_field_check_speaks_english(lab_en):
    page = lab_en
    type_constraint(page, "choice", "a\nb")
    page.locator("[data-testid=lab-seed]").fill("-1")
    page.locator("[data-testid=lab-generate]").click()
    error = page.locator("[data-testid=lab-error]").inner_text()
    assert error == "the seed must be an integer from 0 to 4,294,967,295; it is −1 now", error
    page.locator("[data-testid=lab-seed]").fill("0")
    page.locator("[data-testid=lab-top-p]").fill("1.5")
    page.locator("[data-testid=lab-generate]").click()
    error = page.locator("[data-testid=lab-error]").inner_text()
    assert error == "top-p must be a number greater than 0 and at most 1 (or empty); it is 1.5 now", error
    page.locator("[data-testid=lab-top-p]").fill("")
    page.locator("[data-testid=lab-seed]").fill("1,000")  # not seed 1: a comma is refused on this page
    page.locator("[data-testid=lab-generate]").click()
    error = page.locator("[data-testid=lab-error]").inner_text()
    assert error == ("the seed must be an integer from 0 to 4,294,967,295; “1,000” has a comma: write the number "
                     "without a thousands separator, and with a point if it has decimals"), error
    page.locator("[data-testid=lab-seed]").fill("0")


def test_an_edit_marks_the_result_stale_in_english(lab_en):
    page = lab_en
    type_constraint(page, "choice", "a\nb")
    act(page, lambda: page.locator("[data-testid=lab-generate]").click())
    page.locator("[data-testid=lab-prompt]").fill("Hola ")
    stale = page.locator("[data-testid=lab-stale]").inner_text()
    assert "You changed the settings" in stale and "Back to this tree’s settings" in stale, stale
    page.locator("[data-testid=lab-stale-restore]").click()
    assert page.locator("[data-testid=lab-stale]").count() == 0
