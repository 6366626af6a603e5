"""The lessons' prose figures: each page's ``compute_figures(model, tok)``, run in CPython with
the committed weights, cached in ``.cache/``."""
from __future__ import annotations

import importlib
import json
from pathlib import Path

from .errors import BuildError
from .files import CACHE, ROOT, collect_weights, has_model, site_model_dir, source_digest, use_py


def lesson_figures(pages, root: Path = ROOT, weights: list[tuple[str, bytes]] | None = None,
                   cache: Path = CACHE, model_dir: Path | None = None) -> dict | None:
    """Every figure the lessons' prose quotes, computed in CPython by ``py/`` with ``weights/``:
    ``{page out: figures}`` for each entry of ``pages`` (the page table, ``build.PAGES``) that
    names a module under ``"figures"`` (the module's ``compute_figures(model, tok)``, plain JSON
    data). ``weights`` is ``collect_weights(root / "weights")``, read once by the build (read here
    when not given); ``model_dir`` is the folder the model and tokenizer are loaded from: by default
    the site's copy of ``root / "weights"`` (``files.site_model_dir``: the model rounded to
    float16), so the prose quotes the model the page runs.

    Returns None when the weights are missing (the lesson pages then say so). Each page's result is
    cached in ``cache`` under a hash of every file of ``py/`` and ``weights/`` (``source_digest``:
    a figure may embed data such as ``views.css``) and of the module's name, so a rebuild
    recomputes only when one of them changed (a lesson's figures take seconds). A figures
    module that raises stops the build with a BuildError naming the page, and a template that
    quotes a figure its module did not compute stops it at render time (StrictUndefined): no page
    quotes a number it lacks.
    """
    files = collect_weights(root / "weights") if weights is None else weights
    names = [name for name, _ in files]
    if not (has_model(names) and "merges.txt" in names):
        return None
    if model_dir is None:
        model_dir = site_model_dir(root / "weights", cache)
    digest = source_digest(root)
    digest.update(b"model:" + model_dir.name.encode())  # the site's weights folder: a content hash
    figures, model = {}, _Model(model_dir)
    for spec in pages:
        module = spec.get("figures")
        if not module:
            continue
        key = digest.copy()
        key.update(module.encode())
        stored = cache / f"figures-{Path(spec['out']).stem}-{key.hexdigest()[:16]}.json"
        if not stored.exists():
            use_py(root)
            result = compute(spec["out"], module, model)
            stored.parent.mkdir(parents=True, exist_ok=True)
            stored.write_text(json.dumps(result, ensure_ascii=False, indent=1), encoding="utf-8")
        figures[spec["out"]] = json.loads(stored.read_text(encoding="utf-8"))
    return figures


class _Model:
    """The committed model and tokenizer, loaded on first use (a build whose figures are all
    cached never loads them)."""

    def __init__(self, weights: Path):
        self.weights, self.loaded = weights, None

    def get(self):
        if self.loaded is None:
            from minigpt.bpe import load_tokenizer
            from minigpt.gpt import load_model
            self.loaded = (load_model(self.weights), load_tokenizer(self.weights))
        return self.loaded


def compute(page: str, module: str, model: _Model) -> dict:
    """``module.compute_figures(model, tok)`` for ``page``; BuildError naming the page, the module
    and the exception when it raises."""
    try:
        return importlib.import_module(module).compute_figures(*model.get())
    except Exception as exc:
        raise BuildError(f"{page}: its prose figures ({module}.compute_figures) could "
                         f"not be computed: {type(exc).__name__}: {exc}") from exc
