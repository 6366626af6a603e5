"""The «Laboratorio» in English (``lesson.i18n.set_language("en")``): its own parts of the view
(summary, tree, choices, the exact line, errors) have no Spanish words and no decimal comma, and
carry the same numbers as in Spanish; a masker error gets the English text of its catalog entry
(error_catalog, by code, translated in laboratorio.po), with the same kind and span as the Spanish
one; the settings' messages are
English with English numbers; every id the package and lab.js use is in their English catalog;
lab.js writes English numbers as ``words.en_number`` does.
"""
from __future__ import annotations

import json
import pathlib
import re
from html.parser import HTMLParser

import pytest
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po

from lesson.i18n import get_language, set_language
from lesson.laboratorio.lab import (PRESETS, ConstraintError, Lab, compile_constraint, english_error, error_html,
                                    preset_titles, spanish_error)
from lesson.laboratorio.protocol import act
from lesson.laboratorio.lab_views import branches_html, choices_html, summary_html
from lesson.numbers import en_number
from masker import MaskerError, compile_regex

from tests.lesson.laboratorio.test_laboratorio_errors import CASES, _raised

ROOT = pathlib.Path(__file__).resolve().parents[3]
LOCALE = ROOT / "py" / "lesson" / "locale" / "en" / "LC_MESSAGES"
# Spanish words of the lab's own view and messages (none is an English word)
SPANISH = re.compile(r"\b(rama|ramas|posición|permitidos?|máscara|quita|quitan|gramática|acepta|lee|desde|"
                     r"elige|pulsa|Paso|Generar|siguiente|forzada|texto|textos|caminos|partición|particiones|"
                     r"semilla|tiene|ahora|vale|entero|vacío|enlace|árbol|válida|terminada|detenida|en curso|"
                     r"infla|desinfla|arreglarlo|restricción|ajustes|temperatura|probabilidad|calcula|"
                     r"sin|con|los|las|del|una|uno|que|por)\b")
DECIMAL_COMMA = re.compile(r"\d,\d(?!\d\d)")  # 0,448; not 1,488,000 (English thousands)


@pytest.fixture
def english():
    saved = get_language()
    set_language("en")
    try:
        yield
    finally:
        set_language(saved)


def in_language(language, make):
    saved = get_language()
    set_language(language)
    try:
        return make()
    finally:
        set_language(saved)


def visible(html: str) -> str:
    """The text a reader sees (no tags, no style), entities decoded."""
    html = re.sub(r"<style>.*?</style>", "", html, flags=re.S)
    text = re.sub(r"<[^>]+>", " ", html)
    return re.sub(r"\s+", " ", text.replace("&gt;", ">").replace("&lt;", "<").replace("&quot;", '"')
                  .replace("&#x27;", "'"))


class Hooks(HTMLParser):
    def __init__(self):
        super().__init__()
        self.items: list[dict] = []

    def handle_starttag(self, tag, attrs):
        self.items.append(dict(attrs))


def data(html: str) -> list[dict]:
    """Every tag's data-* attributes, in order (the numbers tests read)."""
    parser = Hooks()
    parser.feed(html)
    return [{k: v for k, v in a.items() if k.startswith("data-")} for a in parser.items]


def spanish_left(text: str) -> list[str]:
    """Spanish words in ``text``, the token labels and Spanish texts of the model aside."""
    return SPANISH.findall(text)


@pytest.fixture(scope="module")
def names_lab(model, tok):
    """The names preset, run to its end, with a second branch from position 3."""
    preset = PRESETS["nombres"]
    lab = Lab(model, tok, kind=preset["kind"], constraint=preset["constraint"], prompt=preset["prompt"],
              top_k=None).generate()
    tokens = lab.decoder.generation.positions[2].allowed
    other = next(t for t, p, q in tokens if t != lab.decoder.generation.token_ids[2])
    return lab.choose(3, other)


def test_the_view_s_own_parts_are_english_with_the_same_numbers(names_lab):
    lab = names_lab
    for part in (summary_html, branches_html, choices_html):
        spanish = in_language("es", lambda: part(lab))
        english = in_language("en", lambda: part(lab))
        # the model's answers are Spanish texts: leave out the branches' texts and token labels
        shown = visible(re.sub(r'<span class="tok[^"]*"[^>]*>[^<]*</span>', "", english))
        shown = re.sub(r'\{"nombre":"[A-Za-z]+"\}', "", shown)
        assert not spanish_left(shown), (part.__name__, spanish_left(shown), shown)
        assert not DECIMAL_COMMA.search(shown), (part.__name__, shown)
        assert data(english) == data(spanish), part.__name__  # every number the tests read
        # the same numbers, written the other way
        spanish_numbers = re.findall(r"−?\d+,\d+", visible(spanish))
        english_numbers = re.findall(r"−?\d+\.\d+", shown)
        assert [n.replace(",", ".") for n in spanish_numbers] == english_numbers, part.__name__
    exact = in_language("en", lambda: branches_html(lab))
    assert 'data-exact="yes"' in exact and 'href="mask.html"' in exact and "The mask" in exact
    assert "branch 2" in visible(exact) and "the mask inflates it" in exact or "the mask deflates it" in exact


