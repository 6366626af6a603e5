"""Benchmark: JSON Schema / regex / CFG masks vs brute force and lm-format-enforcer.

Run: ``python bench/bench_masker.py`` (``--quick`` for a 120-file MaskBench subset,
``--files N`` for N files taken at a regular stride, ``--no-twins`` to skip brute force and
lm-format-enforcer on MaskBench, ``--coverage`` for MaskBench's coverage, soundness,
completeness and compile times alone). Prints, measured side by side in one run over the
same texts and the same vocabulary (the trained 512-token one, else the 256 bytes):

1. lesson grammars (JSON Schema (b), a small regex, a small CFG): compile time (median of
   20 fresh compiles); per-token mask time walking valid texts token by token, cold
   (fresh grammar, every state new) and warm (second walk, masks cached per state),
   median and p99; the brute-force mask (every token run through the automaton) at the
   same prefixes; lm-format-enforcer's `get_allowed_tokens` at the same prefixes (fresh
   enforcer per text); and the ratios.
2. MaskBench sample (../shared/jsonschemabench/maskbench): coverage (compiled, refused by
   keyword, other errors), soundness (invalid instances accepted, must be 0), completeness
   (valid instances accepted token by token, serialized compactly with the masker's
   property order), compile time, and per-token mask time (cold) with brute force and
   lm-format-enforcer on the same prefixes.

3. Recursive schemas against llguidance (``--recursive`` for this section alone): the Lab's
   recursive tree (preset «arbol») and any JSON value (a recursive ``anyOf``), beside the flat
   lesson schema (b); the 256 bytes and the trained vocabulary. Per token, ``Matcher.mask()``
   cold (a fresh grammar per text: each state's mask is computed when first met) and warm
   (the same texts again, masks cached), the same grammar compiled without lexemes
   (``lexemes=False``: every part lowered to Earley productions, as before issue 27), and
   llguidance's ``compute_bitmask`` (a fresh matcher per text, forcing off) at the same
   prefixes; medians, means and the ratios to llguidance.

lm-format-enforcer works on characters: it gets the tokens that decode as UTF-8 on their
own (partial-UTF-8 tokens are left out of its vocabulary), and its EOS id is len(vocab).
"""
from __future__ import annotations

import argparse
import collections
import logging
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "py"), str(ROOT), str(ROOT / "tests" / "masker")]

from masker import compile_cfg, compile_json_schema, compile_regex  # noqa: E402
from masker.errors import MaskerError  # noqa: E402
from masker.json_schema import UnsupportedKeyword  # noqa: E402
from masker.trie import TokenTrie, trie_mask  # noqa: E402
from test_maskbench_support import Serializer, load, maskbench_files  # noqa: E402

LESSON_B = {"type": "object",
            "properties": {"personaje": {"enum": ["Benina", "Almudena", "Frasquito",
                                                  "Obdulia", "Juliana"]}},
            "required": ["personaje"], "additionalProperties": False}
NAMES = ["Benina", "Almudena", "Frasquito", "Obdulia", "Juliana"]
SMALL_REGEX = r"(doña|don) [A-ZÁÉÍÓÚ][a-záéíóúñ]{2,12}, de [0-9]{2} años"
SMALL_CFG = r"""
root ::= list
list ::= "[" ( item ( ", " item )* )? "]"
item ::= list | [0-9]+ | "\"" [a-zñ ]+ "\""
"""
LESSON = [
    ("json_schema(b)", lambda: compile_json_schema(LESSON_B),
     ['{"personaje":"%s"}' % n for n in NAMES], ("json", LESSON_B)),
    ("regex(small)", lambda: compile_regex(SMALL_REGEX),
     ["doña Benina, de 60 años", "don Frasquito, de 55 años", "doña Obdulia, de 23 años"],
     ("regex", SMALL_REGEX)),
    ("cfg(small)", lambda: compile_cfg(SMALL_CFG),
     ['[1, [2, 3], "año"]', '[[[]], "señor", 42]', "[]"], None),
]


