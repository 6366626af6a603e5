"""Build the static lesson site into ``site/``, and serve it for development.

Usage::

    python build.py                      # build site/
    python build.py serve [--port N]     # build, then serve site/ on 127.0.0.1
    python build.py serve --isolated     # ... with cross-origin isolation headers

This file holds the page table (``PAGES``), the ordered list of steps (:func:`build`) and the
command line. Each step is a function of plain data in the build's package, ``sitebuild/``, that a
test can call alone:

1. check the vendored runtime (``node_modules/pyodide``, installed by ``npm ci``;
   ``sitebuild.vendor``);
2. get the NumPy wheel for Pyodide and verify its sha256 against Pyodide's lock file (``vendor``);
3. bundle the page script (``browser/js/page.js`` and CodeMirror) and the early script that starts
   Python's worker (``browser/js/early.js``) with esbuild (``vendor``);
4. pack ``py/`` into one zip archive (``sitebuild.files``);
5. collect ``weights/`` with the model rounded to float16, the copy the site ships (``files``:
   half the bytes to download; the page loads it as float32), and compute each lesson's prose
   figures from that copy (``sitebuild.figures``: the ``compute_figures(model, tok)`` of the module
   that the page's ``PAGES`` entry names under ``"figures"``, cached);
6. name every file of the site with its content hash (``sitebuild.plan``);
7. render the pages, recording each page's headings and cell sources (``sitebuild.render``), and
   typeset their formulas as MathML (KaTeX, ``sitebuild.texmath``); run every page's cells in
   CPython with the page's kernel and the site's weights and put their outputs in the page,
   marked as precomputed
   (``sitebuild.cells``, cached);
8. write the hashed assets, the vendored runtime, the rendered pages and the Jupyter notebooks
   made from their recorded cells (``sitebuild.notebooks``) into ``site/`` (``files``), with the
   service worker that stores them all for offline reading (``sitebuild.offline``: the build's
   id stamped into the pages, and ``sw.js`` with the list of every file).

Our own assets carry a content hash in their file names (``app.3f2a9c01.js``) so
browser caches turn over cleanly; the runtime lives in a versioned folder.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from sitebuild.cells import cell_outputs
from sitebuild.devserver import make_server
from sitebuild.errors import BuildError
from sitebuild.figures import lesson_figures
from sitebuild.files import (ROOT, SITE, SitePlan, collect_weights, pack_python, site_weights,
                             weights_folder, write_site)
from sitebuild.notebooks import notebooks
from sitebuild.offline import offline_site
from sitebuild.plan import own_assets, plan_site
from sitebuild.render import make_env, render_pages
from sitebuild.texmath import typeset_math
from sitebuild.vendor import bundle_script, check_runtime, numpy_wheel
from sitebuild.vocabularies import site_files as vocabulary_files

PAGE_SCRIPT = Path("browser/js/page.js")  # relative to the build root
EARLY_SCRIPT = Path("browser/js/early.js")  # starts Python's worker while the page is parsed
SERVICE_WORKER = Path("browser/js/sw.js")  # stores the course for offline reading (Workbox)
PRODUCTION = {"process.env.NODE_ENV": '"production"'}  # Workbox without its development logs

PAGES = (
    {"template": "index.html", "out": "index.html", "title": "Lecciones", "summary": ""},
    {"template": "marco.html", "out": "marco.html", "figures": "lesson.marco.figures",
     "title": "Python en el navegador", "summary":
     "Celdas de Python con NumPy que se ejecutan en esta página, sin servidor."},
    {"template": "mascara.html", "out": "mascara.html", "title": "La máscara", "notebook": "mascara.ipynb",
     "figures": "lesson.mascara.figures",
     "summary":
     "Generación restringida con el mini-GPT: por qué la máscara garantiza el formato, cuánto "
     "cuesta y cómo tuerce la distribución del modelo."},
    {"template": "niveles.html", "out": "niveles.html", "title": "Niveles de garantía",
     "notebook": "niveles.ipynb", "figures": "lesson.niveles.figures",
     "summary":
     "Del «responde en JSON» a una gramática: qué garantiza cada nivel, medido en vivo con el mini-GPT."},
    {"template": "automata.html", "out": "automata.html", "title": "Del esquema al autómata",
     "vocabularies": True,
     "notebook": "automata.ipynb", "figures": "lesson.automata.figures", "summary":
     "Cómo una restricción se convierte en máscara: autómatas, el trie de tokens, el índice por "
     "estado, la pila que necesita JSON y los tokens forzados."},
    {"template": "trampas.html", "out": "trampas.html", "title": "Trampas y decisiones",
     "notebook": "trampas.ipynb", "figures": "lesson.trampas.figures",
     "summary":
     "Lo que un formato garantizado no garantiza, cada trampa medida con el mini-GPT, la máscara "
     "que respeta un presupuesto de tokens y cómo elegir la restricción."},
    {"template": "distorsion.html", "out": "distorsion.html", "title": "Corregir la distorsión",
     "notebook": "distorsion.ipynb", "figures": "lesson.distorsion.figures",
     "summary":
     "Pesos de importancia y Monte Carlo secuencial: la máscara como propuesta, corregida hasta "
     "la distribución condicionada exacta."},
    {"template": "laboratorio.html", "out": "laboratorio.html", "title": "Laboratorio", "tool": True,
     "vocabularies": True,
     "summary": "Cualquier restricción sobre el mini-GPT, posición a posición, sin escribir código."},
)


# The English edition: the same pages in site/en/, under English names and titles. Each entry
# names the Spanish page it translates ("source"), whose figures and notebook it shares.
ENGLISH = {
    "index.html": {"out": "en/index.html", "title": "Lessons", "summary": ""},
    "marco.html": {"out": "en/python.html", "title": "Python in the browser", "summary":
                   "Python cells with NumPy that run in this page, with no server."},
    "mascara.html": {"out": "en/mask.html", "title": "The mask", "summary":
                     "Constrained decoding with the mini-GPT: why the mask guarantees the format, "
                     "what it costs, and how it bends the model's distribution."},
    "niveles.html": {"out": "en/levels.html", "title": "Levels of guarantee", "summary":
                     "From \u201canswer in JSON\u201d to a grammar: what each level guarantees, "
                     "measured live on the mini-GPT."},
    "automata.html": {"out": "en/automata.html", "title": "From schema to automaton", "summary":
                      "How a constraint becomes a mask: automata, the token trie, the per-state "
                      "token index, the stack JSON needs, and forced tokens."},
    "trampas.html": {"out": "en/pitfalls.html", "title": "Pitfalls and decisions", "summary":
                     "What a guaranteed format does not guarantee, each pitfall measured on the "
                     "mini-GPT; the mask that respects a token budget; how to choose a constraint."},
    "distorsion.html": {"out": "en/distortion.html", "title": "Correcting the distortion",
                        "summary": "Importance weights and sequential Monte Carlo: the mask as a "
                        "proposal, corrected towards the exact conditional distribution."},
    "laboratorio.html": {"out": "en/lab.html", "title": "Lab", "summary":
                         "Try any constraint on the mini-GPT, position by position, without "
                         "writing code."},
}


def english(spec: dict) -> dict:
    """The English edition's entry for the Spanish page table entry ``spec``: the same page
    (figures module, tool flag) with the English ``out``, ``title`` and ``summary`` of
    ``ENGLISH``, its template ``templates/en/<name>`` and its notebook ``en/<stem>.ipynb``."""
    entry = {**spec, **ENGLISH[spec["out"]], "lang": "en", "source": spec["out"]}
    entry["template"] = entry["out"]  # en/mask.html
    if spec.get("notebook"):
        entry["notebook"] = entry["out"].replace(".html", ".ipynb")
    return entry


def only(pages: tuple[dict, ...], names: str | None) -> tuple[dict, ...]:
    """The course map and the pages named in ``names`` (comma-separated stems, ``"niveles,marco"``);
    every page when ``names`` is empty. For work on one page: ``BUILD_ONLY=niveles python build.py``
    computes and renders that page alone, and the tests parametrised over ``PAGES`` follow it.
    Raises ValueError naming a stem that is not a page."""
    wanted = [n.strip() for n in (names or "").split(",") if n.strip()]
    stems = {Path(spec["out"]).stem for spec in pages}
    unknown = [n for n in wanted if n not in stems]
    if unknown:
        raise ValueError(f"BUILD_ONLY names no page {unknown}; the pages are {sorted(stems)}")
    if not wanted:
        return pages
    return tuple(s for s in pages if s["out"] == "index.html" or Path(s["out"]).stem in wanted)


PAGES = only(PAGES, os.environ.get("BUILD_ONLY"))
PAGES = tuple({**spec, "lang": "es", "source": spec["out"]} for spec in PAGES)


def editions(pages: tuple[dict, ...] | None = None) -> tuple[dict, ...]:
    """Every page the build renders: ``pages`` (default ``PAGES``, read when called, so a test
    that swaps the table builds its own pages), then the English edition of each one that
    ``ENGLISH`` names."""
    pages = PAGES if pages is None else pages
    return tuple(pages) + tuple(english(spec) for spec in pages if spec["out"] in ENGLISH)


PAGES_EN = tuple(english(spec) for spec in PAGES)
EDITIONS = editions()  # Spanish first


def render_site(root: Path = ROOT, pages: tuple[dict, ...] | None = None):
    """Steps 1 to 7 of the build up to the rendered pages, before their formulas are typeset and
    their cells run: ``(plan, pages)``. Each ``Page`` has the outline its macros recorded and the
    figure entries its template read (``Page.figures_read``, compared across the two editions by
    ``tests/site/test_editions.py``). ``pages`` defaults to ``editions()``."""
    runtime = check_runtime(root / "node_modules")                              # 1
    wheel = numpy_wheel(runtime / "pyodide-lock.json", root / ".cache")         # 2
    script = bundle_script(root / PAGE_SCRIPT, root / "node_modules")           # 3
    early = bundle_script(root / EARLY_SCRIPT, root / "node_modules")
    worker = bundle_script(root / SERVICE_WORKER, root / "node_modules", PRODUCTION)
    py_zip = pack_python(root / "py")                                           # 4
    weights = site_weights(collect_weights(root / "weights"))                   # 5
    model_dir = weights_folder(weights, root / ".cache")  # what the page loads, for CPython
    figures = lesson_figures(PAGES, root, weights, root / ".cache", model_dir)
    plan = plan_site(runtime, wheel, own_assets(root, script, py_zip, early), weights, figures,  # 6
                     vocabulary_files())
    plan.service_worker = worker
    rendered = render_pages(plan, make_env(root / "templates"), editions() if pages is None else pages)  # 7
    return plan, rendered, model_dir


def build(root: Path = ROOT, site: Path = SITE, strict_cells: bool = True) -> SitePlan:
    """Build ``root``'s site into ``site``: the steps of the module docstring, in order, both
    editions (``editions()``: the Spanish pages in ``site/``, the English ones in ``site/en/``).

    ``strict_cells=False`` lets a cell that raises at build time show its traceback instead of
    stopping the build (for tests that build the pages with a stand-in model).

    On any BuildError nothing in ``site`` has changed: it is replaced only by the last step.
    """
    plan, pages, model_dir = render_site(root)                                  # 1-7
    pages = cell_outputs(typeset_math(pages, root), root, root / ".cache", strict=strict_cells,
                         model_dir=model_dir)
    files = offline_site(plan.assets + pages + notebooks(editions(), pages), plan.service_worker)
    write_site(files, site)                                                     # 8
    return plan


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
