"""The lesson's Jupyter notebook: made from the cells' sources as the macros record them, valid
nbformat 4, the page's headings and cells in order, and it runs in CPython with the project's package
(as Jupyter would run it from the project's folder)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
from html.parser import HTMLParser

import nbformat
import pytest

import build
from sitebuild import figures, files, notebooks, render


@pytest.fixture(scope="module")
def site(built):
    """The session's build (tests/conftest.py)."""
    return built


class PageCells(HTMLParser):
    """What the reader sees in a rendered page: the h2/h3 headings and every cell's source (the
    parser turns the HTML escapes back into characters). The oracle for the notebook's order."""

    def __init__(self, html: str):
        super().__init__()
        self.items: list[tuple[str, str]] = []
        self._kind: str | None = None
        self._text: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        classes = (dict(attrs).get("class") or "").split()
        if tag in ("h2", "h3") or (tag == "pre" and "cell-source" in classes):
            self._kind, self._text = ("code" if tag == "pre" else tag), []

    def handle_endtag(self, tag):
        if self._kind and tag in ("h2", "h3", "pre"):
            self.items.append((self._kind, "".join(self._text)))
            self._kind = None

    def handle_data(self, data):
        if self._kind:
            self._text.append(data)


def read_notebook(data: str | bytes):
    notebook = nbformat.reads(data if isinstance(data, str) else data.decode(), as_version=4)
    nbformat.validate(notebook)
    return notebook


def test_notebook_is_valid_and_holds_the_page_headings_and_cells_in_order(site):
    notebook = read_notebook((site / "mascara.ipynb").read_text(encoding="utf-8"))
    html = (site / "mascara.html").read_text(encoding="utf-8")
    shown = [(kind, text if kind == "code" else f"{'#' * int(kind[1])} {text}")
             for kind, text in PageCells(html).items]
    body = [("code" if c.cell_type == "code" else "h", c.source) for c in notebook.cells[2:]]
    assert [text for _, text in body] == [text for _, text in shown]
    assert notebook.cells[0].source.startswith("# La máscara")
    assert notebook.cells[1].source == notebooks.NOTEBOOK_SETUP["es"]
    assert sum(kind == "code" for kind, _ in body) >= 5
    assert "mascara.ipynb" in html
    headings = [c.source for c in notebook.cells if c.cell_type == "markdown"]
    assert any(h.startswith("## 5.") for h in headings) and any(h.startswith("### ") for h in headings)


SOURCE = '''\
texto = "<b>Tom & 'Jerry'</b> &amp; &lt;"  # < & " ' y {llaves}
if 1 < 2 and texto != '':
    print(texto)
'''


def test_a_cell_source_reaches_the_notebook_exactly_as_written(tmp_path, monkeypatch):
    """The notebook takes each cell's source from the cell macro, not from the page's HTML: the
    characters HTML escapes (and text that looks like an escape, such as &amp;) come through as
    written, and the page shows them escaped."""
    templates = tmp_path / "templates"
    shutil.copytree(files.TEMPLATES, templates)
    indented = "".join("    " + line for line in SOURCE.splitlines(True))
    (templates / "prueba.html").write_text(
        '{% extends "base.html" %}{% from "macros.html" import cell, heading %}{% block content %}\n'
        '{{ heading(2, "Uno < dos & «tres»", id="uno") }}\n'
        '{% call cell("prueba") %}\n' + indented + '{% endcall %}\n'
        '{{ heading(3, "Después") }}\n'
        '{% call cell() %}\n    x = 1\n    x\n{% endcall %}\n'
        "{% endblock %}", encoding="utf-8")
    page = {"template": "prueba.html", "out": "prueba.html", "title": "Prueba", "summary": "",
            "notebook": "prueba.ipynb"}
    plan = files.SitePlan(urls={k: f"u/{k}" for k in (
        "worker_js", "pyodide_index", "pyodide.js", "kernel_py", "py_zip", "css", "app_js")})
    [rendered] = render.render_pages(plan, render.make_env(templates), (page,))
    assert rendered.outline == [("h2", "Uno < dos & «tres»"), ("code", SOURCE.rstrip("\n")),
                                ("h3", "Después"), ("code", "x = 1\nx")]
    html = rendered.data.decode()
    assert "texto = &#34;&lt;b&gt;Tom &amp; &#39;Jerry&#39;&lt;/b&gt; &amp;amp; &amp;lt;&#34;" in html
    assert '<h2 id="uno">Uno &lt; dos &amp; «tres»</h2>' in html

    [asset] = notebooks.notebooks((page,), [rendered])
    assert asset.path == "prueba.ipynb"
    notebook = read_notebook(asset.data)
    assert [(c.cell_type, c.source) for c in notebook.cells[2:]] == [
        ("markdown", "## Uno < dos & «tres»"), ("code", SOURCE.rstrip("\n")),
        ("markdown", "### Después"), ("code", "x = 1\nx")]
    assert [c.source for c in notebook.cells[:2]] == [
        "# Prueba\n\n" + notebooks.NOTEBOOK_INTRO["es"].format(title="Prueba"),
        notebooks.NOTEBOOK_SETUP["es"]]
    assert notebooks.notebooks((page,), [rendered]) == [asset]  # numbered cell ids: the same bytes every build


