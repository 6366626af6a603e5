"""Content-Security-Policy: every page declares it, the server sends it (the worker's script
included), a cell cannot reach another origin and says why, and the lab still generates under it.
That every lesson runs all its cells under it, with no violation, is checked by
test_precomputed.py, which runs them all anyway (the ``violations`` fixture is in conftest.py)."""
from __future__ import annotations

import re
import urllib.request

import pytest

import build
from build import editions

PAGES = editions()  # both editions
from sitebuild.devserver import CONTENT_SECURITY_POLICY
from tests.e2e.helpers import (LESSON, load_kernel_module, open_lesson, page_cell_sources, set_code,
                               site_model_dir, wait_cell, without_python)

pytestmark = pytest.mark.e2e

FOREIGN = "https://example.com/datos.json"


def header(url: str, name: str) -> str | None:
    with urllib.request.urlopen(url) as response:
        return response.headers[name]


def test_every_page_declares_the_policy_and_the_server_sends_it_with_the_worker(
        context, base_url):
    page = without_python(context.new_page())
    for spec in PAGES:
        page.goto(base_url + spec["out"])
        meta = page.locator('meta[http-equiv="Content-Security-Policy"]')
        assert meta.get_attribute("content") == CONTENT_SECURITY_POLICY, spec["out"]
        assert header(base_url + spec["out"], "Content-Security-Policy") == CONTENT_SECURITY_POLICY
    page.goto(base_url + "marco.html")
    worker = page.evaluate(
        "JSON.parse(document.getElementById('runtime-config').textContent).worker")
    assert header(base_url + worker, "Content-Security-Policy") == CONTENT_SECURITY_POLICY
    assert "'wasm-unsafe-eval'" in CONTENT_SECURITY_POLICY
    assert "'unsafe-eval'" not in CONTENT_SECURITY_POLICY.replace("'wasm-unsafe-eval'", "")
    assert re.search(r"connect-src 'self'(;|$)", CONTENT_SECURITY_POLICY)


def test_a_cell_that_fetches_another_origin_fails_with_a_clear_message(shared_pages):
    guard = shared_pages.guard
    foreign = len(guard.foreign)
    with shared_pages.checked():
        page = shared_pages.get(LESSON)
        cell = page.locator("[data-testid=cell]").first
        set_code(page, cell, f"from pyodide.http import open_url\nopen_url('{FOREIGN}').read()\n")
        cell.locator("[data-testid=cell-run]").click()
        assert wait_cell(cell) == "error"
        text = cell.locator("[data-testid=cell-output]").inner_text()
        assert f"La petición a {FOREIGN} no salió de la página" in text
        assert "Content-Security-Policy" in text
        # Refused by the browser: it never reached the network (without the policy header, the
        # router sees such a request: test_offline's canary).
        assert guard.foreign[foreign:] == []


@pytest.mark.parametrize("spec", [p for p in PAGES if p.get("tool")],  # lessons: test_precomputed
                         ids=lambda p: p["out"])
def test_every_page_runs_all_its_cells_under_the_policy(context, base_url, violations, spec,
                                                       monkeypatch):
    page = open_lesson(context, base_url, spec["out"])
    if spec.get("tool"):  # the «Laboratorio» has no cells: one generation under the policy
        page.locator("[data-testid=lab-generate]").click()
        page.locator("[data-testid=lab-view][data-state=done]").wait_for(timeout=120_000)
        assert page.locator("[data-testid=lab-output]").get_attribute("data-accepted") == "true"
        assert page.evaluate("window.__violations") == []
        assert violations == []
        return
    page.locator("[data-testid=run-all]").click()
    cells = page.locator("[data-testid=cell]")
    sources = page_cell_sources(page)
    # The same sources in CPython: a cell fails in the page only where it fails there too
    # (marco's «Un error» does, on purpose), never because of the policy.
    cpython = load_kernel_module().Kernel(lambda kind, payload: None)
    # the page's model, for this test only (a later test's load_model() reads weights/)
    monkeypatch.setenv("MINIGPT_WEIGHTS", str(site_model_dir(build.ROOT / "weights")))
    for i, source in enumerate(sources):
        expected = "done" if cpython.run(source) else "error"
        assert wait_cell(cells.nth(i), timeout=120_000) == expected, f"cell {i + 1}"
    assert page.evaluate("window.__violations") == []
    assert violations == []
