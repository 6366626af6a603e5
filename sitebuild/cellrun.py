"""Run a page's cells at build time, in CPython, with the page's own kernel.

``sitebuild.cells.cell_outputs`` runs this script in a fresh process (``python sitebuild/cellrun.py``), one per build
that needs it, so the cells' imports and globals never touch the build's own interpreter. It reads
JSON from stdin::

    {"kernel": "browser/kernel.py", "py": "py", "weights": "weights",
     "pages": {"marco.html": ["<source of cell 1>", ...], ...},
     "languages": {"en/python.html": "en", ...}}      # optional; a page not named is Spanish

and writes ``{"marco.html": [{"ok": true, "events": [[kind, payload], ...]}, ...], ...}`` to
stdout: for each page, a fresh ``kernel.Kernel`` (as a fresh page has) runs its cells in order,
and each cell's events are what the worker would post for it (see ``kernel.py``). Streams are
joined as the page joins them: consecutive text of one stream is one event.
"""
from __future__ import annotations

import importlib.util
import json
import sys


def load_kernel(path: str):
    """The page's kernel module (``browser/kernel.py``)."""
    spec = importlib.util.spec_from_file_location("page_kernel", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def joined(events: list[list]) -> list[list]:
    """Consecutive ``stream`` events of one stream become one, as the page shows them."""
    out: list[list] = []
    for kind, payload in events:
        last = out[-1] if out else None
        if (kind == "stream" and last and last[0] == "stream"
                and last[1]["name"] == payload["name"]):
            last[1] = {"name": payload["name"], "text": last[1]["text"] + payload["text"]}
        else:
            out.append([kind, payload])
    return out


def run_cells(kernel_module, sources: list[str]) -> list[dict]:
    """Run ``sources`` in order in one fresh kernel; ``[{"ok", "events"}]`` per cell."""
    events: list[list] = []
    kernel = kernel_module.Kernel(lambda kind, payload: events.append([kind, payload]))
    results = []
    for source in sources:
        events.clear()
        ok = kernel.run(source)
        results.append({"ok": ok, "events": joined(events)})
    return results


def main() -> int:
    request = json.load(sys.stdin)
    kernel_module = load_kernel(request["kernel"])
    languages = request.get("languages", {})
    outputs = {}
    for page, sources in request["pages"].items():
        # as the worker does, in the page's language
        kernel_module.prepare(request["py"], request["weights"], languages.get(page, "es"))
        outputs[page] = run_cells(kernel_module, sources)
    json.dump(outputs, sys.stdout, ensure_ascii=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
