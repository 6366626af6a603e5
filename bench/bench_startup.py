"""Cold start-up of a lesson page in headless Chromium, rebuild time and site size.

    .venv/bin/python bench/bench_startup.py [--runs 5]

Start-up is measured in the page: milliseconds from navigation start until the
kernel status turns ``ready`` (runtime, NumPy, project code and weights loaded).
Each run uses a fresh browser context, so nothing comes from the HTTP cache.
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


def rebuild_seconds(runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        build.build()
        times.append(time.perf_counter() - start)
    return times


def startup_ms(url: str, runs: int) -> list[float]:
    from playwright.sync_api import sync_playwright
    results = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        for _ in range(runs):
            context = browser.new_context(service_workers="block")
            page = context.new_page()
            page.goto(url + "marco.html")
            status = page.locator("[data-testid=kernel-status][data-state=ready]")
            status.wait_for(timeout=120_000)
            results.append(float(status.get_attribute("data-ready-ms")))
            context.close()
        browser.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    build.build()  # warm: downloads and caches are in place before timing
    rebuilds = rebuild_seconds(3)
    size = sum(p.stat().st_size for p in build.SITE.rglob("*") if p.is_file())
    server = build.make_server(build.SITE, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        times = startup_ms(f"http://127.0.0.1:{server.server_address[1]}/", args.runs)
    finally:
        server.shutdown()
    print(f"cold start-up to ready: median {statistics.median(times) / 1000:.2f} s "
          f"over {len(times)} runs (min {min(times) / 1000:.2f}, max {max(times) / 1000:.2f})")
    print(f"rebuild (everything downloaded): median {statistics.median(rebuilds):.2f} s "
          f"over {len(rebuilds)} runs")
    print(f"site/ size: {size / 1e6:.1f} MB "
          f"({sum(1 for p in build.SITE.rglob('*') if p.is_file())} files)")


if __name__ == "__main__":
    main()
