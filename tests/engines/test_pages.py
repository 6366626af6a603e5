"""Every page of the site in Firefox and in WebKit, at a phone's width (390×844), one load per page
per engine: Python starts; a lesson's «Ejecutar todo» ends with every cell as the build's
precomputed outputs say (same state, same output, measured times masked); nothing is written to
the console as an error or thrown uncaught; the page never scrolls sideways and every display
formula fits. The «Laboratorio» generates under a regular expression, a JSON Schema and a GBNF
grammar, and CPython accepts each text; Stop ends a runaway cell on a plain host (Python restarts
and the notice says what was lost) and on a cross-origin isolated one (Python is interrupted and
keeps its variables where the engine has SharedArrayBuffer; otherwise it restarts and says so).

The same checks in Chromium are in ``tests/e2e/`` (``test_precomputed.py``, ``test_layout.py``,
``test_lab.py``, ``test_stop_notice.py``); their scripts are imported from there.
"""
from __future__ import annotations

import json
import re
import time

import jsonschema
import pytest

import build
from masker import compile_cfg
from minigpt.bpe import load_tokenizer
from sitebuild import render
from tests.e2e.helpers import ALL_CELLS_FINISHED
from tests.e2e.test_layout import OVERFLOWS
from tests.e2e.test_precomputed import OUTPUTS, without_times
from tests.engines.driver import EngineError, EnginePage

pytestmark = pytest.mark.engines

WIDTH, HEIGHT = 390, 844
READY_S = 180.0
# The page gives up on Python after 90 s by default (``?timeout=`` changes it): WebKit boots in
# 20-70 s here, more on a busy machine, so the tests give the page as long as they wait.
PAGE_TIMEOUT = f"?timeout={int(READY_S)}"
RUN_ALL_S = 420.0
ACTION_S = 180.0
PAGES = [spec["out"] for spec in build.editions()]  # both editions
LESSONS = {spec["out"] for spec in build.editions() if render.is_lesson(spec)}
LAB = "laboratorio.html"
TOOLS = {spec["out"] for spec in build.editions() if spec.get("tool")}  # the lab, in each edition
STOP_PAGE = "marco.html"  # its page check leaves it open for the Stop test (plain host)

STORING_OFF = "() => localStorage.setItem('curso:sin-conexion', 'no')"  # offline.js's SETTING
KERNEL_STATE = "() => document.querySelector('[data-testid=kernel-status]').dataset.state"
SETTLED = """() => { const s = document.querySelector('[data-testid=kernel-status]').dataset.state;
                     return (s === 'ready' || s === 'error') && s; }"""
# Everything the page says about its Python, for a failure message: the status line, the start-up
# error box (why it failed: a timeout, the worker's own error), each start-up stage, the offline
# status line, the restart notice.
KERNEL_REPORT = """() => { const q = (s) => document.querySelector(s);
  const box = q('#startup-error');
  return { state: q('[data-testid=kernel-status]').dataset.state,
    status: q('[data-testid=kernel-status]').innerText,
    error: box && !box.hidden ? box.querySelector('.error-text').innerText : null,
    stages: Object.fromEntries([...document.querySelectorAll('#startup [data-stage]')].map(
      (r) => [r.dataset.stage, `${r.dataset.state}: ${r.querySelector('.stage-detail').innerText}`])),
    offline: q('[data-testid=offline-status]') && [q('[data-testid=offline-status]').dataset.state,
      q('[data-testid=offline-status]').innerText],
    notice: q('#kernel-notice') && !q('#kernel-notice').hidden ? q('#kernel-notice').innerText : null,
    now_s: Math.round(performance.now()) / 1000 }; }"""
CELL_STATES = "() => [...document.querySelectorAll('[data-testid=cell]')].map(c => c.dataset.state)"
# What the build's precomputed output of each cell says: error when it shows a traceback.
PRECOMPUTED_STATES = """() => [...document.querySelectorAll('[data-testid=cell] [data-testid=cell-output]')]
    .map(o => o.dataset.precomputed ? (o.querySelector('.out-error') ? 'error' : 'done') : null)"""


def open_page(engine, url: str, python: bool = True) -> EnginePage:
    """A new tab at 390×844 on ``url``, with its Python ready when ``python`` (fails with the
    kernel's status text if it ends in error). The reader's switch for the offline copy is turned
    off at once, before Python is ready (when a lesson would register the service worker), so the
    page is never reloaded under a test and a plain host stays plain; the service worker in these
    engines is tested in ``test_engines_offline.py``."""
    page = engine.new_page(WIDTH, HEIGHT)
    try:
        page.goto(url + PAGE_TIMEOUT if python else url)
        page.evaluate(STORING_OFF)
        assert page.evaluate("() => innerWidth") == WIDTH
        if not python:
            return page
        assert_settled_ready(page)
    except BaseException:
        page.close()
        raise
    return page