def test_the_whole_view_is_the_same_but_for_its_words(names_lab, english):
    english_html = names_lab.view()
    spanish_html = in_language("es", names_lab.view)
    assert data(english_html) == data(spanish_html)
    assert "Branches" in english_html and "Ramas" in spanish_html


def test_a_masker_error_gets_the_curated_english_message_with_the_spanish_kind_and_span(english):
    """The catalog's English texts (laboratorio.po): one place, counted from 1 as the caret
    shows it, no second count from 0, and a fix that is a fix."""
    with pytest.raises(ConstraintError) as info:
        compile_constraint("regex", "ab(cd")
    error = info.value
    assert error.message.startswith("syntax error at character 3: missing “)”: the group opened here is not closed")
    assert "position" not in error.message and "from 0" not in error.message
    assert error.hint == "add “)”, or write “\\(” if you meant a literal parenthesis"
    assert error.kind == "regex.unclosed_group" and error.span == (2, 3)
    html = error_html(error)
    assert "This constraint cannot be used." in html and "How to fix it:" in html
    assert 'aria-label="where the error is"' in html
    spanish = in_language("es", lambda: pytest.raises(ConstraintError, compile_constraint, "regex", "ab(cd").value)
    assert (spanish.kind, spanish.span) == (error.kind, error.span)


@pytest.mark.parametrize("kind, text, words, hint", [
    ("regex", r"(a)\1", "the backreference “\\1” is not supported", "write the group's text out again, explicitly"),
    ("json_schema", '{"type":"integer","minimum":5,"maximum":2}',
     "no JSON value satisfies this schema: “minimum” is 5 and “maximum” is 2: no number satisfies both",
     "correct the conditions that contradict each other"),
    ("json_schema", '{"type":"object","required":["b"],"additionalProperties":false}',
     "the property “b” is required, but \"additionalProperties\": false allows no property outside “properties”",
     "correct the conditions that contradict each other"),
])
def test_the_english_page_names_the_reason_and_a_real_fix(english, kind, text, words, hint):
    with pytest.raises(ConstraintError) as info:
        compile_constraint(kind, text)
    error = info.value
    assert words in error.message and error.hint == hint, (error.message, error.hint)
    assert "correct the schema at" not in error.hint and "is not regular" != error.hint
    spanish = in_language("es", lambda: pytest.raises(ConstraintError, compile_constraint, kind, text).value)
    assert (spanish.kind, spanish.span) == (error.kind, error.span)


@pytest.mark.parametrize("code, i", [(code, i) for code in sorted(CASES) for i in range(len(CASES[code]))])
def test_each_code_gets_a_curated_english_message(english, code, i):
    """Every code the catalog covers has its English text: the same kind, a fix, and neither
    Spanish words nor the masker's raw line (its positions from 0, its "fix:")."""
    case = CASES[code][i]
    if callable(case):
        exc = _raised(case)
        error, spanish = english_error(exc, "", ""), spanish_error(exc, "", "")
    else:
        error = pytest.raises(ConstraintError, compile_constraint, *case).value
        spanish = in_language("es", lambda: pytest.raises(ConstraintError, compile_constraint, *case).value)
    assert (error.kind, error.span) == (spanish.kind, spanish.span)
    assert error.kind == code and error.hint, (code, error.message)
    assert "fix:" not in error.message and "counts positions" not in error.message
    shown = " ".join(line for line in error.message.split("\n") if not line.startswith("  ")) + " " + error.hint
    assert not re.search(r"[«»]|\b(de|que|el|la|los|las|una|está|no es)\b", shown), shown


@pytest.mark.parametrize("kind, text, said", [
    ("gbnf", 'root ::= "a" |\nfoo', "at line 2, column 1"),
    ("json_schema", '{"type": "string",\n "pattern": "(abc"}', "at line 2, column 14"),
    ("json_schema", '{"type": "object", "frobnicate": {"not": 1}, "properties": {"a": {"format": "x-y"}}}',
     "at character"),
    ("json_schema", '{"type": "string" "enum": ["a"]}',
     "invalid JSON at character 19: a comma “,” is missing here between two items"),
    ("json_schema", '{"type": "string"', "invalid JSON: the text ends with something still open; “}” is missing"),
    ("choice", "", "the list of options is empty"),
    ("regex", "   ", "the regular expression is empty"),
])
def test_errors_of_every_kind_are_english_with_the_spanish_kind_and_span(english, kind, text, said):
    with pytest.raises(ConstraintError) as info:
        compile_constraint(kind, text)
    error = info.value
    assert said in error.message, error.message
    shown = visible(error_html(error))
    assert not spanish_left(shown), (spanish_left(shown), shown)
    spanish = in_language("es", lambda: pytest.raises(ConstraintError, compile_constraint, kind, text).value)
    assert (spanish.kind, spanish.span) == (error.kind, error.span)


@pytest.mark.parametrize("code, i", [(code, i) for code in sorted(CASES) for i, case in enumerate(CASES[code])
                                     if callable(case)])
