"""Fixes from a newcomer's check of the «Laboratorio», in CPython: a choice that another branch
already made opens that branch; «Paso hasta la próxima elección» says when it ran to the end; the
kernel's interrupt in the middle of an action is a Spanish view, not a traceback; probabilities
keep three significant digits and are never printed as a certain «1,000»."""

from __future__ import annotations

import json
import pytest
from hypothesis import given, strategies as st

import lesson.laboratorio.protocol as lab_module
from lesson.laboratorio.lab import PRESETS, Lab
from lesson.laboratorio.protocol import act
from lesson.numbers import es_prob

TEXTS = "aprobado\nrechazado\nrevisión"
PROMPT = PRESETS["etiquetas"]["prompt"]


def test_a_choice_another_branch_made_opens_that_branch(model, tok):
    lab = Lab(model, tok, kind="choice", constraint=TEXTS, prompt=PROMPT)
    lab.generate()
    first = lab.decoder.generation.token_ids
    others = [t for t, _, q in lab.decoder.generation.positions[0].allowed if q > 0 and t != first[0]]
    lab.choose(1, others[0])  # branch 2, from the prompt with another first token
    assert lab.current == 1 and len(lab.branches) == 2
    lab.choose(1, first[0])  # on branch 2, position 1, the first branch's token: branch 1 again
    assert lab.current == 0 and len(lab.branches) == 2
    assert "la rama 1 ya empieza por ese token" in lab.view()


def test_the_next_choice_says_when_it_reached_the_end(model, tok):
    lab = Lab(model, tok, kind="choice", constraint="rechazado", prompt=PROMPT)
    lab.next_choice()
    assert lab.decoder.done and "no quedaba ninguna elección" in lab.view()


def test_an_interrupt_in_the_middle_of_an_action_is_a_spanish_view(model, tok, monkeypatch):
    def interrupted(self, limit=None):
        raise KeyboardInterrupt
    monkeypatch.setattr(lab_module.Lab, "generate", interrupted)
    state = {"kind": "choice", "constraint": TEXTS, "prompt": PROMPT, "seed": 0, "temperature": 1.0,
             "top_k": None, "top_p": None, "max_tokens": 20, "stop_at_accept": False, "compare": False}
    html = act("generate", json.dumps(state))._repr_html_()
    assert 'data-kind="stopped"' in html and "Python paró esta acción a medias" in html
    assert "Traceback" not in html and lab_module._SESSION["lab"] is None


@given(st.floats(min_value=1e-12, max_value=1.0, allow_nan=False, exclude_max=True))
def test_a_probability_keeps_three_significant_digits_and_is_never_a_certain_one(x):
    text = es_prob(x)
    assert text != "1,000"
    if text.startswith("> "):
        assert x >= 0.9995
        return
    value = float(text.replace("·10", "e").replace(",", ".").translate(
        str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")))
    error = abs(value - x)
    assert error <= (0.0005 + 1e-12 if x >= 0.01 else 0.005 * x * (1 + 1e-9))  # 3 decimals, or 3 digits


def test_after_forget_the_next_step_rebuilds_the_addresss_tree(model, tok):
    """The page calls forget() after an interrupt; «Paso» then goes on from the tree the address
    holds, not from a new experiment."""
    state = {"kind": "choice", "constraint": TEXTS, "prompt": PROMPT, "seed": 0, "temperature": 1.0,
             "top_k": None, "top_p": None, "max_tokens": 20, "stop_at_accept": False, "compare": False}
    act("step", json.dumps(state))
    first = lab_module._SESSION["lab"].decoder.generation.token_ids
    tree = lab_module._SESSION["lab"].tree()
    lab_module.forget()
    assert lab_module._SESSION["lab"] is None
    act("step", json.dumps({**state, "tree": tree, "branch": "0", "open": ""}))
    again = lab_module._SESSION["lab"].decoder.generation.token_ids
    assert again[:len(first)] == first and len(again) == len(first) + 1
