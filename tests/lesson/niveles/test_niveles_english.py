"""«Niveles de garantía» in English (``en/levels.html``): the page package's views, tables and
pictures write English under ``set_language("en")``, with the same numbers as in Spanish and no
decimal comma; every message id the package uses has a translation in ``niveles.po``; the English
template keeps the Spanish one's cells, quizzes and section ids, and glosses each Spanish prompt."""

import re
from pathlib import Path

import pytest

from lesson.i18n import set_language
from lesson.niveles.handmask import ByteTrace, FsmAgreement, enum_object_machine
from lesson.niveles.levels import (PROMPT, RETRY_QUESTIONS, LevelResult, LevelsTable, RetryTable,
                                   StackCost, with_retries)
from lesson.niveles.pictures import DepthHistogram, answers, retry_svg

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = ROOT / "py" / "lesson" / "niveles"
CATALOG = ROOT / "py" / "lesson" / "locale" / "en" / "LC_MESSAGES" / "niveles.po"
SPANISH_WORDS = ["respuesta", "nivel ", "cómo", "se leen", "cumplen", "posiciones", "tiempo", "sin medir",
                 "válida", "pregunta", "falla", "fallos", "media de", "cuenta ingenua", "intentos",
                 "probabilidad", "profundidad", "máscaras", "estado", "rechazado", "veces", "byte a byte",
                 "tabla", "gráfica", "Eje"]


@pytest.fixture
def english():
    set_language("en")
    try:
        yield
    finally:
        set_language("es")


def visible(html: str) -> str:
    """The text a reader sees (and hears: aria-labels and captions), without the stylesheet,
    tags or test hooks."""
    html = re.sub(r"<style>.*?</style>", "", html, flags=re.S)
    labels = " ".join(re.findall(r'aria-label="([^"]*)"', html))
    return re.sub(r"<[^>]+>", " ", html) + " " + labels


def numbers(text: str, language: str) -> list[float]:
    """The numbers in a view's text, read in ``language``'s format (decimal comma and thin-space
    groups in Spanish, decimal point and comma groups in English)."""
    text = text.replace("\u2212", "-")
    if language == "es":
        text = re.sub(r"(?<=\d)[\u2009\u202f ](?=\d{3}\b)", "", text).replace(",", ".")
        pattern = r"\d+(?:\.\d+)?(?:·10[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)?"
    else:
        text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)
        pattern = r"\d+(?:\.\d+)?(?:×10[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)?"
    return re.findall(pattern, text)


def both(make):
    """``make()``'s HTML in Spanish and in English."""
    set_language("es")
    es = make()
    set_language("en")
    try:
        en = make()
    finally:
        set_language("es")
    return es, en


def assert_english_twin(make):
    es, en = both(make)
    text = visible(en)
    for word in SPANISH_WORDS:
        assert word not in text, (word, text)
    assert not re.search(r"\d,\d{1,2}\b|\d,\d{4,}", text), text  # no decimal comma
    es_numbers = [n.replace("·", "×") for n in numbers(visible(es), "es")]
    assert numbers(text, "en") == es_numbers
    # the test hooks (data-*) do not depend on the language
    assert re.findall(r'data-[\w-]+="[^"]*"', es) == re.findall(r'data-[\w-]+="[^"]*"', en)
    return en


LEVELS = [LevelResult(0, "x", 200, 0, 0, 227, 0.5), LevelResult(1, "x", 40, 0, 0, 227, 0.1),
          LevelResult(2, "x", 100, 100, 0, 2122, 0.8),
          LevelResult(3, "x", 12000, 12000, 12000, 194520, 1.234),
          LevelResult(4, "x", 100, 100, 100, 3657, 6.7)]


def test_levels_table_in_english():
    en = assert_english_twin(lambda: LevelsTable(LEVELS)._repr_html_())
    assert "not measured: 0 valid of 200" in en and "model positions per valid answer" in en
    assert ">12,000<" in en and ">16.2<" in en


def test_retry_table_and_plot_in_english():
    questions = [(q, texts, p) for (q, texts), p in zip(RETRY_QUESTIONS, [0.9165, 0.114, 0.0436, 0.0064, 2.27e-8])]
    en = assert_english_twin(lambda: RetryTable(questions)._repr_html_())
    assert "fails 5 times in a row" in en and "2.3×10⁻⁸" in en
    assert "probability of failing" in en and 'aria-label="Probability of failing k tries in a row. k = 1:' in en
    # the prompts are the model's: they stay in Spanish
    assert "¿Quién llama?" in en
    rows = [{"k": 1, "per_question": 0.8, "naive": 0.8}, {"k": 2, "per_question": 0.7, "naive": 0.6}]
    assert_english_twin(lambda: retry_svg(rows, [0.2]))


