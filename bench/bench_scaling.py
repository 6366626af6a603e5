"""Benchmark: compile and mask cost on large schemas (issue 12), ours and llguidance's side by
side in one run, on the trained 512-token vocabulary (else the 256 bytes).

Run: ``python bench/bench_scaling.py`` (``--pyodide`` adds the enum cases inside Pyodide, in
Node, after ``make build``). Prints one line per case:
- compile: the median of ``--repeats`` fresh compiles (s). For llguidance, building an
  ``LLMatcher`` for the grammar (it compiles the schema for the tokenizer; some of its work is
  lazy and lands in the first masks);
- per-token mask: the median and the maximum (ms) of ``Matcher.mask()`` along walks through
  valid texts, token by token, starting from a fresh grammar (cold: each state's mask is
  computed the first time it is met, then cached), and llguidance's ``compute_bitmask`` at the
  same prefixes (both with forcing switched off, tests/masker/oracle.py);
- refused cases: the time until the error.
Cases: enums of 1,000 and 10,000 strings (and the 10x ratio of their compile times), an enum
inside a recursive schema (the GBNF/Earley route), a string of maxLength 8,192 (a 3,000-token
walk), an array of maxItems 10,000, an anyOf of 60 objects x 10 optional enum fields, the regex
``[a-z]{1,65536}``, and ``compile_choice`` of 10,000 random words of 5 to 12 letters.
Timings are wall-clock medians on whatever machine runs it; compare figures from one run only.
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "py"), str(ROOT), str(ROOT / "tests" / "masker")]

import numpy as np  # noqa: E402

from masker import compile_choice, compile_json_schema, compile_regex  # noqa: E402
from masker.errors import MaskerError  # noqa: E402
from bench_masker import split_longest as _split_longest, vocabulary  # noqa: E402  (this folder)

try:
    from tests.masker.oracle import Oracle, json_schema_lark, regex_lark  # noqa: E402
except ImportError:  # llguidance not installed
    Oracle = None


def words(n: int, seed: int = 0) -> list[str]:
    rng, out = random.Random(seed), set()
    while len(out) < n:
        out.add("".join(rng.choice("abcdefghijklmnopqrstuvwxyz")
                        for _ in range(rng.randint(5, 12))))
    return sorted(out)


def compact(value) -> str:
    """The JSON text in the compact whitespace policy (no spaces)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def split_longest(data: bytes, vocab: list[bytes]) -> list[int]:
    """Greedy longest-match token ids for ``data`` (bench_masker's split, with its look-up built here)."""
    return _split_longest(data, vocab, {t: i for i, t in enumerate(vocab)}, max(map(len, vocab)))


def median_time(make, repeats: int):
    """(result of the last call, median seconds); an error counts as the result."""
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        try:
            out = make()
        except MaskerError as exc:
            out = exc
        times.append(time.perf_counter() - t0)
    return out, statistics.median(times)


def walk_masks(grammar, oracle, vocab, texts, max_tokens: int):
    """Per-token mask times (ms), ours and llguidance's, walking ``texts`` token by token."""
    ours, theirs = [], []
    for text in texts:
        m, o = grammar.matcher(vocab), (oracle.copy() if oracle else None)
        for tid in split_longest(text.encode(), vocab)[:max_tokens]:
            t0 = time.perf_counter()
            mask = m.mask()
            ours.append(1e3 * (time.perf_counter() - t0))
            if not mask[tid]:
                raise AssertionError(f"valid text refused at {m.prefix_bytes[-40:]!r}")
            if o is not None:
                try:
                    t0 = time.perf_counter()
                    o.matcher.compute_bitmask()
                    theirs.append(1e3 * (time.perf_counter() - t0))
                    o.consume(tid)
                except Exception as exc:  # llguidance gave up (e.g. ParserTooComplex)
                    lines = [ln for ln in str(exc).splitlines() if "rror" in ln or "Stop" in ln]
                    theirs.append("error: " + (lines[-1] if lines else str(exc))[:80])
                    o = oracle = None
            m.consume(tid)
    return ours, theirs


