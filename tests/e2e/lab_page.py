"""What the «Laboratorio»'s browser tests share: the page, one tab per test module with the
kernel ready (the ``lab`` fixture: import it into the module), running an action and waiting for
its output (``act``), and typing a constraint into the editor (``type_constraint``)."""
from __future__ import annotations

import pytest

from tests.e2e.helpers import open_lesson

PAGE = "laboratorio.html"
TIMEOUT_MS = 120_000


@pytest.fixture(scope="module")
def lab(browser, servers):
    """One tab on the lab for the whole module (1100×900); fails the module's last test if the page
    threw an uncaught error (``page.problems`` lists them)."""
    context = browser.new_context(service_workers="block", viewport={"width": 1100, "height": 900})
    problems: list[str] = []
    context.on("weberror", lambda error: problems.append(f"uncaught: {error.error}"))
    page = open_lesson(context, servers["plain"], PAGE)
    page.problems = problems
    yield page
    context.close()
    assert not problems, problems


def act(page, do) -> None:
    """Do something that runs the lab, and wait until the view holds its output (no error)."""
    page.locator("[data-testid=lab-view]").evaluate("v => { v.dataset.state = 'clicked'; }")
    do()
    page.locator("[data-testid=lab-view][data-state=done]").wait_for(timeout=TIMEOUT_MS)
    assert page.locator("[data-testid=lab-error]").count() == 0, page.locator("[data-testid=lab-error]").inner_text()


def type_constraint(page, kind: str, text: str) -> None:
    """Choose the constraint's kind and replace the editor's text with ``text``."""
    page.locator("[data-testid=lab-kind]").select_option(kind)
    page.locator("[data-testid=lab-constraint] .cm-content").click()
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    if text:
        page.keyboard.insert_text(text)
