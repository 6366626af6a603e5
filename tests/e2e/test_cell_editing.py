"""Editing cells from the keyboard and keeping edits: Tab never gets trapped in an editor
(Enter starts editing, Esc stops), and edits survive a reload until restored.

None of these needs Python. The editors are built lazily (issue 43): near the view as the page
opens, and any other when the reader reaches its code, which until then is a focusable ``pre``;
these tests run before Python is ready, so they reach both kinds."""
from __future__ import annotations

import pytest

from tests.e2e.helpers import LESSON, set_code, without_python

pytestmark = pytest.mark.e2e

PAGES = (LESSON, "mascara.html", "en/python.html", "en/mask.html")  # both editions
ACTIVE = """() => {
  const e = document.activeElement;
  if (!e || e === document.body) return null;
  const cell = e.closest('[data-testid=cell]');
  const cells = [...document.querySelectorAll('[data-testid=cell]')];
  return {editor: e.classList.contains('cm-content'), cell: cell ? cells.indexOf(cell) : -1,
          tag: e.tagName, text: (e.getAttribute('aria-label') || e.textContent || '').slice(0, 40)};
}"""
STORED_EDITS = "() => Object.keys(localStorage).filter(k => k.startsWith('celda:'))"


READY_CELLS = """() => [...document.querySelectorAll('[data-testid=cell]')].every(
  c => c.querySelector('.cm-content') || c.querySelector('pre.cell-source[tabindex="0"]'))"""


def open_editors(context, url: str, name: str):
    """The page once its script has run, its Python left starting (``without_python``): every
    cell has its editor, or (issue 43: editors are built lazily) its code as a focusable ``pre``
    that becomes the editor when reached."""
    page = without_python(context.new_page())
    page.goto(url + name)
    for _ in range(600):
        if page.evaluate(READY_CELLS):
            return page
        page.wait_for_timeout(50)
    raise AssertionError("the page's cells never got their editors or their focusable code")


def cell_code(cell) -> str:
    """A short cell's code, as the editor shows it (every line is drawn), or as its ``pre`` does
    before the editor is built."""
    if cell.locator(".cm-content").count():
        return cell.locator(".cm-line").evaluate_all("lines => lines.map(l => l.textContent).join('\\n')")
    return cell.locator("pre.cell-source").evaluate("pre => pre.textContent")


@pytest.mark.parametrize("name", PAGES)
def test_tab_goes_through_every_cell_of_the_page_without_changing_code(context, base_url, name):
    page = open_editors(context, base_url, name)
    cells = page.locator("[data-testid=cell]")
    count = cells.count()
    visited: set[int] = set()
    seen = 0
    for _ in range(2000):  # a bound, far above the page's focusable elements
        page.keyboard.press("Tab")
        active = page.evaluate(ACTIVE)
        if active is None:  # past the last element: focus left the document
            break
        seen += 1
        if active["editor"]:
            visited.add(active["cell"])
            hint = cells.nth(active["cell"]).locator("[data-testid=cell-hint]")
            words = "Enter: edit" if name.startswith("en/") else "Intro: editar"  # the page's language
            assert hint.is_visible() and words in hint.inner_text()
    else:
        pytest.fail("Tab never left the page: focus is trapped")
    assert seen > count
    assert visited == set(range(count)), "Tab skipped some editors"
    assert cells.evaluate_all("cs => cs.filter(c => c.dataset.edited === 'true').length") == 0
    assert page.evaluate(STORED_EDITS) == []
    assert page.locator("[data-testid=cell-edited]:visible").count() == 0
    assert page.locator("[data-testid=restore-all]").is_hidden()


