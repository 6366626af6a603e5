"""WebKit for the engine tests: Debian's WebKitGTK ``MiniBrowser`` in automation mode, driven by
Selenium through ``WebKitWebDriver`` (package ``webkit2gtk-driver``), on a private Xvfb display.

The GTK MiniBrowser has no headless mode, so :func:`launch` starts ``Xvfb -displayfd`` (a free
display number) and every browser runs on it. Each :meth:`WebKitEngine.new_page` is a new WebDriver
session, i.e. a new MiniBrowser with fresh storage. MiniBrowser's window keeps a thin tool bar even
in automation mode, and GTK would not let the window be narrower than its tool bar (447 px); a
private ``gtk.css`` (``XDG_CONFIG_HOME`` of the browser only) removes the widgets' minimum sizes,
and :meth:`WebKitPage.set_viewport` sizes the window so that ``innerWidth``/``innerHeight`` are
exactly the ones asked for.

Errors: WebKitWebDriver has neither Selenium's log API nor WebDriver BiDi, and MiniBrowser's
``--enable-write-console-messages-to-stdout`` is ignored by the web views of an automation session.
So right after each load :meth:`WebKitPage.goto` installs, in the page, listeners for ``error``
(uncaught exceptions and failed resource loads), ``unhandledrejection`` and
``securitypolicyviolation``, and a wrapper around ``console.error``. What this misses, and the
Firefox driver sees: anything before the load event; messages that WebKit writes to the console
itself (a failed request, a worker's refused script) unless they also fire one of those events;
and everything inside workers (their ``console.error`` and their uncaught errors, unless the page
itself reports them).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
import time
import warnings
from pathlib import Path
from typing import Any

from tests.engines.driver import EngineError

MINIBROWSER = Path("/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser")
WEBDRIVER = Path("/usr/bin/WebKitWebDriver")
XVFB = "Xvfb"
POLL_S = 0.2
# A WebDriver session starts in seconds (MiniBrowser boots Python later, in the page). One that has
# not started after START_S means MiniBrowser died at launch: WebKitWebDriver then waits for it
# forever, so the start is abandoned, the driver stopped, and the launch tried again, up to
# START_TRIES times in all (each retry is reported as a warning).
START_S = 120.0
START_TRIES = 2
# GTK's widgets keep a minimum size; without this the window cannot be 390 px wide.
GTK_CSS = "* { min-width: 0; min-height: 0; padding: 0; margin: 0; }\n"
# Installed after every load: what the page reports as an error, kept in window.__engineErrors.
LISTEN = """
if (!window.__engineErrors) {
  const errors = window.__engineErrors = [];
  const text = (value) => { try { return value instanceof Error ? `${value.name}: ${value.message}`
                                          : typeof value === 'string' ? value : JSON.stringify(value); }
                            catch (e) { return String(value); } };
  addEventListener('error', (event) => {
    if (event.target && event.target !== window) {
      errors.push(`failed to load: ${event.target.src || event.target.href || event.target.tagName}`);
    } else {
      errors.push(`uncaught: ${event.message || text(event.error)}`);
    }
  }, true);
  addEventListener('unhandledrejection', (event) => errors.push(`uncaught (in promise): ${text(event.reason)}`));
  addEventListener('securitypolicyviolation',
    (event) => errors.push(`CSP: ${event.violatedDirective} refused ${event.blockedURI}`));
  const original = console.error;
  console.error = function (...args) {
    errors.push(`console: ${args.map(text).join(' ')}`);
    return original.apply(this, args);
  };
}
"""
# execute_async_script body: the function source goes in place of FUNCTION (inlined, not eval'ed: the
# site's Content-Security-Policy has no 'unsafe-eval'); it is called with the arguments.
CALL = """
const done = arguments[arguments.length - 1];
try {
  Promise.resolve((FUNCTION)(...arguments[0])).then((value) => done({value: value === undefined ? null : value}),
                                    (error) => done({error: String(error && error.stack || error)}));
} catch (error) { done({error: String(error && error.stack || error)}); }
"""


class Xvfb:
    """A private X display (``Xvfb -displayfd``: the server picks a free number)."""

    def __init__(self):
        if shutil.which(XVFB) is None:
            raise EngineError("Xvfb is missing: apt-get install xvfb")
        read, write = os.pipe()
        self.process = subprocess.Popen(
            [XVFB, "-displayfd", str(write), "-screen", "0", "1920x1200x24", "-nolisten", "tcp"],
            pass_fds=(write,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(write)
        with os.fdopen(read) as pipe:
            number = pipe.readline().strip()  # written once the server accepts connections
        if not number:
            self.close()
            raise EngineError("Xvfb did not start")
        self.display = f":{number}"

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)


class WebKitEngine:
    """MiniBrowser sessions on one Xvfb display. Use :func:`launch`."""

    name = "webkit"

    def __init__(self, minibrowser: Path = MINIBROWSER):
        self._minibrowser = minibrowser
        self._xvfb = Xvfb()
        self._config = tempfile.TemporaryDirectory(prefix="webkit-gtk-")
        (Path(self._config.name) / "gtk-3.0").mkdir()
        (Path(self._config.name) / "gtk-3.0" / "gtk.css").write_text(GTK_CSS)
        self._pages: list[WebKitPage] = []
        try:
            self.version = subprocess.run([str(minibrowser), "--version"], capture_output=True, text=True,
                                          env=self._env(), timeout=60).stdout.split()[-1]
        except (subprocess.SubprocessError, IndexError, OSError) as error:
            self.close()
            raise EngineError(f"webkit: {minibrowser} --version failed: {error}") from error

    def _env(self) -> dict[str, str]:
        return {**os.environ, "DISPLAY": self._xvfb.display, "XDG_CONFIG_HOME": self._config.name}

    def new_page(self, width: int = 1100, height: int = 900) -> "WebKitPage":
        """A new MiniBrowser (fresh storage) with that viewport. Raises :class:`EngineError`
        when the WebDriver session cannot start, START_TRIES launches in a row (see START_S)."""
        from selenium import webdriver
        from selenium.webdriver.webkitgtk.service import Service
        options = webdriver.WebKitGTKOptions()
        options.binary_location = str(self._minibrowser)
        options.add_argument("--automation")
        driver = None
        for attempt in range(1, START_TRIES + 1):
            service = Service(str(WEBDRIVER), env=self._env())
            started: dict[str, Any] = {}

            def start(service=service, started=started):
                try:
                    with warnings.catch_warnings():  # Selenium's WebKitGTK class uses a deprecated argument
                        warnings.simplefilter("ignore", DeprecationWarning)
                        started["driver"] = webdriver.WebKitGTK(options=options, service=service)
                except Exception as error:  # noqa: BLE001 -- WebDriverException or a broken socket: reported below
                    started["error"] = error
            thread = threading.Thread(target=start, daemon=True)
            thread.start()
            thread.join(START_S)
            if "driver" in started:
                driver = started["driver"]
                break
            if thread.is_alive():  # MiniBrowser never connected: stop the driver, which fails the start
                service.stop()
                thread.join(30)
                why = f"no WebDriver session after {START_S:.0f} s (MiniBrowser did not start)"
            else:
                error = started.get("error")
                why = f"no WebDriver session: {getattr(error, 'msg', None) or error}"
            if attempt == START_TRIES:
                raise EngineError(f"webkit: {why}, {START_TRIES} times")
            warnings.warn(f"webkit: {why}; starting MiniBrowser again", RuntimeWarning, stacklevel=2)
        page = WebKitPage(driver, self.version)
        self._pages.append(page)
        try:
            page.set_viewport(width, height)
        except EngineError:
            page.close()
            raise
        return page

    def close(self) -> None:
        """Quit every page's browser, then Xvfb."""
        for page in self._pages:
            page.close()
        self._xvfb.close()
        self._config.cleanup()


