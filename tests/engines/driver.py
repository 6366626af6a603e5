"""One small interface over the two engines that Playwright cannot drive here.

Firefox (Debian's ``firefox-esr``) is driven through WebDriver BiDi by ``puppeteer-core`` (npm),
in a Node process that ``firefox.py`` talks to; WebKit (Debian's WebKitGTK ``MiniBrowser``) by
Selenium through ``WebKitWebDriver`` (``webkit.py``). The tests in this folder are written once
against :class:`EnginePage` and run in each engine. Everything a test reads from the page comes
from JavaScript run in it, so both drivers only need to navigate, run a function, click, type,
resize, take a screenshot and report the page's errors.
"""
from __future__ import annotations

from typing import Any, Protocol


class EngineError(RuntimeError):
    """The driver could not do what was asked (a timeout, a missing element, a dead browser)."""


class EnginePage(Protocol):
    """One browser tab of one engine.

    ``function`` arguments are JavaScript function sources, e.g. ``"(a, b) => a + b"``; they
    run in the page with ``args`` (JSON values) and return a JSON value (awaited if a promise).
    """

    engine: str  # "firefox" or "webkit"
    version: str  # the browser's own version string, e.g. "153.8.0esr" or "2.50.6"

    def goto(self, url: str) -> None:
        """Navigate and wait for the load event. Errors recorded so far are cleared."""

    def evaluate(self, function: str, *args: Any) -> Any:
        """Run ``function(*args)`` in the page and return its JSON result."""

    def wait_for(self, function: str, *args: Any, timeout_s: float = 60.0) -> Any:
        """Poll ``function(*args)`` until it returns a truthy value; return it.
        Raises :class:`EngineError` after ``timeout_s`` seconds."""

    def click(self, selector: str) -> None:
        """A real (trusted) click on the first element matching the CSS ``selector``."""

    def press(self, key: str) -> None:
        """Press one key (``"Tab"``, ``"Enter"``, ``"Escape"``, a character) in the focused element,
        or a chord of modifiers and one key (``"Control+A"``)."""

    def type_text(self, text: str) -> None:
        """Type ``text`` into the focused element."""

    def set_viewport(self, width: int, height: int) -> None:
        """Make the page's layout viewport ``width`` x ``height`` CSS pixels
        (``innerWidth == width`` afterwards)."""

    def screenshot(self, path: str) -> None:
        """Save a PNG of the viewport."""

    def errors(self) -> list[str]:
        """Uncaught exceptions and ``console.error`` messages of the page (and, where the
        engine reports them, its workers) since the last :meth:`goto`."""

    def close(self) -> None:
        """Close the tab (and the browser if this driver owns it)."""


class Engine(Protocol):
    """One running browser of one engine (a session fixture): ``launch()`` in ``firefox.py``
    and ``webkit.py`` returns one."""

    name: str  # "firefox" or "webkit"
    version: str

    def new_page(self, width: int = 1100, height: int = 900) -> EnginePage:
        """A fresh tab (fresh storage where the engine allows it) at that viewport."""

    def close(self) -> None:
        """Quit the browser and its driver processes."""
