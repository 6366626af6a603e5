"""Start-up of the lesson pages in headless Chromium against a bare Pyodide page, time to the first
figure, rebuild time and site size.

    .venv/bin/python bench/bench_startup.py [--runs 5] [--pages marco.html mascara.html]

Start-up is measured in the page: milliseconds from navigation start until the kernel status turns
``ready`` (runtime, NumPy, project code and weights loaded). In the same run, alternating with the
lessons, a **bare page** served from the same ``site/`` (the same origin, the same Pyodide and NumPy
files) does only the unavoidable part: a Web Worker that boots Pyodide with NumPy
(``loadPyodide({packages: ["numpy"]})``) and runs ``import numpy``. The report gives each lesson's
median ready time as a ratio to the bare page's median, a figure that holds across machines and
loads better than seconds do.

Time to the first figure: milliseconds from navigation start to the first animation frame in which
the lesson's first figure or table (``FIGURE``, in page order) exists with a layout box; that frame
is then painted. The figures are in the HTML, so this needs no Python.

Each run uses a fresh browser context, so nothing comes from the HTTP cache. Prints medians.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import build  # noqa: E402
from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from sitebuild import devserver, vendor

FIGURE = "main :is(figure, table, .lesson-view)"
BARE = "__bench__/bare.html"  # served by the benchmark (a route), beside site/'s own files
BARE_HTML = """<!doctype html><meta charset="utf-8"><title>bare</title>
<script src="bare.js"></script>"""
BARE_PAGE_JS = """
const worker = new Worker("bare-worker.js");
worker.onmessage = () => { document.title = "ready"; window.readyMs = performance.now(); };
worker.postMessage(new URL("../%(index)s", location.href).href);
"""
BARE_WORKER_JS = """
self.onmessage = async (event) => {
  const indexURL = event.data;
  importScripts(indexURL + "pyodide.js");
  const pyodide = await loadPyodide({ indexURL, packages: ["numpy"] });
  pyodide.runPython("import numpy");
  self.postMessage("ready");
};
"""
# Records the first frame in which the first figure or table has a layout box.
FIRST_FIGURE_JS = """
(() => {
  const look = () => {
    const figure = document.querySelector(%r);
    if (figure && figure.getBoundingClientRect().height > 0) {
      window.firstFigureMs = performance.now();
    } else {
      requestAnimationFrame(look);
    }
  };
  requestAnimationFrame(look);
})();
""" % FIGURE


def serve_bare(context, base_url: str) -> None:
    """Route the bare page and its two scripts; everything else comes from the server."""
    index = f"vendor/pyodide-{vendor.PYODIDE_VERSION}/"
    files = {"bare.html": ("text/html", BARE_HTML),
             "bare.js": ("text/javascript", BARE_PAGE_JS % {"index": index}),
             "bare-worker.js": ("text/javascript", BARE_WORKER_JS)}
    for name, (kind, body) in files.items():
        context.route(base_url + "__bench__/" + name,
                      lambda route, kind=kind, body=body: route.fulfill(
                          status=200, content_type=kind, body=body))


def bare_ms(browser, base_url: str) -> float:
    context = browser.new_context(service_workers="block")
    serve_bare(context, base_url)
    page = context.new_page()
    page.goto(base_url + BARE)
    page.wait_for_function("window.readyMs !== undefined", timeout=120_000)
    ms = page.evaluate("window.readyMs")
    context.close()
    return ms


def lesson_ms(browser, url: str) -> tuple[float, float | None]:
    """(ready, first figure) in ms since navigation start, for one cold load of ``url``."""
    context = browser.new_context(service_workers="block")
    context.add_init_script(FIRST_FIGURE_JS)
    page = context.new_page()
    page.goto(url)
    status = page.locator("[data-testid=kernel-status][data-state=ready]")
    status.wait_for(timeout=120_000)
    ready = float(status.get_attribute("data-ready-ms"))
    figure = page.evaluate("window.firstFigureMs ?? null")
    context.close()
    return ready, figure


def startup(base_url: str, pages: list[str], runs: int) -> dict[str, dict[str, list[float]]]:
    """``{"bare": {"ready": [...]}, page: {"ready": [...], "figure": [...]}}``, runs interleaved."""
    from playwright.sync_api import sync_playwright
    results: dict[str, dict[str, list[float]]] = {"bare": {"ready": []}}
    for name in pages:
        results[name] = {"ready": [], "figure": []}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        bare_ms(browser, base_url)  # warm the OS file cache and the browser once, untimed
        for _ in range(runs):
            results["bare"]["ready"].append(bare_ms(browser, base_url))
            for name in pages:
                ready, figure = lesson_ms(browser, base_url + name)
                results[name]["ready"].append(ready)
                if figure is not None:
                    results[name]["figure"].append(figure)
        browser.close()
    return results


def rebuild_seconds(runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        build.build()
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--pages", nargs="+", default=["marco.html", "mascara.html"])
    parser.add_argument("--no-rebuild", action="store_true", help="skip the rebuild timing")
    args = parser.parse_args()
    build.build()  # warm: downloads and caches are in place before timing
    rebuilds = [] if args.no_rebuild else rebuild_seconds(3)
    size = sum(p.stat().st_size for p in build.SITE.rglob("*") if p.is_file())
    server = devserver.make_server(build.SITE, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        results = startup(f"http://127.0.0.1:{server.server_address[1]}/", args.pages, args.runs)
    finally:
        server.shutdown()
    bare = statistics.median(results["bare"]["ready"])
    print(f"bare page (Pyodide + import numpy, same site/): median {bare / 1000:.2f} s "
          f"over {args.runs} runs")
    for name in args.pages:
        ready = statistics.median(results[name]["ready"])
        print(f"{name}: ready median {ready / 1000:.2f} s, ratio to bare {ready / bare:.2f} "
              f"(per run: {', '.join(f'{r / b:.2f}' for r, b in zip(results[name]['ready'], results['bare']['ready']))})")
        if results[name]["figure"]:
            print(f"{name}: first figure or table laid out and painted: median "
                  f"{statistics.median(results[name]['figure']) / 1000:.2f} s after navigation")
        else:
            print(f"{name}: no figure or table ({FIGURE})")
    if rebuilds:
        print(f"rebuild (everything downloaded): median {statistics.median(rebuilds):.2f} s "
              f"over {len(rebuilds)} runs")
    print(f"site/ size: {size / 1e6:.1f} MB "
          f"({sum(1 for p in build.SITE.rglob('*') if p.is_file())} files)")


if __name__ == "__main__":
    main()
