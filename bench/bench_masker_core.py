"""Benchmark of the masker core: compile time, trie walk vs brute force, and per-token mask time.

Run: ``python bench/bench_masker_core.py`` (add ``--quick`` for fewer walks). Prints, per
grammar and vocabulary, measured side by side in one run:
- compile time (ms);
- uncached mask time of the trie walk and of the brute-force twin over the same states, and
  their ratio (the trie walk must be faster);
- per-token ``Matcher.mask()`` time in a decode loop (random walks through the mask, after one
  warm-up walk that fills the cache): median and p99 in ms, the share of cache hits, and the
  brute-force time divided by that median ("speed-up").
The trie walk runs before the brute force on the same states, so for Earley the brute force
profits from transitions the trie walk memoized: the trie/brute ratio is a lower bound.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "py"), str(ROOT)]

import numpy as np  # noqa: E402

from masker import compile_cfg, compile_choice, compile_regex  # noqa: E402
from masker.trie import brute_force_mask, trie_mask  # noqa: E402
from tests.masker.cfg_corpus import GRAMMARS as CFG_GRAMMARS  # noqa: E402

# The JSON-like and left-recursive arithmetic grammars of the CFG tests.
_CFG = {name: text for name, text, _, _ in CFG_GRAMMARS}
JSON_GBNF, ARITH_GBNF = _CFG["json-ish"], _CFG["arith-left"]
GRAMMARS = {
    "choice(5 names)": lambda: compile_choice(["Benina", "Almudena", "Frasquito", "Obdulia",
                                               "Juliana"]),
    "regex(json string)": lambda: compile_regex(r'"([^"\\\x00-\x1f]|\\["\\/bfnrt])*"'),
    "regex(spanish)": lambda: compile_regex(r"(el|la) (señor|señora) [a-záéíóúñ ,]{1,80}\."),
    "cfg(json, earley)": lambda: compile_cfg(JSON_GBNF),
    "cfg(arith, earley)": lambda: compile_cfg(ARITH_GBNF),
}


def vocabularies():
    out = {"bytes256": [bytes([i]) for i in range(256)]}
    try:
        from minigpt.bpe import load_tokenizer
        out["trained512"] = list(load_tokenizer().vocab)
    except (ImportError, OSError) as exc:
        print(f"(trained vocabulary skipped: {exc})")
    return out


def random_states(grammar, vocab, rng, n_walks, steps):
    """Matchers at prefixes reached by random token walks through the mask."""
    states = []
    for _ in range(n_walks):
        m = grammar.matcher(vocab)
        for _ in range(steps):
            states.append(m.copy())
            allowed = np.flatnonzero(m.mask())
            if len(allowed) == 0 or (m.is_accepting() and rng.random() < 0.05):
                break
            m.consume(int(rng.choice(allowed)))
    return states


def trie_vs_brute(grammar, vocab, states, repeats: int = 3):
    """Mean uncached mask time per state (ms) of the trie walk and of the brute force; each is
    the best of ``repeats`` passes over the same states (the machine may be busy)."""
    automaton = grammar.automaton
    trie = grammar.matcher(vocab)._index.trie
    best_trie = best_brute = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for m in states:
            trie_mask(automaton, m.state, trie)
        best_trie = min(best_trie, time.perf_counter() - t0)
        t0 = time.perf_counter()
        for m in states:
            brute_force_mask(automaton, m.state, vocab)
        best_brute = min(best_brute, time.perf_counter() - t0)
    return 1e3 * best_trie / len(states), 1e3 * best_brute / len(states)


def decode_loop_times(grammar, vocab, rng, n_walks, steps):
    """Per-token mask() times (ms) over random walks, after one warm-up walk."""
    random_states(grammar, vocab, rng, 1, steps)
    times, hits = [], 0
    for _ in range(n_walks):
        m = grammar.matcher(vocab)
        for _ in range(steps):
            key = grammar.automaton.cache_key(m.state)
            hits += key in m._index.masks
            t0 = time.perf_counter()
            mask = m.mask()
            times.append(1e3 * (time.perf_counter() - t0))
            allowed = np.flatnonzero(mask)
            if len(allowed) == 0 or (m.is_accepting() and rng.random() < 0.05):
                break
            m.consume(int(rng.choice(allowed)))
    return times, hits / len(times)


def main(quick: bool) -> None:
    n_walks, steps = (5, 40) if quick else (20, 60)
    print(f"{'grammar':22} {'vocab':10} {'compile':>8} {'trie':>8} {'brute':>8} {'ratio':>6} "
          f"{'median':>8} {'p99':>8} {'hits':>5} {'speed-up':>9}   (all times in ms)")
    for vocab_name, vocab in vocabularies().items():
        for name, build in GRAMMARS.items():
            rng = random.Random(0)
            t0 = time.perf_counter()
            grammar = build()
            compile_ms = 1e3 * (time.perf_counter() - t0)
            states = random_states(grammar, vocab, rng, max(2, n_walks // 4), steps)
            t_trie, t_brute = trie_vs_brute(grammar, vocab, states)
            times, hit_rate = decode_loop_times(grammar, vocab, rng, n_walks, steps)
            p99 = float(np.percentile(times, 99))
            print(f"{name:22} {vocab_name:10} {compile_ms:8.2f} {t_trie:8.3f} {t_brute:8.3f} "
                  f"{t_brute / t_trie:6.1f} {statistics.median(times):8.4f} {p99:8.3f} "
                  f"{hit_rate:5.2f} {t_brute / statistics.median(times):9.0f}")


if __name__ == "__main__":
    main("--quick" in sys.argv)