class WebKitPage:
    """One MiniBrowser window (see :class:`tests.engines.driver.EnginePage`); every method raises
    :class:`EngineError` when WebDriver fails or a wait times out."""

    engine = "webkit"

    def __init__(self, driver, version: str):
        self._driver = driver
        self.version = version
        self._closed = False
        driver.set_script_timeout(600)

    def _guard(self, action, *args):
        from selenium.common.exceptions import WebDriverException
        try:
            return action(*args)
        except WebDriverException as error:
            raise EngineError(f"webkit: {error.msg}") from error

    def goto(self, url: str) -> None:
        self._guard(self._driver.get, url)  # returns after the load event
        self._guard(self._driver.execute_script, LISTEN)

    def evaluate(self, function: str, *args: Any) -> Any:
        answer = self._guard(self._driver.execute_async_script,
                             CALL.replace("FUNCTION", function), list(args))
        if "error" in answer:
            raise EngineError(f"webkit: in the page: {answer['error']}")
        return answer["value"]

    def wait_for(self, function: str, *args: Any, timeout_s: float = 60.0) -> Any:
        deadline = time.monotonic() + timeout_s
        while True:
            value = self.evaluate(function, *args)
            if value:
                return value
            if time.monotonic() > deadline:
                raise EngineError(f"webkit: still false after {timeout_s:.0f} s: {function}")
            time.sleep(POLL_S)

    def click(self, selector: str) -> None:
        from selenium.webdriver.common.by import By
        element = self._guard(self._driver.find_element, By.CSS_SELECTOR, selector)
        self._guard(element.click)

    def press(self, key: str) -> None:
        from selenium.webdriver.common.action_chains import ActionChains
        *modifiers, last = key.split("+") if len(key) > 1 else [key]
        chain = ActionChains(self._driver)
        for modifier in modifiers:
            chain.key_down(_key(modifier))
        chain.send_keys(_key(last))
        for modifier in reversed(modifiers):
            chain.key_up(_key(modifier))
        self._guard(chain.perform)

    def type_text(self, text: str) -> None:
        from selenium.webdriver.common.action_chains import ActionChains
        self._guard(ActionChains(self._driver).send_keys(text).perform)

    def set_viewport(self, width: int, height: int) -> None:
        window = (width, height)
        for _ in range(4):  # the window's chrome (a thin tool bar) is measured, not assumed
            self._guard(self._driver.set_window_size, *window)
            inner = self._guard(self._driver.execute_script, "return [innerWidth, innerHeight]")
            if inner == [width, height]:
                return
            window = (window[0] + width - inner[0], window[1] + height - inner[1])
        raise EngineError(f"webkit: the viewport stays {inner[0]}×{inner[1]}, not {width}×{height}")

    def screenshot(self, path: str) -> None:
        if not self._guard(self._driver.save_screenshot, str(path)):
            raise EngineError(f"webkit: no screenshot written to {path}")

    def errors(self) -> list[str]:
        return self._guard(self._driver.execute_script, "return window.__engineErrors || []")

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            try:
                self._driver.quit()
            except Exception:  # the browser is gone already: nothing left to close
                pass


