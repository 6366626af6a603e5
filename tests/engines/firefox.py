"""Firefox for the engine tests: Debian's ``firefox-esr``, headless, driven through WebDriver BiDi
by ``puppeteer-core`` in one long-lived Node process (``firefox_driver.mjs``).

Python and Node talk in JSON lines over the process's stdin and stdout: a request id, a command
and its arguments, answered by a result or an error (the protocol is at the top of the script).
Each page is a tab in its own browser context, so storage is fresh. Console errors and uncaught
exceptions come from puppeteer's ``console`` and ``pageerror`` events (what Firefox's BiDi
``log.entryAdded`` reports: the page's, and those of its workers where Firefox forwards them).
"""
from __future__ import annotations

import json
import os
import queue
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Any

from tests.engines.driver import EngineError

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).with_name("firefox_driver.mjs")
FIREFOX = Path("/usr/bin/firefox-esr")
START_TIMEOUT_S = 120.0
MARGIN_S = 60.0  # beyond a command's own timeout, before the Python side gives up on Node


class FirefoxEngine:
    """One headless Firefox behind one Node process. Use :func:`launch`."""

    name = "firefox"

    def __init__(self, node: str = "node", executable: Path = FIREFOX):
        self._log = tempfile.NamedTemporaryFile("w+", prefix="firefox-driver-", suffix=".log")
        self._process = subprocess.Popen(
            [node, str(SCRIPT)], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self._log, text=True, encoding="utf-8",
            env={**os.environ, "FIREFOX_BIN": str(executable)})
        self._answers: queue.Queue = queue.Queue()
        self._lock = threading.Lock()
        self._next_id = 1
        threading.Thread(target=self._read, daemon=True).start()
        first = self._answer(0, START_TIMEOUT_S)
        self.version = first["version"].split("/")[-1]

    def _read(self) -> None:
        for line in self._process.stdout:
            try:
                self._answers.put(json.loads(line))
            except ValueError:
                continue  # not ours (a library printing to stdout)
        self._answers.put(None)

    def _answer(self, wanted: int, timeout_s: float) -> Any:
        while True:
            try:
                answer = self._answers.get(timeout=timeout_s)
            except queue.Empty:
                raise EngineError(f"firefox: no answer from the driver in {timeout_s:.0f} s") from None
            if answer is None:
                raise EngineError(f"firefox: the driver exited ({self._process.poll()}): {self._stderr()}")
            if answer.get("id") != wanted:
                continue  # the late answer of a request that timed out
            if "error" in answer:
                raise EngineError(f"firefox: {answer['error']}")
            return answer["result"]

    def _stderr(self) -> str:
        self._log.flush()
        self._log.seek(0)
        return self._log.read()[-2000:]

    def request(self, cmd: str, timeout_s: float = 120.0, **args: Any) -> Any:
        """Send one command to the driver and return its result.

        Raises :class:`EngineError` with the driver's message when the command fails, when no
        answer comes within ``timeout_s`` seconds, or when the driver has exited."""
        with self._lock:
            request_id = self._next_id
            self._next_id += 1
            if self._process.poll() is not None:
                raise EngineError(f"firefox: the driver exited: {self._stderr()}")
            self._process.stdin.write(json.dumps({"id": request_id, "cmd": cmd, "args": args}) + "\n")
            self._process.stdin.flush()
            return self._answer(request_id, timeout_s)

    def new_page(self, width: int = 1100, height: int = 900) -> "FirefoxPage":
        """A new tab in a new browser context (fresh storage), with that viewport."""
        return FirefoxPage(self, self.request("newPage", width=width, height=height))

    def close(self) -> None:
        """Close the driver's stdin (it quits Firefox and exits); kill it if it does not."""
        if self._process.poll() is None:
            self._process.stdin.close()
            try:
                self._process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._log.close()


class FirefoxPage:
    """One tab of :class:`FirefoxEngine` (see :class:`tests.engines.driver.EnginePage`); every
    method raises :class:`EngineError` when the driver fails or times out."""

    engine = "firefox"

    def __init__(self, owner: FirefoxEngine, page_id: int):
        self._owner = owner
        self._id = page_id
        self.version = owner.version

    def _do(self, cmd: str, timeout_s: float = 120.0, **args: Any) -> Any:
        return self._owner.request(cmd, timeout_s, page=self._id, **args)

    def goto(self, url: str) -> None:
        self._do("goto", 120.0 + MARGIN_S, url=url)

    def evaluate(self, function: str, *args: Any) -> Any:
        return self._do("evaluate", fn=function, args=list(args))

    def wait_for(self, function: str, *args: Any, timeout_s: float = 60.0) -> Any:
        return self._do("waitFor", timeout_s + MARGIN_S, fn=function, args=list(args),
                        timeoutMs=int(timeout_s * 1000))

    def click(self, selector: str) -> None:
        self._do("click", selector=selector)

    def press(self, key: str) -> None:
        self._do("press", key=key)

    def type_text(self, text: str) -> None:
        self._do("type", text=text)

    def set_viewport(self, width: int, height: int) -> None:
        self._do("viewport", width=width, height=height)

    def screenshot(self, path: str) -> None:
        self._do("screenshot", path=str(Path(path).resolve()))

    def errors(self) -> list[str]:
        return self._do("errors")

    def close(self) -> None:
        self._do("closePage")


def launch(executable: Path = FIREFOX) -> FirefoxEngine:
    """Start Node with ``firefox_driver.mjs`` and headless Firefox; return the engine once the
    browser runs. Raises :class:`EngineError` when ``executable`` is missing, when Node or
    ``puppeteer-core`` cannot start it, or when it takes more than two minutes."""
    if not Path(executable).exists():
        raise EngineError(f"{executable} is missing: apt-get install firefox-esr")
    return FirefoxEngine(executable=executable)
