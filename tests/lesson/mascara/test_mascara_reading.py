"""«La máscara», the fresh reading's faults: each corrected claim against the figure it now comes
from, and each figure against an independent computation (a forward pass by hand, the exact
enumeration at each temperature, plain arithmetic on the exact table)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import build
from lesson.course import NAMES, PROMPT, PROTAGONIST, answer
from lesson.enumeration import enumerate_paths
from lesson.mascara.figures import SWEEP_TEMPERATURES, WALK_SEED
from lesson.numbers import es_sci
from lesson.sampling import generate
from lesson.views import PositionsView
from masker import compile_choice
from minigpt.gpt import softmax
from sitebuild.figures import lesson_figures

PAGE = next(spec for spec in build.PAGES if spec["out"] == "mascara.html")
GRAMMAR_TEXTS = [answer(n) for n in NAMES]


@pytest.fixture(scope="module")
def fig():
    return lesson_figures([PAGE], build.ROOT, cache=build.ROOT / ".cache")["mascara.html"]


# ------------------------------------------------ section 2: «toda la probabilidad, 1»

def test_the_mask_hands_out_all_the_probability_in_the_models_proportions(fig):
    allowed = fig["walk"]["allowed"]
    assert sum(a["q"] for a in allowed) == pytest.approx(1, abs=1e-12)
    kept = sum(a["p"] for a in allowed)
    assert kept == pytest.approx(fig["walk"]["kept_mass"], rel=1e-9) and kept < 0.5
    for a in allowed:
        assert a["q"] == pytest.approx(a["p"] / kept, rel=1e-9)


# ------------------------------------------------ section 5: the tokens after the J

def test_the_most_likely_token_after_the_initial_is_not_the_names(fig, model, tok):
    """«Tras la J, el token más probable es os (0,381), no u; detrás de u vienen …»: the argmax
    of one forward pass after the initial, and the order of the others around the name's token."""
    inflated = fig["inflated"]
    gen = generate(model, tok, PROMPT, compile_choice(GRAMMAR_TEXTS), seed=WALK_SEED)
    first = next(j for j, pos in enumerate(gen.positions) if not pos.is_forced)
    ids = tok.encode(PROMPT) + gen.token_ids[:first] + [tok.vocab.index(inflated["initial"].encode())]
    p = softmax(model.astype(np.float64).forward(np.array([ids]))[0, -1])
    name_token = tok.vocab.index(fig["why"]["small"]["tokens"][0].encode())
    assert inflated["p_name"] == pytest.approx(p[name_token], rel=1e-9)
    best = int(np.argmax(p))
    assert best != name_token  # so the page says «no u»
    assert inflated["above"] and inflated["above"][0]["label"] == tok.vocab[best].decode()
    for w in inflated["above"]:
        assert w["p"] > p[name_token]
    for w in inflated["below"]:
        assert w["p"] <= p[name_token]
    shown = {w["label"] for w in inflated["above"] + inflated["below"]}
    assert tok.vocab[name_token].decode() not in shown


# ------------------------------------------------ section 6: like for like, and KL's direction

def test_the_answers_needed_are_compared_with_the_cells_answers_and_expected_tries(fig):
    """«unas 3,8 veces las respuestas de la celda, y también sus intentos esperados (532, no los
    400 que le tocaron)»: expected against expected, not against one seeded run's tries."""
    rej = fig["rejection"]
    expected_per_answer = 1 / rej["p_grammar"]
    assert rej["cell_tries"] == pytest.approx(rej["accepted"] * expected_per_answer, rel=1e-9)
    assert rej["times_cell"] == pytest.approx(rej["needed"] / rej["accepted"], rel=1e-12)
    assert rej["times_cell"] == pytest.approx(rej["needed_tries"] / rej["cell_tries"], rel=1e-9)
    assert rej["tries"] != round(rej["cell_tries"])  # why the page names both


def test_the_evidence_per_answer_is_kl_conditional_to_mask_not_the_reverse(fig):
    rows = fig["rejection"]["rows"]
    forward = sum(r["conditional"] * math.log(r["conditional"] / r["masked"]) for r in rows)
    reverse = sum(r["masked"] * math.log(r["masked"] / r["conditional"]) for r in rows)
    assert fig["rejection"]["kl"] == pytest.approx(forward, rel=1e-12)
    assert fig["rejection"]["kl_reverse"] == pytest.approx(reverse, rel=1e-12)
    assert round(forward, 3) != round(reverse, 3)  # «no es simétrica», at the digits shown


# ------------------------------------------------ section 7: the favourites over the temperatures

def test_the_favourite_changes_the_prose_lists_are_those_of_the_exact_enumeration(fig, model, tok):
    """«De 1 a 0,5 … exagera la preferencia; pero … a 2,0, la condicionada prefiere a Benina»:
    each temperature's favourites recomputed from its own enumeration, compared with T = 1's."""
    grammar = compile_choice(GRAMMAR_TEXTS)
    tops = {}
    for t in SWEEP_TEMPERATURES:
        rows = enumerate_paths(model, tok, PROMPT, grammar, temperature=t).rows
        tops[t] = {"condicionada": max(rows, key=lambda r: r.conditional),
                   "máscara": max(rows, key=lambda r: r.masked)}
    expected = [(t, who, top.label) for t in SWEEP_TEMPERATURES for who, top in tops[t].items()
                if top.label != tops[1.0][who].label]
    got = [(c["temperature"], c["who"], answer(c["name"])) for c in fig["sweep_changes"]]
    assert got == expected
    assert got  # the page's «no es el mismo en todo el intervalo» branch is the one shown
    cold = min(SWEEP_TEMPERATURES)
    assert all(t != cold for t, _, _ in got)  # «de 1 a 0,5» the favourites stay


# ------------------------------------------------ section 9: the prediction quiz

def test_the_walks_largest_q_predicts_the_masks_winner_in_the_enumeration(fig):
    """Question q-cells: from the «q̃ después» column alone, the initial with the largest q~ is
    the name the enumeration gives most under the mask; its wrong options are other names."""
    allowed = fig["walk"]["allowed"]
    favourite = max(allowed, key=lambda a: a["q"])
    assert fig["walk"]["top_q"] == favourite["name"] == fig["enumeration"]["top_masked"]["name"]
    best_finish = max(allowed, key=lambda a: a["finish"])["name"]
    assert fig["why"]["big"]["name"] == best_finish
    assert len({favourite["name"], best_finish, PROTAGONIST}) == 3  # three distinct options
    assert best_finish == fig["enumeration"]["top_conditional"]["name"]  # «la condicionada la prefiere»


# ------------------------------------------------ the picture's caption and the positions caption

def test_the_factor_bar_ends_at_the_ratio_the_caption_names(fig):
    assert f"×{es_sci(fig['why']['ratio'], 3)}</text>" in fig["factors_svg"]["es"]


def test_the_cover_caption_agrees_with_its_number_of_choices(fig, model, tok):
    gen = generate(model, tok, PROMPT, compile_choice(GRAMMAR_TEXTS), seed=WALK_SEED)
    choices = sum(not pos.is_forced for pos in gen.positions)
    phrase = ("1 en la que se elige el texto (marcada en azul)" if choices == 1
              else f"{choices} en las que se elige el texto (marcadas en azul)")
    assert phrase in fig["walk_view"]["es"]
    assert phrase in PositionsView(gen, uid="pv-test")._repr_html_()
