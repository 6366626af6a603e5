"""Allowed sets agree with llguidance (no forcing) on random token walks, for 24 regexes and
the 256-byte, hand-written and trained 512-token vocabularies."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from masker import compile_choice, compile_regex
from tests.masker.oracle import compare_walks, regex_lark
from tests.masker.strategies import REGEXES as RANDOM_REGEXES
from tests.masker.vocabs import MIXED_VOCAB, vocab_params

REGEXES = [
    r"a*",
    r"1|12|123",
    r"(señor|señora|señorita) [A-ZÁÉÍÓÚÑ][a-záéíóúñ]+",
    r"«[^»\n]{1,20}»",
    r"[a-zñ]+( — [a-zñ]+)?",
    r"😀+|🙂{2,3}",
    r"-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?",
    r'"([^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"',
    r"\w+@\w+\.(com|es)",
    r"\d{4}-\d{2}-\d{2}",
    r"(sí|no|quizá)",
    r"[^\x00-\x7f]{2,4}",
    r".{0,8}",
    r"\s*(true|false|null)\s*",
    r"(ab|a)(bc|c)?",
    r"(?:año|años) \d+",
    r"\x41\u00f1[\u2014\u00ab\u00bb]",
    r"[¡!]?[Hh]ola[.!]?",
    r"(\[\d+(,\d+)*\])?",
    r'\{"personaje":"(Benina|Almudena|Frasquito)"\}',
    r"[a-c]{2,5}(x|y)*?",
    r"(?:[€😀a-c]){2,5}",
    r"[^a-z\s]+",
    r"é|e\u0301",
]


@pytest.mark.parametrize("vocab", vocab_params())
@pytest.mark.parametrize("pattern", REGEXES)
def test_regex_masks_match_llguidance(pattern, vocab):
    report = compare_walks(compile_regex(pattern), regex_lark(pattern), vocab, n_walks=6, seed=7)
    assert report.mismatches == [], report.mismatches
    assert report.states >= 20


@pytest.mark.parametrize("pattern", [r"\d+", r"\w+"])
def test_unicode_classes_differ_by_design_and_agree_on_ascii(pattern):
    """Our \\d and \\w are ASCII; llguidance's default is Unicode (e.g. Arabic-Indic digits).
    With use_ascii the two agree; without it the oracle allows more lead bytes."""
    grammar = compile_regex(pattern)
    assert compare_walks(grammar, regex_lark(pattern, "dws"), MIXED_VOCAB).mismatches == []
    report = compare_walks(grammar, regex_lark(pattern, ""), MIXED_VOCAB, n_walks=1)
    only_oracle = report.mismatches[0][2]
    assert report.mismatches and only_oracle and min(only_oracle) >= 0x80


CHOICES = [
    ["Benina", "Almudena", "Frasquito", "Obdulia", "Juliana"],
    ["1", "12", "123"],
    ["sí", "no", "quizá", "¡sí!", "«no»", "—", "😀", "😀😀"],
    ["señor", "señora", "señorita", "se"],
]


@pytest.mark.parametrize("vocab", vocab_params())
@pytest.mark.parametrize("texts", CHOICES, ids=["names", "prefixes", "symbols", "shared"])
def test_choice_masks_match_llguidance(texts, vocab):
    import re
    pattern = "|".join(re.escape(t) for t in texts)
    report = compare_walks(compile_choice(texts), regex_lark(pattern), vocab, n_walks=6, seed=5)
    assert report.mismatches == [], report.mismatches
    assert report.states >= 20


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pattern=RANDOM_REGEXES, seed=st.integers(0, 2**16))
def test_random_regexes_match_llguidance(pattern, seed):
    report = compare_walks(compile_regex(pattern), regex_lark(pattern), MIXED_VOCAB, n_walks=3,
                           max_steps=12, seed=seed, min_states=5)
    assert report.mismatches == [], (pattern, report.mismatches)
