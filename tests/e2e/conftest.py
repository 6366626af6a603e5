"""Fixtures for end-to-end tests in headless Debian Chromium.

One browser per session; ``site/`` is served on 127.0.0.1 three times: as a plain static
host would serve it (with the site's Content-Security-Policy header), with cross-origin
isolation headers too (Stop interrupts), and without the policy header (``open``: only the
pages' ``<meta>`` policy, which a Web Worker does not obey; the canary test needs it).
Every request of every page is routed: anything not on our origins is aborted and
recorded, and the test fails unless it asked for that (the canary test).
"""
from __future__ import annotations

import contextlib
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from sitebuild import devserver
from sitebuild.files import NODE_MODULES
from tests.e2e.helpers import LESSON, READY_TIMEOUT_MS, open_lesson

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def _serve(site: Path, isolated: bool, csp: bool = True):
    server = devserver.make_server(site, 0, isolated, csp)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture(scope="session")
def servers(site_dir):
    """``{"plain": url, "isolated": url, "open": url}``, on 127.0.0.1 with free ports."""
    running = {name: _serve(site_dir, name == "isolated", name != "open")
               for name in ("plain", "isolated", "open")}
    yield {name: f"http://127.0.0.1:{s.server_address[1]}/" for name, s in running.items()}
    for server in running.values():
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="session")
def base_url(servers) -> str:
    return servers["plain"]


@pytest.fixture(scope="session")
def browser():
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: run `make test` (it installs Debian's "
                    "chromium) or `apt-get install chromium`.")
    from playwright.sync_api import sync_playwright
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM),
                                              args=CHROMIUM_ARGS, headless=True)
        yield chromium
        chromium.close()


@dataclass
class NetworkGuard:
    """Every URL requested by pages and workers; ``foreign`` ones were aborted."""
    allowed: tuple[str, ...]
    seen: list[str] = field(default_factory=list)
    foreign: list[str] = field(default_factory=list)

    def handle(self, route):
        url = route.request.url
        self.seen.append(url)
        if url.startswith(self.allowed):
            route.continue_()
        else:
            self.foreign.append(url)
            route.abort()


@pytest.fixture
def guard(servers) -> NetworkGuard:
    return NetworkGuard(allowed=tuple(servers.values()))


@pytest.fixture
def context(browser, guard):
    """A fresh browser context: service workers blocked, every request routed."""
    ctx = browser.new_context(service_workers="block", viewport={"width": 1100, "height": 900})
    ctx.route("**/*", guard.handle)
    errors: list[str] = []
    ctx.on("weberror", lambda error: errors.append(str(error.error)))
    yield ctx
    ctx.close()
    if guard.foreign:
        pytest.fail(f"the page requested other origins: {guard.foreign}")
    if errors:
        pytest.fail(f"uncaught errors in the page: {errors}")


@pytest.fixture
def lesson(shared_pages):
    """The first lesson page on the plain server, kernel ready, as it loaded (``SharedPages``:
    one tab for the session, reset between tests). A test that checks the start-up itself opens
    a fresh page in ``context`` instead."""
    with shared_pages.checked():
        yield shared_pages.get(LESSON)


@pytest.fixture
def fresh_lesson(context, base_url):
    """The first lesson page on the plain server, in a new context, Python just started: for the
    tests of the start-up, and of Stop's restart."""
    return open_lesson(context, base_url)


def watch_problems(page) -> None:
    """Collect ``page``'s console errors and uncaught errors in ``page.problems`` (a test may give
    it a new list: the listeners append to whichever list it holds)."""
    page.problems = []
    page.on("pageerror", lambda error: page.problems.append(f"uncaught: {error}"))
    page.on("console", lambda message: page.problems.append(f"console: {message.text}")
            if message.type == "error" else None)


VIEWPORT = {"width": 1100, "height": 900}
# The session's SharedPages and RunAllPages: their tabs (each with a Python) are closed after the
# last Chromium test, so that the engine tests after it do not run beside them.
KEPT_OPEN: list = []


def pytest_runtest_teardown(item, nextitem):
    if nextitem is None or nextitem.path.parent != item.path.parent:
        if item.path.parent.name == "e2e":
            for holder in KEPT_OPEN:
                holder.close_pages()
