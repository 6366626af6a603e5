"""What level 0's exact count is and is not, the bound that replaces it for valid answers, the
names the mask raises, and the fresh reading's smaller claims (the retry ratio, the budget's
«compacta», the table's times, the pictures' labels).

The figures are the build's (``sitebuild.figures.lesson_figures``, cached in ``.cache/``); each
claim is checked against a computation written here."""

import json
import math
import random

import numpy as np
import pytest

import build
from lesson import compile_choice, compile_json_schema, count_language
from lesson.course import NAMES, PROMPT, answer
from lesson.niveles.figures import N_PROMPT
from lesson.niveles.levels import SCHEMA, WHITESPACE, _ms, matches_schema, p_first_byte, retry_arithmetic
from lesson.niveles.pictures import depth_svg, retry_figure, retry_svg
from minigpt.gpt import softmax
from sitebuild.figures import lesson_figures


@pytest.fixture(scope="module")
def fig():
    pages = [p for p in build.PAGES if p.get("out") == "niveles.html"]
    return lesson_figures(pages, build.ROOT, cache=build.ROOT / ".cache")["niveles.html"]


# ---------------------------------------------------------------- level 0: what the count covers

def spaced(name: str) -> str:
    return json.dumps({"nombre": name}, ensure_ascii=False)  # {"nombre": "…"}, one space


def test_the_exact_count_covers_only_the_compact_texts(tok):
    """The cell's enumeration walks SCHEMA's grammar: the five compact texts and nothing else,
    while json.loads (and so the level's check) also accepts spaced texts."""
    texts = count_language(compile_json_schema(SCHEMA), tok.vocab).texts
    assert set(texts) == {answer(n).encode() for n in NAMES}
    for n in NAMES:
        assert matches_schema(spaced(n)) and spaced(n).encode() not in texts
        assert matches_schema("\n" + spaced(n) + " \n")


def test_every_valid_answer_starts_with_a_brace_after_whitespace():
    """The bound's premise: an answer that matches the schema, stripped of json.loads' whitespace,
    starts with «{»; and that whitespace is RFC 8259's four bytes."""
    rng = random.Random(0)
    for _ in range(200):
        ws = lambda: "".join(rng.choice(" \t\n\r") for _ in range(rng.randrange(3)))  # noqa: E731
        name = rng.choice(NAMES)
        text = f'{ws()}{{{ws()}"nombre"{ws()}:{ws()}"{name}"{ws()}}}{ws()}'
        assert matches_schema(text) and text.encode().lstrip(WHITESPACE).startswith(b"{")
    assert not matches_schema('\x0b{"nombre":"Benina"}')  # a vertical tab is not JSON whitespace
    assert set(WHITESPACE) == {ord(c) for c in " \t\n\r"}


def exhaustive_brace(model, tok, depth: int) -> tuple[float, float]:
    """P(ws-only tokens, at most ``depth`` of them, then a token that starts with «{» after its
    whitespace), summed over every such prefix, and the mass of the ws-only prefixes of length
    ``depth + 1`` (which the sum does not cover)."""
    m = model.astype(np.float64)
    blank = [t for t, b in enumerate(tok.vocab) if b and set(b) <= set(WHITESPACE)]
    brace = [t for t, b in enumerate(tok.vocab) if b.lstrip(WHITESPACE)[:1] == b"{"]
    layer, below = [((), 1.0)], 0.0
    for _ in range(depth + 1):
        nxt = []
        for seq, mass in layer:
            p = softmax(m.step(np.array([tok.encode(PROMPT) + list(seq)]), m.new_cache(1))[0, -1])
            below += mass * float(p[brace].sum())
            nxt += [(seq + (t,), mass * float(p[t])) for t in blank]
        layer = nxt
    return below, sum(mass for _, mass in layer)


def test_the_bound_is_above_an_exhaustive_walk_and_small(fig, model, tok):
    b = fig["valid_bound"]
    found, rest = exhaustive_brace(model, tok, depth=1)
    assert found <= b["bound"]  # the true probability is at least `found`; the bound is above it
    assert b["found"] <= found + rest + 1e-18  # what the best-first walk found is below the exhaustive upper bound
    assert b["bound"] >= p_first_byte(model, tok, PROMPT)  # «{» as first byte is one case of the event
    assert b["bound"] == pytest.approx(b["found"] + b["unexpanded"]) and b["unexpanded"] <= 0.05 * b["found"]
    # the prose: 200 answers expect far less than one valid answer, at least 1/bound tries per valid
    assert b["max_expected"] == pytest.approx(N_PROMPT * b["bound"]) and b["max_expected"] < 1e-3
    assert b["min_tries"] == pytest.approx(1 / b["bound"])
    assert fig["rows"][0]["matched"] == 0


