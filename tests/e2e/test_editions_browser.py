"""The two editions in the browser: the English course map and lesson links, progress kept per
edition, the language switch that opens the same section, the one-line hint for readers whose
browser prefers English, and an English page's scripts and kernel speaking English."""
from __future__ import annotations

import re

import pytest

import build
from sitebuild import render
from tests.e2e.helpers import open_lesson, set_code, wait_cell, without_python

pytestmark = pytest.mark.e2e

LESSONS_EN = [spec for spec in build.PAGES_EN if render.is_lesson(spec)]
LESSONS_ES = [spec for spec in build.PAGES if render.is_lesson(spec)]


def progress(page) -> dict[str, tuple[str, str]]:
    items = page.locator("[data-testid=course-map] > li")
    return {items.nth(i).get_attribute("data-lesson"):
            (items.nth(i).get_attribute("data-progress"),
             items.nth(i).locator("[data-testid=lesson-progress]").inner_text())
            for i in range(items.count())}


def test_the_english_map_lists_the_english_lessons_in_order(context, base_url):
    page = without_python(context.new_page())
    page.goto(base_url + "en/index.html")
    assert page.evaluate("document.documentElement.lang") == "en"
    items = page.locator("[data-testid=course-map] > li")
    assert items.count() == len(LESSONS_EN) == len(LESSONS_ES)
    for i, spec in enumerate(LESSONS_EN):
        link = items.nth(i).locator("a")
        assert link.get_attribute("href") == spec["out"].removeprefix("en/")
        assert link.inner_text() == spec["title"]
        assert re.fullmatch(r"\d+ min", items.nth(i).locator("[data-testid=lesson-time]").inner_text())
    assert set(progress(page).values()) == {("none", "not run")}
    tools = page.locator("[data-testid=tool-link]")
    assert [tools.nth(i).get_attribute("href") for i in range(tools.count())] == [
        spec["out"].removeprefix("en/") for spec in build.PAGES_EN if spec.get("tool")]  # lab.html


def test_progress_is_kept_per_edition(context, base_url):
    lesson = open_lesson(context, base_url, "en/python.html")
    cell = lesson.locator("[data-testid=cell]").first
    cell.locator("[data-testid=cell-run]").click()
    wait_cell(cell, timeout=60_000)
    total = lesson.locator("[data-testid=cell]").count()
    page = context.new_page()
    page.goto(base_url + "en/index.html")
    assert progress(page)["en/python.html"] == ("partial", f"partly run (1 of {total} cells)")
    page.goto(base_url + "index.html")
    assert progress(page)["marco.html"] == ("none", "sin ejecutar")  # the Spanish edition's own


def test_each_english_lesson_links_the_previous_and_next_english_lesson(context, base_url):
    page = without_python(context.new_page())
    for i, spec in enumerate(LESSONS_EN):
        page.goto(base_url + spec["out"])
        nav = page.locator("[data-testid=course-nav]")
        assert f"Lesson {i + 1} of {len(LESSONS_EN)}" in nav.inner_text()
        following = nav.locator("a[rel=next]")
        if i < len(LESSONS_EN) - 1:
            assert following.get_attribute("href") == LESSONS_EN[i + 1]["out"].removeprefix("en/")
            assert LESSONS_EN[i + 1]["title"] in following.inner_text()


@pytest.mark.parametrize("start, other", [("mascara.html", "en/mask.html"),
                                          ("en/mask.html", "mascara.html")])
