"""Formulas in lesson prose become MathML at build time (sitebuild/texmath.py, typeset_math)."""
from __future__ import annotations

import json
import shutil

import pytest

import build
from sitebuild import files, render, texmath
from sitebuild.errors import BuildError
from sitebuild.files import Asset

if shutil.which("node") is None:
    pytest.skip("node is not installed: math is typeset by KaTeX under node",
                allow_module_level=True)
if not (files.NODE_MODULES / "katex" / "package.json").exists():
    pytest.skip("node_modules/katex is missing: run `npm ci`", allow_module_level=True)


@pytest.fixture
def root(tmp_path):
    """A build root with the real node_modules and an empty cache."""
    (tmp_path / "node_modules").symlink_to(files.NODE_MODULES)
    return tmp_path


def typeset(html: str, root) -> str:
    return texmath.typeset_math([Asset("p.html", html.encode())], root)[0].data.decode()


def test_inline_and_display_math_become_mathml(root):
    out = typeset(r"<p>Si \( p_i = e^{z_i} \) entonces \[ \sum_i p_i = 1 \] fin</p>", root)
    assert "\\(" not in out and "\\[" not in out
    inline, display = out.split("<math")[1:]
    assert 'display="block"' not in inline.split(">")[0]
    assert 'display="block"' in display.split(">")[0]
    assert "<msub><mi>p</mi><mi>i</mi></msub>" in inline
    assert '<span class="math-display" tabindex="0" role="group" aria-label="fórmula">' in out and out.endswith(" fin</p>")


def test_raw_and_escaped_less_than_give_the_same_formula(root):
    out = typeset(r"<p>\( a < b \) y \( a &lt; b \)</p>", root)
    first, second = out.split("<math")[1:]
    assert "<mo>&lt;</mo>" in first
    assert first.split("</math>")[0] == second.split("</math>")[0]


@pytest.mark.parametrize("html", [
    r"<p><code>\( x \)</code></p>",
    "<pre class='cell-source'><code>print(r'\\[ y \\]')</code></pre>",
    r"<script>const s = '\( z \)';</script>",
    r"<textarea>\[ w \]</textarea>",
    r"<style>/* \( v \) */</style>",
    r"<a title='\( t \)' href='#'>enlace</a>",
    r"<!-- \( c \) -->",
])
def test_delimiters_in_code_scripts_attributes_and_comments_are_left_alone(root, html):
    assert typeset(html, root) == html


def test_a_bad_formula_stops_the_build_naming_page_tex_and_reason(root):
    pages = [Asset("ok.html", rb"<p>\( x \)</p>"), Asset("mala.html", rb"<p>\( \frac{1} \)</p>")]
    with pytest.raises(BuildError) as info:
        texmath.typeset_math(pages, root)
    message = str(info.value)
    assert "mala.html" in message and r"\frac{1}" in message
    assert "KaTeX parse error" in message


def test_results_are_cached_so_a_rebuild_does_not_need_node(root, monkeypatch):
    html = r"<p>\( \alpha \) \[ \beta \]</p>"
    first = typeset(html, root)
    cached = json.loads(next((root / ".cache").glob("katex-*.json")).read_text())
    assert set(cached) == {"inline:\\alpha", "display:\\beta"}

    def no_node(*args, **kwargs):
        raise AssertionError("node was started for cached formulas")
    monkeypatch.setattr(texmath, "run_katex", no_node)
    assert typeset(html, root) == first


def test_a_built_page_with_display_math_has_block_mathml(tmp_path, monkeypatch):
    templates = tmp_path / "templates"
    shutil.copytree(files.TEMPLATES, templates)
    (templates / "formula.html").write_text(
        '{% extends "base.html" %}{% block content %}'
        r"<p>La softmax: \[ p_i = \frac{e^{z_i}}{\sum_j e^{z_j}} \]</p>{% endblock %}")
    page = {"template": "formula.html", "out": "formula.html", "title": "F", "summary": ""}
    plan = files.SitePlan(urls={k: f"u/{k}" for k in (
        "worker_js", "pyodide_index", "pyodide.js", "kernel_py", "py_zip", "css", "app_js")})
    pages = texmath.typeset_math(render.render_pages(plan, render.make_env(templates), build.PAGES + (page,)), build.ROOT)
    html = next(p for p in pages if p.path == "formula.html").data.decode()
    assert '<math xmlns="http://www.w3.org/1998/Math/MathML" display="block">' in html
    assert "<mfrac>" in html and "\\[" not in html.split("<annotation")[0]


def test_no_accented_letter_typed_inside_a_text_in_a_formula():
    """KaTeX turns «ú» inside \\text{…} into a «u» with an accent stacked over it (mover), which
    WebKit draws apart from the letter; such a letter is written {\\char"FA} instead."""
    import re
    found = [(path.name, m) for path in sorted(files.TEMPLATES.glob("*.html"))
             for m in re.findall(r"\\text\{[^}]*\}", path.read_text(encoding="utf-8"))
             if re.search(r"[^\x00-\x7f]", m)]
    assert not found, found
