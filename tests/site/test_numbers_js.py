"""The page's number writer (browser/js/numbers.js, run by Node) against the Python one
(lesson/numbers.py), digit for digit, in both languages: integers, the numbers a reader types or a
link holds, and probabilities, on fixed cases and on hypothesis draws."""
from __future__ import annotations

import json
import math
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lesson.numbers import en_int, en_number, en_prob, es_int, es_number, es_prob

ROOT = Path(__file__).resolve().parents[2]
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="Node is needed to run the page's module")


def in_js(cases: list[tuple[str, float, str]]) -> list[str]:
    """``[(function, value, language)]`` through numbers.js, in one Node process (values as JSON,
    with NaN and ±inf spelt out)."""
    payload = json.dumps([[f, None if not math.isfinite(x) else x, repr(x), lang] for f, x, lang in cases])
    script = f"""
import {{ formatInt, formatNumber, formatProb }} from {json.dumps((ROOT / "browser/js/numbers.js").as_uri())};
const fns = {{ int: formatInt, number: formatNumber, prob: formatProb }};
const special = {{ nan: NaN, inf: Infinity, "-inf": -Infinity }};
const out = {payload}.map(([f, x, text, lang]) => fns[f](x === null ? special[text] : x, lang));
process.stdout.write(JSON.stringify(out));
"""
    done = subprocess.run([NODE, "--input-type=module", "-e", script], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


PY = {("int", "es"): es_int, ("int", "en"): en_int, ("number", "es"): es_number,
      ("number", "en"): en_number, ("prob", "es"): es_prob, ("prob", "en"): en_prob}


def check(cases):
    expected = [PY[f, lang](int(x) if f == "int" else x) for f, x, lang in cases]
    assert in_js(cases) == expected


FIXED = ([("int", n, lang) for n in (0, 7, -3, 1234, 12345, -987654321, 10 ** 15) for lang in ("es", "en")]
         + [("number", x, lang) for x in (2.5, -1.0, 0.1, 1e30, 1.5e-7, 20000.0, 123456.789, 1e-4, 9.5e15,
                                          float("inf"), float("-inf"), float("nan"), 3.0e16)
            for lang in ("es", "en")]
         + [("prob", p, lang) for p in (0.0, 0.336, 0.9996, 0.0099996, 2.26e-8, 0.01, 1.0) for lang in ("es", "en")])


def test_fixed_cases_agree():
    check(FIXED)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["number", "prob"]),
                          st.floats(min_value=1e-300, max_value=1e20, allow_nan=False),
                          st.sampled_from(["es", "en"])), min_size=1, max_size=40),
       st.lists(st.integers(-10 ** 15, 10 ** 15), max_size=20))
def test_random_numbers_agree(floats, ints):
    cases = [(f, x if f == "number" else min(x, 1.0), lang) for f, x, lang in floats]
    cases += [("int", n, lang) for n in ints for lang in ("es", "en")]
    check(cases)
