"""The English edition of the page package: the log-weight picture, its table and the resampling
checker's report write English (no Spanish word, no decimal comma) with the same numbers as in
Spanish; ``check_resampling`` is ``comprobar_remuestreo``; every message id the package uses has
an English translation in ``distorsion.po``."""
from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import numpy as np
import pytest

from lesson import distorsion
from lesson.distorsion import check_resampling, comprobar_remuestreo
from lesson.distorsion.curves import WeightCurve, weight_curves_svg, weight_curves_table
from lesson.distorsion.exercise import EXTRA_CASES, U, WEIGHTS, check
from lesson.i18n import each_language, get_language, set_language

PACKAGE = Path(distorsion.__file__).parent
PO = PACKAGE.parent / "locale" / "en" / "LC_MESSAGES" / "distorsion.po"
SPANISH = re.compile(r"posición|comilla|círculo|cierra|termina|pasa de|token de|\by\b|Aún|Correcto|pesos|"
                     r"sumas|puntos|partícula|índice|tu función|elige|lanza|casos", re.IGNORECASE)
DECIMAL_COMMA = re.compile(r"\d,\d")


@pytest.fixture
def english():
    saved = get_language()
    set_language("en")
    try:
        yield
    finally:
        set_language(saved)


def curves():
    return [WeightCurve("Benina", [b"{", b'"', b"Ben", b"ina", b'"', b"}"], [-1.0, -20.0, -0.5, -0.2, -15.25, -3.0]),
            WeightCurve("Almudena", [b"{", b'"', b"Al", b"mud", b"ena", b'"', b"}"],
                        [-1.0, -20.0, -0.3, -0.1, -0.2, -16.0, -2.0])]


def visible(html: str) -> str:
    """The text a reader sees or hears: element text, titles and aria-labels."""
    labels = " ".join(re.findall(r'aria-label="([^"]*)"', html))
    return unescape(re.sub(r"<[^>]+>", " ", html) + " " + labels)


def numbers(text: str) -> list[float]:
    """Every number of a text written either way (decimal comma or point, minus sign)."""
    found = re.findall(r"[−-]?\d+(?:[.,]\d+)?", text)
    return [float(n.replace("−", "-").replace(",", ".")) for n in found]


def test_the_picture_and_table_in_english_have_no_spanish_and_the_same_numbers(english):
    both_svg = each_language(weight_curves_svg, curves())
    both_table = each_language(weight_curves_table, curves())
    assert get_language() == "en"  # each_language restores the language it found
    for html in (both_svg["en"], both_table["en"]):
        text = visible(html)
        assert not SPANISH.search(text), SPANISH.search(text)
        assert not DECIMAL_COMMA.search(text), DECIMAL_COMMA.search(text)
    assert "position j" in both_svg["en"] and "Benina: closing quote at 5 (ring)" in both_svg["en"]
    assert "ln w of the prefix against the position, for Benina and Almudena" in both_svg["en"]
    assert "where ln w drops from −21.7 to −37.0, and ends at −40.0" in both_svg["en"]
    assert "Benina&#x27;s token" in both_table["en"] and ">position<" in both_table["en"]
    assert "−37.0" in both_table["en"] and "−37,0" in both_table["es"]
    # the same picture apart from its words: every attribute that carries data is equal
    data = re.compile(r'(?:data-[\w-]+|c[xy]|points|x[12]?|y[12]?)="[^"]*"')
    assert data.findall(both_svg["en"]) == data.findall(both_svg["es"])
    for es, en in ((both_svg["es"], both_svg["en"]), (both_table["es"], both_table["en"])):
        assert numbers(visible(en)) == numbers(visible(es))


def test_the_spanish_picture_is_unchanged_by_the_catalog():
    assert get_language() == "es"
    svg, table = weight_curves_svg(curves()), weight_curves_table(curves())
    assert "posición j" in svg and "Benina: comilla de cierre en 5 (círculo)" in svg
    assert "ln w del prefijo frente a la posición, para Benina y Almudena" in svg
    assert "token de Benina" in table and "−37,0" in table


