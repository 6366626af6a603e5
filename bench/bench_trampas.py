"""«Ejecutar todo» on the lesson «Trampas y decisiones» in headless Chromium: wall time and each
cell's time.

    .venv/bin/python bench/bench_trampas.py [--runs 3]

Same method as ``bench_lesson.py`` (a fresh browser context per run on a fresh build served on
127.0.0.1; cell times from the ``data-state`` changes, Run all from the click to the last
``done``), on ``trampas.html``. Prints each run, then the medians. The target is Run all under
25 s; the figure depends on the machine and on what else runs on it.
"""
from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_lesson  # noqa: E402  (this folder)

PAGE = "trampas.html"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    bench_lesson.PAGE = PAGE  # one_run opens bench_lesson.PAGE
    runs = []
    with bench_lesson.served_browser() as (browser, url):
        for n in range(1, args.runs + 1):
            run = bench_lesson.one_run(browser, url)
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
