"""Sentences of «Del esquema al autómata» that a fresh reading found loose, each stated as the
relation that makes it true: where the masker's state limit bites (§5), what the trie walk's steps
are spent on (§4), the key-order cell behind the quiz q-order, which closing bytes are forced (§6),
the exercise's note (§7), the unmasked phone samples, the singular «permitido» and the pictures'
text alternatives."""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from lesson import compile_json_schema, compile_regex
from lesson.automata.dfa_check import PHONE
from lesson.automata.figures import (ACCENTED, DATE, LIFTED_MAX_STATES, PHONE_FREE_TOKENS, PHONE_N,
                                     PHONE_PROMPT, SCHEMA, WALK_PREFIX, order_figures, stack_figures,
                                     walk_figures)
from lesson.automata.route import DfaDiagram, regex_route
from lesson.automata.stack import StackPlot, bounded_regex, stack_growth
from lesson.automata.trie import trie_walk
from lesson.early_abort import sample_until_invalid
from masker.dfa import determinize
from masker.errors import LimitExceeded
from masker.nfa import build_nfa
from masker.regex_parse import parse_regex

TEMPLATE = Path(__file__).resolve().parents[3] / "templates" / "automata.html"


def template() -> str:
    return TEMPLATE.read_text(encoding="utf-8")


def cell_source(name: str) -> str:
    found = re.search(r'\{% call cell\("[^"]*", name="' + re.escape(name) + r'"\) %\}(.*?)\{% endcall %\}',
                      template(), flags=re.S)
    return html.unescape(found.group(1))


# ---------------------------------------------------------------- §5: the limit is the subset construction's

@pytest.fixture(scope="module")
def stack():
    return stack_figures()


def test_the_refused_depth_fails_in_the_subset_construction_not_for_its_minimal_size(stack):
    """«El límite que salta no es el del DFA mínimo, sino el de la construcción de subconjuntos …
    pasó por S estados de subconjuntos, aunque el DFA mínimo se queda en M»."""
    d, limit = stack["dfa_refused"], stack["refused_limit"]
    nfa, start, accept = build_nfa(parse_regex(bounded_regex(d)))
    with pytest.raises(LimitExceeded) as refused:  # determinize itself raises, before minimizing
        determinize(nfa, start, accept)
    assert (refused.value.limit, refused.value.value) == ("max_states", limit)
    assert stack["refused_nfa"] == len(nfa.eps)
    assert stack["refused_subset"] > limit > stack["refused_min"] and stack["refused_min_under_limit"]
    assert stack["refused_subset"] <= LIFTED_MAX_STATES
    # the minimal size continues the table's recurrence s(d) = 2 s(d-1) + c
    last = [r["dfa"] for r in stack["rows"] if r["dfa"]][-1]
    assert stack["refused_min"] == 2 * last + stack["doubling_offsets"][0]


def test_the_lifted_route_accepts_what_the_bounded_regex_accepts(stack):
    d = stack["dfa_refused"]
    dfa = regex_route(bounded_regex(d), max_states=LIFTED_MAX_STATES).dfa
    depth = "[" * d + "0" + "]" * d
    for text, ok in [(depth, True), ("[" + depth + "]", False), ('{"a":0}', True), ("[0,0]", True), ("[0", False)]:
        s = 0
        for b in text.encode():
            s = dfa.step(s, b) if s is not None else None
        assert (s is not None and dfa.is_accepting(s)) == ok == bool(re.fullmatch(bounded_regex(d), text))


# ---------------------------------------------------------------- §4: what the walk's steps are spent on

def test_the_walk_s_steps_are_its_live_nodes_and_their_first_dead_children(tok):
    """«crece con los nodos vivos y sus hijos inmediatos (el primer byte muerto de cada rama) …
    esos primeros bytes muertos son D de los N pasos»: counted from the vocabulary, no trie."""
    date = compile_regex(DATE)
    m = date.matcher(tok.vocab)
    m.consume_bytes(WALK_PREFIX)

    def alive(piece):
        s = m.state
        for b in piece:
            s = date.automaton.step(s, b)
            if s is None:
                return False
        return True
    prefixes = {v[:k] for v in tok.vocab if v for k in range(1, len(v) + 1)}
    live = sum(alive(p) for p in prefixes)
    first_dead = sum(alive(p[:-1]) and not alive(p) for p in prefixes)
    walk = trie_walk(date.automaton, m.state, tok.vocab)
    fig = walk_figures(tok.vocab)
    assert walk.dead_steps == fig["dead_steps"] == first_dead
    assert walk.steps == fig["steps"] == live + first_dead
    assert f'data-dead-steps="{first_dead}"' in walk._repr_html_()


# ---------------------------------------------------------------- §4: the cell behind the quiz q-order

def test_the_order_cell_prints_the_series_the_quiz_quotes(capsys):
    fig = order_figures()
    exec(cell_source("orden"), {"compile_regex": compile_regex})
    out = capsys.readouterr().out
    rows = re.findall(r"(\d+) claves?: orden fijo +(\d+) estados; cualquier orden +(\d+)", out)
    assert [tuple(map(int, r)) for r in rows] == list(zip(fig["keys"], fig["fixed"], fig["any"]))
    for k in fig["keys"]:  # «1 clave», «2 claves»: the noun agrees with the count
        assert re.search(rf"(?m)^{k} {'clave' if k == 1 else 'claves'}: ", out), (k, out)


# ---------------------------------------------------------------- §6: which closing bytes are forced

def allowed(grammar, vocab, prefix: bytes) -> set[bytes]:
    m = grammar.matcher(vocab)
    m.consume_bytes(prefix)
    return {vocab[t] for t in np.flatnonzero(m.mask())}


