"""The English edition of «Del esquema al autómata» (``templates/en/automata.html``, «From schema to
automaton») and the English text of ``lesson.automata``: every view rendered with
``set_language("en")`` has no Spanish label, writes its numbers the English way and shows the same
numbers as in Spanish; the checker's messages are English; every message id of the package has an
English translation in ``automata.po``; the English template has the Spanish one's structure; and
the English cells compute what the Spanish ones do."""

from __future__ import annotations

import html
import io
import re
from collections import Counter
from pathlib import Path

import pytest

from lesson import compile_json_schema, compile_regex, generate, sample_batch, sample_until_invalid
from lesson.automata import (CrossingTable, DfaDiagram, MaskIndex, PhoneCheck, StackPlot,
                             check_phone_dfa, compare_fast_forward, stack_growth, trie_walk)
from lesson.automata.figures import DATE, PHONE, PHONE_PROMPT, SCHEMA, WORD, YES_NO, YES_NO_PROMPT
from lesson.automata.trie import pruning_svg
from lesson.course import PROMPT
from lesson.i18n import get_language, set_language

ROOT = Path(__file__).resolve().parents[3]
SPANISH = ROOT / "templates" / "automata.html"
ENGLISH = ROOT / "templates" / "en" / "automata.html"
CATALOG = ROOT / "py" / "lesson" / "locale" / "en" / "LC_MESSAGES" / "automata.po"

# Spanish words of the package's views and messages (none is an English word)
SPANISH_WORDS = re.compile(
    r"\b(estados?|aceptación|aristas?|permitid[oa]s?|descartad[oa]s|recorrido|ramas?|pasos?|"
    r"profundidad|ítems|calculado|máscaras?|muestras|números|llamadas?|bucle|adelanto|partición|"
    r"particiones|veces|válidas|desde|hasta|tras|Tras|Correcto|Pista|enmascarador|patrón|"
    r"diagrama|Diagrama|autómata|índice|Índice|sin|con|de|del|los|las|una?|que|mitad|carácter|"
    r"primer|vivo|muerto|poda|filas|distint[oa]s)\b")


@pytest.fixture
def in_english():
    """Run a test in English, and leave the language as it was."""
    saved = get_language()
    set_language("en")
    try:
        yield
    finally:
        set_language(saved)


def visible(markup: str, data: bool = True) -> str:
    """The text a reader sees or hears: the tags' text, and every aria-label and <title>; without
    ``data``, less the tokens and texts the model and the vocabulary write (Spanish in both
    editions: ``<span class="tok…">``, ``<code>``)."""
    markup = re.sub(r"<style.*?</style>", "", markup, flags=re.S)
    if not data:
        markup = re.sub(r'<span class="tok[^"]*"[^>]*>.*?</span>|<code[^>]*>.*?</code>', " ", markup, flags=re.S)
    labels = " ".join(re.findall(r'aria-label="([^"]*)"', markup))
    return html.unescape(re.sub(r"<[^>]+>", " ", markup) + " " + labels)


def numbers(text: str, language: str) -> Counter:
    """The numbers of ``text``, as floats: Spanish (decimal comma, thin-space groups, ·10ⁿ) or
    English (decimal point, comma groups, ×10ⁿ). Token labels and patterns hold digits too: both
    languages print them alike, so they count the same."""
    sup = str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")
    text = text.replace("\u2212", "-")
    if language == "es":
        text = re.sub(r"(?<=\d)\u202f(?=\d{3})", "", text)
        text = re.sub(r"(?<=\d),(?=\d)", ".", text).replace("·10", "e")
    else:
        text = re.sub(r"(?<=\d),(?=\d{3})", "", text).replace("×10", "e")
    text = re.sub(r"e([⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)", lambda m: "e" + m.group(1).translate(sup), text)
    return Counter(float(x) for x in re.findall(r"\d+(?:\.\d+)?(?:e-?\d+)?", text))


def both(make) -> dict[str, str]:
    """``make()``'s HTML made and rendered in each language (a verdict's sentences are written
    when it is computed, as in a page's kernel)."""
    saved = get_language()
    try:
        out = {}
        for language in ("es", "en"):
            set_language(language)
            out[language] = make()._repr_html_()
        return out
    finally:
        set_language(saved)


@pytest.fixture(scope="module")
def date():
    return compile_regex(DATE)