def test_check_resampling_is_the_same_checker():
    def right(weights, u):
        acc, m = np.cumsum(weights) / np.sum(weights), len(weights)
        out = []
        for k in range(m):
            i = 0
            while i < m - 1 and acc[i] <= (u + k) / m:
                i += 1
            out.append(i)
        return out
    assert "check_resampling" in distorsion.__all__ and "comprobar_remuestreo" in distorsion.__all__
    assert check_resampling(right).ok and comprobar_remuestreo(right).ok
    wrong = lambda w, u: list(range(len(w)))  # noqa: E731
    a, b = check_resampling(wrong), comprobar_remuestreo(wrong)
    assert (a.ok, a.index, a.case) == (b.ok, b.index, b.case) == (False, 2, (WEIGHTS, U))


@pytest.mark.parametrize("answer", [
    lambda w, u: list(range(len(w))),                  # a wrong index
    lambda w, u: [],                                   # a wrong length
    lambda w, u: 1 / 0,                                # an error in the reader's code
    None,                                              # not a list
    [0, 1.5, 1, 3, 4],                                 # not integers
])
def test_the_checkers_report_in_english(english, answer):
    v = check_resampling(answer)
    assert not v.ok
    text = str(v)
    assert text.startswith("Not yet: ")
    assert not SPANISH.search(text), SPANISH.search(text)
    assert not DECIMAL_COMMA.search(text), text
    html = v._repr_html_()
    assert 'data-testid="resampling-check"' in html and 'data-ok="false"' in html


def test_the_english_report_has_the_spanish_numbers(english):
    def wrong(w, u):
        return list(range(len(w)))
    en = check_resampling(wrong)
    set_language("es")
    es = comprobar_remuestreo(wrong)
    set_language("en")
    assert (en.index, en.case) == (es.index, es.case)
    assert len(en.lines) == len(es.lines)
    for a, b in zip(en.lines, es.lines):
        # the lists are "[0.100, 0.500]" in English and "[0,100; 0,500]" in Spanish
        assert numbers(a.replace(", ", " ")) == numbers(b.replace("; ", " ")), (a, b)
    text = str(en)
    assert ("Not yet: with weights [0.100, 0.400, 0.050, 0.300, 0.150] and u = 0.30, the first index that "
            "differs is k = 2: your answer picks particle 2, and the point (u + 2) / 5 = 0.460 falls in "
            "particle 1.") in text
    assert "The cumulative sums of the normalised weights: [0.100, 0.500, 0.550, 0.850, 1.000]." in text
    assert "The M = 5 points (u + k) / M, k = 0, …, 4: [0.060, 0.260, 0.460, 0.660, 0.860]." in text
    assert "0 indices" in str(check_resampling(lambda w, u: []))
    assert "ZeroDivisionError" in str(check_resampling(lambda w, u: 1 / 0))


def test_a_right_answer_is_told_so_in_english(english):
    def right(w, u):
        acc, m = np.cumsum(w) / np.sum(w), len(w)
        return [min(int(np.searchsorted(acc, (u + k) / m, side="right")), m - 1) for k in range(m)]
    v = check_resampling(right)
    assert v.ok and str(v) == (f"Correct: your function gives the same indices as the library in all "
                               f"{1 + len(EXTRA_CASES)} cases tried.")
    listed = check(right(list(WEIGHTS), U))
    assert listed.ok and str(listed) == ("Correct with weights [0.100, 0.400, 0.050, 0.300, 0.150] and "
                                         f"u = 0.30: {right(list(WEIGHTS), U)}.")


def test_every_message_id_of_the_package_is_translated():
    """Babel's extractor over the package against the catalog: no id missing or left empty."""
    from babel.messages.extract import extract_from_dir
    from babel.messages.pofile import read_po
    used = {m[2] if isinstance(m[2], str) else m[2][0]
            for m in extract_from_dir(str(PACKAGE), method_map=[("**.py", "python")],
                                      keywords={"_": None, "ngettext": (1, 2)})}
    assert used, "no message found: the extractor did not read the package"
    with PO.open("rb") as f:
        catalog = read_po(f)
    translated = {m.id if isinstance(m.id, str) else m.id[0] for m in catalog if m.id and m.string}
    assert used <= translated, sorted(used - translated)
