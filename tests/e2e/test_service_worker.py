"""The course's service worker in Chromium (docs/site.md «Offline and isolation»): the first
visit stores the whole course with visible progress; the page then reloads once, is cross-origin
isolated on a host that sends no such headers, and Stop keeps the variables; offline, the lab
generates (every lesson runs all its cells offline in ``test_precomputed.py``); a new build
reaches the reader on the next online visit, a stored old page offers it and applies it on
reload, and no page mixes two builds; the course map turns storing off and clears it; files
missing from the store are stored again; the course works from a sub-folder of Python's own
``http.server``, and on a host that isolates (``build.py serve --isolated``) no reload happens.
Firefox and WebKit: ``tests/engines/test_engines_offline.py``."""
from __future__ import annotations

import functools
import http.server
import json
import re
import shutil
import threading
import time
from pathlib import Path

import pytest

import build
from tests.e2e.conftest import Host, service_worker_context, wait_offline_state
from tests.e2e.helpers import LESSON, set_code, wait_cell
from tests.e2e.lab_page import act

pytestmark = pytest.mark.e2e

NEW_LINE = "# versión nueva del curso"
# Every state the offline status takes, kept across reloads (sessionStorage).
RECORD_STATES = """
addEventListener("DOMContentLoaded", () => {
  const status = document.querySelector("[data-testid=offline-status]");
  if (!status) return;
  const keep = () => {
    const states = JSON.parse(sessionStorage.getItem("__offline_states") || "[]");
    const bar = status.querySelector("progress");
    states.push(status.dataset.state + (bar && !bar.hidden ? ":bar" : ""));
    sessionStorage.setItem("__offline_states", JSON.stringify(states));
  };
  new MutationObserver(keep).observe(status, { attributes: true, subtree: true, childList: true });
});
"""
# Every text of the offline status line, kept across reloads (sessionStorage).
RECORD_TEXTS = """
addEventListener("DOMContentLoaded", () => {
  const text = document.querySelector("[data-testid=offline-status] .offline-text");
  if (!text) return;
  new MutationObserver(() => {
    const texts = JSON.parse(sessionStorage.getItem("__offline_texts") || "[]");
    texts.push(text.textContent);
    sessionStorage.setItem("__offline_texts", JSON.stringify(texts));
  }).observe(text, { characterData: true, subtree: true, childList: true });
});
"""
NAVIGATION = "() => performance.getEntriesByType('navigation')[0].type"
# The build of the service worker that controls the page, once no other one is installing or
# waiting (null before). It asks each controller once: a test that messages the old worker in a
# loop keeps it busy, and Chromium activates a waiting worker only once the old one is idle.
WORKER_BUILD = """async () => {
  const registration = await navigator.serviceWorker.getRegistration();
  const controller = navigator.serviceWorker.controller;
  if (!registration || !controller || registration.installing || registration.waiting) return null;
  if (self.__askedWorker !== controller) {
    self.__askedBuild = await new Promise((resolve) => {
      const channel = new MessageChannel();
      channel.port1.onmessage = (event) => resolve(event.data.build);
      controller.postMessage({ type: "BUILD" }, [channel.port2]);
    });
    self.__askedWorker = controller;
  }
  return self.__askedBuild;
}"""
# What the page sees of its registration (for a failure's message).
WORKERS = """async () => {
  const registration = await navigator.serviceWorker.getRegistration();
  const state = (worker) => worker && worker.state;
  const status = document.querySelector("[data-testid=offline-status]");
  return {installing: state(registration?.installing), waiting: state(registration?.waiting),
          active: state(registration?.active), controlled: !!navigator.serviceWorker.controller,
          status: status && status.dataset.state + ": " + status.textContent.trim()};
}"""
STORED_KEYS = """async () => {
  const names = (await caches.keys()).filter((name) => name.startsWith("curso-"));
  return (await (await caches.open(names[0])).keys()).map((request) => request.url);
}"""
STORES = """async () => {
  const names = (await caches.keys()).filter((name) => name.startsWith("curso-"));
  const sizes = [];
  for (const name of names) sizes.push((await (await caches.open(name)).keys()).length);
  return [names, sizes];
}"""