def test_the_switch_opens_the_same_section_of_the_other_edition(context, base_url, start, other):
    page = without_python(context.new_page())
    page.goto(base_url + start)
    headings = page.locator("main h2[id]")
    assert headings.count() >= 3
    target = headings.nth(2)
    section = target.get_attribute("id")
    page.evaluate("id => document.getElementById(id).scrollIntoView({block: 'start'})", section)
    page.locator("[data-testid=lang-switch-bar]").click()  # the kernel bar's copy: on screen
    page.wait_for_url(re.compile(re.escape(base_url + other) + "#" + re.escape(section) + "$"))
    box = page.locator(f"#{section}").bounding_box()
    assert box is not None and 0 <= box["y"] < 300  # the reader lands on that section
    # at the top of a page, the header's switch opens the top of the other edition's page
    page.evaluate("() => window.scrollTo(0, 0)")
    page.locator("[data-testid=lang-switch]").click()
    page.wait_for_url(re.compile(re.escape(base_url + start) + "$"))


@pytest.mark.parametrize("locale, shown", [("en-GB", True), ("es-ES", False), ("fr-FR", False)])
def test_a_reader_who_prefers_english_sees_a_link_and_no_redirect(browser, guard, base_url,
                                                                  locale, shown):
    ctx = browser.new_context(service_workers="block", locale=locale)
    ctx.route("**/*", guard.handle)
    try:
        page = ctx.new_page()
        page.goto(base_url + "index.html")
        page.wait_for_load_state("load")
        hint = page.locator("[data-testid=prefers-english]")
        page.wait_for_timeout(200)  # the page script has run (deferred)
        assert page.evaluate("document.readyState") == "complete"
        assert hint.is_visible() == shown
        if shown:
            assert hint.locator("a").get_attribute("href") == "en/index.html"
        assert page.url == base_url + "index.html"  # never redirected
    finally:
        ctx.close()


def test_an_english_page_speaks_english_from_its_scripts_and_kernel(shared_pages):
    with shared_pages.checked():
        page = shared_pages.get("en/python.html")
        assert re.fullmatch(r"Python: ready \(\d+\.\d s\)", page.locator("[data-testid=kernel-status]").inner_text().strip())
        assert page.locator("[data-testid=run-all]").inner_text() == "Run all"
        cell = page.locator("[data-testid=cell]").first
        set_code(page, cell, "from lesson.i18n import get_language\nfrom lesson.numbers import fmt_decimal\n"
                             "print(get_language(), fmt_decimal(0.5, 2))")
        cell.locator("[data-testid=cell-run]").click()
        assert wait_cell(cell) == "done"
        assert cell.locator("[data-testid=cell-output]").inner_text().strip() == "en 0.50"
        language = page.evaluate("""() => new Promise(resolve => {
            const cell = document.querySelectorAll('[data-testid=cell]')[0];
            resolve(document.documentElement.lang + ' ' + cell.querySelector('.cm-content').getAttribute('aria-label'));
        })""")
        assert language == "en Code of cell 1"


def test_an_english_quiz_speaks_english_from_the_hint_to_the_marks(context, base_url):
    page = without_python(context.new_page())  # a quiz needs no Python
    page.goto(base_url + "en/mask.html")
    question = page.locator("[data-testid=quiz-question]").first
    options = question.locator("[data-testid=quiz-option]")
    feedback = question.locator("[data-testid=quiz-feedback]")
    wrong = next(i for i in range(options.count()) if options.nth(i).get_attribute("data-correct") != "true")
    options.nth(wrong).get_by_role("radio").check()
    question.get_by_role("button", name="Check").click()
    said = feedback.inner_text()
    assert said.startswith("Not correct. Hint: "), said  # one space, English, no «Pista»
    assert options.nth(wrong).locator(".quiz-mark").inner_text() == "✘ your answer is not correct"
    question.get_by_role("button", name="Show the answer").click()
    right = question.locator('[data-testid=quiz-option][data-correct="true"]')
    assert right.locator(".quiz-mark").inner_text() == "✔ this is the right answer"
    right.get_by_role("radio").check()
    question.get_by_role("button", name="Check").click()
    assert right.locator(".quiz-mark").inner_text() == "✔ your answer is correct"
    assert feedback.inner_text().startswith("Correct. ")
    spanish = re.compile(r"Pista|respuesta|correcta|Respuesta")
    assert not spanish.search(question.inner_text()), question.inner_text()
