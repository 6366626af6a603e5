"""The site as a course: the course map on index.html (the lessons of PAGES in order, their time,
and what this browser has run, from local storage) and the previous/next links of each lesson."""
from __future__ import annotations

import re

import pytest

import build
from sitebuild import render
from tests.e2e.helpers import open_lesson, wait_cell, without_python

pytestmark = pytest.mark.e2e

LESSONS = [spec for spec in build.PAGES if render.is_lesson(spec)]


def course_map(context, base_url):
    page = without_python(context.new_page())
    page.goto(base_url + "index.html")
    return page, page.locator("[data-testid=course-map] > li")


def progress(items) -> dict[str, tuple[str, str]]:
    return {items.nth(i).get_attribute("data-lesson"):
            (items.nth(i).get_attribute("data-progress"),
             items.nth(i).locator("[data-testid=lesson-progress]").inner_text())
            for i in range(items.count())}


def test_the_map_lists_the_lessons_in_order_with_their_time_and_nothing_run(context, base_url):
    page, items = course_map(context, base_url)
    assert items.count() == len(LESSONS)
    for i, spec in enumerate(LESSONS):
        link = items.nth(i).locator("a")
        assert link.get_attribute("href") == spec["out"]
        assert link.inner_text() == spec["title"]
        assert re.fullmatch(r"\d+ min", items.nth(i).locator("[data-testid=lesson-time]").inner_text())
        assert items.nth(i).bounding_box()["height"] < 200  # one line, wrapped at most a little
    assert set(progress(items).values()) == {("none", "sin ejecutar")}


def test_the_map_shows_which_lessons_this_browser_has_run(context, base_url):
    first, second = LESSONS[0]["out"], LESSONS[1]["out"]
    lesson = open_lesson(context, base_url, first)
    lesson.locator("[data-testid=run-all]").click()
    cells = lesson.locator("[data-testid=cell]")
    for i in range(cells.count()):
        wait_cell(cells.nth(i), timeout=60_000)  # an error counts as run (marco has one)
    other = open_lesson(context, base_url, second)
    cell = other.locator("[data-testid=cell]").first
    cell.locator("[data-testid=cell-run]").click()
    wait_cell(cell, timeout=60_000)
    total = other.locator("[data-testid=cell]").count()

    page, items = course_map(context, base_url)
    shown = progress(items)
    assert shown[first] == ("complete", "ejecutada entera")
    assert shown[second] == ("partial", f"ejecutada en parte (1 de {total} celdas)")
    # another browser profile has run nothing
    fresh = context.browser.new_context(service_workers="block")
    try:
        page = fresh.new_page()
        page.route("**/*", lambda route: route.continue_() if route.request.url.startswith(base_url)
                   else route.abort())
        page.goto(base_url + "index.html")
        assert set(progress(page.locator("[data-testid=course-map] > li")).values()) == {
            ("none", "sin ejecutar")}
    finally:
        fresh.close()


def test_each_lesson_links_the_previous_and_next_lesson(context, base_url):
    page = without_python(context.new_page())
    for i, spec in enumerate(LESSONS):
        page.goto(base_url + spec["out"])
        nav = page.locator("[data-testid=course-nav]")
        assert f"Lección {i + 1} de {len(LESSONS)}" in nav.inner_text()
        previous, following = nav.locator("a[rel=prev]"), nav.locator("a[rel=next]")
        if i == 0:
            assert previous.count() == 0
        else:
            assert previous.get_attribute("href") == LESSONS[i - 1]["out"]
            assert LESSONS[i - 1]["title"] in previous.inner_text()
        if i == len(LESSONS) - 1:
            assert following.count() == 0
        else:
            assert following.get_attribute("href") == LESSONS[i + 1]["out"]
            assert LESSONS[i + 1]["title"] in following.inner_text()
    page.goto(base_url + LESSONS[0]["out"])
    page.locator("[data-testid=course-nav] a[rel=next]").click()
    page.wait_for_url("**/" + LESSONS[1]["out"])
