"""Helpers for the end-to-end tests: open a lesson, edit and wait for cells."""
from __future__ import annotations

import html
import os
import re
from pathlib import Path

import pytest
from sitebuild import files
from sitebuild.cellrun import load_kernel

READY_TIMEOUT_MS = 90_000
LESSON = "marco.html"


def open_lesson(context, url: str, page_name: str = LESSON):
    """Open a lesson page and wait until its kernel is ready."""
    page = context.new_page()
    page.goto(url + page_name)
    status = page.locator("[data-testid=kernel-status]")
    status.and_(page.locator("[data-state=ready]")).wait_for(timeout=READY_TIMEOUT_MS)
    return page


def without_python(page):
    """Leave ``page``'s request for the runtime's .wasm unanswered: its Python stays «arrancando»
    and costs no CPU. For tests of what a page shows before Python is ready (editors, links,
    headings, the policy), so that a start nobody waits for does not slow the tests after it (each
    one is seconds of both cores). Returns ``page``."""
    page.route(RUNTIME_WASM, lambda route: None)
    return page


RUNTIME_WASM = "**/pyodide.asm.wasm"


def set_code(page, cell, code: str) -> None:
    """Replace a cell's source through its editor, as a reader would (a click on its code builds
    the editor first where it is not built yet: issue 43's lazy editors)."""
    cell.locator(".cm-content, pre.cell-source").first.click()
    cell.locator(".cm-content").click()
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(code)


def wait_cell(cell, states=("done", "error"), timeout: int = 30_000) -> str:
    """Wait until the cell's data-state is one of ``states``; return it."""
    selector = ",".join(f"[data-state={s}]" for s in states)
    cell.and_(cell.page.locator(selector)).wait_for(timeout=timeout)
    return cell.get_attribute("data-state")


def load_kernel_module():
    """The page's cell kernel (browser/kernel.py), loaded into CPython."""
    return load_kernel(str(files.BROWSER / "kernel.py"))


NUMBER = r"-?\d+\.\d+(?:e-?\d+)?"


def numbers(text: str) -> list[float]:
    return [float(x) for x in re.findall(NUMBER, text)]


def page_cell_sources(page) -> list[str]:
    """The cells' sources as the server sends them. The editor's DOM holds only the lines it has
    drawn, so it cannot be read for a long cell."""
    served = page.evaluate("async () => (await fetch(location.href)).text()")
    return [html.unescape(code) for code in
            re.findall(r'<pre class="cell-source"><code>(.*?)</code></pre>', served, flags=re.S)]


def site_model_dir(weights: Path) -> Path:
    """A folder with the weights as the site ships them (the model rounded to float16), made
    from the float32 folder ``weights``: what the page's ``load_model`` reads."""
    return files.site_model_dir(weights)


def site_model():
    """The model as the page runs it: the committed one rounded to float16 (``site_model_dir``),
    for tests that recompute in CPython what the page's cells print."""
    from minigpt.gpt import load_model
    return load_model(site_model_dir(files.ROOT / "weights"))


def assert_cells_match_cpython(page, weights: Path) -> None:
    """Run all cells in the page, then the same sources in order in CPython with the site's copy of
    the float32 folder ``weights`` (``site_model_dir``); the outputs must agree: same words,
    numbers within 2e-3, errors on the same cells."""
    page.locator("[data-testid=run-all]").click()
    cells = page.locator("[data-testid=cell]")
    sources = page_cell_sources(page)
    assert len(sources) == cells.count()
    kernel = load_kernel_module()
    events: list[dict] = []
    cpython = kernel.Kernel(lambda kind, payload: events.append(payload))
    previous = os.environ.get("MINIGPT_WEIGHTS")
    os.environ["MINIGPT_WEIGHTS"] = str(site_model_dir(weights))
    try:
        for i in range(cells.count()):
            cell = cells.nth(i)
            state = wait_cell(cell, timeout=60_000)
            events.clear()
            ok = cpython.run(sources[i])
            assert state == ("done" if ok else "error"), f"cell {i + 1}"
            shown = cell.locator("[data-testid=cell-output]").inner_text().strip()
            if not ok:  # tracebacks differ between 3.11 and 3.12 except the last line
                last = events[-1]["traceback"].strip().splitlines()[-1]
                assert shown.splitlines()[-1] == last, f"cell {i + 1}"
                continue
            expected = " ".join(re.sub(r"<[^>]*>", " ", p["html"]) if "html" in p
                                else p["text"] for p in events)
            assert re.sub(NUMBER, "#", shown).split() == re.sub(NUMBER, "#", expected).split(), \
                f"cell {i + 1}"
            assert numbers(shown) == pytest.approx(numbers(expected), abs=2e-3), f"cell {i + 1}"
    finally:
        if previous is None:
            os.environ.pop("MINIGPT_WEIGHTS", None)
        else:
            os.environ["MINIGPT_WEIGHTS"] = previous


RUN_ALL_TIMEOUT_MS = 180_000
ALL_CELLS_FINISHED = """() => [...document.querySelectorAll('[data-testid=cell]')]
    .every(c => c.dataset.state === 'done' || c.dataset.state === 'error')"""
# What a cell's output shows, the precomputed note left out: per child, its tag, class and text.
# Views mark what they measure (times, and plots of times) with ``data-measured``: it is read as
# «<medido>», and put back afterwards (the page goes on being tested).
OUTPUTS = """() => {
  const outputs = [...document.querySelectorAll('[data-testid=cell] [data-testid=cell-output]')];
  const saved = [];
  outputs.forEach(o => o.querySelectorAll('[data-measured]').forEach(m => {
    saved.push([m, [...m.childNodes]]);
    m.textContent = '<medido>';
  }));
  const shown = outputs.map(o => [...o.children].filter(c => !c.classList.contains('out-note'))
    .map(c => [c.tagName, c.className, c.innerText]));
  saved.reverse().forEach(([m, nodes]) => m.replaceChildren(...nodes));
  return shown;
}"""
# What each module reads from a lesson before its «Ejecutar todo» (the precomputed outputs), by page:
# ``{page name: {what: function(page)}}``, filled in when the test modules are imported, so that
# whichever test opens the page first reads them all (``RunAllPages``).
BEFORE_RUN_ALL: dict[str, dict] = {}


def read_before_run_all(page_name: str, what: str, read) -> None:
    """Have ``RunAllPages`` call ``read(page)`` on ``page_name`` before its «Ejecutar todo» and
    keep the result as ``page.before[what]``."""
    BEFORE_RUN_ALL.setdefault(page_name, {})[what] = read


def lesson_after_run_all(run_all_pages, page_name: str):
    """Body of a lesson's module fixture (``yield from``): the session's tab of ``page_name`` after
    one «Ejecutar todo», every cell finished (``RunAllPages`` in conftest.py: shared with the
    precomputed, offline, policy and layout checks), with ``page.problems`` listing its console and
    uncaught errors and ``page.before`` what was read before the click (``read_before_run_all``).
    After the module's tests, errors in the page, requests to other origins or policy violations
    fail it."""
    page = run_all_pages.get(page_name)
    yield page
    run_all_pages.check(page)
