"""The «Laboratorio»'s errors in Chromium: each diagnosis a newcomer found wrong is now right, in
Spanish, with the editor's underline ``[data-testid=lab-error-span]`` on the characters at fault
(for an invalid ``pattern``, the character inside the pattern's string); a link with a seed or a
branch position that cannot be gets a Spanish message, no traceback; at 390 px the caret stays
under its character (the caret lines scroll inside the box) and the page does not scroll sideways."""
from __future__ import annotations

import re
from urllib.parse import quote

import pytest

from lesson.laboratorio.lab import ConstraintError, check_settings
from tests.e2e.helpers import open_lesson
from tests.e2e.lab_page import PAGE, TIMEOUT_MS, type_constraint, lab  # noqa: F401 (lab: a fixture)

pytestmark = pytest.mark.e2e
ENGLISH = re.compile(r"\b(the|is|not|expected|found|missing|must|supported|never|defined|unterminated|"
                     r"expecting|delimiter|traceback|error:)\b", re.IGNORECASE)


def generate(page) -> None:
    page.locator("[data-testid=lab-view]").evaluate("v => { v.dataset.state = 'clicked'; }")
    page.locator("[data-testid=lab-generate]").click()
    page.locator("[data-testid=lab-view][data-state=done]").wait_for(timeout=TIMEOUT_MS)


def spanish_only(text: str) -> bool:
    """No English words left, the reader's own text («quoted», and the caret lines) aside."""
    lines = [line for line in text.split("\n") if not line.startswith("  ")]
    return not ENGLISH.search(re.sub(r"«[^«»]*»", "", " ".join(lines)))


@pytest.mark.parametrize("kind, text, words, span", [
    # a place in one line: «en el carácter N», counted from 1 (data-from stays 0-based, for the editor)
    ("regex", "[z-a]", "error de sintaxis en el carácter 3: el rango «z-a» está al revés", "-"),
    ("gbnf", "root ::= foo", "error en la gramática en el carácter 10: la regla «foo» se usa aquí pero no está "
     "definida", "f"),
    ("gbnf", 'root ::= "a" root', "gramática imposible en el carácter 1: ningún texto la cumple: «root» nunca "
     "termina", "r"),
    ("regex", "a$b", "error en el carácter 2: el ancla «$» en medio de la expresión no está soportada", "$"),
    ("json_schema", '{"type": "string",\n "pattern": "(abc"}', "esquema no válido en la línea 2, columna 14: "
     "el valor de «pattern» no es una expresión regular válida: falta «)»", "("),
    ("json_schema", '{"type": "string", "enum": ["a", "b]}', "la cadena que empieza aquí no se cierra", '"'),
    ("json_schema", '{"type": "string" "enum": ["a"]}', "aquí falta una coma «,»", '"'),
])
def test_each_misleading_error_gets_the_right_diagnosis_in_spanish_marked_in_the_editor(lab, kind, text, words,
                                                                                      span):
    type_constraint(lab, kind, text)
    generate(lab)
    error = lab.locator("[data-testid=lab-error]").inner_text()
    assert words in error and "Cómo arreglarlo" in error, error
    assert spanish_only(error), error
    assert "No se puede usar esta restricción." in error and "no soportado" not in error
    if kind == "gbnf" and "nunca termina" in words:
        assert "error de sintaxis" not in error  # a grammar with no text is not a syntax error
    marked = lab.locator("[data-testid=lab-error-span]")
    assert "".join(marked.all_text_contents()) == span
    # the underline sits where data-from says (a character of the text, not the keyword before it)
    start = int(lab.locator("[data-testid=lab-error]").get_attribute("data-from"))
    assert text[start:start + len(span)] == span


def test_a_seed_typed_in_the_field_too_large_is_refused_in_spanish(lab):
    type_constraint(lab, "regex", "[a-z]{3}")
    lab.locator("[data-testid=lab-seed]").fill("1e30")
    try:
        generate(lab)
        error = lab.locator("[data-testid=lab-error]").inner_text()
        # the page's field check, in the words Python says for a link's seed=1e30
        with pytest.raises(ConstraintError) as python:
            check_settings(seed=1e30)
        assert error.strip() == python.value.message, (error, python.value.message)
        assert "la semilla tiene que ser un entero de 0 a 4\u202f294\u202f967\u202f295; ahora vale 10³⁰" in error
        assert "Traceback" not in error and spanish_only(error)
    finally:
        lab.locator("[data-testid=lab-seed]").fill("0")


@pytest.mark.parametrize("fragment, words", [
    ("seed=1e30", "la semilla tiene que ser un entero de 0 a"),
    ("top_p=5", "ahora vale 5"),  # the page's field check says it first (Python says it too: the unit test)
    ("tree=r_0.40.5", "el enlace no describe un árbol de este experimento: la rama 2 sale de la rama 1 en la "
                      "posición 40"),
])
def test_a_link_that_cannot_be_gets_a_spanish_message(browser, servers, fragment, words):
    context = browser.new_context(service_workers="block")
    try:
        link = (f"{PAGE}#kind=regex&constraint={quote('[a-z]{3}')}&prompt={quote('La señora ')}"
                f"&max_tokens=20&{fragment}")
        page = open_lesson(context, servers["plain"], link)
        page.locator("[data-testid=lab-error]").wait_for(timeout=TIMEOUT_MS)
        text = page.locator("[data-testid=lab-error]").inner_text()
        assert words in text and "Traceback" not in text, text
        assert spanish_only(text), text
        if fragment.startswith("tree="):  # not a constraint's error: the heading says what failed
            assert "El enlace no se puede abrir." in text and "esta restricción" not in text
    finally:
        context.close()


def test_at_390_px_the_caret_stays_under_its_character_and_nothing_scrolls_sideways(lab_phone):
    page = lab_phone
    schema = '{"type": "object", "properties": {"nombre": {"type": "string", "pattern": "^[a-z]+(abc$"}}}'
    type_constraint(page, "json_schema", schema)
    generate(page)
    error = page.locator("[data-testid=lab-error]")
    assert "«pattern» no es una expresión regular válida" in error.inner_text()
    assert "".join(page.locator("[data-testid=lab-error-span]").all_text_contents()) == "("
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    pre = error.locator("pre")
    assert pre.evaluate("p => getComputedStyle(p).whiteSpace") == "pre"
    assert pre.evaluate("p => p.scrollWidth > p.clientWidth")  # the long line scrolls inside the box
    box = error.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 390
    # the caret and the offending character at the same x, measured on the rendered text
    dx = pre.evaluate("""p => {
        const text = p.firstChild, lines = text.data.split("\\n");
        const caretAt = lines[0].length + 1 + lines[1].indexOf("^");
        const charAt = lines[1].indexOf("^");
        const x = (i) => { const r = document.createRange(); r.setStart(text, i); r.setEnd(text, i + 1);
                           return r.getBoundingClientRect().left; };
        return [x(caretAt) - x(charAt), lines[0][charAt]];
    }""")
    assert abs(dx[0]) < 1.5 and dx[1] == "(", dx
