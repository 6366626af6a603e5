"""The lesson's Jupyter notebook: valid nbformat 4, the page's cells in order, and it runs in CPython
with the project's package (as Jupyter would run it from the project's folder)."""

from __future__ import annotations

import contextlib
import io
import json
import os

import nbformat
import pytest

import build


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("nb") / "site"
    build.build(build.ROOT, out)
    return out


def page_cells(html: str) -> list[str]:
    parser = build._CellsAndHeadings()
    parser.feed(html)
    return [text for kind, text in parser.items if kind == "code"]


def test_notebook_is_valid_and_holds_the_page_cells_in_order(site):
    notebook = nbformat.reads((site / "mascara.ipynb").read_text(encoding="utf-8"), as_version=4)
    nbformat.validate(notebook)
    code = [c.source for c in notebook.cells if c.cell_type == "code"]
    cells = page_cells((site / "mascara.html").read_text(encoding="utf-8"))
    assert len(cells) >= 5 and code[1:] == cells
    assert "mascara.ipynb" in (site / "mascara.html").read_text(encoding="utf-8")
    headings = [c.source for c in notebook.cells if c.cell_type == "markdown"]
    assert any(h.startswith("## 5.") for h in headings) and any(h.startswith("### ") for h in headings)


def test_notebook_runs_in_cpython_from_the_project_folder(site, monkeypatch):
    notebook = nbformat.reads((site / "mascara.ipynb").read_text(encoding="utf-8"), as_version=4)
    monkeypatch.chdir(build.ROOT)
    monkeypatch.delenv("MINIGPT_WEIGHTS", raising=False)
    shown = []
    namespace = {"__name__": "__main__", "display": shown.append}
    with contextlib.redirect_stdout(io.StringIO()):
        for cell in notebook.cells:
            if cell.cell_type == "code":
                exec(compile(cell.source, "<cell>", "exec"), namespace)
    assert "MINIGPT_WEIGHTS" not in os.environ  # minigpt finds weights/ beside py/ by itself
    figures = build.lesson_figures(build.ROOT, build.ROOT / ".cache")
    assert namespace["E"].p_grammar == pytest.approx(figures["enumeration"]["p_grammar"], rel=1e-9)
    assert [g.text for g in namespace["con_mascara"]] == [s["text"] for s in figures["masked"]]
    assert all(json.loads(g.text) for g in namespace["con_mascara"])
    assert any("<style>" in item._repr_html_() for item in shown)
