"""The page works offline: every request stays on 127.0.0.1, including the worker's;
start-up failures show an error with what to do; no serious accessibility issues."""
from __future__ import annotations

import re

import pytest

from sitebuild.files import NODE_MODULES
from sitebuild.vendor import PYODIDE_VERSION
from tests.e2e.helpers import LESSON, open_lesson, set_code, wait_cell

pytestmark = pytest.mark.e2e

CANARY = "http://canary.invalid/from-the-worker"
WORKER_FILES = ("pyodide.asm.wasm", "python_stdlib.zip", "numpy-2.0.2-cp312", "/assets/py.")


@pytest.mark.parametrize("name", ["marco.html", "en/python.html"])
def test_every_request_stays_local_and_worker_requests_are_seen(context, servers, guard, name):
    # The server without the policy header: with it, the browser refuses the canary before the
    # router sees it (tests/e2e/test_csp.py checks that).
    guard.seen.clear()
    lesson = open_lesson(context, servers["open"], name)
    local = [url for url in guard.seen if url.startswith(guard.allowed)]
    assert local == guard.seen and not guard.foreign
    for name in WORKER_FILES:  # fetched by the worker, so the router sees the worker
        assert any(name in url for url in guard.seen), f"no request for {name} seen"

    cell = lesson.locator("[data-testid=cell]").first
    set_code(lesson, cell,
             "from js import XMLHttpRequest\n"
             "request = XMLHttpRequest.new()\n"
             f"request.open('GET', '{CANARY}', False)\n"
             "try:\n    request.send()\nexcept Exception as error:\n"
             "    print('bloqueado')\n")
    cell.locator("[data-testid=cell-run]").click()
    assert wait_cell(cell) == "done"
    assert "bloqueado" in cell.locator("[data-testid=cell-output]").inner_text()
    assert guard.foreign == [CANARY]  # seen and aborted by the router
    guard.foreign.clear()


def run_axe(page) -> list[dict]:
    # The page's Content-Security-Policy refuses inline scripts: axe comes from its own origin,
    # unless the page has it already (``RunAllPages``' tabs: an init script, since their service
    # worker answers the page's requests before any route could).
    if not page.evaluate("() => typeof axe === 'object'"):
        url = re.match(r"https?://[^/]+/", page.url).group(0) + "__tests__/axe.min.js"
        page.route(url, lambda route: route.fulfill(
            path=str(NODE_MODULES / "axe-core" / "axe.min.js"), content_type="text/javascript"))
        page.add_script_tag(url=url)
    result = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
    return [v for v in result["violations"] if v["impact"] in ("serious", "critical")]


def describe(violations: list[dict]) -> str:
    return "\n".join(f"{v['id']} ({v['impact']}): {v['help']} at "
                     f"{[n['target'] for n in v['nodes']][:3]}" for v in violations)


@pytest.mark.parametrize("name", ["marco.html", "en/python.html"])
def test_lesson_page_has_no_serious_accessibility_violations(run_all_pages, name):
    """The session's tab of the lesson after «Ejecutar todo» (``RunAllPages``)."""
    lesson = run_all_pages.get(name)
    cells = lesson.locator("[data-testid=cell]")
    states = cells.evaluate_all("cs => cs.map(c => c.dataset.state)")
    assert states and set(states) <= {"done", "error"}, states
    violations = run_axe(lesson)
    assert not violations, describe(violations)


@pytest.mark.parametrize("name, first", [("index.html", LESSON), ("en/index.html", "python.html")])
def test_index_lists_lessons_and_has_no_serious_accessibility_violations(context, base_url, name, first):
    page = context.new_page()
    page.goto(base_url + name)
    links = page.locator(".lesson-list a")
    assert links.count() >= 1
    assert links.first.get_attribute("href") == first
    violations = run_axe(page)
    assert not violations, describe(violations)


@pytest.mark.parametrize("http_status, content_type, reason", [
    (404, "text/plain", "HTTP 404"),
    (200, "text/plain", "application/wasm"),  # a host with the wrong MIME type
])
def test_failed_runtime_download_shows_error_with_what_to_do(
        context, base_url, http_status, content_type, reason):
    wasm = f"**/vendor/pyodide-{PYODIDE_VERSION}/pyodide.asm.wasm"
    context.route(wasm, lambda route: route.fulfill(
        status=http_status, content_type=content_type, body="not wasm"))
    page = context.new_page()
    page.goto(base_url + LESSON)
    status = page.locator("[data-testid=kernel-status]")
    status.and_(page.locator("[data-state=error]")).wait_for(timeout=60_000)
    alert = page.locator("#startup-error")
    assert alert.is_visible()
    assert "Qué hacer" in alert.inner_text()
    assert reason in alert.inner_text()
    runtime_stage = page.locator("#startup [data-stage=runtime]")
    assert runtime_stage.get_attribute("data-state") == "failed"  # no endless spinner
    assert alert.get_by_role("button", name="Reintentar").is_visible()

    context.unroute(wasm)  # the file is back: Reintentar starts Python
    alert.get_by_role("button", name="Reintentar").click()
    status.and_(page.locator("[data-state=ready]")).wait_for(timeout=90_000)
    assert alert.is_hidden()


def test_start_up_that_hangs_times_out_into_error(context, base_url):
    context.route("**/*.wasm", lambda route: None)  # never answered: start-up hangs
    page = context.new_page()
    page.goto(base_url + LESSON + "?timeout=2.5")
    # while the runtime loads, the stages after it wait with a still (determinate) bar
    numpy_row = page.locator("#startup [data-stage=numpy]")
    assert numpy_row.get_attribute("data-state") == "pending"
    assert numpy_row.locator("progress").evaluate("p => p.hasAttribute('value')")
    status = page.locator("[data-testid=kernel-status]")
    status.and_(page.locator("[data-state=error]")).wait_for(timeout=20_000)
    assert "no terminó de arrancar en 2,5 s" in page.locator("#startup-error").inner_text()
    cell = page.locator("[data-testid=cell]").first
    cell.locator("[data-testid=cell-run]").click()
    assert wait_cell(cell) == "error"
    assert "no está disponible" in cell.locator("[data-testid=cell-output]").inner_text()


def test_page_opened_as_a_file_says_how_to_serve_it_without_a_retry(browser, site_dir):
    ctx = browser.new_context()  # no network guard: it only lets 127.0.0.1 through
    page = ctx.new_page()
    page.goto((site_dir / LESSON).as_uri())
    status = page.locator("[data-testid=kernel-status]")
    status.and_(page.locator("[data-state=error]")).wait_for(timeout=10_000)
    alert = page.locator("#startup-error")
    assert "python -m http.server" in alert.inner_text()
    assert alert.get_by_role("button", name="Reintentar").is_hidden()  # retrying cannot help
    ctx.close()