def fmt_ms(ts):
    errors = [t for t in ts if isinstance(t, str)]
    if errors:
        return errors[0][:40]
    return f"{statistics.median(ts):.4f} / {max(ts):.3f}" if ts else "-"


def llg_compile(lark: str, vocab, repeats: int):
    if Oracle is None:
        return None, None
    oracle, dt = median_time(lambda: Oracle(lark, vocab), repeats)
    return oracle, dt


def cases():
    rng = random.Random(0)
    w1k, w10k, pool = words(1_000), words(10_000, seed=1), words(4_000, seed=2)
    recursive = {"$defs": {"t": {"anyOf": [{"enum": w1k}, {"type": "array", "maxItems": 3,
                                                            "items": {"$ref": "#/$defs/t"}}]}},
                 "$ref": "#/$defs/t"}
    any60 = {"anyOf": [{"type": "object", "additionalProperties": False, "properties": {
        f"campo{i}_{j}": {"enum": rng.sample(pool, 130)} for j in range(10)}} for i in range(60)]}
    long_text = '"' + "".join(rng.choice("abcdefghij ñé") for _ in range(8192)) + '"'
    yield ("enum 1,000 strings", {"enum": w1k}, [json.dumps(w) for w in w1k[::50]], 60)
    yield ("enum 10,000 strings", {"enum": w10k}, [json.dumps(w) for w in w10k[::500]], 60)
    yield ("enum in recursion (GBNF)", recursive,
           [compact([[w1k[i], w1k[i + 1]], w1k[i + 2]]) for i in range(0, 600, 30)], 60)
    yield ("string maxLength 8192", {"type": "string", "maxLength": 8192}, [long_text], 3000)
    yield ("array maxItems 10000", {"type": "array", "items": {"type": "integer"},
                                    "maxItems": 10000},
           ["[" + ",".join(str(i) for i in range(300)) + "]"], 600)
    yield (f"anyOf 60 x 10 enum fields ({len(json.dumps(any60)) // 1000} KB)", any60,
           [compact({"campo3_0": any60["anyOf"][3]["properties"]["campo3_0"]["enum"][0]})], 60)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--pyodide", action="store_true")
    args = ap.parse_args()
    vname, vocab = vocabulary()
    print(f"vocabulary {vname}; CPython {sys.version.split()[0]}; llguidance "
          f"{'1.9.1 (no forcing)' if Oracle else 'not installed'}")
    print(f"{'case':36} {'compile s':>10} {'llg s':>8}   {'mask ms med / max':>18} "
          f"{'llg ms med / max':>18}  grammar")
    compile_s = {}
    for name, schema, texts, max_tokens in cases():
        grammar, dt = median_time(lambda: compile_json_schema(schema), args.repeats)
        compile_s[name] = dt
        oracle, ldt = llg_compile(json_schema_lark(schema), vocab, args.repeats) if Oracle else (
            None, None)
        if isinstance(grammar, Exception):
            print(f"{name:36} {dt:10.3f} {ldt or 0:8.3f}   refused: {grammar}".splitlines()[0])
            continue
        ours, theirs = walk_masks(grammar, oracle, vocab, texts, max_tokens)
        kind = grammar.syntax + (" counted" if type(grammar.automaton).__name__ == "CountedDfa"
                                 else "")
        print(f"{name:36} {dt:10.3f} {ldt or float('nan'):8.3f}   {fmt_ms(ours):>18} "
              f"{fmt_ms(theirs):>18}  {kind}")
    ratio = compile_s["enum 10,000 strings"] / compile_s["enum 1,000 strings"]
    print(f"enum compile time 10,000 / 1,000 values: {ratio:.1f}x")
    for name, make, lark in (
            ("regex [a-z]{1,65536}", lambda: compile_regex("[a-z]{1,65536}"),
             regex_lark("[a-z]{1,65536}") if Oracle else None),
            ("compile_choice 10,000 words", lambda: compile_choice(words(10_000, seed=3)),
             regex_lark("|".join(words(10_000, seed=3))) if Oracle else None)):
        grammar, dt = median_time(make, args.repeats)
        _, ldt = llg_compile(lark, vocab, args.repeats) if lark else (None, None)
        what = (f"refused: {grammar}".splitlines()[0] if isinstance(grammar, Exception)
                else f"{grammar.automaton.n_states} DFA states")
        print(f"{name:36} {dt:10.3f} {ldt or float('nan'):8.3f}   {what}")
    if args.pyodide:
        pyodide_enum()


