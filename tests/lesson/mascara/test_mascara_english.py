"""«La máscara» in English: the page package's pictures drawn in each language, with the same
data and the same numbers, and the figures that hold them for both editions."""

from __future__ import annotations

import re

import pytest

import build
from lesson.i18n import _, get_language, set_language
from lesson.mascara.figures import favourite_changes
from lesson.mascara.picture import factors_svg, names_svg
from lesson.numbers import en_decimal, en_sci, es_decimal, es_sci
from sitebuild.figures import lesson_figures

PAGE = next(spec for spec in build.PAGES if spec["out"] == "mascara.html")
ROWS = [{"name": "Benina", "conditional": 0.71234, "masked": 0.01234},
        {"name": "Juliana", "conditional": 0.0012, "masked": 0.6}]
WHY = {"name": 2.0, "quote": 30000.0, "brace": 5.0, "paths": 1.0004, "ratio": 300120.0}
SPANISH_WORDS = ("condicionada", "máscara", "nombre", "resto", "comilla", "llave", "caminos",
                 "cociente", "escala", "Probabilidad")


@pytest.fixture
def english():
    set_language("en")
    try:
        yield
    finally:
        set_language("es")


@pytest.fixture(scope="module")
def fig():
    return lesson_figures([PAGE], build.ROOT, cache=build.ROOT / ".cache")["mascara.html"]


def data_attributes(svg: str) -> list[str]:
    """Every data-* attribute of the picture, in order: what it draws, whatever the language."""
    return re.findall(r'data-[a-z-]+="[^"]*"', svg)


def geometry(svg: str) -> list[str]:
    """Every rect, line and bar position: the drawing without its words."""
    return re.findall(r'<(?:rect|line) [^>]*>', svg)


def decimal_comma(svg: str):
    """A number written with a decimal comma ("0,7123", "1,00"), not a thousands comma ("1,000")."""
    return re.search(r"\d,(?:\d{1,2}|\d{4,})(?!\d)", svg)


def spanish_words_in(svg: str) -> list[str]:
    return [w for w in SPANISH_WORDS if w in svg]


def test_the_names_picture_in_english_has_english_labels_and_numbers(english):
    svg = names_svg(ROWS)
    assert spanish_words_in(svg) == []
    assert "conditional p(g | x, G)" in svg and "mask q̃(g | x)" in svg
    assert "Probability of each name." in svg
    assert f"Juliana: conditional {en_decimal(0.0012, 4)}, mask {en_decimal(0.6, 4)}" in svg
    assert not decimal_comma(svg)
    assert f">{en_decimal(0.71234, 4)}</text>" in svg


def test_the_names_picture_draws_the_same_bars_in_both_languages(english):
    en = names_svg(ROWS)
    set_language("es")
    es = names_svg(ROWS)
    assert data_attributes(en) == data_attributes(es)
    assert geometry(en) == geometry(es)
    assert f">{es_decimal(0.71234, 4)}</text>" in es and "condicionada p(g | x, G)" in es


def test_the_factors_picture_in_english_has_english_labels_and_numbers(english):
    svg = factors_svg(WHY)
    assert spanish_words_in(svg) == []
    for label in ("rest of the name", "closing quote", "closing brace", "other paths"):
        assert label in svg
    assert f"×{en_sci(WHY['ratio'], 3)}</text>" in svg and "×" + en_sci(WHY["ratio"], 3) == "×3.00×10⁵"
    assert "other paths ×1.00" in svg  # below 1.001: left out of the bar, kept in the title
    assert f"The ratio ×{en_sci(WHY['ratio'], 3)} on a log scale" in svg
    assert not decimal_comma(svg)
    assert ">1,000</text>" in svg  # the ticks: 1, 10, …, 1,000,000


def test_the_factors_picture_draws_the_same_segments_in_both_languages(english):
    en = factors_svg(WHY)
    set_language("es")
    es = factors_svg(WHY)
    assert data_attributes(en) == data_attributes(es)
    assert geometry(en) == geometry(es)
    assert f"×{es_sci(WHY['ratio'], 3)}</text>" in es and "otros caminos ×1,00" in es


def test_every_picture_id_of_the_package_is_translated(english):
    for message in ("resto del nombre", "comilla de cierre", "llave de cierre", "otros caminos",
                    "condicionada p(g | x, G)", "máscara q̃(g | x)", "Probabilidad de cada nombre.",
                    "{name}: condicionada {conditional}, máscara {masked}",
                    "El cociente ×{ratio}, en escala logarítmica, como producto de sus factores:"):
        assert _(message) != message


def test_the_favourite_changes_carry_a_code_beside_the_spanish_word():
    sweep = [{"temperature": t, "top_conditional": c, "top_conditional_p": 0.5, "top_masked": m,
              "top_masked_q": 0.4} for t, c, m in ((0.5, "A", "B"), (1.0, "A", "B"), (2.0, "C", "D"))]
    changes = favourite_changes(sweep)
    assert [(c["who"], c["kind"], c["name"]) for c in changes] == [
        ("condicionada", "conditional", "C"), ("máscara", "masked", "D")]


def test_the_pages_pictures_exist_in_both_languages_with_the_same_data(fig):
    assert get_language() == "es"  # the figures left the language as they found it
    for key in ("names_svg", "factors_svg", "walk_view"):
        assert set(fig[key]) == {"es", "en"}
    for key in ("names_svg", "factors_svg"):
        assert data_attributes(fig[key]["en"]) == data_attributes(fig[key]["es"])
        assert spanish_words_in(fig[key]["en"]) == [] and not decimal_comma(fig[key]["en"])
    assert f"×{en_sci(fig['why']['ratio'], 3)}</text>" in fig["factors_svg"]["en"]
    for r in fig["enumeration"]["rows"]:
        assert f">{en_decimal(r['masked'], 4)}</text>" in fig["names_svg"]["en"]
    for c in fig["sweep_changes"]:
        assert c["kind"] == {"condicionada": "conditional", "máscara": "masked"}[c["who"]]
