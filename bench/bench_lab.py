"""The «Laboratorio» in headless Chromium: a 40-token generation under a JSON Schema.

    .venv/bin/python bench/bench_lab.py [--runs 5]

Each run is a fresh browser context on a fresh build served on 127.0.0.1. Once the kernel is
ready, the page gets a JSON Schema (an object with a free string and an integer), a budget of
40 tokens, and «Generar» is clicked twice: the first click also imports the lab code and loads
the model into it, the second is a generation alone. Printed: the medians of both, from the
click to the view holding the result.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_lesson import served_browser  # noqa: E402  (this folder)

SCHEMA = {"type": "object",
          "properties": {"nombre": {"type": "string"}, "edad": {"type": "integer"}},
          "required": ["nombre", "edad"]}
TIMEOUT_MS = 120_000


def one_run(browser, url: str) -> dict:
    context = browser.new_context(service_workers="block", viewport={"width": 1100, "height": 900})
    try:
        page = context.new_page()
        page.goto(url + "laboratorio.html")
        page.locator("[data-testid=kernel-status][data-state=ready]").wait_for(timeout=TIMEOUT_MS)
        page.locator("[data-testid=lab-kind]").select_option("json_schema")
        page.locator("[data-testid=lab-constraint] .cm-content").click()
        page.keyboard.press("Control+A")
        page.keyboard.insert_text(json.dumps(SCHEMA))
        page.locator("[data-testid=lab-max-tokens]").fill("40")
        times = []
        for seed in ("0", "1"):
            page.locator("[data-testid=lab-seed]").fill(seed)
            view = page.locator("[data-testid=lab-view]")
            view.evaluate("v => { v.dataset.state = 'clicked'; }")
            start = page.evaluate("performance.now()")
            page.locator("[data-testid=lab-generate]").click()
            page.locator("[data-testid=lab-view][data-state=done]").wait_for(timeout=TIMEOUT_MS)
            times.append((page.evaluate("performance.now()") - start) / 1000)
        tokens = page.locator("[data-testid=lab-position]").count()
        return {"first": times[0], "second": times[1], "tokens": tokens}
    finally:
        context.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    runs = []
    with served_browser() as (browser, url):
        for n in range(1, args.runs + 1):
            run = one_run(browser, url)
            runs.append(run)
            print(f"run {n}: first generation {run['first']:.2f} s (with the model load), "
                  f"second {run['second']:.2f} s, {run['tokens']} tokens", flush=True)
    print(f"first generation median {statistics.median(r['first'] for r in runs):.2f} s, "
          f"second median {statistics.median(r['second'] for r in runs):.2f} s (n={len(runs)})")


if __name__ == "__main__":
    main()