def kernel_report(page: EnginePage) -> str:
    """What the page says about its Python (``KERNEL_REPORT``) and the errors it logged, for the
    message of a failed check of the kernel's state."""
    try:
        report = page.evaluate(KERNEL_REPORT)
    except Exception as error:  # noqa: BLE001 -- a message must come out of a failure message
        report = f"(no report: {error})"
    try:
        errors = page.errors()
    except Exception as error:  # noqa: BLE001
        errors = f"(no errors read: {error})"
    return f"{page.engine}: {report}; errors in the page: {errors}"


def assert_settled_ready(page: EnginePage, timeout_s: float = READY_S) -> None:
    """Wait until Python is ready or has failed, and check it is ready; on failure the message
    says why (``kernel_report``)."""
    try:
        state = page.wait_for(SETTLED, timeout_s=timeout_s)
    except EngineError as error:  # still starting: say how far it got
        raise AssertionError(f"{error}\n{kernel_report(page)}") from error
    assert state == "ready", kernel_report(page)


def assert_no_errors(page: EnginePage) -> None:
    errors = page.errors()
    assert not errors, f"{page.engine}: errors in the page: {errors}"


@pytest.mark.parametrize("name", PAGES)
def test_page_runs_and_fits_a_phone(engine, servers, kept, screenshots, name):
    url = servers["plain"] + name
    is_map = name.endswith("index.html")
    page = open_page(engine, url, python=not is_map)  # the course map starts no Python
    keep = False
    try:
        if is_map:
            links = page.evaluate("""() => [...document.querySelectorAll('a[href]')]
                .map(a => a.getAttribute('href')).filter(h => h.endsWith('.html'))""")
            edition = {n for n in LESSONS if n.startswith("en/") == name.startswith("en/")}
            assert {n.removeprefix("en/") for n in edition} <= set(links)
        elif name in LESSONS:
            expected = page.evaluate(PRECOMPUTED_STATES)
            before = page.evaluate(OUTPUTS)
            assert expected and all(expected), "a cell has no precomputed output"
            page.click("[data-testid=run-all]")
            page.wait_for(ALL_CELLS_FINISHED, timeout_s=RUN_ALL_S)
            after = page.evaluate(OUTPUTS)
            assert page.evaluate(CELL_STATES) == expected
            for i, (live, built) in enumerate(zip(after, before)):
                assert without_times(live) == without_times(built), \
                    f"{engine.name}, {name}, cell {i + 1}: the live output differs from the precomputed one"
        elif name in TOOLS:  # no cells: one step, so that its view and its choices are laid out
            act(page, "[data-testid=lab-step]")
            assert page.evaluate("() => document.querySelectorAll('[data-testid=lab-output]').length") == 1
        page.screenshot(str(screenshots / f"{engine.name}-{name.removesuffix('.html').replace('/', '-')}.png"))
        assert_no_errors(page)
        assert page.evaluate("() => document.documentElement.scrollWidth") <= WIDTH
        formulas = [o for o in page.evaluate(OVERFLOWS) if "math-display" in str(o["what"])]
        assert not formulas, f"{engine.name}: display formulas wider than their box: {formulas}"
        keep = name in (LAB, STOP_PAGE)
    finally:
        if keep:
            kept[(engine.name, name)] = page
        else:
            page.close()


def click_centered(page: EnginePage, selector: str) -> None:
    """Scroll ``selector`` to the middle of the window, as a reader would, then click it: the
    drivers click the middle of the part on screen, which can be under the sticky kernel bar."""
    page.evaluate("(s) => document.querySelector(s).scrollIntoView({block: 'center'})", selector)
    page.click(selector)


def act(page: EnginePage, button: str) -> None:
    """Click one of the lab's buttons and wait until its view holds that action's output
    (``click_centered``)."""
    page.evaluate("() => { document.querySelector('[data-testid=lab-view]').dataset.state = 'clicked'; }")
    click_centered(page, button)
    page.wait_for("() => document.querySelector('[data-testid=lab-view]').dataset.state === 'done'",
                  timeout_s=ACTION_S)
    error = page.evaluate("() => document.querySelector('[data-testid=lab-error]')?.innerText ?? null")
    assert error is None, error


def reuse_or_open(engine, kept, servers, name: str) -> EnginePage:
    """The page another test of this engine left open and checked, or a new load of it."""
    page = kept.pop((engine.name, name), None)
    return page if page is not None else open_page(engine, servers["plain"] + name)


def set_editor_text(page: EnginePage, editor: str, text: str) -> None:
    """Replace the text of the CodeMirror editor in ``editor`` (a CSS selector) by typing
    (``click_centered``)."""
    click_centered(page, f"{editor} .cm-content")
    page.press("Control+A")
    page.press("Delete")
    page.type_text(text)
    shown = page.evaluate("(s) => document.querySelector(s).innerText", f"{editor} .cm-content")
    assert shown.strip() == text, f"the editor holds {shown!r}"


LAB_CONSTRAINTS = [
    ("regex", r"(Benina|Obdulia) vive en [A-Z][a-z]{2,8}\."),
    ("json_schema", json.dumps({"type": "object", "properties": {"edad": {"type": "integer", "minimum": 1,
                                                                         "maximum": 99}},
                                "required": ["edad"], "additionalProperties": False})),
    ("gbnf", 'root ::= "sí" | "no" | "quizá " [a-z]{2,5}'),
]


