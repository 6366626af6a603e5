"""Stop on a plain host (no SharedArrayBuffer) restarts Python: the notice says exactly what was
lost and runs every cell before the one the reader wants to go on with."""
from __future__ import annotations

import pytest

from tests.e2e.helpers import set_code, wait_cell
from tests.e2e.test_cells import stop_runaway

pytestmark = pytest.mark.e2e


def run(page, cell) -> str:
    cell.locator("[data-testid=cell-run]").click()
    return wait_cell(cell)


def test_notice_names_what_was_lost_and_reruns_up_to_the_chosen_cell(fresh_lesson):
    lesson = fresh_lesson
    cells = lesson.locator("[data-testid=cell]")
    set_code(lesson, cells.nth(0), "x = 5\ndef doble(v):\n    return 2 * v\n")
    assert run(lesson, cells.nth(0)) == "done"
    assert stop_runaway(lesson, cells.nth(1)) < 5

    notice = lesson.locator("#kernel-notice")
    lost = notice.locator("[data-testid=notice-lost]").inner_text()
    assert "detener la celda 2" in lost
    assert "la celda 1" in lost and "doble y x" in lost  # the names, exactly
    assert "antes del reinicio" in lost
    # by default: every cell above the stopped one, to change it and run it again
    target = notice.locator("[data-testid=notice-target]")
    assert target.input_value() == "1"
    assert notice.locator("[data-testid=notice-rerun]").inner_text() == "Ejecutar la celda 1"

    # the reader fixes cell 2 and wants to go on with cell 3: cells 1 and 2 run again
    set_code(lesson, cells.nth(1), "y = doble(x)")
    target.select_option("2")
    rerun = notice.locator("[data-testid=notice-rerun]")
    assert rerun.inner_text() == "Ejecutar las celdas 1 a 2"
    rerun.click()
    assert notice.is_hidden()
    assert wait_cell(cells.nth(0)) == "done" and wait_cell(cells.nth(1)) == "done"
    set_code(lesson, cells.nth(2), "print(x + y)")
    assert run(lesson, cells.nth(2)) == "done"
    assert cells.nth(2).locator("[data-testid=cell-output]").inner_text().strip() == "15"


def test_notice_when_nothing_had_run(fresh_lesson):
    lesson = fresh_lesson
    cells = lesson.locator("[data-testid=cell]")
    assert stop_runaway(lesson, cells.nth(0)) < 5
    notice = lesson.locator("#kernel-notice")
    assert "No se perdió nada" in notice.inner_text()
    assert notice.locator("[data-testid=notice-rerun]").is_disabled()
    from tests.e2e.test_offline import describe, run_axe
    violations = run_axe(lesson)
    assert not violations, describe(violations)