def views(model, tok, date):
    m = date.matcher(tok.vocab)
    m.consume_bytes("12 de ")
    phone = compile_regex(PHONE)
    fast = compare_fast_forward(model, tok, PROMPT, compile_json_schema(SCHEMA), seeds=range(2))
    for r in fast.stepwise + fast.fast:
        r.ms = 1234.5  # a measured time, fixed so that both languages print the same one
    masked = sample_batch(model, tok, PHONE_PROMPT, phone, n=20, seed=0)
    free = sample_until_invalid(model, tok, PHONE_PROMPT, phone, n=20, seed=0, max_tokens=11)
    starter = {0: {b: 1 for b in b"6789"}, 1: {b: 2 for b in b"0123456789"}, 2: {}}
    return {
        "diagram": lambda: DfaDiagram(compile_regex(WORD).automaton, WORD),
        "crossings": lambda: CrossingTable(date, tok.vocab, "12 ", limit=2),
        "trie walk": lambda: trie_walk(date.automaton, m.state, tok.vocab),
        "mask index": lambda: MaskIndex(date, tok.vocab),
        "stack plot": lambda: StackPlot(stack_growth(range(1, 5), dfa_depths=range(1, 4))),
        "fast-forward": lambda: fast,
        "phones": lambda: PhoneCheck(PHONE, masked, free, (12.345, 0.5)),
        "check: mask": lambda: check_phone_dfa(starter, {11}, tok.vocab),
        "check: wrong start": lambda: check_phone_dfa({0: {b: 1 for b in b"56789"}, 1: {}}, {11}, tok.vocab),
        "check: missing state": lambda: check_phone_dfa({0: {b: 1 for b in b"6789"}}, {11}, tok.vocab),
        "check: end": lambda: check_phone_dfa(_solution(), {10, 11}, tok.vocab),
        "check: shape": lambda: check_phone_dfa({0: {"6": 1}}, {11}, tok.vocab),
        "check: ok": lambda: check_phone_dfa(_solution(), {11}, tok.vocab),
    }


def _solution() -> dict:
    dfa = {0: {b: 1 for b in b"6789"}, 11: {}}
    for s in (1, 2, 4, 5, 6, 8, 9, 10):
        dfa[s] = {b: s + 1 for b in b"0123456789"}
    for s in (3, 7):
        dfa[s] = {ord(" "): s + 1}
    return dfa


@pytest.fixture(scope="module")
def rendered(model, tok, date):
    return {name: both(make) for name, make in views(model, tok, date).items()}


@pytest.mark.parametrize("name", ["diagram", "crossings", "trie walk", "mask index", "stack plot",
                                  "fast-forward", "phones", "check: mask", "check: wrong start",
                                  "check: missing state", "check: end", "check: shape", "check: ok"])
def test_a_view_in_english_has_no_spanish_and_the_same_numbers(rendered, name):
    es, en = (visible(rendered[name][lang]) for lang in ("es", "en"))
    en_words = visible(rendered[name]["en"], data=False)
    assert not SPANISH_WORDS.findall(en_words), (name, SPANISH_WORDS.findall(en_words), en)
    assert "·10" not in en and "\u202f" not in en and "«" not in en
    assert not re.search(r"\d,\d{1,2}(?!\d)", en)  # a decimal comma (English groups by three)
    assert numbers(en, "en") == numbers(es, "es"), name


def test_the_spanish_views_are_unchanged_by_the_english_catalog(rendered):
    """Spanish stays the source text: a few of its exact sentences."""
    assert "Las aristas, en texto" in rendered["diagram"]["es"]
    assert "todos, de más a menos aristas" not in rendered["crossings"]["es"]  # limit=2: the top rows
    assert "que recorren más aristas (con los empates)" in rendered["crossings"]["es"]
    assert "Correcto: tu DFA y el de compile_regex" in rendered["check: ok"]["es"]
    assert "Correct: your DFA and compile_regex" in rendered["check: ok"]["en"]


def test_the_checker_speaks_english(tok, in_english):
    starter = {0: {b: 1 for b in b"56789"}, 1: {}}
    text = str(check_phone_dfa(starter, {11}, tok.vocab))
    assert text.startswith("At the start (empty prefix) the masks differ.")
    assert "Your DFA allows 1 token that the masker does not: “5”." in text
    assert "Hint: at the start, your DFA (in its state 0) accepts the byte “5” and moves to state 1" in text
    missing = str(check_phone_dfa({0: {b: 1 for b in b"6789"}}, {11}, tok.vocab))
    assert "is not a key of the dict: add it (with {} if no edge leaves it)" in missing
    shape = str(check_phone_dfa([], {11}, tok.vocab))
    assert shape == "Cannot compare yet: the DFA must be a dict {state: {byte: next state}}, and it is a list."
    end = str(check_phone_dfa(_solution(), {10, 11}, tok.vocab))
    assert "the masks agree, but the end verdicts do not" in end and "remove it from the accepting states" in end


def test_the_trie_picture_speaks_english(in_english):
    svg = pruning_svg({1: (1, 1000, 0), 2: (0, 2, 3)})
    assert "1 byte" in svg and "2 bytes" in svg and "1,000 discarded at their node" in svg


# ---------------------------------------------------------------- the catalog