def test_page_notebook_is_made_from_the_outline_alone():
    notebook = read_notebook(notebooks.page_notebook([("h3", "A & B"), ("code", SOURCE)], "T"))
    assert [(c.cell_type, c.source) for c in notebook.cells] == [
        ("markdown", "# T\n\n" + notebooks.NOTEBOOK_INTRO["es"].format(title="T")),
        ("code", notebooks.NOTEBOOK_SETUP["es"]), ("markdown", "### A & B"), ("code", SOURCE)]
    assert [c.id for c in notebook.cells] == ["cell-0", "cell-1", "cell-2", "cell-3"]


def test_notebook_runs_in_cpython_from_the_project_folder(site, monkeypatch):
    notebook = read_notebook((site / "mascara.ipynb").read_text(encoding="utf-8"))
    monkeypatch.chdir(build.ROOT)
    monkeypatch.delenv("MINIGPT_WEIGHTS", raising=False)
    shown = []
    namespace = {"__name__": "__main__", "display": shown.append}
    with contextlib.redirect_stdout(io.StringIO()):
        for cell in notebook.cells:
            if cell.cell_type == "code":
                exec(compile(cell.source, "<cell>", "exec"), namespace)
    assert "MINIGPT_WEIGHTS" not in os.environ  # minigpt finds weights/ beside py/ by itself
    mascara = figures.lesson_figures(build.PAGES, build.ROOT, cache=build.ROOT / ".cache")["mascara.html"]
    assert namespace["E"].p_grammar == pytest.approx(mascara["enumeration"]["p_grammar"], rel=1e-9)
    assert [g.text for g in namespace["con_mascara"]] == [s["text"] for s in mascara["masked"]]
    assert all(json.loads(g.text) for g in namespace["con_mascara"])
    assert any("<style>" in item._repr_html_() for item in shown)


NOTEBOOKS = [spec["notebook"] for spec in build.editions() if spec.get("notebook")]


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_every_notebook_of_both_editions_runs_in_jupyter(site, name, monkeypatch):
    """Each notebook, Spanish and English, run by Jupyter's own client (nbclient, with an
    IPython kernel) from the project's folder, as a reader runs it: every cell runs without an
    error, except those its page marks as failing on purpose (its precomputed output is a
    traceback), and an English notebook's views write English."""
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError  # noqa: F401  (raised on an unexpected error)
    notebook = read_notebook((site / name).read_text(encoding="utf-8"))
    page = (site / name.replace(".ipynb", ".html")).read_text(encoding="utf-8")
    failing = page.count('class="out-error"')  # the cells the page expects to fail
    monkeypatch.delenv("MINIGPT_WEIGHTS", raising=False)
    client = NotebookClient(notebook, timeout=600, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(build.ROOT)}})
    client.execute()
    errors = [(i, o.get("ename"), o.get("evalue")) for i, c in enumerate(notebook.cells)
              if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert len(errors) <= failing, f"{name}: cells raised {errors}"
    if name.startswith("en/"):
        html = [o["data"]["text/html"] for c in notebook.cells if c.cell_type == "code"
                for o in c.outputs if "text/html" in o.get("data", {})]
        text = "".join(c.get("text", "") for cell in notebook.cells if cell.cell_type == "code"
                       for c in cell.outputs)
        assert "Package:" in text  # the English setup ran, so the views are English
        assert not any("precalculado" in h or "Posición" in h for h in html)
