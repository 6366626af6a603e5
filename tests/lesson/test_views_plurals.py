"""The shared views' count words agree with their numbers («1 token», «3 tokens»), and the strip's
caption and panels say how many tokens can start a forced continuation (a "split" position)
instead of «varias particiones»; checked against counts recomputed here from the generation."""

from __future__ import annotations

import re
from html import unescape
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lesson import compile_choice, compile_regex, generate
from lesson.laboratorio.lab_views import _before_words, _same_until
from lesson.i18n import ngettext
from lesson.views import (PositionsView, counted, forced_label, generation_html,
                          rejection_html, split_clause, starts_words, status_html)

PROMPT = "La solicitud de la señora quedó en estado: "


@given(st.integers(min_value=0, max_value=10**7))
def test_count_words_are_singular_exactly_for_one(n):
    text = counted(ngettext("{n} camino", "{n} caminos", n), n)
    assert text.endswith(" camino" if n == 1 else " caminos")
    assert text.replace("\u202f", "").split(" ")[0] == str(n)


def test_a_count_groups_digits_as_the_views_print_numbers():
    assert counted(ngettext("{n} camino", "{n} caminos", 12345), 12345) == "12\u202f345 caminos"
    assert counted(ngettext("{n} posición", "{n} posiciones", 1), 1) == "1 posición"


def test_the_split_clause_says_how_many_tokens_can_start_the_continuation():
    assert split_clause([]) == ""
    assert split_clause([2]) == "1 con una sola continuación (que 2 tokens distintos pueden empezar)"
    assert split_clause([3, 3]) == "2 con una sola continuación cada una (que 3 tokens distintos pueden empezar)"
    assert split_clause([4, 2, 3]) == ("3 con una sola continuación cada una "
                                       "(que de 2 a 4 tokens distintos pueden empezar)")
    assert starts_words(1) == "1 token puede empezar"
    assert starts_words(5) == "5 tokens distintos pueden empezar"


def test_a_split_positions_label_counts_its_allowed_tokens():
    pos = SimpleNamespace(forced="split", allowed=[(1, 0.5, 0.5), (2, 0.3, 0.3), (3, 0.2, 0.2)])
    assert forced_label(pos) == ("forzada: una sola continuación, que 3 tokens distintos pueden empezar "
                                 "(solo cambia la partición en tokens)")
    assert forced_label(SimpleNamespace(forced="token", allowed=[(1, 1.0, 1.0)])) == "forzada: un solo token"


def caption(html: str) -> str:
    return unescape(re.search(r'<p class="pv-caption">(.*?)</p>', html, re.S).group(1))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_strip_caption_agrees_with_the_generation(model, tok, seed):
    gen = generate(model, tok, PROMPT, compile_choice(["aprobado", "rechazado", "revisión"]), seed=seed)
    html = PositionsView(gen, uid="pv-plural")._repr_html_()
    text = caption(html)
    n = len(gen.positions)
    # «posiciones», so that «forzadas» agrees with it
    assert f": {n} {'posición' if n == 1 else 'posiciones'}, una por token;" in text
    single = sum(pos.forced == "token" for pos in gen.positions)
    assert f"{single} {'forzada' if single == 1 else 'forzadas'} con un solo token" in text
    splits = [len(pos.allowed) for pos in gen.positions if pos.forced == "split"]
    assert "varias particiones" not in html
    if splits:
        assert split_clause(splits) in text
        # each split position's panel names its own number of allowed tokens
        for j, pos in enumerate(gen.positions, start=1):
            if pos.forced == "split":
                panel = re.search(rf'data-panel="{j}".*?</section>', html, re.S).group(0)
                assert f"que {len(pos.allowed)} tokens distintos pueden empezar" in panel
    else:
        assert "con una sola continuación" not in text


def test_a_choice_grammar_of_this_model_has_a_split_position(model, tok):
    """The caption test above sees the "split" clause at least once (not only its absence)."""
    gens = [generate(model, tok, PROMPT, compile_choice(["aprobado", "rechazado", "revisión"]), seed=s)
            for s in (0, 1, 2)]
    assert any(pos.forced == "split" for gen in gens for pos in gen.positions)


def test_one_token_and_a_budget_of_one_are_singular(model, tok):
    gen = generate(model, tok, "x", compile_regex("[a-z]{5}"), seed=0, max_tokens=1)
    assert len(gen.token_ids) == 1 and gen.status == "budget"
    assert "presupuesto agotado (1 token)" in status_html(gen)
    assert " · 1 token · " in generation_html(gen)
    assert "1 tokens" not in generation_html(gen)


def test_the_rejection_summary_agrees_in_number():
    result = SimpleNamespace(counts=lambda: {b"si": 1}, accepted=[b"si"], tries=[b"x"],
                             mean_tries=1.0, passes=1, passes_full=1, seconds=0.01)
    html = rejection_html(result)
    assert "1 intento para 1 respuesta de la gramática" in html


def test_the_labs_branch_words_agree_in_number():
    assert _before_words(1) == "desde el prompt"
    assert _before_words(2) == "con el token anterior"
    assert _before_words(4) == "con los 3 tokens anteriores"
    assert _same_until(1) == "distintas desde la posición 1"
    assert _same_until(2) == "iguales en la posición 1"
    assert _same_until(5) == "iguales hasta la posición 4"