def test_every_message_of_the_package_is_translated():
    from babel.messages.extract import extract_from_dir
    from babel.messages.pofile import read_po
    catalog = read_po(io.BytesIO(CATALOG.read_bytes()))
    found = {(m[2] if isinstance(m[2], str) else tuple(m[2])) for m in extract_from_dir(
        str(ROOT / "py" / "lesson" / "automata"), method_map=[("**.py", "python")],
        keywords={"_": None, "ngettext": (1, 2)})}
    assert len(found) > 75
    for msgid in found:
        message = catalog.get(msgid if isinstance(msgid, str) else msgid[0])
        assert message is not None and all(message.string if isinstance(message.string, tuple)
                                           else [message.string]), msgid
        # the same {placeholders} in the translation
        ids = msgid if isinstance(msgid, tuple) else (msgid,)
        texts = message.string if isinstance(message.string, tuple) else (message.string,)
        fields = {f for i in ids for f in re.findall(r"(?<!\{)\{(\w*)\}", i)}
        assert all({f for f in re.findall(r"(?<!\{)\{(\w*)\}", t)} == fields for t in texts), msgid
        # a row of column headers («a|b|c», lesson.automata.route.header_cells): as many columns
        assert all(t.count("|") == ids[0].count("|") for t in texts), msgid


# ---------------------------------------------------------------- the English template

PAGES = {"mascara.html": "mask.html", "distorsion.html": "distortion.html",
         "trampas.html": "pitfalls.html", "niveles.html": "levels.html", "marco.html": "python.html",
         "laboratorio.html": "lab.html", "index.html": "index.html"}


def outline(text: str, language: str) -> dict:
    quizzes = re.split(r"quiz_question\(", text)[1:]
    hrefs = re.findall(r'href="([^"{]+)"', text)
    if language == "es":
        hrefs = [re.sub(r"^[a-z]+\.html", lambda m: PAGES.get(m.group(0), m.group(0)), h) for h in hrefs]
    return {"ids": re.findall(r'id="([^"]+)"', text),
            "headings": re.findall(r'heading\((\d), "(\d+)\.', text),
            "cells": re.findall(r'call cell\("[^"]*", name="([^"]+)"', text),
            "quizzes": re.findall(r'quiz_question\("([^"]+)"', text),
            "options": [["correct=" in o.split(")")[0] for o in re.split(r"quiz_option\(", q)[1:]]
                        for q in quizzes],
            "hrefs": hrefs, "fig": sorted(set(re.findall(r"fig\.\w+", text))),
            "cites": re.findall(r'cites\("([^"]+)"\)', text),
            "testids": re.findall(r'data-testid="([^"]+)"', text)}


def test_the_english_template_has_the_spanish_structure():
    es, en = (outline(p.read_text(encoding="utf-8"), lang) for p, lang in ((SPANISH, "es"), (ENGLISH, "en")))
    for key in es:
        assert en[key] == es[key], key
    text = ENGLISH.read_text(encoding="utf-8")
    assert not re.search(r"\|\s*es_\w+", text)  # the English filters only


def cell_source(name: str) -> str:
    found = re.search(r'\{% call cell\("[^"]*", name="' + re.escape(name) + r'"\) %\}(.*?)\{% endcall %\}',
                      ENGLISH.read_text(encoding="utf-8"), flags=re.S)
    return html.unescape(found.group(1))


def solution_source() -> str:
    found = re.search(r'<code data-testid="phone-solution">(.*?)</code>', ENGLISH.read_text(encoding="utf-8"),
                      flags=re.S)
    return html.unescape(found.group(1))


def test_the_english_exercise_starter_is_wrong_and_its_solution_right(tok, in_english):
    scope: dict = {}
    exec(cell_source("ejercicio").split("report =")[0], scope)
    starter = check_phone_dfa(scope["phone"], scope["phone_accepting"], tok.vocab)
    assert not starter.ok and starter.problem == "máscara" and starter.prefix == b"600 0"
    exec(solution_source(), scope)
    assert scope["phone"] == _solution() and scope["phone_accepting"] == {11}
    assert str(check_phone_dfa(scope["phone"], scope["phone_accepting"], tok.vocab)).startswith("Correct:")


def test_the_english_loop_of_section_1_writes_what_generate_writes(model, tok, capsys):
    scope: dict = {}
    exec(cell_source("mano"), scope)
    exec(cell_source("bucle"), scope)
    exec(solution_source(), scope)
    text = scope["sample_with_dfa"](scope["phone"], scope["phone_accepting"], PHONE_PROMPT)
    assert text == generate(model, tok, PHONE_PROMPT, compile_regex(PHONE), seed=0).text
    assert scope["sample_with_dfa"](scope["dfa"], scope["accepting"], YES_NO_PROMPT) == generate(
        model, tok, YES_NO_PROMPT, compile_regex(YES_NO), seed=0).text
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("allowed at the start:")
    assert re.search(r"state 0: \d+ allowed, chose .* with q̃ = \d\.\d{3}; moves to state 1\n", out)
