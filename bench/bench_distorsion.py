"""«Ejecutar todo» on the lesson «Corregir la distorsión» in headless Chromium: wall time and each
cell's time (median of a few runs).

    .venv/bin/python bench/bench_distorsion.py [--runs 3]

Same method as ``bench_lesson.py`` (a fresh build served on 127.0.0.1 by
``bench_lesson.served_browser``, a fresh browser context per run, cell times from the changes of
each cell's ``data-state``); the target for this page is under 30 s.
"""
from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_lesson import FINISHED, READY_TIMEOUT_MS, RECORD, RUN_ALL_TIMEOUT_MS, served_browser  # noqa: E402

PAGE = "distorsion.html"


def one_run(browser, url: str) -> dict:
    """Load the page, wait for the kernel, Run all; times in seconds, one per cell in page order."""
    context = browser.new_context(service_workers="block", viewport={"width": 1100, "height": 900})
    try:
        page = context.new_page()
        page.goto(url + PAGE)
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    runs = []
    with served_browser() as (browser, url):
        for n in range(1, args.runs + 1):
            run = one_run(browser, url)
            runs.append(run)
            cells = " ".join(f"{t:.2f}" for t in run["cells"])
            print(f"run {n}: start-up {run['startup']:.2f} s, run all {run['run_all']:.2f} s, "
                  f"cells [{cells}] s", flush=True)
    median = statistics.median
    print(f"kernel start-up median {median(r['startup'] for r in runs):.2f} s (n={len(runs)})")
    print(f"run all median {median(r['run_all'] for r in runs):.2f} s (n={len(runs)}, "
          f"min {min(r['run_all'] for r in runs):.2f}, max {max(r['run_all'] for r in runs):.2f})")
    for i, label in enumerate(runs[0]["labels"]):
        print(f"  cell {i + 1} median {median(r['cells'][i] for r in runs):.2f} s  {label}")


if __name__ == "__main__":
    main()
