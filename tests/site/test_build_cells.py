"""Build-time cell outputs (cells.cell_outputs): the cells run in CPython with the page's kernel,
their outputs go into the page marked as precomputed, and a cell that raises stops the build."""
from __future__ import annotations

import subprocess

import pytest

import build
from sitebuild import cells, errors, files, render

SLOT = '<div class="cell-output" data-testid="cell-output" aria-live="polite"><!--cell-output{}--></div>'


def page(*cells: tuple[str, bool]) -> files.Page:
    html = "".join(SLOT.format(" fails" if fails else "") for _, fails in cells)
    return files.Page("p.html", html.encode(), [("code", source) for source, _ in cells])


def test_outputs_are_drawn_as_the_page_draws_them_and_marked_precomputed(tmp_path):
    source = ("x = 6 * 7\nprint('a <b>')\nprint('c')\n"
              "class T:\n    def _repr_html_(self):\n        return '<i>rico</i>'\n"
              "display(T())\n[x]")
    [result] = cells.cell_outputs([page((source, False), ("print(x + 1)", False))],
                                  build.ROOT, tmp_path)
    html = result.data.decode()
    assert html.count('data-precomputed="true"') == 2
    assert html.count('data-testid="precomputed-note"') == 2 and "precalculado" in html
    assert '<pre class="out-stdout">a &lt;b&gt;\nc\n</pre>' in html  # joined, escaped
    assert '<div class="out-html"><i>rico</i></div><pre class="out-text">[42]</pre>' in html
    assert '<pre class="out-stdout">43\n</pre>' in html  # one namespace per page
    assert "<!--cell-output" not in html


def test_a_cell_that_raises_stops_the_build_unless_it_fails_on_purpose(tmp_path):
    with pytest.raises(errors.BuildError, match=r"(?s)p.html: cell 2 raised .*ZeroDivisionError"
                                               r".*fails=true"):
        cells.cell_outputs([page(("x = 1", False), ("1 / 0", False))], build.ROOT, tmp_path)
    [shown] = cells.cell_outputs([page(("1 / 0", False))], build.ROOT, tmp_path, strict=False)
    assert "ZeroDivisionError" in shown.data.decode()
    [result] = cells.cell_outputs([page(("1 / 0", True))], build.ROOT, tmp_path)
    assert '<pre class="out-error">' in result.data.decode()
    assert "ZeroDivisionError: division by zero" in result.data.decode()


def test_outputs_are_cached_by_the_cell_sources(tmp_path, monkeypatch):
    pages = [page(("print('hola')", False))]
    first = cells.cell_outputs(pages, build.ROOT, tmp_path)
    assert len(list(tmp_path.glob("cell-outputs-p-*.json"))) == 1

    def no_run(*args, **kwargs):
        raise AssertionError("the cells ran again")
    monkeypatch.setattr(subprocess, "run", no_run)
    assert cells.cell_outputs(pages, build.ROOT, tmp_path) == first
    with pytest.raises(AssertionError, match="ran again"):
        cells.cell_outputs([page(("print('adiós')", False))], build.ROOT, tmp_path)


def test_every_cell_of_the_site_has_a_precomputed_output(built):
    site = built
    for name in [spec["out"] for spec in build.PAGES if render.is_lesson(spec)]:
        html = (site / name).read_text()
        cells = html.count('data-testid="cell"')
        assert cells and html.count('data-precomputed="true"') == cells