def test_stack_cost_and_the_machine_s_views_in_english():
    en = assert_english_twin(lambda: StackCost(LEVELS[3], LEVELS[4])._repr_html_())
    assert "times the positions per valid answer" in en
    en = assert_english_twin(lambda: FsmAgreement(12, 0, 0, 114, 12)._repr_html_())
    assert "12 answers, 12 positions compared: the two masks agree at all of them" in en
    en = assert_english_twin(lambda: FsmAgreement(1234, 3, 7, 5, 12)._repr_html_())
    assert "1,234 positions compared: they differ at 3" in en
    start, step = enum_object_machine({"verbo": ["amar"], "tiempo": ["presente"]})
    en = assert_english_twin(lambda: ByteTrace(step, ("key", 0, b'"verbo'), b'":"x')._repr_html_())
    assert "rejected: no text continues" in en and "byte by byte" in en


def test_depth_histogram_in_english_agrees_in_number():
    en = assert_english_twin(lambda: DepthHistogram({1: 99, 2: 1, 3: 0})._repr_html_())
    assert "depth 1: 99 answers; depth 2: 1 answer; depth 3: 0 answers" in en
    set_language("en")
    try:
        assert [answers(n) for n in (0, 1, 1234)] == ["0 answers", "1 answer", "1,234 answers"]
    finally:
        set_language("es")


def test_default_level_names_follow_the_language(english):
    tries = LevelResult(0, "x", 10, 0, 0, 10, 0.1, texts=["a"] * 10)
    assert with_retries(tries, 5).name == "validate and retry"
    set_language("es")
    assert with_retries(tries, 5).name == "validar y reintentar"


def test_every_message_of_the_package_has_an_english_translation():
    """Babel's extractor over the package, against the catalog: no id missing, none untranslated
    (an id outside a literal, an f-string inside ``_()``, would not be extracted at all: the
    views' English tests above catch those)."""
    pytest.importorskip("babel")
    from babel.messages.extract import extract_from_dir
    from babel.messages.pofile import read_po
    found = extract_from_dir(str(PACKAGE), method_map=[("**.py", "python")],
                             keywords={"_": None, "ngettext": (1, 2)})
    used = {m if isinstance(m, str) else m[0] for _, _, m, _, _ in found}
    with CATALOG.open("rb") as f:
        catalog = {(m.id if isinstance(m.id, str) else m.id[0]): m.string for m in read_po(f) if m.id}
    assert len(used) > 40, "the extractor found too few messages"
    missing = sorted(i for i in used if not catalog.get(i) or
                     (not isinstance(catalog[i], str) and not all(catalog[i])))
    assert not missing


# ---------------------------------------------------------------- the English template

SPANISH = (ROOT / "templates" / "niveles.html").read_text(encoding="utf-8")
ENGLISH = (ROOT / "templates" / "en" / "levels.html").read_text(encoding="utf-8")


def skeleton(template: str) -> dict:
    return {"ids": re.findall(r'id="([^"]+)"', template),
            "cells": re.findall(r'call cell\([^)]*name="([^"]+)"', template),
            "quizzes": re.findall(r'quiz_question\("([^"]+)"', template),
            "options": [block.count("quiz_option(") for block in template.split("quiz_question(")[1:]],
            "correct": [[("correct=true" in o) for o in block.split("quiz_option(")[1:]]
                        for block in template.split("quiz_question(")[1:]],
            "cites": re.findall(r'cites\("([^"]+)"\)', template),
            "figs": sorted(set(re.findall(r"fig\.[\w.]+", template)))}


def test_the_english_template_has_the_spanish_skeleton():
    es, en = skeleton(SPANISH), skeleton(ENGLISH)
    for key in es:
        assert en[key] == es[key], key


def test_the_english_template_links_to_english_pages_and_uses_english_numbers():
    links = re.findall(r'href="([^"#]+\.html)', ENGLISH)
    assert links and set(links) <= {"pitfalls.html", "mask.html", "automata.html", "distortion.html"}
    assert not re.search(r"\|\s*es_(decimal|sci|prob|int|percent)", ENGLISH)
    cells = "".join(re.findall(r"\{% call cell.*?\{% endcall %\}", ENGLISH, flags=re.S))
    assert not re.search(r"\bes_(decimal|sci|prob|int|percent)\b", cells)


def test_every_spanish_prompt_of_the_page_has_an_english_gloss():
    gloss = re.search(r"\{% set gloss = \{(.*?)\} %\}", ENGLISH, flags=re.S).group(1)
    keys = re.findall(r'"([^"]+)":', gloss)
    for prompt in [PROMPT] + [q for q, _ in RETRY_QUESTIONS]:
        assert prompt.strip() in keys, prompt
    assert "Conjuga un verbo. Responde en JSON." in ENGLISH and "(“Conjugate a verb." in ENGLISH
