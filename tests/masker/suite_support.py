"""The JSON-Schema-Test-Suite (draft 2020-12) as a measure of the masker, shared by
tests/masker/test_json_schema_suite.py and bench/bench_json_schema_suite.py (no tests here).

The suite is read from ../shared/json-schema-test-suite/draft2020-12 (never copied into the
repository; its README says how it was taken). Each file is a list of groups ``{"description",
"schema", "tests": [{"description", "data", "valid"}]}``; ``optional/`` is left out.

The harness, for one group:
- the schema is compiled with ``compile_json_schema(schema, whitespace="compact")``; a refusal
  is recorded with its class and, for ``UnsupportedKeyword``, its keyword;
- an instance is *accepted* when the grammar accepts one of its compact serializations: the
  keys in the masker's order (as tests/masker/test_maskbench_support.py's ``Serializer`` finds
  it), in the instance's own order, and every other order of each object's keys (up to
  ``MAX_ORDERS`` serializations in all). An instance marked invalid must be accepted in none
  of them; one marked valid should be in one (a ``const`` object, say, is written in its own
  key order).
"""
from __future__ import annotations

import itertools
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from test_maskbench_support import Serializer

from masker import compile_json_schema
from masker.errors import LimitExceeded
from masker.json_schema import InvalidSchema, UnsupportedKeyword

SUITE = Path(__file__).resolve().parents[3] / "shared" / "json-schema-test-suite" / "draft2020-12"
MAX_ORDERS = 200


def suite_groups() -> list[tuple[str, int, dict]]:
    """``(file name, group index, group)`` for every group of the suite's top-level files,
    sorted by file name; empty when the folder is missing."""
    out = []
    for path in sorted(SUITE.glob("*.json")) if SUITE.is_dir() else ():
        for index, group in enumerate(json.loads(path.read_text(encoding="utf-8"))):
            out.append((path.name, index, group))
    return out


def orders(value):
    """Every value equal to ``value`` with its objects' keys in another order (lazily)."""
    if isinstance(value, dict):
        keys = list(value)
        for perm in itertools.permutations(keys):
            for inner in itertools.product(*(list(orders(value[k])) for k in perm)):
                yield dict(zip(perm, inner))
    elif isinstance(value, list):
        for inner in itertools.product(*(list(orders(v)) for v in value)):
            yield list(inner)
    else:
        yield value


def narrowed(value) -> bool:
    """Values the grammar may leave out on purpose: integral floats (and -0.0), and arrays
    holding arrays or objects where a difference cuts arrays (docs/json-schema.md)."""
    if isinstance(value, float):
        return value.is_integer()
    if isinstance(value, list):
        return any(map(narrowed, value)) or any(isinstance(v, (list, dict)) for v in value)
    if isinstance(value, dict):
        return any(map(narrowed, value.values()))
    return False


def compact(value) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@dataclass
class GroupResult:
    """One group: ``refusal`` is None when the schema compiled, else ``(class name, keyword or
    None, message)``; the counts are over the group's instances."""
    name: str
    refusal: tuple[str, str | None, str] | None = None
    valid: int = 0
    valid_accepted: int = 0
    invalid: int = 0
    invalid_accepted: list[str] = field(default_factory=list)
    valid_refused: list[str] = field(default_factory=list)


def run_group(file_name: str, index: int, group: dict) -> GroupResult:
    """Compile one group's schema and check each of its instances (see the module docstring)."""
    result = GroupResult(f"{file_name}#{index} {group['description']}")
    try:
        grammar = compile_json_schema(group["schema"], whitespace="compact")
    except UnsupportedKeyword as error:
        result.refusal = ("UnsupportedKeyword", error.keyword, str(error).splitlines()[0])
        return result
    except (InvalidSchema, LimitExceeded) as error:
        result.refusal = (type(error).__name__, None, str(error).splitlines()[0])
        return result
    serializer = Serializer(group["schema"])
    for case in group["tests"]:
        data = case["data"]
        first = [serializer.dumps(data), compact(data)]
        texts = itertools.chain(first, map(compact, itertools.islice(orders(data), MAX_ORDERS)))
        accepted = next((text for text in texts if grammar.accepts(text)), None)
        if case["valid"]:
            result.valid += 1
            if accepted is not None:
                result.valid_accepted += 1
            else:
                result.valid_refused.append(first[0])
        else:
            result.invalid += 1
            if accepted is not None:
                result.invalid_accepted.append(accepted)
    return result


@dataclass
class SuiteFigures:
    """The whole suite: groups, compiled groups, instances and what was accepted, refusals by
    keyword (``UnsupportedKeyword``) or by class (the others)."""
    results: list[GroupResult]

    @property
    def groups(self) -> int:
        return len(self.results)

    @property
    def compiled(self) -> list[GroupResult]:
        return [r for r in self.results if r.refusal is None]

    @property
    def valid(self) -> int:
        return sum(r.valid for r in self.compiled)

    @property
    def valid_accepted(self) -> int:
        return sum(r.valid_accepted for r in self.compiled)

    @property
    def invalid(self) -> int:
        return sum(r.invalid for r in self.compiled)

    @property
    def invalid_accepted(self) -> int:
        return sum(len(r.invalid_accepted) for r in self.compiled)

    def refusals(self) -> Counter:
        return Counter(r.refusal[1] or r.refusal[0] for r in self.results if r.refusal)


def measure() -> SuiteFigures:
    return SuiteFigures([run_group(*entry) for entry in suite_groups()])
