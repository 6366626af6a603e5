"""The plan of the site: every file it holds, in memory, with its path (content-hashed names for our
own files, a versioned folder for the runtime), before anything is written."""
from __future__ import annotations

from pathlib import Path

from .files import SitePlan, hashed_name
from .vendor import NUMPY_WHEEL, PYODIDE_FILES, PYODIDE_VERSION

def own_assets(root: Path, script: bytes, py_zip: bytes,
               early: bytes = b"") -> dict[str, tuple[str, bytes]]:
    """The site's own files, by key: ``{key: (file name, bytes)}``.

    ``script`` is the bundled page script, ``early`` the bundled early script (it starts the worker
    while the page is parsed; empty: the page script starts it) and ``py_zip`` the packed ``py/``;
    the worker, the kernel
    and the CSS are copied from ``root/browser`` (``site.css``, then ``course.css``: the
    course map and the lesson links; the lesson views' styles, ``py/lesson/views.css``, also style
    the prose's tables and tokens, so they come last).
    """
    assets = root / "browser"
    return {
        "app_js": ("app.js", script),
        "early_js": ("early.js", early),
        "worker_js": ("worker.js", (assets / "js" / "worker.js").read_bytes()),
        "kernel_py": ("kernel.py", (assets / "kernel.py").read_bytes()),
        "css": ("site.css", b"\n".join(path.read_bytes() for path in (
            assets / "site.css", assets / "course.css", root / "py" / "lesson" / "views.css"))),
        "py_zip": ("py.zip", py_zip),
    }


def plan_site(runtime: Path, wheel: Path, own: dict[str, tuple[str, bytes]],
              weights: list[tuple[str, bytes]], figures: dict | None,
              vocabularies: list[tuple[str, bytes]] | None = None) -> SitePlan:
    """Every file of the site in memory, with its path in ``site/`` (no writes yet).

    ``runtime`` is the checked Pyodide folder, ``wheel`` the verified NumPy wheel, ``own`` the
    result of ``own_assets``, ``weights`` that of ``collect_weights`` and ``vocabularies`` that
    of ``sitebuild.vocabularies.site_files`` (None: none shipped). The runtime keeps its
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
    for name, data in vocabularies or ():
        path = plan.add("vocab:" + name, "vocab/" + hashed_name(name, data), data)
        plan.vocabularies.append({"name": name, "url": path, "size": len(data)})
    return plan