def test_enter_starts_editing_and_escape_stops(context, base_url):
    page = open_editors(context, base_url, LESSON)
    cell = page.locator("[data-testid=cell]").first
    page.locator("[data-testid=cell-run]").first.focus()
    page.keyboard.press("Tab")  # reaches the first editor: selected, not editing
    assert page.evaluate(ACTIVE)["editor"]
    assert cell.get_attribute("data-editing") == "false"
    before = cell_code(cell)
    page.keyboard.press("Enter")  # starts editing; inserts nothing
    assert cell.get_attribute("data-editing") == "true"
    assert "Esc: dejar de editar" in cell.locator("[data-testid=cell-hint]").inner_text()
    assert cell_code(cell) == before and cell.get_attribute("data-edited") == "false"
    page.keyboard.press("Tab")  # editing: Tab indents
    assert page.evaluate(ACTIVE)["editor"]
    assert cell.get_attribute("data-edited") == "true"
    page.keyboard.press("Escape")
    assert cell.get_attribute("data-editing") == "false"
    page.keyboard.press("Tab")  # Esc stopped editing: Tab leaves
    active = page.evaluate(ACTIVE)
    assert not active["editor"]
    # the next stop is the first cell's «Restaurar original» (it is edited) or a later element
    assert active["cell"] != 0 or active["text"] == "Restaurar original"


@pytest.mark.parametrize("name, edited", [(LESSON, "editada"), ("en/python.html", "edited")])
def test_edits_survive_a_reload_until_restored(context, base_url, name, edited):
    page = open_editors(context, base_url, name)
    cells = page.locator("[data-testid=cell]")
    original = cell_code(cells.nth(0))
    set_code(page, cells.nth(0), "print('mi versión')")
    assert cells.nth(0).locator("[data-testid=cell-edited]").is_visible()
    assert page.locator("[data-testid=restore-all]").is_visible()

    page.reload()
    page.wait_for_selector("[data-testid=cell] .cm-content")
    assert cell_code(cells.nth(0)) == "print('mi versión')"
    assert cells.nth(0).locator("[data-testid=cell-edited]").inner_text() == edited
    assert cells.nth(1).locator("[data-testid=cell-edited]").is_hidden()

    cells.nth(0).locator("[data-testid=cell-restore]").click()
    assert cell_code(cells.nth(0)) == original
    assert cells.nth(0).locator("[data-testid=cell-edited]").is_hidden()
    assert cells.nth(0).locator("[data-testid=cell-restore]").is_hidden()
    assert page.locator("[data-testid=restore-all]").is_hidden()
    assert page.evaluate(STORED_EDITS) == []

    page.reload()
    page.wait_for_selector("[data-testid=cell] .cm-content")
    assert cell_code(cells.nth(0)) == original
    assert cells.nth(0).get_attribute("data-edited") == "false"


def test_restore_all_and_stale_edits(context, base_url):
    page = open_editors(context, base_url, LESSON)
    cells = page.locator("[data-testid=cell]")
    originals = [cell_code(cells.nth(i)) for i in (0, 2)]
    set_code(page, cells.nth(0), "a = 1")
    set_code(page, cells.nth(2), "b = 2")
    assert len(page.evaluate(STORED_EDITS)) == 2
    # an edit saved against another version of a cell (an older build) is dropped, not shown
    page.evaluate("localStorage.setItem(`celda:${location.pathname}:1:00000000000000`, 'viejo')")

    page.reload()
    page.wait_for_selector("[data-testid=cell] .cm-content")
    assert [cell_code(cells.nth(i)) for i in (0, 2)] == ["a = 1", "b = 2"]
    assert cells.nth(1).get_attribute("data-edited") == "false"
    assert len(page.evaluate(STORED_EDITS)) == 2  # the stale one is gone

    page.locator("[data-testid=restore-all]").click()
    assert [cell_code(cells.nth(i)) for i in (0, 2)] == originals
    assert page.locator("[data-testid=restore-all]").is_hidden()
    page.reload()
    page.wait_for_selector("[data-testid=cell] .cm-content")
    assert [cell_code(cells.nth(i)) for i in (0, 2)] == originals
    assert page.evaluate(STORED_EDITS) == []