def _key(name: str) -> str:
    from selenium.webdriver.common.keys import Keys
    special = {"Control": Keys.CONTROL, "Shift": Keys.SHIFT, "Alt": Keys.ALT, "Meta": Keys.META,
               "Tab": Keys.TAB, "Enter": Keys.ENTER, "Escape": Keys.ESCAPE, "Backspace": Keys.BACKSPACE,
               "Delete": Keys.DELETE, "Home": Keys.HOME, "End": Keys.END, "ArrowUp": Keys.ARROW_UP,
               "ArrowDown": Keys.ARROW_DOWN, "ArrowLeft": Keys.ARROW_LEFT, "ArrowRight": Keys.ARROW_RIGHT}
    if name in special:
        return special[name]
    if len(name) == 1:
        return name.lower() if name.isalpha() else name
    raise EngineError(f"webkit: unknown key {name!r}")


def launch(minibrowser: Path = MINIBROWSER) -> WebKitEngine:
    """Start Xvfb and check MiniBrowser; return the engine (each page starts its own browser).
    Raises :class:`EngineError` when MiniBrowser, WebKitWebDriver or Xvfb is missing or does not start."""
    if not Path(minibrowser).exists() or not WEBDRIVER.exists():
        raise EngineError(f"{minibrowser} or {WEBDRIVER} is missing: apt-get install webkit2gtk-driver")
    return WebKitEngine(minibrowser)
