"""The Laboratorio's exact p(y | x, G) per branch, against the naive references: every token path of
a finite set of texts by plain recursion, every probability from a full forward pass, every allowed
set by brute force over the vocabulary (tests/lesson/reference.py, tests/lesson/finite.py)."""

from __future__ import annotations

import math
import re
from collections import defaultdict

import numpy as np
import pytest

from lesson.laboratorio.exact import MAX_PATHS, exact_for
from lesson.laboratorio.lab import Lab
from lesson.token_language import count_paths
from lesson.numbers import es_int, es_sci
from tests.lesson.finite import FiniteGrammar
from tests.lesson.reference import all_paths, logsumexp

TEXTS = ["aprobado", "rechazado", "revisión"]
PROMPT = "La solicitud de la señora quedó en estado: "


@pytest.fixture(scope="module")
def m64(model):
    return model.astype(np.float64)


def branch_rows(html: str) -> list[dict]:
    """Per lab-branch item: its text, data-exact, data-masked and the facts in words."""
    rows = []
    for m in re.finditer(r'<li class="lab-branch[^"]*"([^>]*)>(.*?)</li>', html, re.S):
        attrs = dict(re.findall(r'data-([a-z]+)="([^"]*)"', m.group(1)))
        rows.append({**attrs, "words": re.sub(r"<[^>]+>", "", m.group(2))})
    return rows


@pytest.mark.parametrize("temperature", [1.0, 1.3])
def test_each_valid_branch_shows_the_exact_conditional_and_its_texts_q(model, tok, m64, temperature):
    """Three branches (seeds of one experiment, and forks to the other texts): each one's
    p(g | x, G) and q̃(g | x) equal the sums over all its token paths by the naive references."""
    lab = Lab(model, tok, kind="choice", constraint="\n".join(TEXTS), prompt=PROMPT,
              temperature=temperature, seed=3)
    lab.generate()
    first = lab.decoder.generation
    for t, _, _ in [x for x in lab.branches[0].decoder.generation.positions[0].allowed if x[2] > 0][:3]:
        if t != first.token_ids[0]:
            lab.select(0)
            lab.choose(1, t)
    html = lab.view()

    oracle = FiniteGrammar(TEXTS, tok.vocab)
    log_p, log_q, paths = defaultdict(list), defaultdict(list), defaultdict(int)
    for text, _, lp, lq in all_paths(m64, tok.encode(PROMPT), oracle, temperature):
        log_p[text].append(lp)
        log_q[text].append(lq)
        paths[text] += 1
    per_text = {g: logsumexp(v) for g, v in log_p.items()}
    total = logsumexp(per_text.values())

    rows = [r for r in branch_rows(html) if r["state"] == "done"]
    assert len(rows) >= 2
    for row in rows:
        g = row["text"].encode()
        conditional = math.exp(per_text[g] - total)
        masked = sum(math.exp(x) for x in log_q[g])
        assert float(row["exact"]) == pytest.approx(conditional, rel=1e-6)
        assert float(row["masked"]) == pytest.approx(masked, rel=1e-6)
        assert f"({es_int(paths[g])} particiones)" in row["words"]
        shown = float(f"{masked / conditional:.3g}")
        verdict = ("la máscara lo infla" if shown > 1 else "la máscara lo desinfla" if shown < 1
                   else "la máscara lo deja casi igual")
        assert verdict in row["words"] and float(row["ratio"]) == shown


def test_the_exact_values_sum_to_one_over_the_texts(model, tok):
    lab = Lab(model, tok, kind="choice", constraint="\n".join(TEXTS), prompt=PROMPT)
    rows = exact_for(lab).enumeration.rows
    assert {r.text.decode() for r in rows} == set(TEXTS)
    assert sum(r.conditional for r in rows) == pytest.approx(1.0, abs=1e-12)
    assert sum(r.masked for r in rows) == pytest.approx(1.0, abs=1e-12)


def test_a_language_with_too_many_paths_says_how_many(model, tok):
    pattern = r"[0-9]{6}"
    lab = Lab(model, tok, kind="regex", constraint=pattern, prompt=PROMPT, max_tokens=10)
    lab.generate()
    html = lab.view()
    total = sum(count_paths(lab.grammar, tok.vocab, max_paths=10**12, max_positions=10**6).values())
    assert total > MAX_PATHS
    count = es_int(total) if total < 10**7 else f"unos {es_sci(float(total), 2)}"
    assert 'data-exact="no"' in html and f"G tiene {count} caminos de tokens" in html
    assert all("exact" not in r for r in branch_rows(html))


@pytest.mark.parametrize("kind, constraint, words", [
    ("regex", "a(b)*c", "G tiene infinitos textos"),
    ("gbnf", 'root ::= "(" root ")" | "x"', "quizá infinitos"),
])
def test_an_infinite_language_is_not_enumerated(model, tok, kind, constraint, words):
    lab = Lab(model, tok, kind=kind, constraint=constraint, prompt=PROMPT, max_tokens=12)
    lab.generate()
    html = lab.view()
    assert 'data-exact="no"' in html and words in html


def test_no_grammar_no_exact_line(model, tok):
    lab = Lab(model, tok, kind="none", prompt=PROMPT, max_tokens=3)
    lab.generate()
    assert exact_for(lab) is None and "lab-exact" not in lab.view()


def test_the_readme_and_the_docs_quote_the_limit_the_code_has():
    from pathlib import Path
    root = Path(__file__).resolve().parents[3]
    assert f"at most\n{MAX_PATHS:,} token paths".replace(",", " ") in (root / "README.md").read_text()
    assert f"`exact.MAX_PATHS` = {MAX_PATHS:,}".replace(",", " ") in (root / "docs/lesson.md").read_text()


def test_a_huge_count_is_written_with_a_power_of_ten(model, tok):
    lab = Lab(model, tok, kind="regex", constraint="[0-9]{12}", prompt=PROMPT, max_tokens=14)
    reason = exact_for(lab).reason
    assert "unos " in reason and "·10" in reason and "caminos de tokens" in reason


def test_a_budget_shorter_than_some_paths_is_said(model, tok):
    """etiquetas with at most 6 tokens: some of its 72 paths are longer, and the line says so."""
    lab = Lab(model, tok, kind="choice", constraint="\n".join(TEXTS), prompt=PROMPT, max_tokens=6)
    lab.generate()
    longest = exact_for(lab).enumeration.counts.longest_tokens
    assert longest > 6
    assert "Algunos caminos tienen más de 6 tokens" in lab.view()
    lab = Lab(model, tok, kind="choice", constraint="\n".join(TEXTS), prompt=PROMPT, max_tokens=longest)
    lab.generate()
    assert "Algunos caminos" not in lab.view()
