"""Start-up of the lesson pages in headless Chromium against a bare Pyodide page, time to the first
figure, rebuild time and site size.

    .venv/bin/python bench/bench_startup.py [--runs 7] [--pages marco.html mascara.html laboratorio.html]

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

Each run loads every page twice: a **first visit** in a fresh browser context (nothing in the HTTP
cache), then a **repeat visit** in the same context (the HTTP cache warm); each visit's ratio is to
the bare page's same visit. Those contexts block service workers.

Each run also loads every lesson a third way: a **repeat visit with the service worker**. In a fresh
context that allows service workers, a first visit (untimed) lasts until the course's service
worker (browser/js/sw.js) has stored the whole site and taken the page over, and the page has
reloaded itself cross-origin isolated with its kernel ready (``SW_SETTLED_JS``, polled); then the
same page is loaded again in a new tab of that context, served by the service worker. Its ready
time is given as a ratio to the bare page's repeat visit and to its first visit, of the same runs.

Prints medians, the per-run ratios, a table of each start-up step's median time (``STEPS``,
from the marks the page keeps on its kernel status), and each lesson's long tasks before ``ready``
(``LONG_TASKS_JS``: Chromium's "longtask" entries, main-thread tasks over 50 ms), the median over
runs of the longest and of their count. Defaults: 7 runs of «Python en el navegador»
(``marco.html``), «La máscara» and the «Laboratorio».
"""
from __future__ import annotations

import argparse
import json
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
const created = performance.now();
const worker = new Worker("bare-worker.js");
worker.onmessage = (event) => {
  window.readyMs = performance.now();
  const marks = { "worker-created": created, "ready-received": window.readyMs };
  for (const [name, epochMs] of Object.entries(event.data)) {
    marks[name] = epochMs - performance.timeOrigin;
  }
  window.marks = marks;
  document.title = "ready";
};
worker.postMessage(new URL("../%(index)s", location.href).href);
"""
BARE_WORKER_JS = """
const marks = {};
const mark = (name) => { marks[name] = performance.timeOrigin + performance.now(); };
self.onmessage = async (event) => {
  mark("init-received");
  const indexURL = event.data;
  importScripts(indexURL + "pyodide.js");
  mark("pyodide-script");
  const pyodide = await loadPyodide({ indexURL, packages: ["numpy"] });
  mark("runtime");
  pyodide.runPython("import numpy");
  mark("numpy");
  self.postMessage(marks);
};
"""
# The start-up's steps, from the marks the page keeps (``data-startup-marks`` on the kernel status,
# ms since navigation; see browser/js/worker.js): (label, end mark, start marks). A step's time is
# its end minus the latest of its start marks that the page has (the downloads run beside the
# runtime's boot, so their rows give the time they ended, from navigation: start marks ``()``).
STEPS = (
    ("page script runs (from navigation)", "page-script", ()),
    ("worker created (from page script)", "worker-created", ("page-script",)),
    ("worker script loaded, init received", "init-received", ("worker-created",)),
    ("pyodide.js imported", "pyodide-script", ("init-received",)),
    ("runtime boot + NumPy load (loadPyodide)", "runtime", ("pyodide-script",)),
    ("import numpy", "numpy", ("runtime",)),
    ("code downloaded (from navigation)", "code-fetched", ()),
    ("code unpacked (after numpy and download)", "code-unpacked", ("numpy", "code-fetched")),
    ("kernel imported, prepare()", "kernel-imported", ("code-unpacked",)),
    ("weights downloaded (from navigation)", "weights-fetched", ()),
    ("weights written (after kernel and download)", "weights-written",
     ("kernel-imported", "weights-fetched")),
    ("Kernel created", "kernel-created", ("weights-written",)),
    ("'ready' reaches the page", "ready-received", ("kernel-created", "numpy")),
)
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
# Records the page's long tasks (main-thread tasks over 50 ms; Chromium's PerformanceObserver
# "longtask") as [start ms, duration ms] since navigation, from the page's first script on.
LONG_TASKS_JS = """
(() => {
  window.longTasks = [];
  try {
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) window.longTasks.push([entry.startTime, entry.duration]);
    }).observe({ type: "longtask", buffered: true });
  } catch (err) { window.longTasks = null; }  // an engine without longtask timing
})();
"""
# Where a first visit with the service worker stands: the page reloads itself once, so this is
# polled from Python (page.evaluate; the page's CSP forbids wait_for_function's string eval).
SW_SETTLED_JS = """({
  offline: document.querySelector("[data-testid=offline-status]")?.dataset.state ?? null,
  isolated: self.crossOriginIsolated,
  ready: document.querySelector("[data-testid=kernel-status]")?.dataset.state === "ready",
})"""
# What serves a page: its service worker (``controlled``) and whether it is isolated.
SW_SERVED_JS = """({controlled: Boolean(navigator.serviceWorker?.controller),
  isolated: self.crossOriginIsolated})"""


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


def bare_load(context, base_url: str) -> dict:
    """One load of the bare page in ``context``: ``{"ready": ms, "marks": {...}}``."""
    page = context.new_page()
    page.goto(base_url + BARE)
    page.wait_for_function("window.readyMs !== undefined", timeout=120_000)
    result = {"ready": page.evaluate("window.readyMs"), "marks": page.evaluate("window.marks")}
    page.close()
    return result


def lesson_load(context, url: str, served: bool = False) -> dict:
    """One load of ``url`` in ``context``: ``{"ready": ms, "figure": ms or None, "marks": {...}}``,
    in ms since navigation start; with ``served``, also ``SW_SERVED_JS``'s keys, read once ready."""
    page = context.new_page()
    page.goto(url)
    status = page.locator("[data-testid=kernel-status][data-state=ready]")
    status.wait_for(timeout=120_000)
    ready = float(status.get_attribute("data-ready-ms"))
    tasks = page.evaluate("window.longTasks")
    result = {"ready": ready, "figure": page.evaluate("window.firstFigureMs ?? null"),
              "marks": json.loads(status.get_attribute("data-startup-marks") or "{}"),
              "long_tasks": None if tasks is None else [t for t in tasks if t[0] < ready]}
    if served:
        result.update(page.evaluate(SW_SERVED_JS))
    page.close()
    return result


