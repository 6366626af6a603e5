"""«Ejecutar todo» on a lesson in headless Chromium: wall time and each cell's time.

    .venv/bin/python bench/bench_lesson.py [--runs 5] [--page mascara.html ...] [--all]

``--page`` (repeatable) names the lessons to time, default «La máscara»; ``--all`` times every
lesson of ``build.PAGES`` that runs the model, on the same build and browser. Targets for Run all
here: «Niveles de garantía» and «Del esquema al autómata» 20 s, «Trampas y decisiones» 25 s,
«Corregir la distorsión» 30 s.

Each run is a fresh browser context (nothing from the HTTP cache) on a fresh build of the
sources, served on 127.0.0.1. Once the kernel is ready, a MutationObserver in the page
records ``performance.now()`` at every change of a cell's ``data-state``, and a capturing
click listener records the click on «Ejecutar todo». Cells run one at a time, in order, so
a cell's time is its ``done`` time minus the previous cell's (the first one: minus the click),
and Run all is the click to the last ``done``. Also printed: the kernel start-up
(``data-ready-ms``, navigation to ready).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import build  # noqa: E402
from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from sitebuild import devserver

PAGE = "mascara.html"
ENUMERATION = "enumeración"  # in the aria-label of the enumeration cell
READY_TIMEOUT_MS = 120_000
RUN_ALL_TIMEOUT_MS = 300_000

RECORD = """() => {
  const cells = [...document.querySelectorAll('[data-testid=cell]')];
  window.benchEvents = [];
  window.benchClick = null;
  document.addEventListener('click', event => {
    if (event.target.closest('[data-testid=run-all]')) window.benchClick = performance.now();
  }, true);
  const observer = new MutationObserver(records => {
    for (const r of records) window.benchEvents.push(
      {cell: cells.indexOf(r.target), state: r.target.dataset.state, t: performance.now()});
  });
  for (const cell of cells) observer.observe(cell, {attributes: true, attributeFilter: ['data-state']});
  return cells.map(c => c.getAttribute('aria-label') || '');
}"""
FINISHED = """() => [...document.querySelectorAll('[data-testid=cell]')]
    .every(c => c.dataset.state === 'done' || c.dataset.state === 'error')"""


def one_run(browser, url: str, page_name: str = PAGE) -> dict:
    """Load the page, wait for the kernel, Run all; times in seconds, one per cell in page order."""
    context = browser.new_context(service_workers="block", viewport={"width": 1100, "height": 900})
    try:
        page = context.new_page()
        page.goto(url + page_name)
        status = page.locator("[data-testid=kernel-status][data-state=ready]")
        status.wait_for(timeout=READY_TIMEOUT_MS)
        labels = page.evaluate(RECORD)
        page.locator("[data-testid=run-all]").click()
        page.wait_for_function(FINISHED, timeout=RUN_ALL_TIMEOUT_MS, polling=50)
        events, click = page.evaluate("[window.benchEvents, window.benchClick]")
        startup = float(status.get_attribute("data-ready-ms")) / 1000
    finally:
        context.close()
    failed = [labels[e["cell"]] for e in events if e["state"] == "error"]
    if failed:
        raise SystemExit(f"cells ended in error: {failed}")
    done = [max(e["t"] for e in events if e["cell"] == i and e["state"] == "done")
            for i in range(len(labels))]
    starts = [click] + done[:-1]
    return {"labels": labels, "startup": startup, "run_all": (done[-1] - click) / 1000,
            "cells": [(end - start) / 1000 for start, end in zip(starts, done)]}


@contextmanager
def served_browser():
    """A fresh build of the sources in a temporary folder, served on 127.0.0.1, and headless
    Chromium: yields (browser, url of the site's root). Shared by the browser benchmarks."""
    from playwright.sync_api import sync_playwright
    with tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp) / "site"
        build.build(build.ROOT, site)
        server = devserver.make_server(site, 0)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
                yield browser, f"http://127.0.0.1:{server.server_address[1]}/"
                browser.close()
        finally:
            server.shutdown()
            server.server_close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--page", action="append", help="a lesson's file, e.g. niveles.html")
    parser.add_argument("--all", action="store_true", help="every lesson of build.PAGES on the model")
    args = parser.parse_args()
    # --all: the lessons on the model, those with a notebook (marco.html has none, and a cell that fails on purpose)
    pages = ([spec["out"] for spec in build.PAGES if spec.get("notebook")] if args.all
             else args.page or [PAGE])
    with served_browser() as (browser, url):
        for name in pages:
            runs = []
            print(f"== {name}", flush=True)
            for n in range(1, args.runs + 1):
                run = one_run(browser, url, name)
                runs.append(run)
                cells = " ".join(f"{t:.2f}" for t in run["cells"])
                print(f"run {n}: start-up {run['startup']:.2f} s, run all {run['run_all']:.2f} s, "
                      f"cells [{cells}] s", flush=True)
            report(runs)


def report(runs: list[dict]) -> None:
    n, labels = len(runs), runs[0]["labels"]
    median = statistics.median
    print(f"kernel start-up median {median(r['startup'] for r in runs):.2f} s (n={n})")
    print(f"run all median {median(r['run_all'] for r in runs):.2f} s (n={n}, "
          f"min {min(r['run_all'] for r in runs):.2f}, max {max(r['run_all'] for r in runs):.2f})")
    enumeration = [i for i, label in enumerate(labels) if ENUMERATION in label.lower()]
    if enumeration:
        print(f"enumeration cell median {median(r['cells'][enumeration[0]] for r in runs):.2f} s")
    for i, label in enumerate(labels):
        print(f"  cell {i + 1} median {median(r['cells'][i] for r in runs):.2f} s  {label}")


if __name__ == "__main__":
    main()
