"""The views and pictures of «Trampas y decisiones» in English (``lesson.i18n.set_language("en")``):
no Spanish label, no decimal comma, and the same numbers as the Spanish rendering of the same
data; the prose figures that are text (the sweep picture, its table, the MaskBench source) are
stored in both languages. Built on small hand-made results, so no model is needed."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest

from lesson.i18n import each_language, get_language, set_language
from lesson.trampas.budget import BudgetSplit, BudgetSweep
from lesson.trampas.budget_plot import sweep_desc, sweep_svg, sweep_table
from lesson.trampas.figures import ENGINE_FIGURES, engine_figures, engine_source
from lesson.trampas.studies import (AgeStudy, Answers, BudgetDemo, DateStudy, DepthBound, EnumScaling,
                                    FieldOrder, OrderFactors, scaling_svg)

SPANISH = ["respuesta", "respuestas", "válida", "válidas", "válido", "máscara", "presupuesto",
           "cortando", "cortada", "fecha", "fechas", "estados", "compilar", "caracteres",
           "profundidad", "edad", "edades", "Distancia", "según", "límite", "tras", "pista",
           "valores", "incompleto", "esquema", "fila", "primero", "condicionada", "Arriba",
           "abajo", "nombre", "Tiempo", "Escalas", "hilo", "ejecución", "esquemas", "de", "con", "sin"]


@pytest.fixture
def english():
    saved = get_language()
    set_language("en")
    yield
    set_language(saved)


class _Grammar:
    def accepts(self, data: bytes) -> bool:
        return data.endswith(b"}")


def _gen(text: str):
    return SimpleNamespace(text=text, bytes=text.encode(), token_ids=list(range(len(text) // 2)),
                           grammar=_Grammar(), complete=True)


def _views() -> list:
    """One of each view of the package, on hand-made data with numbers of every format."""
    names, hints = ["Ana", "Juan", "Luis"], ["a Ana", "a Juan", "a Luis"]
    answers = {k: {o: {"Ana": 0.2125, "Juan": 0.3, "Luis": 0.4875} for o in FieldOrder.ORDERS}
               for k in FieldOrder.KINDS}
    joint = {k: {o: {(h, n): (0.2 if h[2:] == n else 0.1) / 1.2 for h in hints for n in names}
                 for o in FieldOrder.ORDERS} for k in FieldOrder.KINDS}
    gens = [_gen('{"nombre":"Benina","edad":40}'), _gen('{"nombre":"Ben')]
    sweep = BudgetSweep([18, 20, 22], [0.0, 0.25, 1.0], [1.0, 1.0, 1.0], [3.5, 6.25, 11.0], 12.0, 40)
    return [AgeStudy([40, 40, 25, 130], ["x"] * 4, (18, 100), [True, True, True, False]),
            AgeStudy([40, 40], ["x"] * 2, (18, 100), [True, True]),
            FieldOrder(names, hints, joint, answers, {}),
            BudgetDemo(22, 18, gens, gens, gens),
            DateStudy(["2023-02-30", "1999-01-01"], [None, "2001-01-01"], 0.00123, 0.4),
            EnumScaling([10, 100, 10000], [1.5, 12.25, 1234.5], [30.0, 31.0, 45.0], [40, 400, 12345]),
            DepthBound([0, 1], [50, 12345], [100, 2000]),
            Answers(gens, "caption"),
            BudgetSplit(16, ["Benina", "Juliana"], [0.6, 0.4], [0.0, 1.0], [0.0, 1.0]),
            SimpleNamespace(_repr_html_=lambda: sweep_svg(sweep) + sweep_table(sweep)),
            SimpleNamespace(_repr_html_=lambda: scaling_svg(EnumScaling([10, 10000], [1.5, 1234.5],
                                                                        [30.0, 45.0], [40, 12345]))),
            OrderFactors(names, {o: {"Ana": -250.5, "Juan": -249.25, "Luis": -260.0} for o in FieldOrder.ORDERS},
                         {o: {"Ana": -45.5, "Juan": -51.0, "Luis": -44.0} for o in FieldOrder.ORDERS}, ("Ana", "Juan"))]


def _text(html: str) -> str:
    """The visible words of a view: no style sheet, no tags, no model text (``<code>``)."""
    html = html.split("</style>")[-1]
    html = re.sub(r"<code[^>]*>.*?</code>", " ", html, flags=re.S)
    html = re.sub(r"<(title|desc)[^>]*>", " ", html)  # their text stays
    return re.sub(r"<[^>]+>", " ", html)


def _numbers(text: str, language: str) -> list[float]:
    """Every number written in ``text`` the way ``language`` writes them (0,448 / 0.448; 12 345 /
    12,345), as floats, sorted."""
    if language == "es":
        found = re.findall(r"\d+(?:\u202f\d{3})*(?:,\d+)?", text)
        values = [float(n.replace("\u202f", "").replace(",", ".")) for n in found]
    else:
        found = re.findall(r"\d+(?:,\d{3})*(?:\.\d+)?", text)
        values = [float(n.replace(",", "")) for n in found]
    return sorted(values)


def test_every_view_in_english_has_no_spanish_word_and_the_spanish_numbers(english):
    english_html = [view._repr_html_() for view in _views()]
    set_language("es")
    spanish_html = [view._repr_html_() for view in _views()]
    set_language("en")
    for en, es in zip(english_html, spanish_html):
        text = _text(en)
        words = set(re.findall(r"[^\W\d_]+", text))
        assert not words & set(SPANISH), (sorted(words & set(SPANISH)), text[:300])
        assert not re.search(r"\d,\d{1,2}(?!\d)", text), text  # a decimal comma, not a thousands one
        assert "\u202f%" not in text and " %" not in text
        assert _numbers(text, "en") == _numbers(_text(es), "es")


def test_views_write_english_numbers_and_words(english):
    age, _, order, demo, date, scaling, depth, answers, split, sweep, _, factors = [v._repr_html_() for v in _views()]
    assert "3 of them valid JSON" in age and "Passing the business rule 18 ≤ age ≤ 100: 3 of 4." in age
    assert "hint first: p" in order and "answer first: q̃" in order and "0.300" in order
    assert "after “a Ana”: Ana" in order
    assert "Budget: 22 tokens (the shortest valid answer needs 18)" in demo and "incomplete" in demo
    assert "1.23×10⁻³" in date and "date or null" in date
    assert "12,345" in scaling and "1,234.5" in scaling and "From 100 to 10,000 values (×100.0)" in scaling
    assert "12,345" in depth and "characters of the regular expression" in depth
    assert "valid" in answers and "status" in answers
    assert "<strong>0.600</strong>" in split and "q̃, 16-token mask" in split
    assert "18 tokens: 0.0% valid when cut off and 100.0% with the mask, a name of 3.5 characters" in sweep
    assert ">100%<" in sweep and "budget (tokens)" in sweep
    assert "hint first: Ana against Juan" in factors and "(up to the answer)" in factors
    assert "is multiplied by" in factors and "what follows, forced" in factors


def test_spanish_is_the_default_and_unchanged():
    assert get_language() == "es"
    sweep = BudgetSweep([18, 20, 22, 24], [0.0, 0.0, 0.25, 1.0], [1.0, 1.0, 1.0, 1.0],
                        [0.0, 4.5, 9.0, 12.0], 12.0, 40)
    assert "22 tokens: válidas 25,0\u202f%" in sweep_desc(sweep)
    assert ">100 %<" in sweep_svg(sweep) and "presupuesto (tokens)" in sweep_svg(sweep)
    assert engine_source() == ("MaskBench (guidance-ai/jsonschemabench, maskbench/README.md), ejecución "
                               "del 27-03-2025: 11 306 esquemas, tokenizador de Llama 3 (unos 128 000 "
                               "tokens), un hilo de CPU")


def test_the_figures_that_are_text_are_stored_in_both_languages():
    sweep = BudgetSweep([18, 20], [0.0, 1.0], [1.0, 1.0], [3.5, 12.0], 12.0, 40)
    svg, table = each_language(sweep_svg, sweep), each_language(sweep_table, sweep)
    assert set(svg) == set(table) == {"es", "en"}
    assert "presupuesto (tokens)" in svg["es"] and "budget (tokens)" in svg["en"]
    assert "válidas cortando" in table["es"] and "valid, cut off" in table["en"]
    source = engine_figures()["source"]
    assert "ejecución del 27-03-2025" in source["es"]
    assert "run of 2025-03-27: 11,306 schemas" in source["en"]
    assert ENGINE_FIGURES["date"] == "27-03-2025"  # the English template writes it 2025-03-27
    assert get_language() == "es"
