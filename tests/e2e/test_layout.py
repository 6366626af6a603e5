"""Every page at a phone's width (390 px) and at a desktop's (1280 px), after «Ejecutar todo»: no
view, table or formula is clipped, the page itself never scrolls sideways, and every region that
scrolls on purpose shows a visible cue (a shadow on the side where content is hidden)."""
from __future__ import annotations

import pytest

import build
from sitebuild import render
from tests.e2e.helpers import READY_TIMEOUT_MS, open_lesson, set_code, wait_cell, without_python

pytestmark = pytest.mark.e2e

# every lesson and tool, in both editions
PAGES = [spec["out"] for spec in build.editions() if not spec["out"].endswith("index.html")]
# Elements whose content is wider than their box, with what the reader can do about it.
OVERFLOWS = """() => {
  const out = [];
  for (const el of document.querySelectorAll('article *')) {
    if (el.closest('.cm-editor')) continue;  // the editor scrolls long lines by design
    const style = getComputedStyle(el);
    // 0 or 1 px wide: not shown (closed, or read by screen readers only, like the lab's status)
    if (el.clientWidth <= 1 || el.scrollWidth <= el.clientWidth + 1) continue;
    if (!['auto', 'scroll', 'hidden', 'clip'].includes(style.overflowX)) continue;
    out.push({what: el.className || el.tagName, scroll: style.overflowX !== 'hidden' && style.overflowX !== 'clip',
              cue: style.backgroundImage.includes('gradient'), sw: el.scrollWidth, cw: el.clientWidth});
  }
  return out;
}"""


SIZES = ((390, 844), (1280, 800))  # a phone, then a desktop: one page load, resized
LESSONS = {spec["out"] for spec in build.editions() if render.is_lesson(spec)}
TOOLS = {spec["out"] for spec in build.editions() if spec.get("tool")}
# Which <details> of the article are open: the check opens them all, then puts them back.
DETAILS_OPEN = "() => [...document.querySelectorAll('article details')].map((d) => d.open)"
RESTORE_DETAILS = """(open) => document.querySelectorAll('article details')
  .forEach((d, i) => { if (d.open !== open[i]) d.open = open[i]; })"""


@pytest.mark.parametrize("name", PAGES)
def test_nothing_is_clipped_and_scroll_regions_show_a_cue(browser, servers, run_all_pages, name):
    """A lesson is the session's tab after «Ejecutar todo» (``RunAllPages``), resized to each width
    and then put back as it was (size, and which solutions were open); a tool (the lab) is
    loaded at 390 px and makes one generation."""
    if name in LESSONS:
        page = run_all_pages.get(name)
        opened, size = page.evaluate(DETAILS_OPEN), page.viewport_size
        try:
            for width, height in SIZES:
                resize(page, width, height)
                check_layout(page, width, height)
        finally:
            page.set_viewport_size(size)
            page.evaluate(RESTORE_DETAILS, opened)
        return
    assert name in TOOLS, name  # every other page is a lesson
    (width, height), *others = SIZES
    context = browser.new_context(service_workers="block", viewport={"width": width, "height": height})
    try:
        page = open_lesson(context, servers["plain"], name)
        # no cells: one generation, its view and its choices
        page.locator("[data-testid=lab-step]").click()
        page.locator("[data-testid=lab-view][data-state=done]").wait_for(timeout=180_000)
        assert page.locator("[data-testid=lab-output]").count() == 1
        check_layout(page, width, height)
        for width, height in others:
            resize(page, width, height)
            check_layout(page, width, height)
    finally:
        context.close()


# The kernel's state as the bar shows it: every line of its text whole, inside the bar.
KERNEL_LABEL = """() => {
  const text = document.querySelector('.kernel-status-text');
  const range = document.createRange();
  range.selectNodeContents(text);
  const bar = document.querySelector('.kernel-bar').getBoundingClientRect();
  const lines = [...range.getClientRects()];
  return {text: text.textContent, lines: lines.length,
          inside: lines.every((r) => r.left >= bar.left - 1 && r.right <= bar.right + 1
                                     && r.top >= bar.top - 1 && r.bottom <= bar.bottom + 1),
          wide: text.scrollWidth <= text.clientWidth + 1 && text.scrollHeight <= text.clientHeight + 1};
}"""


def check_layout(page, width: int, height: int) -> None:
    """At ``width``, with every solution opened: no sideways scroll, nothing clipped, every
    scroll region with its cue, every display formula fits, and the kernel bar stays short and
    shows the kernel's state."""
    page.evaluate("() => document.querySelectorAll('article details').forEach((d) => { d.open = true; })")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width, width
    overflows = page.evaluate(OVERFLOWS)
    clipped = [o for o in overflows if not o["scroll"]]
    silent = [o for o in overflows if o["scroll"] and not o["cue"]]
    def named(regions):
        return [f"{o['what']}: {o['sw']} px in {o['cw']}" for o in regions]
    assert not clipped, (width, named(clipped))
    assert not silent, (width, named(silent))
    formulas = [o for o in overflows if "math-display" in str(o["what"])]
    if width >= 390:  # every display formula fits a phone: they break or scale
        assert not formulas, (width, formulas)
    check_kernel_bar(page, width, height)