def recursive_cases(n_texts: int = 8):
    """(name, schema, texts): the Lab's tree, any JSON value, and the flat lesson schema (b);
    the texts are random valid instances (fixed seed), written compactly."""
    import json
    import random
    from lesson.laboratorio.lab import PRESETS
    from test_json_schema_recursion import ANY_JSON
    rng = random.Random(0)
    words = NAMES + ["Paca", "Juan", "Rosa", "Eva", "señá Ro", "Ñ"]

    def node(depth):
        out = {"nombre": rng.choice(words)}
        if depth < 3 and rng.random() < 0.7:
            out["hijos"] = [node(depth + 1) for _ in range(rng.randint(0, 2))]
        return out

    def value(depth):
        kind = rng.choice("sntlao" if depth < 3 else "sntl")
        if kind == "s":
            return rng.choice(words)
        if kind == "n":
            return rng.choice([0, 7, -12, 3.25, 1e-3, 60])
        if kind in "tl":
            return rng.choice([True, False, None])
        if kind == "a":
            return [value(depth + 1) for _ in range(rng.randint(0, 3))]
        return {rng.choice(words): value(depth + 1) for _ in range(rng.randint(0, 3))}

    def dumps(v):
        return json.dumps(v, ensure_ascii=False, separators=(",", ":"))

    yield ("tree (Lab «arbol»)", json.loads(PRESETS["arbol"]["constraint"]),
           [dumps(node(0)) for _ in range(n_texts)])
    yield "any JSON value", ANY_JSON, [dumps({"a": value(0), "b": value(0)})
                                       for _ in range(n_texts)]
    yield "json_schema(b), flat", LESSON_B, ['{"personaje":"%s"}' % n for n in NAMES]


def recursive_section(vocabs):
    """Section 3 (see the module's docstring)."""
    from oracle import Oracle, json_schema_lark
    print("\n== recursive schemas vs llguidance (µs per token; cold = fresh grammar per text) ==")
    print("%-22s %-10s %6s | %9s %9s | %9s %9s | %9s %9s | %8s %8s | %7s %7s" % (
        "schema", "vocab", "tokens", "cold med", "cold mean", "nolex med", "nolex mean",
        "llg med", "llg mean", "warm med", "warm p99", "med/llg", "mean/llg"))
    for vname, vocab in vocabs:
        by_bytes, longest = {t: i for i, t in enumerate(vocab)}, max(map(len, vocab))
        for name, schema, texts in recursive_cases():
            lark = json_schema_lark(schema)
            all_ids = [split_longest(t.encode(), vocab, by_bytes, longest) for t in texts]
            tm = Timings()
            for ids in all_ids:
                for key, grammar in (("cold", compile_json_schema(schema)),
                                     ("nolex", compile_json_schema(schema, lexemes=False))):
                    assert walk_text(grammar, vocab, ids, tm, key + "_", brute=False)
                    if key == "cold":
                        walk_text(grammar, vocab, ids, tm, "warm_", brute=False)
                oracle = Oracle(lark, vocab)
                for tid in ids:
                    _, dt = timed(oracle.matcher.compute_bitmask)
                    tm.add("llg", dt)
                    oracle.consume(tid)
            us = {k: [1000 * t for t in v] for k, v in tm.t.items()}
            med = {k: statistics.median(v) for k, v in us.items()}
            mean = {k: statistics.fmean(v) for k, v in us.items()}
            print("%-22s %-10s %6d | %9.1f %9.1f | %9.1f %9.1f | %9.1f %9.1f | %8.2f %8.2f | "
                  "%6.1fx %6.1fx" % (
                      name, vname, len(us["llg"]), med["cold_mask"], mean["cold_mask"],
                      med["nolex_mask"], mean["nolex_mask"], med["llg"], mean["llg"],
                      med["warm_mask"], 1000 * tm.p99("warm_mask"),
                      med["cold_mask"] / med["llg"], mean["cold_mask"] / mean["llg"]))


def vocabulary():
    try:
        from minigpt.bpe import load_tokenizer
        return "trained512", list(load_tokenizer().vocab)
    except (ImportError, OSError):
        return "bytes256", [bytes([i]) for i in range(256)]


def split_longest(data, vocab, by_bytes, longest):
    ids, i = [], 0
    while i < len(data):
        n = next(n for n in range(min(longest, len(data) - i), 0, -1) if data[i:i + n] in by_bytes)
        ids.append(by_bytes[data[i:i + n]])
        i += n
    return ids


class LMFE:
    """lm-format-enforcer over the same vocabulary (tokens that decode on their own)."""

    def __init__(self, vocab):
        from lmformatenforcer.tokenenforcer import TokenEnforcerTokenizerData
        tokens = []
        for i, tok in enumerate(vocab):
            try:
                tokens.append((i, tok.decode("utf-8"), False))
            except UnicodeDecodeError:
                pass
        self.vocab = vocab
        self.data = TokenEnforcerTokenizerData(tokens, self.decode, len(vocab), False,
                                               len(vocab) + 1)

    def decode(self, ids):
        return b"".join(self.vocab[i] for i in ids if i < len(self.vocab)).decode("utf-8", "replace")

    def enforcer(self, kind, source):
        from lmformatenforcer import JsonSchemaParser, RegexParser, TokenEnforcer
        parser = JsonSchemaParser(source) if kind == "json" else RegexParser(source)
        return TokenEnforcer(self.data, parser)


