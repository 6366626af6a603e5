"""The phone exercise of «Del esquema al autómata» (§7): the checker against an independent
reference (the masker's own matcher and a brute-force walk of the reader's dict, prefix by prefix),
on the page's own starter and solution (read from the template) and on several wrong DFAs, each
with the first difference known by construction."""

from __future__ import annotations

import html
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from lesson import compile_regex
from lesson.automata.dfa_check import PHONE, check_dfa, check_phone_dfa

TEMPLATE = Path(__file__).resolve().parents[3] / "templates" / "automata.html"
DIGITS = b"0123456789"


def solution() -> dict:
    dfa = {0: {b: 1 for b in b"6789"}, 11: {}}
    for s in (1, 2, 4, 5, 6, 8, 9, 10):
        dfa[s] = {b: s + 1 for b in DIGITS}
    for s in (3, 7):
        dfa[s] = {ord(" "): s + 1}
    return dfa


def page_code(pattern: str) -> str:
    text = TEMPLATE.read_text(encoding="utf-8")
    return html.unescape(re.search(pattern, text, flags=re.S).group(1))


def run_page_code(code: str) -> dict:
    """The dict and the accepting set that a piece of the page's code defines."""
    scope: dict = {}
    exec(code.split("informe =")[0], scope)  # the definitions, not the check nor the loop
    return scope


def reference_masks(dfa: dict, accepting, prefix: bytes, vocab):
    """Both masks and end verdicts after ``prefix``, with nothing of the checker: the masker's
    matcher, and the reader's dict walked byte by byte (None: the reader's DFA is dead)."""
    m = compile_regex(PHONE).matcher(vocab)
    m.consume_bytes(prefix)
    state = 0
    for b in prefix:
        state = dfa[state].get(b)

    def alive(piece):
        s = state
        for b in piece:
            s = dfa[s].get(b)
            if s is None:
                return False
        return True
    reader = np.array([bool(p) and alive(p) for p in vocab])
    return m.mask(), reader, m.is_accepting(), state in set(accepting)


def test_the_page_s_solution_is_correct(tok):
    scope = run_page_code(page_code(r'<code data-testid="phone-solution">(.*?)</code>'))
    check = check_phone_dfa(scope["telefono"], scope["aceptacion_tel"], tok.vocab)
    assert check.ok and check.problem is None and "Correcto" in str(check)
    assert scope["telefono"] == solution()


def test_the_page_s_starter_is_wrong_where_the_report_says(tok):
    starter = page_code(r'\{% call cell\("Tu DFA del teléfono", name="ejercicio"\) %\}(.*?)\{% endcall %\}')
    scope = run_page_code(starter)
    check = check_phone_dfa(scope["telefono"], scope["aceptacion_tel"], tok.vocab)
    assert not check.ok and check.problem == "máscara" and check.prefix == b"600 0"
    mine, theirs, _, _ = reference_masks(scope["telefono"], scope["aceptacion_tel"], check.prefix, tok.vocab)
    assert check.masker_only == np.flatnonzero(mine & ~theirs).tolist()
    assert check.reader_only == np.flatnonzero(theirs & ~mine).tolist() == [tok.vocab.index(b" ")]
    assert "tu DFA (en su estado 5) acepta el byte «␣»" in check.hint and "0–9" in check.hint
    assert 'data-ok="false"' in check._repr_html_() and "600␣0" in check._repr_html_()


def _without(dfa, state):
    dfa = dict(dfa)
    del dfa[state]
    return dfa