EVICT = """async (count) => {
  const names = (await caches.keys()).filter((name) => name.startsWith("curso-"));
  const cache = await caches.open(names[0]);
  for (const request of (await cache.keys()).slice(0, count)) await cache.delete(request);
}"""

def course_files(site: Path) -> list[dict]:
    """The list of files written into ``site/sw.js``."""
    text = (site / "sw.js").read_text()
    return json.loads(re.search(r'\{"build":"[0-9a-f]{16}","files":\[.*?\]\}', text).group(0))["files"]


def wait_worker_build(page, timeout_s: float = 120.0) -> str:
    """Wait until the service worker that controls ``page`` is of the page's own build (the new
    worker stores the changed files first: on a loaded machine that can take a minute). It asks
    each worker once (``WORKER_BUILD``)."""
    wanted = page.locator("[data-testid=offline-status]").get_attribute("data-build")
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if page.evaluate(WORKER_BUILD) == wanted:
                return wanted
        except Exception:  # no controller yet, or the page is reloading
            pass
        time.sleep(0.2)
    raise AssertionError(f"the service worker never became build {wanted}: {page.evaluate(WORKERS)}")


def cell_source(page, index: int = 0) -> str:
    return page.locator("[data-testid=cell] .cm-content").nth(index).inner_text()


@pytest.fixture(scope="module")
def new_build(site_dir, tmp_path_factory) -> Path:
    """The site rebuilt from the same sources but one cell («Python en el navegador», cell 1,
    with a comment line more): a real build, from a copy of the templates."""
    root = tmp_path_factory.mktemp("root")
    for name in ("py", "weights", "browser", "node_modules", ".cache"):
        (root / name).symlink_to(build.ROOT / name)
    shutil.copytree(build.ROOT / "templates", root / "templates")
    marco = root / "templates" / "marco.html"
    text = marco.read_text()
    first = text.index("{% call cell(")
    body = text.index("%}", first) + 2
    marco.write_text(text[:body] + "\n" + NEW_LINE + text[body:])
    site = tmp_path_factory.mktemp("new") / "site"
    build.build(root, site)
    assert (site / "sw.js").read_bytes() != (site_dir / "sw.js").read_bytes()
    return site


def swap(target: Path, source: Path) -> None:
    """Put ``source``'s build where the host serves ``target`` (a deploy)."""
    shutil.rmtree(target)
    shutil.copytree(source, target)


def test_first_visit_stores_the_course_then_reloads_once_isolated_and_stop_keeps_variables(
        browser, site_dir):
    host = Host(site_dir)
    seen = service_worker_context(browser, host)
    try:
        seen.context.add_init_script(RECORD_STATES)
        page = seen.context.new_page()
        page.goto(host.url + LESSON)
        assert page.evaluate("crossOriginIsolated") is False  # the host sends no such headers
        wait_offline_state(page, ("stored",), isolated=True)
        states = page.evaluate("JSON.parse(sessionStorage.getItem('__offline_states'))")
        assert "storing:bar" in states, states  # progress, with a bar
        assert states.index("storing:bar") < states.index("stored"), states
        assert page.evaluate(NAVIGATION) == "reload"  # one automatic reload ...
        text = page.locator("[data-testid=offline-status]").inner_text()
        assert "Disponible sin conexión" in text and "MB" in text, text
        page.evaluate("window.__still = true")
        time.sleep(3)
        assert page.evaluate("window.__still") is True  # ... and no other

        cells = page.locator("[data-testid=cell]")
        set_code(page, cells.nth(0), "x = 5")
        cells.nth(0).locator("[data-testid=cell-run]").click()
        assert wait_cell(cells.nth(0)) == "done"
        set_code(page, cells.nth(1), "while True:\n    pass\n")
        cells.nth(1).locator("[data-testid=cell-run]").click()
        wait_cell(cells.nth(1), states=("running",))
        page.locator("[data-testid=stop]").click()
        assert wait_cell(cells.nth(1), states=("error",), timeout=10_000) == "error"
        assert "KeyboardInterrupt" in cells.nth(1).locator("[data-testid=cell-output]").inner_text()
        assert page.locator("#kernel-notice").is_hidden()  # nothing was lost
        set_code(page, cells.nth(2), "print(x * 9)")
        cells.nth(2).locator("[data-testid=cell-run]").click()
        assert wait_cell(cells.nth(2)) == "done"
        assert cells.nth(2).locator("[data-testid=cell-output]").inner_text().startswith("45")
        seen.check()
    finally:
        seen.context.close()
        host.down()


