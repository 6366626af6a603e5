"""The lessons' prose figures: each page's ``compute_figures(model, tok)``, run in CPython with
the committed weights, cached in ``.cache/``."""
from __future__ import annotations

import hashlib
import importlib
import json
from pathlib import Path

from .errors import BuildError
from .files import CACHE, ROOT, collect_weights, has_model, use_py

def lesson_figures(pages, root: Path = ROOT, cache: Path = CACHE) -> dict | None:
    """Every figure the lessons' prose quotes, computed in CPython by ``py/`` with ``weights/``:
    ``{page out: figures}`` for each entry of ``pages`` (the page table, ``build.PAGES``) that names a module under ``"figures"``
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
    for spec in pages:
        module = spec.get("figures")
        if not module:
            continue
        key = digest.copy()
        key.update(module.encode())
        stored = cache / f"figures-{Path(spec['out']).stem}-{key.hexdigest()[:16]}.json"
        if not stored.exists():
            use_py(root)
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