class Timings:
    def __init__(self):
        self.t = collections.defaultdict(list)

    def add(self, key, seconds):
        self.t[key].append(seconds * 1000.0)

    def med(self, key):
        return statistics.median(self.t[key]) if self.t[key] else float("nan")

    def p99(self, key):
        xs = sorted(self.t[key])
        return xs[min(len(xs) - 1, int(0.99 * len(xs)))] if xs else float("nan")


def timed(fn, *args):
    t0 = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - t0


def walk_text(grammar, vocab, ids, tm, prefix, trie=None, brute=True, lmfe=None):
    """Walk one tokenized text: time mask() (and the twins) at every prefix: `mask`
    (the decode loop's call, cached per automaton state), `trie` (the same trie walk without
    the cache), `brute`, `lmfe`. Returns True when every token was allowed and the end is
    accepting."""
    m = grammar.matcher(vocab)
    for k, tid in enumerate(ids + [None]):
        mask, dt = timed(m.mask)
        tm.add(prefix + "mask", dt)
        if trie is not None:
            _, dt = timed(trie_mask, grammar.automaton, m.state, trie)
            tm.add(prefix + "trie", dt)
        if brute:
            _, dt = timed(m.brute_force_mask)
            tm.add(prefix + "brute", dt)
        if lmfe is not None:
            try:
                _, dt = timed(lmfe.get_allowed_tokens, ids[:k])
                tm.add(prefix + "lmfe", dt)
            except Exception:  # lm-format-enforcer gave up on this prefix
                lmfe = None
        if tid is None:
            return m.is_accepting()
        if not mask[tid]:
            return False
        m.consume(tid)


def lesson_section(vocab, lmfe_tok):
    by_bytes = {t: i for i, t in enumerate(vocab)}
    longest = max(map(len, vocab))
    print("\n== lesson grammars ==")
    print("ms per token; trie = uncached trie walk, warm = mask() in the decode loop after one "
          "warm-up walk (masks cached per automaton state)")
    print("%-15s %8s %8s %8s %8s %8s %8s %8s %9s %8s %8s" % (
        "grammar", "compile", "trie med", "trie p99", "warm med", "warm p99", "brute", "lmfe",
        "brute/tr", "lmfe/tr", "lmfe/w"))
    trie = TokenTrie(vocab)
    for name, make, texts, lmfe_src in LESSON:
        compile_times = [timed(make)[1] * 1000 for _ in range(20)]
        grammar, tm = make(), Timings()
        all_ids = [split_longest(t.encode(), vocab, by_bytes, longest) for t in texts]
        for ids in all_ids:
            enf = lmfe_tok.enforcer(*lmfe_src) if lmfe_tok and lmfe_src else None
            assert walk_text(make(), vocab, ids, tm, "cold_", trie=trie, lmfe=enf)
        for ids in all_ids:
            walk_text(grammar, vocab, ids, tm, "warmup_", brute=False)
        for _ in range(3):
            for ids in all_ids:
                walk_text(grammar, vocab, ids, tm, "warm_", brute=False)
        tr, warm = tm.med("cold_trie"), tm.med("warm_mask")
        print("%-15s %8.3f %8.4f %8.4f %8.4f %8.4f %8.3f %8.3f %8.0fx %7.1fx %7.0fx" % (
            name, statistics.median(compile_times), tr, tm.p99("cold_trie"), warm,
            tm.p99("warm_mask"), tm.med("cold_brute"), tm.med("cold_lmfe"),
            tm.med("cold_brute") / tr, tm.med("cold_lmfe") / tr, tm.med("cold_lmfe") / warm))