def test_a_page_the_reader_has_used_is_not_reloaded(browser, site_dir):
    host = Host(site_dir)
    seen = service_worker_context(browser, host)
    try:
        page = seen.context.new_page()
        page.goto(host.url + LESSON)
        page.locator("[data-testid=kernel-status][data-state=ready]").wait_for(timeout=120_000)
        cell = page.locator("[data-testid=cell]").first
        cell.locator("[data-testid=cell-run]").click()  # before the course is stored
        assert wait_cell(cell) == "done"
        wait_offline_state(page, ("stored",))
        time.sleep(2)
        assert page.evaluate(NAVIGATION) == "navigate"  # not reloaded: the run is still there
        assert page.evaluate("crossOriginIsolated") is False
        other = seen.context.new_page()  # the next page comes from the service worker, isolated
        other.goto(host.url + "mascara.html")
        wait_offline_state(other, ("stored",), isolated=True)
        seen.check()
    finally:
        seen.context.close()
        host.down()


def test_offline_the_lab_generates(offline):
    page = offline.open("laboratorio.html")
    assert page.evaluate("crossOriginIsolated") is True
    act(page, lambda: page.locator("[data-testid=lab-generate]").click())
    assert page.locator("[data-testid=lab-view]").inner_text().strip()
    page.close()
    english = offline.open("en/lab.html")
    act(english, lambda: english.locator("[data-testid=lab-generate]").click())
    english.close()
    offline.seen.check()


def test_offline_every_page_and_notebook_comes_from_the_store(offline, site_dir):
    page = offline.seen.context.new_page()
    for spec in build.editions():
        page.goto(offline.url + spec["out"])
        assert page.title().startswith(spec["title"])
    for folder in ("", "en/"):  # a folder's address is its course map
        page.goto(offline.url + folder)
        assert page.locator("[data-testid=course-map]").count() == 1
    stored = {entry["url"] for entry in course_files(site_dir)}
    notebooks = sorted(p.relative_to(site_dir).as_posix() for p in site_dir.rglob("*.ipynb"))
    assert notebooks and set(notebooks) <= stored
    for name in notebooks:
        text = page.evaluate("async (url) => (await fetch(url)).text()", offline.url + name)
        assert json.loads(text)["cells"], name
    page.close()
    offline.seen.check()