def visits(browser, base_url: str, name: str) -> tuple[dict, dict]:
    """(first visit, repeat visit) of page ``name`` (``"bare"`` or a lesson): a load in a fresh
    context (nothing cached), then a second load in the same context (its HTTP cache warm)."""
    context = browser.new_context(service_workers="block")
    if name == "bare":
        serve_bare(context, base_url)  # routes only here: a route intercepts every request
        load = lambda: bare_load(context, base_url)  # noqa: E731
    else:
        context.add_init_script(FIRST_FIGURE_JS)
        context.add_init_script(LONG_TASKS_JS)
        load = lambda: lesson_load(context, base_url + name)  # noqa: E731
    first = load()
    repeat = load()
    context.close()
    return first, repeat


def wait_settled(page, timeout_s: float = 300) -> None:
    """Poll ``SW_SETTLED_JS`` until the course is stored, the page isolated and its kernel ready
    (the page may reload itself meanwhile: an evaluate then fails, and is tried again)."""
    from playwright.sync_api import Error
    deadline = time.monotonic() + timeout_s
    state = None
    while time.monotonic() < deadline:
        try:
            state = page.evaluate(SW_SETTLED_JS)
        except Error:
            state = None  # navigating: the reload
        if state and state["offline"] == "error":
            raise RuntimeError(f"the service worker could not store the course: {state}")
        if state and state["offline"] == "stored" and state["isolated"] and state["ready"]:
            return
        time.sleep(0.2)
    raise TimeoutError(f"not stored, isolated and ready after {timeout_s:.0f} s: {state}")


def sw_visit(browser, base_url: str, name: str) -> tuple[float, dict]:
    """(seconds the first visit took to settle, repeat visit) of lesson ``name`` with the course's
    service worker: in a fresh context that allows it, a first visit until ``wait_settled``, then
    a load of the same page in a new tab (``lesson_load``'s dict, with ``SW_SERVED_JS``'s keys)."""
    context = browser.new_context(service_workers="allow")
    context.add_init_script(FIRST_FIGURE_JS)
    context.add_init_script(LONG_TASKS_JS)
    page = context.new_page()
    start = time.monotonic()
    page.goto(base_url + name)
    wait_settled(page)
    settled = time.monotonic() - start
    page.close()
    repeat = lesson_load(context, base_url + name, served=True)
    context.close()
    return settled, repeat


def startup(base_url: str, pages: list[str], runs: int) -> dict[str, dict[str, list]]:
    """``{"bare" or page: {"first": [load, ...], "repeat": [load, ...]}}`` (``bare_load`` and
    ``lesson_load``'s dicts), and for each page also ``"sw"``: [load, ...] and ``"settled"``: [s,
    ...] (``sw_visit``'s), runs interleaved: the bare page, then each page's two contexts (service
    workers blocked, then allowed), ``runs`` times."""
    from playwright.sync_api import sync_playwright
    results = {name: {"first": [], "repeat": []} for name in ["bare", *pages]}
    for name in pages:
        results[name].update(sw=[], settled=[])
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        visits(browser, base_url, "bare")  # warm the OS file cache and the browser once, untimed
        for _ in range(runs):
            for name in ["bare", *pages]:
                first, repeat = visits(browser, base_url, name)
                results[name]["first"].append(first)
                results[name]["repeat"].append(repeat)
                if name != "bare":
                    settled, repeat = sw_visit(browser, base_url, name)
                    results[name]["settled"].append(settled)
                    results[name]["sw"].append(repeat)
        browser.close()
    return results