# The page's test hook (page.js): back to the cells as loaded, in the same Python.
RESET = """() => new Promise((resolve) => {
  document.addEventListener('course-test-reset-done', (event) => resolve(event.detail), {once: true});
  document.dispatchEvent(new CustomEvent('course-test-reset'));
})"""
SETTLED = """() => ['ready', 'error'].includes(
  document.querySelector('[data-testid=kernel-status]').dataset.state)"""


class SharedPages:
    """Lesson tabs kept open for the whole session, one per (server, page), so that Python starts
    once per page rather than once per test.

    ``get`` gives the tab as it loaded: between two tests the page's test hook
    (``course-test-reset``, page.js) empties the cells' namespace in the same Python and puts every
    cell back as the page loaded it (original code without undo history, no saved edit, the
    build's output, the first prompt); the tab also gets the default window size back, the focus
    off any element and the scroll at the top. A tab whose reset fails (Python still busy, or
    broken) is closed and loaded again. ``checked`` fails a test that made the shared context
    request another origin or throw uncaught, as the ``context`` fixture does.

    Tests of the start-up itself (its stages, Stop and restart, ``file://``, a hang, the service
    worker's first visit) keep a fresh page of their own."""

    def __init__(self, browser, servers: dict[str, str]):
        self.servers = servers
        self.guard = NetworkGuard(allowed=tuple(servers.values()))
        self.context = browser.new_context(service_workers="block", viewport=VIEWPORT)
        self.context.route("**/*", self.guard.handle)
        self.errors: list[str] = []
        self.context.on("weberror", lambda error: self.errors.append(str(error.error)))
        self.pages: dict[tuple[str, str], object] = {}
        self.loads = 0  # pages loaded, each one a start of Python
        self.resets = 0
        KEPT_OPEN.append(self)

    def get(self, name: str, server: str = "plain"):
        """The tab of ``name`` on ``server`` (a key of ``servers``), kernel ready, as it loaded;
        ``page.problems`` lists the console errors and uncaught errors of the tab during this test."""
        key = (server, name)
        page = self.pages.pop(key, None)
        if page is not None and not self.reset(page):
            page.close()
            page = None
        if page is None:
            page = self._open(server, name)
        page.problems = []  # this test's
        self.pages[key] = page
        return page

    def _open(self, server: str, name: str):
        page = self.context.new_page()
        watch_problems(page)
        page.goto(self.servers[server] + name)
        page.locator("[data-testid=kernel-status][data-state=ready]").wait_for(timeout=READY_TIMEOUT_MS)
        self.loads += 1
        return page

    def reset(self, page) -> bool:
        """Put ``page`` back as it loaded; False if it cannot be (then it must be loaded again)."""
        try:
            page.set_viewport_size(VIEWPORT)
            page.wait_for_function(SETTLED, timeout=30_000)
            detail = page.evaluate(RESET)
            page.evaluate("() => { document.activeElement?.blur(); scrollTo(0, 0); }")
        except Exception:  # noqa: BLE001 -- any failure: the page is loaded again
            return False
        self.resets += int(bool(detail["ok"]))
        return bool(detail["ok"])

    @contextlib.contextmanager
    def checked(self):
        """Fail the test if, meanwhile, a page requested another origin or threw uncaught."""
        foreign, errors = len(self.guard.foreign), len(self.errors)
        yield
        new_foreign, new_errors = self.guard.foreign[foreign:], self.errors[errors:]
        if new_foreign:
            pytest.fail(f"the page requested other origins: {new_foreign}")
        if new_errors:
            pytest.fail(f"uncaught errors in the page: {new_errors}")

    def close_pages(self) -> None:
        for page in self.pages.values():
            page.close()
        self.pages.clear()

    def close(self) -> None:
        self.context.close()


@pytest.fixture(scope="session")
def shared_pages(browser, servers):
    """The session's ``SharedPages``."""
    pages = SharedPages(browser, servers)
    yield pages
    pages.close()


# Reports every violation of the page's policy into the page (the worker's are logged to the
# console, which the context's listener collects).
REPORT_VIOLATIONS = """
window.__violations = [];
document.addEventListener("securitypolicyviolation",
  (e) => window.__violations.push(e.violatedDirective + " " + e.blockedURI));
"""