def test_a_new_build_reaches_the_reader_and_no_page_mixes_builds(browser, site_dir, new_build,
                                                                 tmp_path):
    served = tmp_path / "site"
    shutil.copytree(site_dir, served)
    host = Host(served)
    seen = service_worker_context(browser, host)
    old_files = {entry["url"] for entry in course_files(site_dir)}
    new_files = {entry["url"] for entry in course_files(new_build)}
    try:
        seen.context.add_init_script(RECORD_TEXTS)
        page = seen.context.new_page()
        page.goto(host.url + LESSON)
        wait_offline_state(page, ("stored",), isolated=True)
        assert NEW_LINE not in cell_source(page)

        # Offline, then a new build is deployed: the stored page is the old one.
        host.down()
        swap(served, new_build)
        page.reload()
        wait_offline_state(page, ("stored",))
        assert NEW_LINE not in cell_source(page)

        # Back online, the browser finds the new worker: the old page offers the new version.
        host.up()
        page.evaluate("navigator.serviceWorker.getRegistration().then((r) => r.update())")
        wait_offline_state(page, ("update",))
        button = page.locator("[data-testid=offline-update]")
        assert button.is_visible() and button.is_enabled()
        cells = page.locator("[data-testid=cell]")
        set_code(page, cells.nth(1), "import time\ntime.sleep(4)")
        cells.nth(1).locator("[data-testid=cell-run]").click()
        wait_cell(cells.nth(1), states=("running",))
        assert button.is_disabled()  # never in the middle of a run
        assert wait_cell(cells.nth(1), timeout=30_000) == "done"
        time.sleep(0.6)
        seen.requests.clear()
        button.click()  # applied on reload
        wait_offline_state(page, ("stored",))
        assert NEW_LINE in cell_source(page)
        texts = page.evaluate("JSON.parse(sessionStorage.getItem('__offline_texts'))")
        assert any(text.startswith("Cambiando a la versión nueva") for text in texts), texts
        assert page.evaluate(WORKER_BUILD) == page.locator(
            "[data-testid=offline-status]").get_attribute("data-build")
        own = [re.sub(r"^http://[^/]+/", "", url).split("?")[0] for url in seen.requests
               if url.startswith(host.url)]
        assets = [path for path in own if path.startswith(("assets/", "weights/"))]
        assert assets and set(assets) <= new_files  # the new page loaded the new build's files
        assert all(path in new_files or path in ("", "sw.js") for path in own), own

        # The next online visit in a new tab: the new page, and one store holding the new build.
        other = seen.context.new_page()
        other.goto(host.url + LESSON)
        wait_offline_state(other, ("stored",), isolated=True)
        assert NEW_LINE in cell_source(other)
        names, sizes = other.evaluate(STORES)
        assert len(names) == 1 and sizes == [len(new_files)], (names, sizes)
        revision = {build: next(e["revision"] for e in course_files(site) if e["url"] == LESSON)
                    for build, site in (("old", site_dir), ("new", new_build))}
        keys = [key for key in other.evaluate(STORED_KEYS) if f"/{LESSON}" in key]
        assert keys == [f"{host.url}{LESSON}?__WB_REVISION__={revision['new']}"], keys  # the old one is gone
        assert old_files == new_files and revision["old"] != revision["new"]
        seen.check()
    finally:
        seen.context.close()
        host.down()


def test_an_online_visit_after_a_deploy_shows_the_new_page_at_once(browser, site_dir, new_build,
                                                                  tmp_path):
    served = tmp_path / "site"
    shutil.copytree(site_dir, served)
    host = Host(served)
    seen = service_worker_context(browser, host)
    try:
        page = seen.context.new_page()
        page.goto(host.url + LESSON)
        wait_offline_state(page, ("stored",), isolated=True)
        page.close()
        swap(served, new_build)
        seen.requests.clear()
        page = seen.context.new_page()
        page.goto(host.url + LESSON)  # pages come from the network first
        assert NEW_LINE in cell_source(page)
        # The page is the new build: the new worker is applied at once, with no reload.
        wait_worker_build(page)
        wait_offline_state(page, ("stored",))
        assert page.evaluate(NAVIGATION) == "navigate"
        new_files = {entry["url"] for entry in course_files(new_build)}
        own = [re.sub(r"^http://[^/]+/", "", url).split("?")[0] for url in seen.requests
               if url.startswith(host.url)]
        assert all(path in new_files or path in ("", "sw.js") for path in own), own
        host.down()  # and offline, the stored copy is the new one
        page.reload()
        wait_offline_state(page, ("stored",))
        assert NEW_LINE in cell_source(page)
        seen.check()
    finally:
        seen.context.close()
        host.down()


def usage_mb(panel) -> float:
    """The space the panel says the site takes, in MB (written the Spanish way)."""
    text = panel.locator("[data-testid=offline-usage]").inner_text()
    return float(re.search(r"ocupa ([\d.,]+) MB", text).group(1).replace(".", "").replace(",", "."))


