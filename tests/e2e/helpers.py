"""Helpers for the end-to-end tests: open a lesson, edit and wait for cells."""
from __future__ import annotations

READY_TIMEOUT_MS = 90_000
LESSON = "marco.html"


def open_lesson(context, url: str, page_name: str = LESSON):
    """Open a lesson page and wait until its kernel is ready."""
    page = context.new_page()
    page.goto(url + page_name)
    status = page.locator("[data-testid=kernel-status]")
    status.and_(page.locator("[data-state=ready]")).wait_for(timeout=READY_TIMEOUT_MS)
    return page


def set_code(page, cell, code: str) -> None:
    """Replace a cell's source through its editor, as a reader would."""
    cell.locator(".cm-content").click()
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(code)


def wait_cell(cell, states=("done", "error"), timeout: int = 30_000) -> str:
    """Wait until the cell's data-state is one of ``states``; return it."""
    selector = ",".join(f"[data-state={s}]" for s in states)
    cell.and_(cell.page.locator(selector)).wait_for(timeout=timeout)
    return cell.get_attribute("data-state")