def test_lab_generates_texts_cpython_accepts(engine, servers, kept):
    page = reuse_or_open(engine, kept, servers, LAB)
    try:
        for kind, constraint in LAB_CONSTRAINTS:
            page.evaluate("""(kind) => { const s = document.querySelector('[data-testid=lab-kind]');
                s.value = kind; s.dispatchEvent(new Event('input', {bubbles: true}));
                s.dispatchEvent(new Event('change', {bubbles: true})); }""", kind)
            set_editor_text(page, "[data-testid=lab-constraint]", constraint)
            act(page, "[data-testid=lab-generate]")
            output = page.evaluate("""() => { const o = document.querySelector('[data-testid=lab-output]');
                return {text: o.dataset.text, accepted: o.dataset.accepted}; }""")
            assert output["accepted"] == "true", (kind, output)
            text = output["text"]
            if kind == "regex":
                assert re.fullmatch(constraint, text), text
            elif kind == "json_schema":
                jsonschema.validate(json.loads(text), json.loads(constraint))
            else:
                matcher = compile_cfg(constraint).matcher(load_tokenizer().vocab)
                matcher.consume_bytes(text)
                assert matcher.is_accepting(), text
        assert_no_errors(page)
    finally:
        page.close()


def run_cell(page: EnginePage, i: int, states=("done", "error")) -> str:
    """Click cell ``i``'s (from 1) Run and wait until its state is one of ``states``. The state is
    first set to a value the page never gives, so an earlier run's state is not taken for this one."""
    page.evaluate("(i) => { document.querySelectorAll('[data-testid=cell]')[i - 1].dataset.state = 'clicked'; }", i)
    page.click(f"{cell_selector(i)} [data-testid=cell-run]")
    return page.wait_for("""(i, states) => { const s = document.querySelectorAll('[data-testid=cell]')[i - 1]
        .dataset.state; return states.includes(s) && s; }""", i, list(states), timeout_s=ACTION_S)


def cell_selector(i: int) -> str:
    """A CSS selector for the page's ``i``-th cell (from 1), set on it as ``data-engine-cell``."""
    return f"[data-engine-cell='{i}']"


def mark_cells(page: EnginePage) -> None:
    page.evaluate("""() => document.querySelectorAll('[data-testid=cell]')
        .forEach((c, i) => { c.dataset.engineCell = i + 1; })""")


def output(page: EnginePage, i: int) -> str:
    return page.evaluate("(s) => document.querySelector(s).innerText.trim()",
                         f"{cell_selector(i)} [data-testid=cell-output]")


@pytest.mark.parametrize("host", ["plain", "isolated"])
def test_stop_ends_a_runaway_cell(engine, servers, kept, host):
    page = (reuse_or_open(engine, kept, servers, STOP_PAGE) if host == "plain"
            else open_page(engine, servers["isolated"] + STOP_PAGE))
    try:
        can_interrupt = page.evaluate("() => self.crossOriginIsolated && typeof SharedArrayBuffer === 'function'")
        if host == "plain":
            assert can_interrupt is False
        elif engine.name == "firefox":
            assert can_interrupt is True
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
        stopped = output(page, 2)
        notice_shown = page.evaluate("() => !document.getElementById('kernel-notice').hidden")
        if can_interrupt:  # interrupted: a KeyboardInterrupt, no notice, the variables stay
            assert "KeyboardInterrupt" in stopped, stopped
            assert not notice_shown
            set_editor_text(page, f"{cell_selector(3)} .cm-editor", "print(x * 9)")
        else:  # restarted: the notice says what was lost and runs the cells above again
            assert "reinició" in stopped, stopped
            assert notice_shown
            lost = page.evaluate("() => document.querySelector('[data-testid=notice-lost]').innerText")
            assert "detener la celda 2" in lost, lost
            assert re.search(r"\(las? celdas? 1\b", lost), lost  # cell 1 had run
            assert re.search(r"\bx\b", lost), lost
            assert page.evaluate(f"() => document.querySelector(\"{cell_selector(1)}\").dataset.state") == "idle"
            page.click("[data-testid=notice-rerun]")
            page.wait_for(f"() => document.querySelector(\"{cell_selector(1)}\").dataset.state === 'done'",
                          timeout_s=ACTION_S)
            set_editor_text(page, f"{cell_selector(3)} .cm-editor", "print(x * 9)")
        assert run_cell(page, 3) == "done"
        assert output(page, 3) == "45"
        assert_no_errors(page)
    finally:
        page.close()


def test_the_driver_sees_console_errors_and_uncaught_ones(engine, servers):
    """The «no error» checks above mean something: an error written or thrown by the page is seen."""
    page = open_page(engine, servers["plain"] + "index.html", python=False)
    try:
        assert page.errors() == []
        page.evaluate("""() => { console.error('engine-console-check');
            setTimeout(() => { throw new Error('engine-throw-check'); }); }""")
        deadline = time.monotonic() + 30
        while not all(any(word in e for e in page.errors()) for word in ("engine-console-check", "engine-throw-check")):
            assert time.monotonic() < deadline, page.errors()
            time.sleep(0.1)
    finally:
        page.close()