@pytest.fixture
def violations(context):
    """CSP violations seen in pages (event) and workers (console), for this test's context."""
    seen: list[str] = []
    context.add_init_script(REPORT_VIOLATIONS)
    context.on("console", lambda message: seen.append(message.text)
               if "Content Security Policy" in message.text else None)
    return seen


# --- The service worker (tests/e2e/test_service_worker.py, test_precomputed.py) -------------------

class Host:
    """``site`` on 127.0.0.1 as a plain static host serves it (the site's Content-Security-Policy,
    no isolation headers), at a port that stays the same when the host goes down (``down``: the
    reader's connection is gone, every request fails) and comes back (``up``), so the origin, and
    the service worker registered for it, stay the same."""

    def __init__(self, site: Path, isolated: bool = False):
        self.site = site
        self.isolated = isolated  # COOP/COEP headers, as ``build.py serve --isolated`` sends
        self.port = 0
        self.server = None
        self.up()

    def up(self) -> None:
        self.server = devserver.make_server(self.site, self.port, isolated=self.isolated)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def down(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"


@dataclass
class ServiceWorkerContext:
    """A browser context that lets the course's service worker run, with what it saw: every
    request of its pages and of the service worker (``requests``), uncaught errors (``errors``)
    and Content-Security-Policy violations in pages and workers (``violations``)."""
    context: object
    host: Host
    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)

    def foreign(self) -> list[str]:
        return [url for url in self.requests
                if not url.startswith((self.host.url, "data:", "blob:"))]

    def check(self) -> None:
        """No request left the origin, no uncaught error, no policy violation."""
        assert self.foreign() == [], self.foreign()
        assert self.errors == [], self.errors
        assert self.violations == [], self.violations


def service_worker_context(browser, host: Host) -> ServiceWorkerContext:
    context = browser.new_context(service_workers="allow", viewport={"width": 1100, "height": 900})
    seen = ServiceWorkerContext(context, host)
    context.on("request", lambda request: seen.requests.append(request.url))
    context.on("weberror", lambda error: seen.errors.append(str(error.error)))
    context.add_init_script(REPORT_VIOLATIONS)
    context.on("console", lambda message: seen.violations.append(message.text)
               if "Content Security Policy" in message.text else None)
    return seen


OFFLINE_STATE = """() => [document.querySelector('[data-testid=offline-status]').dataset.state,
  self.crossOriginIsolated,
  document.querySelector('[data-testid=kernel-status]')?.dataset.state ?? 'none',
  document.querySelector('[data-testid=offline-status] .offline-text').textContent]"""


def wait_offline_state(page, states=("stored",), isolated: bool | None = None,
                       timeout_s: float = 120.0) -> list:
    """Poll the page (from Python: the page's policy allows no string eval) until its offline
    status is one of ``states``, its kernel (if any) is ready, and ``crossOriginIsolated`` is
    ``isolated`` (when given). A page that reloads meanwhile is polled again. Returns the last
    reading ``[state, isolated, kernel, text]``."""
    deadline = time.monotonic() + timeout_s
    reading = None
    while time.monotonic() < deadline:
        try:
            reading = page.evaluate(OFFLINE_STATE)
        except Exception:  # the page is reloading
            reading = None
        if (reading and reading[0] in states and reading[2] in ("ready", "none")
                and (isolated is None or reading[1] is isolated)):
            return reading
        time.sleep(0.2)
    raise AssertionError(f"offline status never reached {states} (isolated={isolated}): {reading}")


@dataclass
class OfflineCourse:
    """The course after one online visit (the course map), with the host then gone: every
    page comes from what the service worker stored."""
    seen: ServiceWorkerContext

    @property
    def url(self) -> str:
        return self.seen.host.url

    def open(self, name: str):
        page = self.seen.context.new_page()
        page.goto(self.url + name)
        page.locator("[data-testid=kernel-status][data-state=ready]").wait_for(timeout=120_000)
        return page


@pytest.fixture(scope="session")
def offline(browser, site_dir):
    """One context for the session: the course map visited once online, everything stored, the
    host down. Tests open their pages in it and call ``offline.seen.check()``."""
    host = Host(site_dir)
    seen = service_worker_context(browser, host)
    page = seen.context.new_page()
    page.goto(host.url + "index.html")
    wait_offline_state(page, ("stored",))
    page.close()
    host.down()
    yield OfflineCourse(seen)
    seen.context.close()


