"""iPhone and iPad: Pyodide 0.27.7 must not take its WasmGC path there (pyodide#5670).

Pyodide 0.27.7 skips WasmGC only when the worker's ``navigator.platform`` names an iPhone, iPad
or iPod; an iPad's Safari says "MacIntel", and on iPadOS 18 the WasmGC path crashes the page.
The page tells the two apart by touch points (``isAppleMobile`` in ``boot.js``) and the
worker then reports "iPad" before Pyodide boots. Chromium plays each device here: the page's
``navigator`` is faked by an init script (a worker gets none, so only the page's decision can
reach it), and a cell reads what Pyodide chose: ``_PyEM_CountArgsPtr`` is 0 without WasmGC.
"""
from __future__ import annotations

import pytest

from tests.e2e.helpers import open_lesson, wait_cell

pytestmark = pytest.mark.e2e

IPAD_SAFARI = ("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 "
               "(KHTML, like Gecko) Version/18.5 Safari/605.1.15")
IPHONE_SAFARI = ("Mozilla/5.0 (iPhone; CPU iPhone OS 18_5 like Mac OS X) AppleWebKit/605.1.15 "
                 "(KHTML, like Gecko) Version/18.5 Mobile/15E148 Safari/604.1")
MAC_SAFARI = IPAD_SAFARI  # a Mac sends the same user agent; only its touch points differ
FAKE_NAVIGATOR = """(() => {
  const nav = Object.getPrototypeOf(navigator);
  Object.defineProperty(nav, "platform", { get: () => %r });
  Object.defineProperty(nav, "maxTouchPoints", { get: () => %d });
})();"""
PROBE = ("import js, pyodide_js\n"
         "print(js.navigator.platform, pyodide_js._module._PyEM_CountArgsPtr != 0)")


def what_the_worker_saw(context, base_url) -> tuple[str, bool]:
    """(the worker's navigator.platform, whether Pyodide took the WasmGC path)."""
    page = open_lesson(context, base_url)
    cell = page.locator("[data-testid=cell]").first
    editor = cell.locator(".cm-content")
    editor.click()
    for select_all in ("Control+A", "Meta+A"):  # the editor takes a faked Mac's key
        page.keyboard.press(select_all)
        page.keyboard.press("Delete")
        if not editor.inner_text().strip():
            break
    page.keyboard.insert_text(PROBE)
    cell.locator("[data-testid=cell-run]").click()
    state = wait_cell(cell)
    shown = cell.locator("[data-testid=cell-output]").inner_text()
    assert state == "done", shown
    platform, wasm_gc = shown.strip().rsplit(maxsplit=1)
    return platform, wasm_gc == "True"


@pytest.mark.parametrize("device, agent, platform, touch_points", [
    ("iPad (iPadOS 13+, says it is a Mac)", IPAD_SAFARI, "MacIntel", 5),
    ("iPhone", IPHONE_SAFARI, "iPhone", 5),
])
def test_apple_mobile_devices_boot_without_wasm_gc(browser, base_url, device, agent, platform,
                                                  touch_points):
    context = browser.new_context(service_workers="block", user_agent=agent)
    context.add_init_script(FAKE_NAVIGATOR % (platform, touch_points))
    try:
        seen, wasm_gc = what_the_worker_saw(context, base_url)
    finally:
        context.close()
    assert seen == "iPad", device
    assert not wasm_gc, device


@pytest.mark.parametrize("device, agent, platform, touch_points", [
    ("Mac (Safari)", MAC_SAFARI, "MacIntel", 0),
    ("this machine's Chromium", None, None, None),
])
def test_other_devices_keep_wasm_gc(browser, base_url, device, agent, platform, touch_points):
    """The control: without the workaround's condition, Pyodide uses WasmGC here, so the test
    above would fail if the worker were not told."""
    context = browser.new_context(service_workers="block", user_agent=agent)
    if platform is not None:
        context.add_init_script(FAKE_NAVIGATOR % (platform, touch_points))
    try:
        seen, wasm_gc = what_the_worker_saw(context, base_url)
    finally:
        context.close()
    assert seen != "iPad", device
    assert wasm_gc, device