# What the kernel bar holds, for a failure's message: its height, the page's width as the page
# sees it, and each visible child's text and box.
BAR = """() => { const bar = document.querySelector('.kernel-bar');
  return { height: bar.getBoundingClientRect().height, innerWidth,
    parts: [...bar.querySelectorAll('*')].filter((e) => e.offsetParent !== null && !e.children.length)
      .map((e) => { const r = e.getBoundingClientRect();
                    return `${e.textContent.trim()} @${Math.round(r.left)},${Math.round(r.top)} ${Math.round(r.width)}x${Math.round(r.height)}`; }) }; }"""
# Resolves once the page lays out at ``width``: its innerWidth says so, and two animation frames
# (or 50 ms, where frames are throttled) have passed. No fixed pause: on a busy machine the
# resize can take longer than one frame.
LAID_OUT = """async (width) => {
  const frame = () => new Promise((resolve) => { requestAnimationFrame(resolve); setTimeout(resolve, 50); });
  while (innerWidth !== width) await frame();
  await frame(); await frame(); }"""


def resize(page, width: int, height: int) -> None:
    """Set the viewport to ``width`` × ``height`` and wait until the page has laid out at it
    (``LAID_OUT``)."""
    page.set_viewport_size({"width": width, "height": height})
    page.evaluate(LAID_OUT, width)


def check_kernel_bar(page, width: int, height: int, short: bool = True) -> None:
    """The kernel bar shows its state whole and (``short``) stays under 7 % of the window's
    height."""
    bar = page.evaluate(BAR)
    assert not short or bar["height"] <= 0.07 * height, (width, bar)
    label = page.evaluate(KERNEL_LABEL)
    assert label["inside"] and label["wide"], (width, label)


@pytest.mark.parametrize("name", ["marco.html", "en/python.html"])
def test_the_kernel_state_is_whole_on_a_phone_while_starting_running_and_ready(browser, servers, name):
    """The bar's longest texts, «Python: arrancando…», «Python: ejecutando…» and the ready state
    with its start-up time (and their English), are whole at 390 px and on a narrower phone,
    360 px; at 390 px the bar stays short, «Restaurar todo» included (the running cell is an
    edited one). At 360 px that button may take a third row."""
    context = browser.new_context(service_workers="block", viewport={"width": 390, "height": 844})
    status = None

    def check(state):
        assert status.get_attribute("data-state") == state
        for width in (390, 360):
            resize(page, width, 844)
            check_kernel_bar(page, width, 844, short=width == 390)

    try:
        page = context.new_page()
        page.goto(servers["plain"] + name)
        status = page.locator("[data-testid=kernel-status]")
        check("loading")  # Python takes seconds to start
        status.and_(page.locator("[data-state=ready]")).wait_for(timeout=READY_TIMEOUT_MS)
        check("ready")
        cell = page.locator("[data-testid=cell]").first
        set_code(page, cell, "import time\ntime.sleep(4)")
        cell.locator("[data-testid=cell-run]").click()
        status.and_(page.locator("[data-state=busy]")).wait_for()
        assert page.locator("[data-testid=restore-all]").is_visible()
        check("busy")
        assert wait_cell(cell) == "done"
    finally:
        context.close()


def test_aligned_formulas_line_up_their_columns(context, base_url):
    """KaTeX writes an aligned formula's column alignment only as MathML's columnalign, which
    Chromium ignores: the page's CSS aligns the cells, so the rows of the «conjunto permitido» of
    «La máscara» start at the same x in their second column (no kernel needed)."""
    page = without_python(context.new_page())
    page.goto(base_url + "mascara.html")
    lefts = page.evaluate("""() => {
      const table = [...document.querySelectorAll('mtable[columnalign="right left"]')]
        .find(t => t.textContent.includes('prefijo'));
      return [...table.querySelectorAll(':scope > mtr > mtd:nth-child(2) > *')]
        .map(e => Math.round(e.getBoundingClientRect().left));
    }""")
    assert len(lefts) == 2 and abs(lefts[0] - lefts[1]) <= 1, lefts


# The rows of a table of «Del esquema al autómata» §4 (o200k_base), as laid out: each row's
# height and one line of its cells, and the table's region.
SCALE_ROWS = """(testid) => {
  const region = document.querySelector(`[data-testid=${testid}]`);
  const line = parseFloat(getComputedStyle(region.querySelector('tbody td')).lineHeight);
  return {rows: [...region.querySelectorAll('tbody tr')].map((r) => r.getBoundingClientRect().height),
          heads: [...region.querySelectorAll('thead th')].map((h) => h.getBoundingClientRect().height),
          line, scrolls: region.scrollWidth > region.clientWidth,
          page: document.documentElement.scrollWidth};
}"""


@pytest.mark.parametrize("name", ["automata.html", "en/automata.html"])
def test_the_real_vocabularys_positions_stay_one_line_each_on_a_phone(context, base_url, name):
    """The build's output of the «escala» cell, at 390 px (no kernel needed): its two tables (the
    four ways' times, the answer's positions) keep each row on one line, the wide one sideways
    in its own scroll region, and the page itself does not scroll sideways."""
    page = without_python(context.new_page())
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(base_url + name)
    page.locator("[data-testid=scale-positions]").wait_for(state="attached")
    for testid, wide in (("scale-costs", False), ("scale-positions", True)):
        got = page.evaluate(SCALE_ROWS, testid)
        assert got["rows"] and got["page"] <= 390, (testid, got)
        assert got["scrolls"] or not wide, (testid, got)  # the positions are wider than a phone
        # one line: a row is its line plus the cell's padding, never two lines
        assert max(got["rows"] + got["heads"]) < 2 * got["line"], (testid, got)
