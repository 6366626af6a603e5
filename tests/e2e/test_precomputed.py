"""Build-time outputs: every cell of every page comes with the output the build computed in
CPython, marked «precalculado», and running the cell in the browser gives the same output.
The pages run offline: the course map was visited once online, the service worker stored the
course, and the host is gone (the ``offline`` fixture, tests/e2e/conftest.py)."""
from __future__ import annotations

import re

import pytest

import build
from sitebuild import render
from tests.e2e.helpers import LESSON, open_lesson

pytestmark = pytest.mark.e2e

RUN_ALL_TIMEOUT_MS = 180_000
# What a cell's output shows, the precomputed note left out: per child, its tag, class and text.
# Views mark what they measure (times, and plots of times) with ``data-measured``: it is left out.
OUTPUTS = """() => {
  const outputs = [...document.querySelectorAll('[data-testid=cell] [data-testid=cell-output]')];
  outputs.forEach(o => o.querySelectorAll('[data-measured]').forEach(m => { m.textContent = '<medido>'; }));
  return outputs.map(o => [...o.children].filter(c => !c.classList.contains('out-note'))
    .map(c => [c.tagName, c.className, c.innerText]));
}"""
# The one thing that differs between runs of the same cell: a measured time ("· 2,16 s").
DURATION = re.compile(r"\d+(?:[.,\u202f\u00a0]\d+)*(?:,\d+)? ?(?:s|ms|µs)(?![\w])")
ALL_CELLS_FINISHED = """() => [...document.querySelectorAll('[data-testid=cell]')]
    .every(c => c.dataset.state === 'done' || c.dataset.state === 'error')"""


@pytest.mark.parametrize("name", [spec["out"] for spec in build.editions() if render.is_lesson(spec)])
def test_precomputed_outputs_equal_the_live_ones(offline, name):
    """Also the offline check and the policy check of every lesson: with no host, the page
    reaches ready and runs all its cells, and under the page's Content-Security-Policy (the
    host's header, as stored) no violation is raised, in the page or its worker."""
    page = offline.open(name)
    try:
        cells = page.locator("[data-testid=cell]")
        outputs = page.locator("[data-testid=cell] [data-testid=cell-output]")
        count = cells.count()
        assert count > 0
        assert page.locator("[data-testid=cell-output][data-precomputed=true]").count() == count
        notes = page.locator("[data-testid=precomputed-note]")
        assert notes.count() == count
        assert notes.first.is_visible()
        assert ("precomputed" if name.startswith("en/") else "precalculado") in notes.first.inner_text()
        before = page.evaluate(OUTPUTS)
        assert all(before), "a cell has no precomputed output"

        page.locator("[data-testid=run-all]").click()
        page.wait_for_function(ALL_CELLS_FINISHED, timeout=RUN_ALL_TIMEOUT_MS)
        assert notes.count() == 0 and outputs.and_(page.locator("[data-precomputed]")).count() == 0
        after = page.evaluate(OUTPUTS)
        assert page.evaluate("window.__violations") == []
        offline.seen.check()  # no request left the origin, no uncaught error, no violation
        for i in range(count):
            assert without_times(after[i]) == without_times(before[i]), \
                f"{name}, cell {i + 1}: the live output differs"
    finally:
        page.close()


def without_times(output: list[list[str]]) -> list[list[str]]:
    # a time's width changes the padding of the columns printed after it
    return [[tag, cls, re.sub(r"[ \t]+", " ", DURATION.sub("<tiempo>", text))] for tag, cls, text in output]


def test_an_edited_cell_says_its_precomputed_output_is_of_the_original(context, base_url):
    page = context.new_page()
    page.goto(base_url + LESSON)
    cell = page.locator("[data-testid=cell]").first
    note = cell.locator("[data-testid=precomputed-note]")
    assert "al construir la página" in note.inner_text()
    cell.locator(".cm-content").click()
    page.keyboard.press("End")
    page.keyboard.insert_text("  # mío")
    assert "con el código original" in note.inner_text()
    assert "al construir la página" not in note.inner_text()