def test_every_run_time_error_is_named_in_english(code, i):
    exc = _raised(CASES[code][i])
    error = english_error(exc, "", "")
    assert error.kind == spanish_error(exc, "", "").kind
    assert error.span is None and error.hint and not spanish_left(error.message), error.message


@pytest.mark.parametrize("change, words", [
    ({"seed": -1}, "the seed must be an integer from 0 to 4,294,967,295; it is −1 now"),
    ({"seed": 1e30}, "the seed must be an integer from 0 to 4,294,967,295; it is 10³⁰ now"),
    ({"top_k": 0}, "top-k must be an integer of 1 or more (or empty); it is 0 now"),
    ({"top_p": 1.5}, "top-p must be a number greater than 0 and at most 1 (or empty); it is 1.5 now"),
    ({"max_tokens": 2000}, "“max tokens” must be an integer from 1 to 200 (or empty); it is 2,000 now"),
    ({"temperature": 0}, "the temperature must be a number greater than 0; it is 0 now"),
    ({"kind": "frob"}, "there is no constraint kind “frob”"),
    ({"prompt": ""}, "the prompt is empty"),
])
def test_a_link_s_bad_setting_gets_an_english_message(model, tok, english, change, words):
    state = {"kind": "choice", "constraint": "a\nb", "prompt": "Hola ", "seed": 0, "temperature": 1.0,
             "top_k": None, "top_p": None, "max_tokens": 20, "stop_at_accept": False, "compare": False, **change}
    html = act("generate", json.dumps(state))._repr_html_()
    assert 'data-testid="lab-error"' in html
    assert words in visible(html), visible(html)
    assert not spanish_left(visible(html)), spanish_left(visible(html))


def test_a_link_whose_tree_does_not_fit_says_so_in_english(model, tok, english):
    state = {"kind": "choice", "constraint": "a\nb", "prompt": "Hola ", "seed": 0, "temperature": 1.0,
             "top_k": None, "top_p": None, "max_tokens": 20, "stop_at_accept": False, "compare": False,
             "tree": "r_0.9.5"}
    shown = visible(act("restore", json.dumps(state))._repr_html_())
    assert "The link cannot be opened." in shown and "branch 2 leaves branch 1 at position 9" in shown, shown


def test_the_address_s_tree_is_the_same_in_both_editions(names_lab):
    assert in_language("en", names_lab.tree) == in_language("es", names_lab.tree)


def test_preset_titles_are_english_and_prompts_stay_spanish(english):
    titles = preset_titles()
    assert set(titles) == set(PRESETS)
    for key, title in titles.items():
        assert title != PRESETS[key]["title"] and not spanish_left(title), title
    assert PRESETS["nombres"]["prompt"].startswith("¿Quién")


def _catalog_ids(po: pathlib.Path) -> dict:
    catalog = read_po(po.open("rb"))
    return {(m.id[0] if isinstance(m.id, (tuple, list)) else m.id): m.string for m in catalog if m.id}


@pytest.mark.parametrize("source, method, keywords, po", [
    ("py/lesson/laboratorio", "python", {"_": None, "ngettext": (1, 2)}, "laboratorio.po"),
    ("browser/js", "javascript", {"t": None, "tn": (1, 2)}, "laboratorio_js.po"),
])
def test_every_id_is_translated(source, method, keywords, po):
    """Every message the package (and lab.js, lab-vocab.js) uses has an English translation in its own catalog."""
    ids = _catalog_ids(LOCALE / po)
    pattern = "**.py" if method == "python" else "lab*.js"  # lab.js and lab-vocab.js
    found = [m for m in extract_from_dir(ROOT / source, [(pattern, method)], keywords=keywords)]
    assert found
    missing = []
    for _filename, _lineno, message, _comments, _context in found:
        key = message[0] if isinstance(message, (tuple, list)) else message
        translated = ids.get(key)
        if not translated or (isinstance(translated, (tuple, list)) and not all(translated)):
            missing.append(key)
    assert not missing, missing


def test_the_page_writes_english_numbers_as_python_does():
    """numbers.js's formatNumber on an English page (the field check's «it is … now») against
    en_number, run in Node (tests/site/test_numbers_js.py)."""
    from tests.site.test_numbers_js import NODE, in_js
    if NODE is None:
        pytest.skip("no Node here")
    values = [5.5, -1, 1e30, -2.5e-9, 20000, 4294967295, 0.0001, 1e-5, 123456.789, 1e16, 1e15 + 0.5, 2**53 + 2.0,
              1.7976931348623157e308, 5e-324, 0.1, 99999.5, 1e21, 12345678.9, 1234]
    assert in_js([("number", v, "en") for v in values]) == [en_number(v) for v in values]


def test_run_time_masker_errors_in_english_name_the_limit(english):
    from masker.errors import LimitExceeded
    exc = LimitExceeded("the automaton needs too many DFA states", "max_states", 20000, "simplify it",
                        code="limit.dfa_states")
    error = english_error(exc, "regex", "")
    assert error.message == "too large: the automaton needs too many states (limit: 20,000 states)"
    assert error.hint.startswith("simplify the constraint") and error.kind == "limit.dfa_states"
    assert isinstance(exc, MaskerError)
