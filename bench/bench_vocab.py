"""Benchmark: the masker on a real tokenizer's vocabulary, side by side with llguidance.

Run: ``python bench/bench_vocab.py`` (``--vocab cl100k_base``; ``--stride N`` takes every N-th
schema of the MaskBench sample, default 10; ``--instances K`` valid instances per schema,
default 2). Needs ``make setup-dev`` (js-tiktoken's ranks in node_modules, llguidance 1.9.1).

Data: the shared MaskBench sample (``../shared/jsonschemabench/maskbench``), every ``--stride``-th
schema that both engines compile. Each valid instance is written compactly, in the masker's
property order, and tokenized with the vocabulary's canonical BPE (``vocabularies.BpeEncoder``).

Measured in one run, on the same tokens:

- **compile**: ``compile_json_schema`` against building an ``LLMatcher`` (llguidance compiles
  the schema when its matcher is made), one schema at a time;
- **matcher creation**: ``grammar.matcher(vocab)`` on a vocabulary whose trie is already built
  (``TokenTrie.shared``), against nothing for llguidance (its tokenizer is built once, as ours);
- **cold masks**: a fresh grammar per instance, so every automaton state's mask is computed the
  first time the walk meets it (later visits to the same state in the instance are cache hits,
  as in any decode loop; their share, and the computed masks alone, are printed apart);
  ``Matcher.mask()`` at every token against llguidance's ``compute_bitmask`` on a fresh matcher
  per instance (forcing off); p50, p99 and max;
- **time to first mask**: compile + matcher + first mask, against building an ``LLMatcher`` and
  its first ``compute_bitmask`` (what the MaskBench table calls TTFM);
- the masks' agreement: at every token, both engines' allowed sets, compared (while llguidance's
  matcher is not in error). Differences by design: JSON allows U+007F unescaped in a string and
  llguidance refuses it; the masker refuses escapes in a free object key (so that no key can
  spell a named property another way) and allows ``\/``; the count of disagreeing masks whose
  every differing token holds neither a backslash nor U+007F is printed apart.

The vocabulary's trie is built once before the timings (its time is printed apart).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "py"), str(ROOT), str(ROOT / "tests" / "masker")]

import numpy as np  # noqa: E402

from masker import compile_json_schema  # noqa: E402
from masker.errors import MaskerError  # noqa: E402
from masker.json_schema import UnsupportedKeyword  # noqa: E402
from masker.trie import TokenTrie  # noqa: E402
from sitebuild import vocabularies  # noqa: E402
from test_maskbench_support import Serializer, load, maskbench_files  # noqa: E402
from vocabularies import BpeEncoder  # noqa: E402


def _first_mask(matcher) -> float:
    """Seconds for the matcher's first mask (a fresh grammar: computed, not cached)."""
    t0 = time.perf_counter()
    matcher.mask()
    return time.perf_counter() - t0


def _share_of_slowest(worst, top: int = 100) -> list:
    """The schemas of the ``top`` slowest masks, with how many of them each has."""
    from collections import Counter
    return Counter(name for _, name, _ in sorted(worst)[-top:]).most_common(5)


