"""The «Laboratorio»'s «vocabulario» choice in Chromium: a real vocabulary's masks over a text
(no model), a position's allowed tokens searched, the address that keeps the choice and its
text, and the form back to the mini-GPT with its links as they were."""
from __future__ import annotations

from urllib.parse import parse_qs

import pytest

from tests.e2e.helpers import open_lesson
from tests.e2e.lab_page import PAGE, TIMEOUT_MS, act, lab  # noqa: F401  (the module's tab)

pytestmark = pytest.mark.e2e


def fragment(page) -> dict:
    return parse_qs(page.evaluate("location.hash.slice(1)"), keep_blank_values=True)


def test_a_real_vocabulary_shows_each_positions_mask_and_its_tokens(lab):  # noqa: F811
    page = lab
    page.locator("[data-testid=lab-preset]").select_option("fecha")
    page.locator("[data-testid=lab-vocab]").select_option("o200k_base")
    # the model's fields give way to the text and «Calcular las máscaras»
    assert not page.locator("[data-testid=lab-prompt]").is_visible()
    assert not page.locator("[data-testid=lab-generate]").is_visible()
    assert page.locator("[data-testid=lab-text]").is_visible()
    page.locator("[data-testid=lab-text]").fill("12 de mayo de 1897")
    act(page, lambda: page.locator("[data-testid=lab-masks]").click())
    view = page.locator("[data-testid=vocab-view]")
    assert view.get_attribute("data-vocab") == "o200k_base" and view.get_attribute("data-accepted") == "1"
    assert view.get_attribute("data-tokens") == "199998"
    rows = page.locator("[data-testid=vocab-position]")
    assert rows.count() == int(view.get_attribute("data-positions")) + 1  # and the row after the text
    allowed = [int(a) for a in rows.evaluate_all("rs => rs.map(r => r.dataset.allowed)")]
    assert allowed[-1] == 0 and all(a > 0 for a in allowed[:-1])
    # the address keeps the choice and the text
    got = fragment(page)
    assert got["vocab"] == ["o200k_base"] and got["text"] == ["12 de mayo de 1897"]
    # a position's tokens, then searched as the reader types
    act(page, lambda: page.locator("[data-testid=vocab-open][data-position='3']").click())
    panel = page.locator("[data-testid=vocab-allowed][data-position='3']")
    assert int(panel.get_attribute("data-matches")) == allowed[2]
    page.locator("[data-testid=vocab-search]").press_sequentially("ma", delay=30)
    page.locator("[data-testid=vocab-allowed][data-position='3'] [data-testid=vocab-search][value=ma]").wait_for(
        timeout=TIMEOUT_MS)
    labels = page.locator("[data-testid=vocab-allowed] li").all_inner_texts()
    assert labels and all("ma" in label.lower() for label in labels)
    assert page.evaluate("document.activeElement.dataset.testid") == "vocab-search"

    # an edit marks the table as the previous settings', and its «ver» still opens the table's own
    page.locator("[data-testid=lab-text]").fill("1 de mayo de 1800")
    assert page.locator("[data-testid=vocab-stale]").count() == 1
    act(page, lambda: page.locator("[data-testid=vocab-open][data-position='2']").click())
    assert int(page.locator("[data-testid=vocab-allowed][data-position='2']").get_attribute("data-allowed")) == allowed[1]
    page.locator("[data-testid=lab-text]").fill("12 de mayo de 1897")
    assert page.locator("[data-testid=vocab-stale]").count() == 0


def test_a_link_with_a_vocabulary_reopens_its_masks_and_a_bad_one_is_said(browser, servers):
    context = browser.new_context(service_workers="block", viewport={"width": 390, "height": 844})
    try:
        page = open_lesson(context, servers["plain"], PAGE + "#kind=regex&constraint=%5B0-9%5D%7B3%7D"
                                                            "&vocab=cl100k_base&text=")
        view = page.locator("[data-testid=vocab-view]")
        view.wait_for(timeout=TIMEOUT_MS)
        assert page.locator("[data-testid=lab-vocab]").input_value() == "cl100k_base"
        assert view.get_attribute("data-text") == "000"  # the constraint's shortest example
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        # the focus on the first «ver» (the last column) leaves the table's first columns in view
        assert page.evaluate("document.activeElement.dataset.testid") == "vocab-open"
        assert page.evaluate("document.querySelector('.vocab-view .table-scroll').scrollLeft") == 0
        page.goto(servers["plain"] + PAGE + "#kind=regex&constraint=a&vocab=gpt9")
        error = page.locator("[data-testid=lab-error]")
        page.locator("[data-testid=kernel-status][data-state=ready]").wait_for(timeout=TIMEOUT_MS)
        error.wait_for(timeout=TIMEOUT_MS)
        assert "gpt9" in error.inner_text()
    finally:
        context.close()


def test_a_mini_gpt_tree_then_a_real_vocabulary_the_stale_mark_brings_the_model_back(lab):  # noqa: F811
    page = lab
    page.locator("[data-testid=lab-vocab]").select_option("minigpt")
    page.locator("[data-testid=lab-preset]").select_option("etiquetas")
    act(page, lambda: page.locator("[data-testid=lab-generate]").click())
    page.locator("[data-testid=lab-vocab]").select_option("cl100k_base")
    stale = page.locator("[data-testid=lab-stale]")
    assert "Calcular las máscaras" in stale.inner_text() and "Generar" not in stale.inner_text()
    page.locator("[data-testid=lab-stale-restore]").click()
    assert page.locator("[data-testid=lab-vocab]").input_value() == "minigpt"
    assert stale.count() == 0 and page.locator("[data-testid=lab-generate]").is_visible()


def test_back_to_the_mini_gpt_the_link_has_no_vocabulary(lab):  # noqa: F811
    page = lab
    page.locator("[data-testid=lab-vocab]").select_option("minigpt")
    assert page.locator("[data-testid=lab-generate]").is_visible()
    assert not page.locator("[data-testid=lab-text]").is_visible()
    assert "vocab" not in fragment(page) and "text" not in fragment(page)
