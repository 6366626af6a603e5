"""The cells' outputs computed at build time: every page's cells run in CPython with the page's
kernel (``cellrun.py`` in a child process), cached, and put in the page marked «precalculado» ("precomputed" in English)."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import markupsafe  # installed with jinja2

from .errors import BuildError
from .files import CACHE, ROOT, Page, site_model_dir, source_digest
from .languages import language_of

OUTPUT_SLOT = re.compile(r'(<div class="cell-output"[^>]*)><!--cell-output( fails)?--></div>')


PRECOMPUTED_NOTE = {
    "es": ('<p class="out-note" data-testid="precomputed-note"><span class="out-note-badge">precalculado'
           '</span> <span class="note-same">al construir la página; ▶ Ejecutar lo calcula aquí</span>'
           '<span class="note-edited">con el código original; ▶ Ejecutar calcula tu versión</span></p>'),
    "en": ('<p class="out-note" data-testid="precomputed-note"><span class="out-note-badge">precomputed'
           '</span> <span class="note-same">when the page was built; ▶ Run computes it here</span>'
           '<span class="note-edited">with the original code; ▶ Run computes your version</span></p>'),
}


def cell_outputs(pages: list[Page], root: Path = ROOT, cache: Path = CACHE,
                 strict: bool = True, model_dir: Path | None = None) -> list[Page]:
    """Each page with its cells' outputs computed at build time, in place of the cells' output slots.

    Every page's cells run in order in CPython, in one fresh kernel per page
    (``browser/kernel.py``, the page's own, run by ``sitebuild/cellrun.py`` in a child process), so
    a cell shows what it would show in the page, with the model files of ``model_dir``: by default
    the site's copy of ``root / "weights"`` (``files.site_model_dir``: the model rounded to
    float16), the files the page loads. The outputs are cached in ``cache`` under a hash of the page's cell
    sources, the kernel, ``py/``, ``weights/`` and ``model_dir``'s name. Raises BuildError when a cell
    raises, unless the page marks it ``fails=true`` or ``strict`` is False (then its traceback is
    its output). A page's
    outputs are marked ``data-precomputed`` with a «precalculado» note; running the cell replaces
    them (``cell.js``).
    """
    sources = {page.path: [text for kind, text in page.outline if kind == "code"] for page in pages}
    wanted = {path: cells for path, cells in sources.items() if cells}
    if model_dir is None:
        model_dir = site_model_dir(root / "weights", cache)
    results = cached_cell_runs(wanted, root, cache, model_dir)
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
                               f'{PRECOMPUTED_NOTE[language_of(page.path)]}{output_html(next(filled)["events"])}</div>', html)
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


def cached_cell_runs(pages: dict[str, list[str]], root: Path, cache: Path,
                     model_dir: Path) -> dict[str, list]:
    """``{page: [{"ok", "events"}]}`` for the cell sources of each page, from ``cache`` or from a
    run of ``cellrun.py`` (one child process for every page not cached) with ``model_dir``'s
    model files."""
    runner = Path(__file__).resolve().parent / "cellrun.py"  # beside this module, like katex-mathml.js
    kernel = root / "browser" / "kernel.py"
    digest = source_digest(root, runner, kernel)
    digest.update(b"model:" + model_dir.name.encode())  # the site's weights folder: a content hash
    stored = {}
    for name, cells in pages.items():
        key = digest.copy()
        key.update(json.dumps(cells).encode())
        key.update(language_of(name).encode())  # the kernel's language: the views' words
        stem = Path(name).with_suffix("").as_posix().replace("/", "-")  # en/mask.html -> en-mask
        stored[name] = cache / f"cell-outputs-{stem}-{key.hexdigest()[:16]}.json"
    missing = {name: cells for name, cells in pages.items() if not stored[name].exists()}
    if missing:
        request = {"kernel": str(kernel), "py": str(root / "py"),
                   "weights": str(model_dir), "pages": missing,
                   "languages": {name: language_of(name) for name in missing}}
        result = subprocess.run([sys.executable, str(runner)], cwd=root,
                                input=json.dumps(request), capture_output=True, text=True)
        if result.returncode != 0:
            raise BuildError("running the pages' cells failed:\n" + result.stderr)
        for name, runs in json.loads(result.stdout).items():
            stored[name].parent.mkdir(parents=True, exist_ok=True)
            stored[name].write_text(json.dumps(runs, ensure_ascii=False), encoding="utf-8")
    return {name: json.loads(path.read_text(encoding="utf-8")) for name, path in stored.items()}