PYODIDE_MEASURE = r'''
import json, random, statistics, time
from masker import compile_json_schema
from minigpt.bpe import load_tokenizer


def words(n, seed=0):
    rng, out = random.Random(seed), set()
    while len(out) < n:
        out.add("".join(rng.choice("abcdefghijklmnopqrstuvwxyz")
                        for _ in range(rng.randint(5, 12))))
    return sorted(out)


def measure(weights):
    tok, out = load_tokenizer(weights), {}
    for n in (1000, 10000):
        values = words(n, seed=n)
        t = time.perf_counter()
        grammar = compile_json_schema({"enum": values})
        out[f"compile_{n}_s"] = time.perf_counter() - t
        times = []
        for v in values[::max(1, n // 20)]:
            m = grammar.matcher(tok.vocab)
            for tid in tok.encode(json.dumps(v)):
                t = time.perf_counter()
                m.mask()
                times.append((time.perf_counter() - t) * 1e3)
                m.consume(tid)
        out[f"mask_{n}_ms"] = (statistics.median(times), max(times))
    return out
'''


def pyodide_enum() -> None:
    """The enum compile and per-token mask inside Pyodide (Node), with CPython beside it."""
    from bench_masker_pyodide import PYODIDE, RUNNER, WHEELS
    if not (PYODIDE / "pyodide.mjs").exists() or not WHEELS:
        print("Pyodide: needs node_modules/pyodide and .cache/wheels (make build)")
        return
    with tempfile.TemporaryDirectory() as tmp:
        measure, runner = Path(tmp) / "measure.py", Path(tmp) / "run.mjs"
        measure.write_text(PYODIDE_MEASURE, encoding="utf-8")
        runner.write_text(RUNNER.format(
            pyodide_mjs=json.dumps(str(PYODIDE / "pyodide.mjs")),
            index_url=json.dumps(f"{PYODIDE}/"), wheel=json.dumps(str(WHEELS[-1])),
            py_dir=json.dumps(str(ROOT / "py")),
            merges=json.dumps(str(ROOT / "weights" / "merges.txt")),
            measure=json.dumps(str(measure))), encoding="utf-8")
        done = subprocess.run(["node", str(runner)], capture_output=True, text=True, timeout=900)
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("RESULT ")]
    if done.returncode or not lines:
        print("Pyodide run failed:", done.stderr[-2000:])
        return
    namespace: dict = {}
    exec(compile(PYODIDE_MEASURE, "measure", "exec"), namespace)
    for where, r in (("Pyodide", json.loads(lines[-1][len("RESULT "):])),
                     ("CPython", namespace["measure"](str(ROOT / "weights")))):
        print(f"{where}: enum compile 1,000 {r['compile_1000_s']:.3f} s, 10,000 "
              f"{r['compile_10000_s']:.3f} s; per-token mask median / max (ms) 1,000 "
              f"{r['mask_1000_ms'][0]:.4f} / {r['mask_1000_ms'][1]:.3f}, 10,000 "
              f"{r['mask_10000_ms'][0]:.4f} / {r['mask_10000_ms'][1]:.3f}")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "bench"))
    main()
