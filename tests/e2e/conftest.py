"""Fixtures for end-to-end tests in headless Debian Chromium.

One browser per session; ``site/`` is served on 127.0.0.1 three times: as a plain static
host would serve it (with the site's Content-Security-Policy header), with cross-origin
isolation headers too (Stop interrupts), and without the policy header (``open``: only the
pages' ``<meta>`` policy, which a Web Worker does not obey; the canary test needs it).
Every request of every page is routed: anything not on our origins is aborted and
recorded, and the test fails unless it asked for that (the canary test).
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import build
from sitebuild import devserver
from tests.e2e.helpers import open_lesson

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="session")
def site_dir(tmp_path_factory) -> Path:
    """A fresh build of the current sources, private to this test session."""
    site = tmp_path_factory.mktemp("e2e") / "site"
    build.build(build.ROOT, site)
    return site


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
def lesson(context, base_url):
    """The first lesson page on the plain server, kernel ready."""
    return open_lesson(context, base_url)


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