def test_the_budget_fits_compact_answers_only(fig, tok):
    """«cualquier partición de cualquier respuesta válida compacta»: a spaced answer written byte by
    byte can pass the budget; and the answer that needs most tokens is the argmax."""
    fit = fig["fit"]
    assert fit["fewest"][fit["max_name"]] == fit["max"] == max(fit["fewest"].values())
    assert max(len(spaced(n).encode()) for n in NAMES) > fit["budget"]
    longest_bytes = max(NAMES, key=lambda n: len(answer(n).encode()))
    assert len(answer(longest_bytes).encode()) == fit["budget"]


# ---------------------------------------------------------------- level 3: the names

def test_the_mask_raises_the_model_s_least_likely_name(fig, model, tok):
    """The quiz: the inflated name is the argmax of masked / conditional; its conditional,
    recomputed from one enumeration per name, is the smallest; its level-3 count is far from
    n × conditional and within four standard deviations of n × masked."""
    from lesson import enumerate_paths
    exact, names = fig["exact"], fig["names_level3"]
    ps = {n: enumerate_paths(model, tok, PROMPT, compile_choice([answer(n)])).p_grammar for n in NAMES}
    total = sum(ps.values())
    for n in NAMES:
        assert exact["names"][n]["conditional"] == pytest.approx(ps[n] / total, rel=1e-6)
    ratio = {n: exact["names"][n]["masked"] / exact["names"][n]["conditional"] for n in NAMES}
    top = exact["inflated"]
    assert ratio[top] == max(ratio.values()) and top != exact["model_top"]
    assert exact["inflated_is_least"] == (ps[top] == min(ps.values()))
    assert exact["model_top"] == max(ps, key=ps.get)
    n = fig["rows"][3]["n"]
    count, cond, masked = names["counts"][top], exact["names"][top]["conditional"], exact["names"][top]["masked"]
    assert 0.5 <= n * cond < 2.5  # «saldría una o dos veces»
    assert abs(count - n * masked) <= 4 * math.sqrt(n * masked * (1 - masked))  # «sí explica»
    assert count - n * cond > 10 * math.sqrt(n * cond)  # not chance
    assert exact["model_top"] == names["top"]  # the prose's branch: the most frequent is the model's top
    masked = {m: exact["names"][m]["masked"] for m in NAMES}
    assert exact["masked_top"] == max(masked, key=masked.get)


# ---------------------------------------------------------------- level 1: the ratio grows

def test_the_ratio_grows_with_k_and_the_gap_does_not(fig):
    ps = [q["p"] for q in fig["retry"]["questions"]]
    rows = retry_arithmetic(ps, range(1, 201))
    ratios = [r["per_question"] / r["naive"] for r in rows]
    assert all(b >= a * (1 - 1e-12) for a, b in zip(ratios, ratios[1:]))
    gaps = [r["per_question"] - r["naive"] for r in rows]
    assert gaps[:5] == sorted(gaps[:5])  # on the cell's k = 1..5 the gap grows
    assert max(gaps) > gaps[-1] and min(ps) > 0 and gaps[-1] < gaps[4]  # then it falls
    rng = random.Random(1)
    for _ in range(50):  # power means: mean(x^k) of x with mean 1 never decreases in k
        qs = [rng.random() for _ in range(rng.randrange(2, 7))]
        r = [x["per_question"] / x["naive"] for x in retry_arithmetic(qs, range(1, 30))]
        assert all(b >= a * (1 - 1e-9) for a, b in zip(r, r[1:]))


# ---------------------------------------------------------------- the table and the pictures

@pytest.mark.parametrize("seconds", [0.001528, 0.035, 0.1234, 0.0099996, 0.00042, 2.5, 1.234])
def test_times_have_three_significant_figures(seconds):
    text = _ms(seconds).removesuffix(" ms")
    digits = text.replace(",", "").lstrip("0")
    if "," not in text:  # a whole number of milliseconds: its trailing zeros only place the comma
        digits = digits.rstrip("0")
    assert len(digits) == 3 if "," in text else len(digits) <= 3, text
    assert float(text.replace(",", ".")) == pytest.approx(seconds * 1000, rel=5e-3)


def test_the_retry_plot_names_its_vertical_axis():
    rows = [{"k": 1, "per_question": 0.8, "naive": 0.8}, {"k": 2, "per_question": 0.7, "naive": 0.6}]
    svg = retry_svg(rows, [0.2])
    assert 'data-axis="y"' in svg and "probabilidad de fallar" in svg
    assert "probabilidad de fallar k intentos seguidos" in retry_figure(rows, [0.2]).split("<figcaption>")[1]


def test_the_depth_plot_agrees_in_number():
    label = depth_svg({1: 99, 2: 1, 3: 0}).split('aria-label="')[1].split('"')[0]
    assert "profundidad 1: 99 respuestas" in label and "profundidad 3: 0 respuestas" in label
    assert "profundidad 2: 1 respuesta;" in label and "1 respuestas" not in label
