"""Build-time outputs: every cell of every page comes with the output the build computed in
CPython, marked «precalculado», and running the cell in the browser gives the same output.
The pages run offline: the course map was visited once online, the service worker stored the
course, and the host is gone (the ``offline`` fixture, tests/e2e/conftest.py)."""
from __future__ import annotations

import re

import pytest

import build
from sitebuild import render
from tests.e2e import helpers

pytestmark = pytest.mark.e2e

# Re-exported: tests/engines/test_pages.py runs the same check in Firefox and WebKit.
OUTPUTS = helpers.OUTPUTS
# The one thing that differs between runs of the same cell: a measured time ("· 2,16 s").
DURATION = re.compile(r"\d+(?:[.,\u202f\u00a0]\d+)*(?:,\d+)? ?(?:s|ms|µs|ns)(?![\w])")
LESSONS = [spec["out"] for spec in build.editions() if render.is_lesson(spec)]
# Before «Ejecutar todo»: how many cells, outputs marked precomputed and notes; the first note's
# visibility and text.
PRECOMPUTED = """() => {
  const notes = [...document.querySelectorAll('[data-testid=precomputed-note]')];
  return {cells: document.querySelectorAll('[data-testid=cell]').length,
          precomputed: document.querySelectorAll('[data-testid=cell-output][data-precomputed=true]').length,
          notes: notes.length, first_visible: Boolean(notes[0] && notes[0].checkVisibility()),
          first_text: notes[0] ? notes[0].innerText : ''};
}"""
for _name in LESSONS:
    helpers.read_before_run_all(_name, "precomputed", lambda page: page.evaluate(PRECOMPUTED))


@pytest.mark.parametrize("name", LESSONS)
def test_precomputed_outputs_equal_the_live_ones(run_all_pages, name):
    """Also the offline check and the policy check of every lesson: with no host, the page
    reaches ready and runs all its cells, and under the page's Content-Security-Policy (the
    host's header, as stored) no violation is raised, in the page or its worker. The page is the
    session's tab of the lesson after «Ejecutar todo» (``RunAllPages``): what it showed before the
    click and right after every cell finished was read then."""
    page = run_all_pages.get(name)
    marks = page.before["precomputed"]
    count = marks["cells"]
    assert count > 0
    assert marks["precomputed"] == count
    assert marks["notes"] == count
    assert marks["first_visible"]
    assert ("precomputed" if name.startswith("en/") else "precalculado") in marks["first_text"]
    before = page.before["outputs"]
    assert all(before), "a cell has no precomputed output"

    assert page.after_marks == {"notes": 0, "precomputed": 0}
    after = page.after
    assert page.violations == []
    run_all_pages.offline.seen.check()  # no request left the origin, no uncaught error, no violation
    for i in range(count):
        assert without_times(after[i]) == without_times(before[i]), \
            f"{name}, cell {i + 1}: the live output differs"


def without_times(output: list[list[str]]) -> list[list[str]]:
    # a time's width changes the padding of the columns printed after it
    return [[tag, cls, re.sub(r"[ \t]+", " ", DURATION.sub("<tiempo>", text))] for tag, cls, text in output]


def test_an_edited_cell_says_its_precomputed_output_is_of_the_original(lesson):
    page = lesson
    cell = page.locator("[data-testid=cell]").first
    note = cell.locator("[data-testid=precomputed-note]")
    assert "al construir la página" in note.inner_text()
    cell.locator(".cm-content").click()
    page.keyboard.press("End")
    page.keyboard.insert_text("  # mío")
    assert "con el código original" in note.inner_text()
    assert "al construir la página" not in note.inner_text()