@pytest.mark.parametrize("name", PAGES)
def test_precomputed_outputs_edit_marks_and_hint_have_no_serious_accessibility_violations(
        context, base_url, name):
    from tests.e2e.test_offline import describe, run_axe
    page = open_editors(context, base_url, name)
    cell = page.locator("[data-testid=cell]").first
    set_code(page, cell, "x = 1")  # «editada», «Restaurar original», «Restaurar todo» shown
    page.locator("[data-testid=cell-run]").nth(1).focus()
    page.keyboard.press("Tab")  # the second editor, selected by keyboard: its hint shows
    assert page.locator("[data-testid=cell-hint]").nth(1).is_visible()
    violations = run_axe(page)
    assert not violations, describe(violations)


def test_an_edited_cell_and_the_kernel_bar_fit_a_phone(context, base_url):
    """At 390 px, with «Restaurar todo» shown, the kernel bar's buttons stay inside the bar and
    leave the status readable, and the edited cell's bar breaks neither «[ ]» nor a button."""
    page = open_editors(context, base_url, LESSON)
    page.set_viewport_size({"width": 390, "height": 844})
    cell = page.locator("[data-testid=cell]").nth(0)
    set_code(page, cell, "x = 1")
    assert page.locator("[data-testid=restore-all]").is_visible()
    bar = page.evaluate("""() => {
      const bar = document.querySelector('.kernel-bar').getBoundingClientRect();
      const text = document.querySelector('.kernel-status-text').getBoundingClientRect();
      const buttons = [...document.querySelectorAll('.kernel-bar button')].filter(b => b.offsetParent)
        .map(b => b.getBoundingClientRect());
      return {right: bar.right, text: text.width, out: buttons.filter(b => b.right > bar.right).length};
    }""")
    assert bar["out"] == 0, bar
    assert bar["text"] > 60, bar
    one_line = cell.evaluate("""c => [c.querySelector('.cell-prompt'), ...c.querySelectorAll('.cell-bar button')]
      .filter(e => e.offsetParent).map(e => e.getClientRects().length === 1
        && e.getBoundingClientRect().height < 2 * parseFloat(getComputedStyle(e).fontSize) + 16)""")
    assert all(one_line), one_line
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390


@pytest.mark.parametrize("name", ["mascara.html", "en/mask.html"])
def test_editors_are_built_near_the_view_and_when_reached(context, base_url, name):
    """Issue 43: while Python starts, only the cells near the view get their editors; a cell far
    below keeps its static code (``pre``, readable and selectable) until it scrolls near the view,
    and then gets its editor with the same code."""
    page = open_editors(context, base_url, name)
    cells = page.locator("[data-testid=cell]")
    lazy = page.locator("[data-testid=cell] pre.cell-source")
    assert 0 < lazy.count() <= cells.count()
    last = cells.nth(cells.count() - 1)
    code = cell_code(last)
    assert last.locator("pre.cell-source").count() == 1  # far below the first screen
    last.scroll_into_view_if_needed()
    last.locator(".cm-content").wait_for(timeout=10_000)
    assert cell_code(last) == code and last.get_attribute("data-edited") == "false"


def test_a_click_on_code_whose_editor_is_not_built_puts_the_cursor_where_it_clicked(context, base_url):
    """Issue 43: the first click on a cell's code builds its editor if it is not built, editing,
    with the cursor at the character clicked (not at the start of the code)."""
    page = open_editors(context, base_url, "mascara.html")
    last = page.locator("[data-testid=cell]").last
    pre = last.locator("pre.cell-source")
    assert pre.count() == 1
    first_line = pre.evaluate("p => p.textContent.split('\\n')[0]")
    # a few characters into the first line; as it scrolls into view the cell may get its editor
    # first (the view's observer), and then the click lands in the editor: the cursor goes there too
    last.locator("pre.cell-source, .cm-content").first.click(position={"x": 80, "y": 12})
    page.keyboard.type("XYZ")
    code = cell_code(last)
    at = code.index("XYZ")
    assert 0 < at < len(first_line) and last.get_attribute("data-editing") == "true", code[:80]
    assert code.replace("XYZ", "", 1).startswith(first_line)