def test_the_closing_quote_is_forced_only_at_the_string_s_maximum_length(tok):
    """«tras la comilla que cierra la cadena solo cabe }, y cuando la cadena llega a 12 caracteres
    también esa comilla es obligada»."""
    grammar = compile_json_schema(SCHEMA)
    top = SCHEMA["properties"]["nombre"]["maxLength"]
    opening = b'{"nombre":"'
    for k in range(top):
        free = allowed(grammar, tok.vocab, opening + b"a" * k)
        assert b'"' in free and len(free) > 1
    assert allowed(grammar, tok.vocab, opening + b"a" * top) == {b'"'}
    for k in range(top + 1):
        assert allowed(grammar, tok.vocab, opening + b"a" * k + b'"') == {b"}"}


# ---------------------------------------------------------------- §7: the exercise's note, the unmasked samples

def test_the_solution_note_names_the_exercise_s_own_variables():
    """«… el mismo número que generate(model, tok, prompt_tel, compile_regex(PHONE), seed=0)»: the
    names the exercise cell defines, and the prompt the figures use."""
    note = re.search(r"<summary>Ver una solución</summary>(.*?)</details>", template(), flags=re.S).group(1)
    call = re.search(r"<code>(generate\(.*?\))</code>", note).group(1)
    assert call == "generate(model, tok, prompt_tel, compile_regex(PHONE), seed=0)"
    scope: dict = {}
    exercise = cell_source("ejercicio")
    exec(re.search(r"^\s*(prompt_tel = .*)$", exercise, flags=re.M).group(1), scope)
    assert scope["prompt_tel"] == PHONE_PROMPT
    assert re.search(r"^from lesson\.automata import .*\bPHONE\b", exercise, flags=re.M)


def test_unmasked_phone_hits_are_the_texts_that_match_the_pattern(model, tok):
    """«en 1000 muestras sin máscara, ninguna llegó a un número» (or «solo N»): a hit is a sample
    whose text, rechecked with re, is a whole number."""
    free = sample_until_invalid(model, tok, PHONE_PROMPT, compile_regex(PHONE), n=PHONE_N, seed=0,
                                max_tokens=PHONE_FREE_TOKENS)
    matched = sum(re.fullmatch(PHONE, t.decode("utf-8", "replace")) is not None for t in free.texts)
    assert free.hits == matched


# ---------------------------------------------------------------- words and pictures

def test_the_masker_loop_cell_writes_permitido_for_one(capsys):
    """«b'n':   1 permitido»: the count agrees with its noun in the cell «El mismo bucle»."""
    scope: dict = {"prompt": "¿Es Benina la protagonista? Responde sí o no.\n"}
    exec(cell_source("mano"), scope)
    exec(cell_source("regex-bucle"), scope)
    lines = [line for line in capsys.readouterr().out.splitlines() if "coinciden" in line]
    assert len(lines) == 6
    for line in lines:
        n = int(re.search(r":\s+(\d+) permitido", line).group(1))
        assert (" permitidos," in line) == (n != 1) and (" permitido," in line) == (n == 1)


def test_the_diagram_titles_are_the_patterns_without_a_stray_colon():
    titles = re.findall(r'DfaDiagram\(compile_regex\(r"([^"]+)"\)\.automaton, "([^"]*)"\)', cell_source("ruta"))
    assert titles and all(pattern == title for pattern, title in titles)
    svg = ET.fromstring(DfaDiagram(compile_regex(titles[0][0]).automaton, titles[0][1]).svg())
    assert svg.get("aria-label").endswith(f"({titles[0][0]})")


def test_the_utf8_table_names_every_letter_it_holds():
    text = template()
    caption = re.search(r"<caption>([^<]*UTF-8)</caption>", text).group(1)
    assert ("ñ" in caption) == ("ñ" in ACCENTED) and ("tilde" in caption) == any(c in ACCENTED for c in "áéíóú")


def test_the_stack_plot_titles_both_axes():
    rows = stack_growth(range(1, 4), dfa_depths=range(1, 3))
    svg = ET.fromstring(re.search(r"<svg.*?</svg>", StackPlot(rows)._repr_html_(), flags=re.S).group(0))
    titles = {t.get("data-axis"): t.text for t in svg.iter() if t.get("class") == "axis-title"}
    assert set(titles) == {"x", "y"} and "profundidad" in titles["x"]
    assert "ítems" in titles["y"] and "estados" in titles["y"] and "log" in titles["y"]
    assert "width:100%" in svg.get("style")


# ---------------------------------------------------------------- §1: the loop stops at the first accepting state

def test_the_hand_loop_stops_in_time_only_where_accepting_states_have_no_edges():
    """«El bucle para en el primer estado de aceptación al que llega. Aquí basta, porque el estado de
    aceptación de sí|no no tiene aristas de salida (tampoco el del teléfono de la sección 7); con el
    autómata de [a-zñáéíóú]+ de la sección 2 pararía tras su primer token completo, sea una letra o varias.»"""
    scope: dict = {}
    exec(re.search(r"^dfa = .*$", cell_source("mano"), flags=re.M).group(0), scope)
    exec(re.search(r"^aceptacion = .*$", cell_source("mano"), flags=re.M).group(0), scope)
    assert all(scope["dfa"][s] == {} for s in scope["aceptacion"])
    note = re.search(r"<summary>Ver una solución</summary>.*?<code[^>]*>(.*?)</code>", template(), flags=re.S)
    exec(html.unescape(note.group(1)), scope)
    assert all(scope["telefono"][s] == {} for s in scope["aceptacion_tel"])
    word = compile_regex(r"[a-zñáéíóú]+").automaton
    after = word.step(0, ord("a"))
    assert word.is_accepting(after) and word.can_continue(after)
    assert "[a-zñáéíóú]+" in template() and "pararía tras su primer token completo" in template()
