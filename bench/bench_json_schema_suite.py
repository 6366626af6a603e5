"""The masker and llguidance on the JSON-Schema-Test-Suite (draft 2020-12), with one harness.

Run: ``python bench/bench_json_schema_suite.py`` (needs ../shared/json-schema-test-suite and
llguidance, from requirements-bench.txt). For both engines, over the same groups and the same
texts (tests/masker/suite_support.py): each schema compiled with compact whitespace over the
256-byte vocabulary; an instance counts as accepted when the engine accepts one of its compact
serializations (keys in the masker's order, in the instance's order, or any other order, up to
``MAX_ORDERS``). Prints groups compiled, invalid instances accepted (must be 0), valid
instances accepted (of the compiled groups), refusals by keyword (ours), and the groups where
the two differ. Not a timing benchmark.

llguidance is given the schema as Lark ``%json`` with ``whitespace_flexible: false``
(tests/masker/oracle.py); its refusals are the grammars it reports as errors.
"""
from __future__ import annotations

import itertools
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "py"), str(ROOT), str(ROOT / "tests" / "masker")]

from llguidance import LLMatcher  # noqa: E402
from oracle import json_schema_lark, tokenizer  # noqa: E402
from suite_support import MAX_ORDERS, compact, orders, run_group, suite_groups  # noqa: E402
from test_maskbench_support import Serializer  # noqa: E402

BYTES = [bytes([i]) for i in range(256)]


def llguidance_group(group: dict) -> dict:
    """The same counts as ``suite_support.run_group``, for llguidance."""
    out = {"compiled": False, "valid": 0, "valid_accepted": 0, "invalid": 0, "invalid_accepted": 0}
    try:
        matcher = LLMatcher(tokenizer(BYTES), json_schema_lark(group["schema"]), log_level=0)
    except Exception:  # noqa: BLE001 - a schema it cannot read at all
        return out
    if matcher.is_error():
        return out
    out["compiled"] = True

    def accepts(text: str) -> bool:
        walk = matcher.deep_copy()  # a fresh copy each time: a failed walk leaves an error state
        return walk.consume_tokens(list(text.encode("utf-8"))) and walk.is_accepting()

    try:
        serializer = Serializer(group["schema"])
        first = lambda data: [serializer.dumps(data), compact(data)]  # noqa: E731
    except Exception:  # noqa: BLE001
        first = lambda data: [compact(data)]  # noqa: E731
    for case in group["tests"]:
        texts = itertools.chain(first(case["data"]),
                                map(compact, itertools.islice(orders(case["data"]), MAX_ORDERS)))
        hit = any(accepts(text) for text in texts)
        key = "valid" if case["valid"] else "invalid"
        out[key] += 1
        out[key + "_accepted"] += hit
    return out


def main() -> None:
    groups = suite_groups()
    if not groups:
        print("../shared/json-schema-test-suite/draft2020-12 not found")
        return
    ours = [run_group(*entry) for entry in groups]
    theirs = [llguidance_group(group) for _, _, group in groups]
    rows = []
    for name, results in (("masker", [
            {"compiled": r.refusal is None, "valid": r.valid, "valid_accepted": r.valid_accepted,
             "invalid": r.invalid, "invalid_accepted": len(r.invalid_accepted)} for r in ours]),
            ("llguidance", theirs)):
        compiled = [r for r in results if r["compiled"]]
        total = {k: sum(r[k] for r in compiled) for k in ("valid", "valid_accepted", "invalid",
                                                          "invalid_accepted")}
        rows.append((name, len(compiled), total))
    print(f"JSON-Schema-Test-Suite draft 2020-12: {len(groups)} groups, compact, 256-byte vocabulary")
    print("| engine | groups compiled | invalid instances accepted | valid instances accepted |")
    print("| --- | --- | --- | --- |")
    for name, n, t in rows:
        share = 100 * t["valid_accepted"] / max(1, t["valid"])
        print(f"| {name} | {n} | {t['invalid_accepted']} of {t['invalid']} | "
              f"{t['valid_accepted']} of {t['valid']} ({share:.1f} %) |")
    refusals = {}
    for r in ours:
        if r.refusal:
            refusals[r.refusal[1] or r.refusal[0]] = refusals.get(r.refusal[1] or r.refusal[0], 0) + 1
    print("masker refusals:", ", ".join(f"{k} {v}" for k, v in sorted(
        refusals.items(), key=lambda kv: -kv[1])))
    only_theirs = [r.name for r, t in zip(ours, theirs) if r.refusal and t["compiled"]]
    only_ours = [r.name for r, t in zip(ours, theirs) if not r.refusal and not t["compiled"]]
    print(f"compiled by llguidance only: {len(only_theirs)}; by the masker only: {len(only_ours)}")
    for name in only_ours:
        print("   masker only:", name)


if __name__ == "__main__":
    main()