def step_times(marks: dict) -> dict[str, float]:
    """``{label: ms}`` for each step of ``STEPS`` whose marks are in ``marks``."""
    times = {}
    for label, end, starts in STEPS:
        if end not in marks or any(s not in marks for s in starts):
            continue
        times[label] = marks[end] - max((marks[s] for s in starts), default=0.0)
    return times


def print_steps(results: dict, names: list[str], visit: str) -> None:
    """A table of each step's median ms, one column per page."""
    medians = {}
    for name in names:
        per_run = [step_times(load["marks"]) for load in results[name][visit]]
        medians[name] = {label: statistics.median(t[label] for t in per_run)
                         for label, _, _ in STEPS if all(label in t for t in per_run)}
    width = max(len(label) for label, _, _ in STEPS)
    print(f"  {'step (median ms)':<{width}} " + " ".join(f"{n[:12]:>12}" for n in names))
    for label, _, _ in STEPS:
        cells = [f"{medians[n][label]:>12.0f}" if label in medians[n] else f"{'':>12}"
                 for n in names]
        print(f"  {label:<{width}} " + " ".join(cells))


def print_long_tasks(results: dict, names: list[str], visit: str) -> None:
    """Each page's long tasks before ``ready`` (Chromium's "longtask" entries: main-thread tasks over
    50 ms): the median over runs of the longest one and of their count, and the longest of all."""
    for name in names:
        loads = [load.get("long_tasks") for load in results[name][visit]]
        if any(tasks is None for tasks in loads):
            print(f"  {name}: long tasks before ready: not measured (no longtask timing)")
            continue
        longest = [max((d for _, d in tasks), default=0.0) for tasks in loads]
        counts = [len(tasks) for tasks in loads]
        print(f"  {name}: long tasks before ready: longest median {statistics.median(longest):.0f} ms, "
              f"max {max(longest):.0f} ms; count median {statistics.median(counts):.0f} "
              f"(per run: {', '.join(f'{x:.0f}' for x in longest)} ms)")


def rebuild_seconds(runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        build.build()
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--pages", nargs="+", default=["marco.html", "mascara.html", "laboratorio.html"])
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
    for visit, what in (("first", "first visit, nothing cached"),
                        ("repeat", "repeat visit, same context, HTTP cache warm")):
        ready = {name: [load["ready"] for load in results[name][visit]]
                 for name in ["bare", *args.pages]}
        bare = statistics.median(ready["bare"])
        print(f"{what}:")
        print(f"  bare page (Pyodide + import numpy, same site/): median {bare / 1000:.2f} s "
              f"over {args.runs} runs")
        for name in args.pages:
            median = statistics.median(ready[name])
            per_run = ", ".join(f"{r / b:.2f}" for r, b in zip(ready[name], ready["bare"]))
            print(f"  {name}: ready median {median / 1000:.2f} s, ratio to bare "
                  f"{median / bare:.2f} (per run: {per_run})")
        print_steps(results, ["bare", *args.pages], visit)
        print_long_tasks(results, args.pages, visit)
    print("repeat visit with the service worker (fresh context allowing it, after a first visit "
          "stored the course and reloaded isolated):")
    bare = {visit: [load["ready"] for load in results["bare"][visit]]
            for visit in ("first", "repeat")}
    for name in args.pages:
        ready = [load["ready"] for load in results[name]["sw"]]
        median = statistics.median(ready)
        ratios = []
        for visit in ("repeat", "first"):
            per_run = ", ".join(f"{r / b:.2f}" for r, b in zip(ready, bare[visit]))
            ratios.append(f"ratio to bare {visit} visit "
                          f"{median / statistics.median(bare[visit]):.2f} (per run: {per_run})")
        print(f"  {name}: ready median {median / 1000:.2f} s, " + "; ".join(ratios))
        unserved = sum(1 for load in results[name]["sw"]
                       if not (load["controlled"] and load["isolated"]))
        if unserved:
            print(f"  {name}: WARNING: {unserved} of {len(ready)} loads not served by the service "
                  "worker or not isolated")
        print(f"  {name}: its first visit until stored, isolated and ready: median "
              f"{statistics.median(results[name]['settled']):.1f} s (wall clock, from goto)")
    print_steps(results, args.pages, "sw")
    print_long_tasks(results, args.pages, "sw")
    for name in args.pages:
        figures = [load["figure"] for load in results[name]["first"] if load["figure"] is not None]
        if figures:
            print(f"{name}: first figure or table laid out and painted (first visit): median "
                  f"{statistics.median(figures) / 1000:.2f} s after navigation")
        else:
            print(f"{name}: no figure or table ({FIGURE})")
    if rebuilds:
        print(f"rebuild (everything downloaded): median {statistics.median(rebuilds):.2f} s "
              f"over {len(rebuilds)} runs")
    print(f"site/ size: {size / 1e6:.1f} MB "
          f"({sum(1 for p in build.SITE.rglob('*') if p.is_file())} files)")


if __name__ == "__main__":
    main()
