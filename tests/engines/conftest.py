"""Fixtures for the pages in Firefox and WebKit (``tests/engines/``).

One fresh build of ``site/`` per session, served on 127.0.0.1 as the Chromium tests serve it
(``tests/e2e/conftest.py``: a plain host with the site's Content-Security-Policy, and one with
cross-origin isolation headers too). ``engine`` runs every test once per engine: one browser per
engine for the whole session (Firefox through ``firefox.py``, WebKit through ``webkit.py``).
``kept`` holds pages that one test loaded and checked and that a later test of the same engine may
go on with, so that each page loads once per engine.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.e2e.conftest import _serve
from tests.engines.driver import EngineError

ROOT = Path(__file__).resolve().parents[2]
ENGINES = ("firefox", "webkit")
PACKAGES = {"firefox": "firefox-esr", "webkit": "webkit2gtk-driver (and xvfb)"}


@pytest.fixture(scope="session")
def servers(site_dir):
    """``{"plain": url, "isolated": url}``, on 127.0.0.1 with free ports."""
    running = {name: _serve(site_dir, name == "isolated") for name in ("plain", "isolated")}
    yield {name: f"http://127.0.0.1:{s.server_address[1]}/" for name, s in running.items()}
    for server in running.values():
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="session", params=ENGINES)
def engine(request):
    """The running browser of one engine (:class:`tests.engines.driver.Engine`); fails, naming the
    Debian package to install, when the browser or its driver is missing or does not start."""
    name = request.param
    if name == "firefox" and not (ROOT / "node_modules" / "puppeteer-core").is_dir():
        pytest.fail("node_modules/puppeteer-core is missing: run `npm ci` (or `make test`)")
    try:
        if name == "firefox":
            from tests.engines import firefox
            running = firefox.launch()
        else:
            from tests.engines import webkit
            running = webkit.launch()
    except EngineError as error:
        pytest.fail(f"{name} does not start: {error}\nInstall Debian's {PACKAGES[name]} "
                    "(`make test` does, as root or with sudo).")
    yield running
    running.close()


@pytest.fixture(scope="session")
def kept():
    """``{(engine, page name): page}``: pages a test left open, checked, for a later test."""
    return {}


@pytest.fixture(scope="session")
def screenshots(tmp_path_factory) -> Path:
    """Where each page's screenshot goes: ``$ENGINE_SCREENSHOTS`` if set, else a session folder."""
    folder = os.environ.get("ENGINE_SCREENSHOTS")
    path = Path(folder) if folder else tmp_path_factory.mktemp("screenshots")
    path.mkdir(parents=True, exist_ok=True)
    return path