@pytest.mark.parametrize("make,accepting,problem,prefix,words", [
    # the first digit may be a 5: the reader allows the token «5» at the very start
    (lambda d: d | {0: {b: 1 for b in b"56789"}}, {11}, "máscara", b"", ["permite 1 token que el enmascarador no: «5»"]),
    # a digit missing in the second state: the masker allows «9» after «6»
    (lambda d: d | {1: {b: 2 for b in b"012345678"}}, {11}, "máscara", b"6",
     ["El enmascarador permite", "«9»", "no tiene arista con el byte «9»"]),
    # the space of the second group one digit early
    (lambda d: d | {6: {ord(" "): 8}}, {11}, "máscara", b"600 00", ["acepta el byte «␣»"]),
    # a state that the dict lacks
    (lambda d: _without(d, 9), {11}, "estado", b"600 000 ", ["lleva al estado 9, que no es una clave"]),
    # the text ends one digit early
    (lambda d: d, {10}, "final", b"600 000 00", ["quítalo de la aceptación"]),
    # the accepting state never listed
    (lambda d: d, set(), "final", b"600 000 000", ["añade el estado 11"]),
    # one more edge after the end
    (lambda d: d | {11: {ord(" "): 0}}, {11}, "máscara", b"600 000 000", ["ya no admite ningún byte"]),
    # keys as characters, not bytes
    (lambda d: d | {0: {"6": 1}}, {11}, "forma", b"", ["ord('6')"]),
    # no start state
    (lambda d: _without(d, 0), {11}, "forma", b"", ["estado inicial"]),
])
def test_wrong_dfas_are_reported_at_their_first_difference(tok, make, accepting, problem, prefix, words):
    dfa = make(solution())
    check = check_phone_dfa(dfa, accepting, tok.vocab)
    assert not check.ok and check.problem == problem and check.prefix == prefix, str(check)
    for w in words:
        assert w in str(check), str(check)
    if problem in ("máscara", "final"):
        # the reference sees the same difference there, and none at any shorter prefix
        mine, theirs, m_acc, r_acc = reference_masks(dfa, accepting, prefix, tok.vocab)
        assert not np.array_equal(mine, theirs) or m_acc != r_acc
        for k in range(len(prefix)):
            mine, theirs, m_acc, r_acc = reference_masks(dfa, accepting, prefix[:k], tok.vocab)
            assert np.array_equal(mine, theirs) and m_acc == r_acc


def test_a_dfa_that_is_not_a_dict_is_a_shape_fault(tok):
    check = check_phone_dfa([1, 2], {11}, tok.vocab)
    assert check.problem == "forma" and "dict" in str(check)


phone_prefixes = st.builds(lambda head, tail: (head + tail)[:11],
                           st.sampled_from(["6", "61", "612", "612 ", "612 3", "612 345 ", "912 345 67"]),
                           st.text(alphabet="0123456789 ", max_size=4))


@settings(max_examples=60, deadline=None)
@given(prefix=phone_prefixes)
def test_the_right_dfa_agrees_with_the_masker_at_any_prefix(tok, prefix):
    data = prefix.encode()
    assume(_alive(data))
    mine, theirs, m_acc, r_acc = reference_masks(solution(), {11}, data, tok.vocab)
    assert np.array_equal(mine, theirs) and m_acc == r_acc


def _alive(data: bytes) -> bool:
    dfa = compile_regex(PHONE).automaton
    s = 0
    for b in data:
        s = dfa.step(s, b)
        if s is None:
            return False
    return True


def test_check_dfa_takes_any_pattern(tok):
    yes_no = {0: {ord("s"): 1, ord("n"): 2}, 1: {0xC3: 3}, 3: {0xAD: 4}, 2: {ord("o"): 4}, 4: {}}
    assert check_dfa(yes_no, {4}, "sí|no", tok.vocab).ok
    half = dict(yes_no) | {3: {0xA1: 4}}  # «sá» instead of «sí»
    check = check_dfa(half, {4}, "sí|no", tok.vocab)
    # the masks already differ after «s», on the two-byte token «í»; the bytes part after «s» + C3
    assert check.problem == "máscara" and check.prefix == b"s" and "«í»" in str(check)
    assert "tras «s<0xC3>»" in check.hint and "0xAD" in check.hint


def cell_source(name: str) -> str:
    return page_code(r'\{% call cell\("[^"]*", name="' + re.escape(name) + r'"\) %\}(.*?)\{% endcall %\}')


def test_the_solution_in_the_loop_of_section_1_writes_what_generate_writes(model, tok, capsys):
    """The solution's note: «el bucle de la sección 1 escribe el mismo número que generate(…)»."""
    from lesson import generate
    from lesson.automata.figures import PHONE_PROMPT
    scope: dict = {}
    exec(cell_source("mano"), scope)
    exec(cell_source("bucle"), scope)
    exec(page_code(r'<code data-testid="phone-solution">(.*?)</code>'), scope)
    text = scope["genera"](scope["telefono"], scope["aceptacion_tel"], PHONE_PROMPT)
    assert re.fullmatch(PHONE, text)
    assert text == generate(model, tok, PHONE_PROMPT, compile_regex(PHONE), seed=0).text
    # §1: «con la misma semilla sale también la misma respuesta»
    from lesson.automata.figures import YES_NO, YES_NO_PROMPT
    assert scope["genera"](scope["dfa"], scope["aceptacion"], YES_NO_PROMPT) == generate(
        model, tok, YES_NO_PROMPT, compile_regex(YES_NO), seed=0).text
    # and the hand loop's own lines: the state it masks, then the state it moves to
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("permitidos al principio:")
    assert re.search(r"estado 0: \d+ permitidos, elegido .* pasa al estado 1\n", out)