def test_the_course_map_turns_storing_off_and_clears_it(browser, site_dir):
    host = Host(site_dir)
    seen = service_worker_context(browser, host)
    try:
        page = seen.context.new_page()
        page.goto(host.url + "index.html")
        wait_offline_state(page, ("stored",))
        panel = page.locator("[data-testid=offline-panel]")
        assert panel.is_visible()
        stored_mb = usage_mb(panel)
        assert stored_mb > 1, stored_mb
        toggle = panel.locator("[data-testid=offline-toggle]")
        assert toggle.is_checked()
        toggle.uncheck()
        wait_offline_state(page, ("off",))
        assert page.evaluate(STORES) == [[], []]
        assert page.evaluate("navigator.serviceWorker.getRegistrations().then((r) => r.length)") == 0
        lesson = seen.context.new_page()  # storing stays off on every page
        lesson.goto(host.url + LESSON)
        wait_offline_state(lesson, ("off",))
        assert lesson.evaluate("navigator.serviceWorker.getRegistrations().then((r) => r.length)") == 0

        # On again: the browser keeps the worker that still controls this page, with an empty
        # store; it stores the course again.
        toggle.check()
        wait_offline_state(page, ("stored",))
        total = len(course_files(site_dir))
        names, sizes = page.evaluate(STORES)
        assert len(names) == 1 and sizes == [total], (names, sizes)
        # Files the browser evicted are stored again on the next visit.
        page.evaluate(EVICT, 5)
        assert page.evaluate(STORES)[1] == [total - 5]
        page.reload()
        wait_offline_state(page, ("stored",))
        assert page.evaluate(STORES)[1] == [total]
        panel.locator("[data-testid=offline-clear]").click()  # clearing also turns it off
        wait_offline_state(page, ("off",))
        assert not toggle.is_checked()
        assert page.evaluate(STORES) == [[], []]
        # The browser frees the space once the worker that still controls the page stops (in
        # Chromium some 30 s later): the figure follows it, with no reload.
        deadline = time.monotonic() + 110
        while usage_mb(panel) > stored_mb / 10 and time.monotonic() < deadline:
            time.sleep(1)
        assert usage_mb(panel) <= stored_mb / 10, (stored_mb, usage_mb(panel))
        seen.check()
    finally:
        seen.context.close()
        host.down()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    """What ``python -m http.server`` runs (Python's own MIME types, no extra headers), silent."""

    def log_message(self, *args) -> None:
        pass


class PythonHttpServer(Host):
    """``root`` served by Python's own ``http.server`` handler (the course in a sub-folder of it),
    restartable at the same port like ``Host``."""

    def up(self) -> None:
        handler = functools.partial(QuietHandler, directory=str(self.site))
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def test_in_a_sub_folder_of_pythons_own_http_server(browser, site_dir, tmp_path):
    root = tmp_path / "www"
    root.mkdir()
    (root / "curso").symlink_to(site_dir)
    host = PythonHttpServer(root)
    seen = service_worker_context(browser, host)
    try:
        page = seen.context.new_page()
        page.goto(host.url + "curso/" + LESSON)
        wait_offline_state(page, ("stored",), isolated=True)
        scope = page.evaluate("navigator.serviceWorker.getRegistration().then((r) => r.scope)")
        assert scope == host.url + "curso/"  # the worker's scope is the course's folder only
        host.down()  # offline: another page of the sub-folder comes from the store, isolated
        lab = seen.context.new_page()
        lab.goto(host.url + "curso/laboratorio.html")
        wait_offline_state(lab, ("stored",), isolated=True)
        seen.check()
    finally:
        seen.context.close()
        host.down()


def test_on_a_host_that_isolates_no_reload_is_needed(browser, site_dir):
    host = Host(site_dir, isolated=True)  # as build.py serve --isolated
    seen = service_worker_context(browser, host)
    try:
        page = seen.context.new_page()
        page.goto(host.url + LESSON)
        assert page.evaluate("crossOriginIsolated") is True  # from the host's own headers
        wait_offline_state(page, ("stored",), isolated=True)
        time.sleep(1)
        assert page.evaluate(NAVIGATION) == "navigate"  # stored, and never reloaded
        seen.check()
    finally:
        seen.context.close()
        host.down()
