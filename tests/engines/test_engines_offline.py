"""The course's service worker in Firefox and WebKit (Chromium: ``tests/e2e/test_service_worker.py``):
on a plain host (no isolation headers) the first visit stores the course and reloads the page
once; the page is then cross-origin isolated, and where the engine has SharedArrayBuffer
(Firefox) Stop interrupts a cell and keeps the variables, while WebKitGTK, which has none, keeps
the restart. With the host gone, the other pages open from the store, start Python and run."""
from __future__ import annotations

import time

import pytest

from tests.e2e.conftest import Host
from tests.engines.test_pages import (ACTION_S, HEIGHT, KERNEL_STATE, PAGE_TIMEOUT, READY_S, WIDTH,
                                      assert_no_errors, assert_settled_ready, cell_selector,
                                      mark_cells, output, run_cell, set_editor_text)

pytestmark = pytest.mark.engines

STATE = """() => [document.querySelector('[data-testid=offline-status]').dataset.state,
  self.crossOriginIsolated, typeof SharedArrayBuffer === 'function',
  document.querySelector('[data-testid=kernel-status]').dataset.state]"""


def wait_stored(page, timeout_s: float = READY_S) -> list:
    """Poll until the course is stored and Python is ready, through the page's one reload."""
    deadline = time.monotonic() + timeout_s
    reading = None
    while time.monotonic() < deadline:
        try:
            reading = page.evaluate(STATE)
        except Exception:  # the page is reloading
            reading = None
        if reading and reading[0] == "stored" and reading[3] == "ready" and reading[1]:
            return reading
        time.sleep(0.3)
    raise AssertionError(f"never stored, isolated and ready: {reading}")


def test_stored_after_one_visit_isolated_and_offline(engine, site_dir):
    host = Host(site_dir)
    page = engine.new_page(WIDTH, HEIGHT)
    try:
        page.goto(host.url + "marco.html" + PAGE_TIMEOUT)
        if not page.evaluate("() => 'serviceWorker' in navigator"):
            pytest.skip(f"{engine.name} {engine.version} has no service workers")
        assert page.evaluate("() => self.crossOriginIsolated") is False  # a plain host
        _, isolated, shared, _ = wait_stored(page)
        assert isolated is True
        assert shared is (engine.name == "firefox")  # WebKitGTK has no SharedArrayBuffer
        # the one automatic reload happened (WebKit calls a reload a "navigate" in its timing)
        assert page.evaluate("() => sessionStorage.getItem('curso:recargada-para-aislar')") == "1"

        mark_cells(page)
        set_editor_text(page, f"{cell_selector(1)} .cm-editor", "x = 5")
        assert run_cell(page, 1) == "done"
        set_editor_text(page, f"{cell_selector(2)} .cm-editor", "while True: pass")
        run_cell(page, 2, states=("running",))
        page.wait_for(f"() => ({KERNEL_STATE})() === 'busy'", timeout_s=ACTION_S)
        page.click("[data-testid=stop]")
        page.wait_for(f"() => document.querySelector(\"{cell_selector(2)}\").dataset.state === 'error'",
                      timeout_s=60)
        assert_settled_ready(page)
        if shared:  # interrupted: the variable stays
            assert "KeyboardInterrupt" in output(page, 2)
            set_editor_text(page, f"{cell_selector(3)} .cm-editor", "print(x * 9)")
            assert run_cell(page, 3) == "done"
            assert output(page, 3) == "45"
        else:  # restarted, and the page says so
            assert "reinició" in output(page, 2)
        assert_no_errors(page)

        host.down()  # offline: another page, from the store
        page.goto(host.url + "en/mask.html" + PAGE_TIMEOUT)
        assert_settled_ready(page)
        mark_cells(page)
        assert run_cell(page, 1) == "done"
        assert page.evaluate("() => self.crossOriginIsolated") is True
        assert_no_errors(page)
    finally:
        page.close()
        host.down()
