"""Benchmark of the NumPy forward pass (CPython): prints medians in milliseconds.

    python bench/bench_gpt.py [--repeats 30]

Measures, side by side in one run: one new token with the KV cache at batch 1 and at batch 32 (after a
128-token prefix), and a full forward of a 256-token prefix at batch 1.
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "py"))
from minigpt.gpt import load_model  # noqa: E402


def per_token_ms(model, batch: int, repeats: int, prefix: int = 128) -> list[float]:
    rng = np.random.default_rng(0)
    cache = model.new_cache(batch)
    model.step(rng.integers(0, 512, size=(batch, prefix)), cache)
    times = []
    for _ in range(repeats):
        ids = rng.integers(0, 512, size=(batch, 1))
        t = time.perf_counter()
        model.step(ids, cache)
        times.append((time.perf_counter() - t) * 1e3)
        cache.filled -= 1  # measure at the same cache length every time
    return times


def full_prefix_ms(model, repeats: int, length: int = 256) -> list[float]:
    ids = np.random.default_rng(1).integers(0, 512, size=(1, length))
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        model.forward(ids)
        times.append((time.perf_counter() - t) * 1e3)
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=30)
    args = ap.parse_args()
    model = load_model()
    cfg = model.config
    print(f"model: {cfg.n_layer} layers, width {cfg.n_embd}, context {cfg.n_ctx}; numpy {np.__version__}")
    for _ in range(3):  # warm-up
        per_token_ms(model, 1, 5)
    rows = [("per token, KV cache, batch 1", per_token_ms(model, 1, args.repeats)),
            ("per token, KV cache, batch 32", per_token_ms(model, 32, args.repeats)),
            ("full forward, 256 tokens, batch 1", full_prefix_ms(model, max(5, args.repeats // 3)))]
    for name, t in rows:
        print(f"{name:<36} median {statistics.median(t):8.3f} ms   (min {min(t):.3f}, n={len(t)})")


if __name__ == "__main__":
    main()