# --- Lessons after «Ejecutar todo», one tab each for the session ------------------------------------

# The precomputed notes and outputs still marked precomputed: none once every cell has run.
PRECOMPUTED_MARKS = """() => ({notes: document.querySelectorAll('[data-testid=precomputed-note]').length,
  precomputed: document.querySelectorAll('[data-testid=cell-output][data-precomputed]').length})"""


class RunAllPages:
    """One tab per lesson page (each edition) after one «Ejecutar todo», shared by every Chromium
    test that needs that lesson run: the precomputed = live check (test_precomputed.py), the
    policy and offline checks (the tab is in the ``offline`` context: every file comes from the
    service worker's store, the host is down, the policy is the stored header's), the layout at
    390 and 1280 px (test_layout.py) and the lesson's own tests (test_<page>.py).

    Each tab carries ``before``: ``{"outputs": OUTPUTS}`` read before the click, plus what the test
    modules asked for with ``read_before_run_all``; ``after``: OUTPUTS once every cell had
    finished; ``violations``: the page's policy violations then; ``problems``: console errors and
    uncaught errors of the tab from its load on (kept growing: a test reads it when it checks);
    ``after_marks``: ``PRECOMPUTED_MARKS`` once every cell had finished."""

    def __init__(self, offline: OfflineCourse):
        self.offline = offline
        self.pages: dict[str, object] = {}
        KEPT_OPEN.append(self)

    def get(self, name: str):
        page = self.pages.get(name)
        if page is None:
            page = self.pages[name] = self._open(name)
        return page

    def _open(self, name: str):
        from tests.e2e.helpers import (ALL_CELLS_FINISHED, BEFORE_RUN_ALL, OUTPUTS,
                                       RUN_ALL_TIMEOUT_MS)
        page = self.offline.seen.context.new_page()
        watch_problems(page)
        # axe (run_axe in test_offline.py) as an init script: the service worker answers the
        # page's requests, so no route can serve it, and the policy refuses inline scripts.
        page.add_init_script(path=str(NODE_MODULES / "axe-core" / "axe.min.js"))
        page.goto(self.offline.url + name)
        page.locator("[data-testid=kernel-status][data-state=ready]").wait_for(timeout=120_000)
        page.before = {"outputs": page.evaluate(OUTPUTS)}
        for what, read in BEFORE_RUN_ALL.get(name, {}).items():
            page.before[what] = read(page)
        page.locator("[data-testid=run-all]").click()
        page.wait_for_function(ALL_CELLS_FINISHED, timeout=RUN_ALL_TIMEOUT_MS)
        page.after = page.evaluate(OUTPUTS)
        page.after_marks = page.evaluate(PRECOMPUTED_MARKS)
        page.violations = page.evaluate("window.__violations")
        return page

    def close_pages(self) -> None:
        for page in self.pages.values():
            page.close()
        self.pages.clear()

    def check(self, page) -> None:
        """No console or uncaught error in ``page`` so far, and none in the offline context, no
        request that left the origin, no policy violation."""
        assert not page.problems, f"errors in the page: {page.problems}"
        self.offline.seen.check()


@pytest.fixture(scope="session")
def run_all_pages(offline):
    """The session's ``RunAllPages``."""
    return RunAllPages(offline)


@pytest.fixture(scope="session")
def lab_phone(browser, servers):
    """One tab on the «Laboratorio» at a phone's size (390×844), kernel ready, for the session: the
    tests of the lab at 390 px go on from whatever the previous one left (each sets its preset or
    constraint and generates); only the tests of links load the lab afresh. Fails the last of
    those tests if the page threw an uncaught error or requested another origin."""
    guard = NetworkGuard(allowed=tuple(servers.values()))
    context = browser.new_context(service_workers="block", viewport={"width": 390, "height": 844})
    context.route("**/*", guard.handle)
    problems: list[str] = []
    context.on("weberror", lambda error: problems.append(f"uncaught: {error.error}"))
    page = open_lesson(context, servers["plain"], "laboratorio.html")
    page.problems = problems
    yield page
    context.close()
    assert not guard.foreign, f"the page requested other origins: {guard.foreign}"
    assert not problems, problems