def quantiles(xs):
    xs = sorted(xs)
    if not xs:
        return float("nan"), float("nan"), float("nan")
    return (statistics.median(xs), xs[min(len(xs) - 1, int(0.99 * len(xs)))], xs[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vocab", default="o200k_base", choices=vocabularies.NAMES)
    ap.add_argument("--stride", type=int, default=10)
    ap.add_argument("--instances", type=int, default=2)
    ap.add_argument("--json", help="also write the figures to this file (the lesson «Trampas» "
                    "quotes py/lesson/trampas/measured_vocab.json)")
    args = ap.parse_args(argv)

    import llguidance
    from llguidance import LLMatcher
    from oracle import json_schema_lark, tokenizer

    vocab = vocabularies.read(args.vocab)
    tokens = vocab.tokens
    encoder = BpeEncoder(vocab)
    t0 = time.perf_counter()
    TokenTrie.shared(tokens).arrays
    trie_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    lltok = tokenizer(tokens)
    lltok_s = time.perf_counter() - t0
    n = len(tokens)

    ours, theirs, compile_ours, compile_theirs, creation = [], [], [], [], []
    skipped = {"ours_refused": 0, "llg_refused": 0, "llg_rejects_token": 0, "ours_rejects": 0}
    disagree, other, masks_compared, schemas = 0, 0, 0, 0
    schemas_with_masks, instances, hits, first_ours, first_theirs = 0, 0, [], [], []
    del_only = 0
    skipped["no_serializer"] = 0
    worst = []
    files = maskbench_files()[::args.stride]
    for path in files:
        data = load(path)
        schema = data["schema"]
        try:
            t0 = time.perf_counter()
            compile_json_schema(schema)
            c_ours = time.perf_counter() - t0
        except (UnsupportedKeyword, MaskerError, RecursionError):
            skipped["ours_refused"] += 1
            continue
        lark = json_schema_lark(schema)
        t0 = time.perf_counter()
        probe = LLMatcher(lltok, lark, log_level=0)
        c_theirs = time.perf_counter() - t0
        if probe.is_error():
            skipped["llg_refused"] += 1
            continue
        schemas += 1
        compile_ours.append(c_ours)
        compile_theirs.append(c_theirs)
        try:
            ser = Serializer(schema)
        except Exception:
            skipped["no_serializer"] += 1
            continue
        valid = [c["data"] for c in data["tests"] if c["valid"]][:args.instances]
        schemas_with_masks += bool(valid)
        for instance in valid:
            instances += 1
            text = ser.dumps(instance)
            ids = encoder.encode(text)
            t_start = time.perf_counter()
            grammar = compile_json_schema(schema)
            t0 = time.perf_counter()
            matcher = grammar.matcher(tokens)
            creation.append(time.perf_counter() - t0)
            first_ours.append(time.perf_counter() - t_start + _first_mask(matcher))
            t0 = time.perf_counter()
            llm = LLMatcher(lltok, lark, log_level=0)
            llm.compute_bitmask()
            first_theirs.append(time.perf_counter() - t0)
            grammar._indexes.clear()  # the walk below starts afresh on both sides
            matcher = grammar.matcher(tokens)
            llm = LLMatcher(lltok, lark, log_level=0)
            ok = True
            for tid in ids + [None]:
                key = grammar.automaton.mask_key(matcher.state, matcher._index.longest)
                hit = key is not None and key in matcher._index.masks
                t0 = time.perf_counter()
                mask = matcher.mask()
                dt = time.perf_counter() - t0
                t0 = time.perf_counter()
                bits = llm.compute_bitmask()
                dl = time.perf_counter() - t0
                ours.append(dt)
                theirs.append(dl)
                hits.append(hit)
                worst.append((dt, Path(path).name, len(matcher.prefix_bytes)))
                llg_mask = np.unpackbits(np.frombuffer(bits, dtype=np.uint8),
                                         bitorder="little")[:n].astype(bool)
                if not llm.is_error():
                    masks_compared += 1
                    diff = np.flatnonzero(llg_mask != mask)
                    if diff.size:
                        disagree += 1
                        # by design: U+007F unescaped (JSON allows it; llguidance does not),
                        # escapes (\/ in strings, any escape in a free key: refused here)
                        # and numbers spelt -0 or with trailing zeros in the fraction (valid
                        # JSON numbers of the same value; llguidance refuses those spellings)
                        other += not all(b"\x7f" in tokens[i] or b"\\" in tokens[i]
                                         or not tokens[i].strip(b"0123456789-.")
                                         for i in diff.tolist())
                        del_only += all(b"\x7f" in tokens[i] for i in diff.tolist())
                if tid is None:
                    break
                if not mask[tid]:
                    skipped["ours_rejects"] += 1
                    ok = False
                    break
                matcher.consume(tid)
                if not llm.consume_token(tid):
                    skipped["llg_rejects_token"] += 1
                    break
            del ok

    us = lambda xs: [1e6 * x for x in xs]  # noqa: E731
    o50, o99, omax = quantiles(us(ours))
    l50, l99, lmax = quantiles(us(theirs))
    import os
    import platform
    figures = {
        "measured": time.strftime("%Y-%m-%d"), "python": platform.python_version(),
        "cpus": os.cpu_count(), "command": "python bench/bench_vocab.py " + " ".join(
            sys.argv[1:] if argv is None else argv),
        "vocab": args.vocab, "n_tokens": n, "llguidance": llguidance.__version__,
        "stride": args.stride, "instances_per_schema": args.instances,
        "schemas": schemas, "files": len(files), "masks": len(ours),
        "masks_compared": masks_compared, "masks_disagreeing": disagree,
        "masks_disagreeing_otherwise": other, "masks_disagreeing_on_del_only": del_only,
        "skipped": skipped,
        "trie_build_s": trie_s, "llg_tokenizer_s": lltok_s,
        "trie_nodes": TokenTrie.shared(tokens).n_nodes,
        "trie_arrays_bytes": TokenTrie.shared(tokens).arrays.nbytes,
        "mask_us": {"ours": [o50, o99, omax], "llguidance": [l50, l99, lmax]},
        "ratio": {"p50": o50 / l50, "p99": o99 / l99, "max": omax / lmax},
        "compile_ms": {"ours": [1e3 * q for q in quantiles(compile_ours)[:2]],
                       "llguidance": [1e3 * q for q in quantiles(compile_theirs)[:2]]},
        "maskbench_files": len(maskbench_files()),
        "files_taken": len(files), "schemas_with_masks": schemas_with_masks,
        "instances": instances, "cache_hits": sum(hits),
        "mask_us_computed": {"ours": list(quantiles(
            [1e6 * t for t, h in zip(ours, hits) if not h])), },
        "first_mask_ms": {"ours": [1e3 * q for q in quantiles(first_ours)[:2]],
                          "llguidance": [1e3 * q for q in quantiles(first_theirs)[:2]]},
        "slowest_schema_share": _share_of_slowest(worst),
        "matcher_creation_ms": [1e3 * q for q in quantiles(creation)],
        "slowest": [(round(1e3 * d, 2), f, at) for d, f, at in sorted(worst)[-5:]],
    }
    print(f"== {args.vocab} ({n:,} tokens) against llguidance {llguidance.__version__}: "
          f"{schemas} schemas (every {args.stride}th of {len(maskbench_files())}), "
          f"{len(ours)} masks ==")
    print(f"trie: {figures['trie_nodes']:,} nodes, built in {trie_s:.2f} s, its arrays "
          f"{figures['trie_arrays_bytes'] / 2**20:.1f} MiB; llguidance's tokenizer {lltok_s:.2f} s")
    print("%-12s %10s %10s %10s" % ("mask, µs", "p50", "p99", "max"))
    print("%-12s %10.1f %10.1f %10.1f" % ("ours", o50, o99, omax))
    print("%-12s %10.1f %10.1f %10.1f" % ("llguidance", l50, l99, lmax))
    print("%-12s %9.2fx %9.2fx %9.2fx" % ("ratio", o50 / l50, o99 / l99, omax / lmax))
    print("compile ms p50/p99: ours %.2f / %.2f, llguidance %.2f / %.2f" % (
        *figures["compile_ms"]["ours"], *figures["compile_ms"]["llguidance"]))
    print("matcher creation ms p50/p99/max: %.3f / %.3f / %.3f" % tuple(
        figures["matcher_creation_ms"]))
    print("time to first mask ms p50/p99 (compile + matcher + first mask): ours %.2f / %.2f, "
          "llguidance %.2f / %.2f" % (*figures["first_mask_ms"]["ours"],
                                      *figures["first_mask_ms"]["llguidance"]))
    print(f"{instances} instances of {schemas_with_masks} schemas (of {schemas} compiled by both; "
          f"{len(files)} files taken); our cache hits: {sum(hits)} of {len(hits)} masks; "
          "ours computed only, µs p50/p99/max: %.1f / %.1f / %.1f" % tuple(
              figures["mask_us_computed"]["ours"]))
    print("schemas of the 100 slowest masks:", figures["slowest_schema_share"])
    print(f"masks compared {masks_compared}, disagreeing {disagree}, of which {other} on "
          f"tokens without the form of the differences by design; skipped {skipped}")
    print("slowest masks (ms, schema, prefix bytes):", figures["slowest"])
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