def maskbench_section(vocab, lmfe_tok, files, brute_every, coverage_only=False):
    by_bytes = {t: i for i, t in enumerate(vocab)}
    longest = max(map(len, vocab))
    refused, other = collections.Counter(), collections.Counter()
    tm, compile_ms, counts = Timings(), [], collections.Counter()
    unsound, trie = [], TokenTrie(vocab)
    for n, path in enumerate(files):
        data = load(path)
        try:
            grammar, dt = timed(compile_json_schema, data["schema"])
        except UnsupportedKeyword as exc:
            refused[exc.keyword] += 1
            continue
        except (MaskerError, RecursionError) as exc:
            other[type(exc).__name__] += 1
            continue
        compile_ms.append(dt * 1000)
        counts["compiled"] += 1
        ser = Serializer(data["schema"])
        for case in data["tests"]:
            text = ser.dumps(case["data"])
            if not case["valid"]:
                counts["invalid"] += 1
                if grammar.accepts(text):
                    unsound.append((Path(path).name, text[:120]))
                continue
            counts["valid"] += 1
            if coverage_only:  # the texts only, no mask timings
                counts["valid_accepted"] += grammar.accepts(text)
                continue
            ids = split_longest(text.encode(), vocab, by_bytes, longest)
            enf = None
            if lmfe_tok is not None:
                try:
                    enf = lmfe_tok.enforcer("json", data["schema"])
                except Exception:
                    counts["lmfe_refused"] += 1
            ok = walk_text(grammar, vocab, ids, tm, "", trie=trie, brute=n % brute_every == 0,
                           lmfe=enf)
            counts["valid_accepted"] += ok
    total = len(files)
    print("\n== MaskBench sample: %d schemas ==" % total)
    print("compiled %d (%.1f%%), refused %d, other errors %d" % (
        counts["compiled"], 100 * counts["compiled"] / max(1, total), sum(refused.values()),
        sum(other.values())))
    print("refused by keyword:", ", ".join("%s %d" % kv for kv in refused.most_common()))
    if other:
        print("other errors:", dict(other))
    print("soundness: invalid instances accepted %d of %d" % (len(unsound), counts["invalid"]))
    for name, text in unsound[:10]:
        print("   UNSOUND", name, text)
    print("completeness: valid instances accepted %s %d of %d (%.1f%%)" % (
        "whole" if coverage_only else "token by token", counts["valid_accepted"], counts["valid"],
        100 * counts["valid_accepted"] / max(1, counts["valid"])))
    cm = sorted(compile_ms)
    print("compile ms: median %.2f, p90 %.2f, p99 %.1f, max %.1f" % (
        statistics.median(cm), cm[int(0.9 * (len(cm) - 1))], cm[int(0.99 * (len(cm) - 1))],
        cm[-1]))
    if coverage_only:
        return
    print("mask() ms per token in the decode loop (fresh grammar per schema, cache shared by "
          "its instances): median %.4f, p99 %.3f over %d masks" % (
              tm.med("mask"), tm.p99("mask"), len(tm.t["mask"])))
    print("uncached trie walk ms per token: median %.4f, p99 %.3f" % (
        tm.med("trie"), tm.p99("trie")))
    if tm.t["brute"]:
        print("brute force ms per token: median %.3f (%d masks) -> %.0fx the uncached trie "
              "walk, %.0fx mask()" % (tm.med("brute"), len(tm.t["brute"]),
                                     tm.med("brute") / tm.med("trie"),
                                     tm.med("brute") / tm.med("mask")))
    if lmfe_tok is not None:
        print("lm-format-enforcer ms per token: median %.3f, p99 %.3f (%d calls, %d schemas "
              "refused by it) -> %.1fx our decode-loop mask(), %.1fx our uncached trie walk" % (
                  tm.med("lmfe"), tm.p99("lmfe"), len(tm.t["lmfe"]), counts["lmfe_refused"],
                  tm.med("lmfe") / tm.med("mask"), tm.med("lmfe") / tm.med("trie")))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="120 MaskBench files")
    ap.add_argument("--files", type=int, default=None)
    ap.add_argument("--no-twins", action="store_true",
                    help="MaskBench without brute force and lm-format-enforcer (coverage, "
                         "soundness, completeness and our own timings only)")
    ap.add_argument("--recursive", action="store_true",
                    help="only the recursive schemas against llguidance (section 3)")
    ap.add_argument("--coverage", action="store_true",
                    help="MaskBench coverage, soundness, completeness (texts accepted whole, not "
                         "token by token) and compile times only; no lesson section")
    args = ap.parse_args()
    logging.disable(logging.CRITICAL)  # lm-format-enforcer logs every prefix it gives up on
    vname, vocab = vocabulary()
    try:
        lmfe_tok = LMFE(vocab)
    except ImportError:
        lmfe_tok = None
        print("lm-format-enforcer not installed (pip install -r requirements-bench.txt)")
    print("vocabulary: %s (%d tokens), CPython %s" % (vname, len(vocab), sys.version.split()[0]))
    if args.recursive or not args.coverage:
        vocabs = [("bytes256", [bytes([i]) for i in range(256)])]
        recursive_section(vocabs + ([(vname, vocab)] if vname != "bytes256" else []))
        if args.recursive:
            return
    if not args.coverage:
        lesson_section(vocab, lmfe_tok)
    files = maskbench_files()
    if args.quick or args.files:
        step = max(1, len(files) // (args.files or 120))
        files = files[::step][:args.files or 120]
    if files:
        maskbench_section(vocab, None if args.no_twins or args.coverage else lmfe_tok, files,
                          brute_every=10**9 if args.no_twins or args.coverage else 5,
                          coverage_only=args.coverage)
    else:
        print("MaskBench sample not found at ../shared/jsonschemabench/maskbench")


if __name__ == "__main__":
    main()
