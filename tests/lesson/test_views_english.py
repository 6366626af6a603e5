"""The library's views in English (``lesson.i18n.set_language("en")``): no Spanish label left, no
decimal comma, and the same numbers as the Spanish rendering of the same result; and every
message id that Babel extracts from ``py/lesson/*.py`` has an English translation.

Each view is rendered twice from one computed result (the timing fields set to 0, so that both
renderings hold the same numbers), once per language; the language is restored afterwards.
The generated text (Spanish: the model writes Spanish), the token boxes and the ``<code>``
texts are left out before looking for Spanish words.
"""

from __future__ import annotations

import math
import re
from html import unescape
from pathlib import Path

import pytest
from babel.messages.extract import extract_from_file

from lesson import (compile_choice, compile_regex, convergence, enumerate_paths, generate,
                    importance_sample, rejection_sample, smc)
from lesson.course import NAMES, PROMPT, answer
from lesson.i18n import get_language, ngettext, set_language, translations
from lesson.smc_views import METHOD_NAMES, PathsView, WeightsView, convergence_html, particles_html
from lesson.views import (FORCED_LABELS, KIND_NAMES, PositionsView, SampleTable, counted,
                          enumeration_html, generation_html, plain_int, rejection_html, status_html)

LESSON = Path(__file__).resolve().parents[2] / "py" / "lesson"
STATUS_PROMPT = "La solicitud de la señora quedó en estado: "

# Words of the Spanish views that no English rendering may keep (matched as whole words, in the
# visible text and the aria-labels / titles, generated text and token boxes left out).
SPANISH = ["posición", "posiciones", "máscara", "semilla", "temperatura", "forzada", "forzadas",
           "adelantada", "adelantadas", "continuación", "permitido", "permitidos", "masa",
           "conservada", "elegido", "antes", "después", "muestras", "muestra", "caminos", "camino",
           "pasada", "pasadas", "intento", "intentos", "respuesta", "respuestas", "gramática",
           "presupuesto", "agotado", "incompleto", "texto", "condicionada", "suma", "veces",
           "partículas", "remuestreo", "remuestreos", "peso", "pesos", "estimación", "fracción",
           "ejecución", "ejecuciones", "método", "media", "distancia", "variación", "recortado",
           "recortados", "fuera", "elige", "empezar", "pueden", "puede", "distintos", "sin", "con",
           "del", "las", "los", "que", "una", "por", "tras", "años", "ninguna", "ningún", "aún",
           "decidir", "puesto", "exacta", "escala", "logarítmica", "gráfica", "tabla", "Coste",
           "lista", "opciones", "expresión", "de", "en"]

# A number as each language writes it: digits grouped (thin space / comma), a decimal comma /
# point, an optional power of ten (·10⁻⁶⁹ / ×10⁻⁶⁹), minus sign U+2212.
_SUP = "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"
ES_NUMBER = re.compile(rf"−?\d+(?:\u202f\d{{3}})*(?:,\d+)?(?:·10[{_SUP}]+)?")
EN_NUMBER = re.compile(rf"−?\d+(?:,\d{{3}})*(?:\.\d+)?(?:×10[{_SUP}]+)?")


def _value(text: str, decimal: str, group: str, times: str) -> float:
    text = text.replace("−", "-")
    power = 0
    if times in text:
        text, exponent = text.split(times + "10")
        power = int(exponent.translate(str.maketrans(_SUP, "-0123456789")))
    return float(text.replace(group, "").replace(decimal, ".")) * 10 ** power


def numbers(text: str, language: str) -> list[float]:
    """Every number of ``text`` as written in ``language``, as floats, in order."""
    if language == "es":
        return [_value(m, ",", "\u202f", "·") for m in ES_NUMBER.findall(text)]
    return [_value(m, ".", ",", "×") for m in EN_NUMBER.findall(text)]


def visible(html: str) -> str:
    """What a reader sees or hears: the text nodes and the aria-label / title values, without the
    stylesheet, the answers (``<code>``), the token boxes and the quoted generated text."""
    html = re.sub(r"<style>.*?</style>", " ", html, flags=re.S)
    html = re.sub(r"<code[^>]*>.*?</code>", " ", html, flags=re.S)
    html = re.sub(r'<span[^>]* class="tok[ "][^>]*>[^<]*</span>', " ", html)
    labels = " ".join(re.findall(r'(?:aria-label|title)="([^"]*)"', html))
    labels = re.sub(r"\btoken \d+\b", " ", labels)  # a token box's tooltip: its id
    text = unescape(re.sub(r"<[^>]+>", " ", html) + " " + unescape(labels))
    text = re.sub(r"«[^»]*»|“[^”]*”", " ", text)  # the generated answer, quoted
    return re.sub(r"\s+", " ", text)


def in_language(language: str, render):
    saved = get_language()
    try:
        set_language(language)
        return render()
    finally:
        set_language(saved)


def _no_seconds(result):
    result.seconds = 0.0
    return result


@pytest.fixture(scope="module")
def views(model, tok):
    """name -> a function that renders one view in the current language."""
    choice = compile_choice(["aprobado", "rechazado", "revisión"])
    names = compile_choice([answer(n) for n in NAMES])
    gens = {
        "choice": generate(model, tok, STATUS_PROMPT, choice, seed=0),
        "budget": generate(model, tok, "x", compile_regex("[a-z]{5}"), seed=0, max_tokens=1),
        "stopped": generate(model, tok, STATUS_PROMPT, compile_regex("[a-z]+"), seed=2, max_tokens=8,
                            stop_at_accept=True),
        "unmasked": generate(model, tok, STATUS_PROMPT, None, seed=1, max_tokens=6),
        "top_k": generate(model, tok, STATUS_PROMPT, choice, seed=4, top_k=1),
        "fast_forward": generate(model, tok, PROMPT, names, seed=3, fast_forward=True),
    }
    exact = _no_seconds(enumerate_paths(model, tok, PROMPT, names))
    rejection = _no_seconds(rejection_sample(model, tok, PROMPT, compile_choice(["Y ", "Rosalía "]),
                                             accepted=12, seed=3))
    draws = _no_seconds(importance_sample(model, tok, PROMPT, names, 64, seed=1))
    particles = _no_seconds(smc(model, tok, PROMPT, names, 16, seed=2, ess_threshold=0.9))
    conv = _no_seconds(convergence(model, tok, PROMPT, names, exact, sizes=(8, 32), runs=2))
    out = {}
    for key, gen in gens.items():
        out[f"positions-{key}"] = lambda gen=gen: PositionsView(gen)._repr_html_()
        out[f"generation-{key}"] = lambda gen=gen: generation_html(gen)
    out["samples"] = lambda: SampleTable(list(gens.values()))._repr_html_()
    out["enumeration"] = lambda: enumeration_html(exact)
    out["rejection"] = lambda: rejection_html(rejection)
    out["particles-is"] = lambda: particles_html(draws)
    out["particles-smc"] = lambda: particles_html(particles)
    out["weights"] = lambda: WeightsView(draws, exact=exact)._repr_html_()
    out["paths"] = lambda: PathsView(particles, [answer(n) for n in NAMES])._repr_html_()
    out["convergence"] = lambda: convergence_html(conv)
    return out


@pytest.fixture(scope="module")
def rendered(views):
    """name -> (Spanish HTML, English HTML)."""
    return {name: (in_language("es", render), in_language("en", render)) for name, render in views.items()}


NAMES_OF_VIEWS = ([f"positions-{k}" for k in ("choice", "budget", "stopped", "unmasked", "top_k", "fast_forward")]
                  + [f"generation-{k}" for k in ("choice", "budget", "stopped", "unmasked", "top_k", "fast_forward")]
                  + ["samples", "enumeration", "rejection", "particles-is", "particles-smc", "weights", "paths",
                     "convergence"])


def test_the_fixture_covers_every_status_and_kind_of_position(views, rendered):
    assert sorted(views) == sorted(NAMES_OF_VIEWS)
    es = " ".join(spanish for spanish, _ in rendered.values())
    for words in ("presupuesto agotado", "parada en cuanto", "recortado por top-k", "forzadas con un solo token",
                  "con una sola continuación", "adelantadas sin muestrear", "sin restricción", "más</li>",
                  "remuestreos tras las posiciones", "masa conservada", "exacta"):
        assert words in es, words


@pytest.mark.parametrize("name", NAMES_OF_VIEWS)
def test_no_spanish_word_is_left_in_english(rendered, name):
    english = visible(rendered[name][1])
    found = [w for w in SPANISH if re.search(rf"(?<![\w-]){re.escape(w)}(?![\w-])", english)]
    assert not found, (found, english[:600])
    assert "«" not in english and "»" not in english


@pytest.mark.parametrize("name", NAMES_OF_VIEWS)
def test_english_numbers_have_no_decimal_comma(rendered, name):
    english = visible(rendered[name][1])
    # a comma between digits only groups thousands: 1,277 and 12,345, never 0,448 nor 12,3
    commas = [m for m in re.findall(r"\d[\d,]*\d", english) if "," in m]
    assert all(re.fullmatch(r"[1-9]\d{0,2}(?:,\d{3})+", m) for m in commas), (commas, english[:600])
    assert "\u202f" not in english  # no Spanish digit groups, no «12,3 %»
    assert "·10" not in english


@pytest.mark.parametrize("name", NAMES_OF_VIEWS)
def test_english_has_the_same_numbers_as_spanish(rendered, name):
    spanish, english = (visible(html) for html in rendered[name])
    es, en = numbers(spanish, "es"), numbers(english, "en")
    assert es, spanish[:300]
    assert sorted(es) == sorted(en), (spanish[:400], english[:400])


def test_the_spanish_rendering_is_the_default_and_the_language_is_restored(rendered, views):
    assert get_language() == "es"
    assert views["enumeration"]() == rendered["enumeration"][0]


def test_the_english_tables_name_the_field_terms(rendered):
    en = {name: visible(html) for name, (_, html) in rendered.items()}
    assert "kept mass p(A" in en["positions-choice"] and "allowed tokens" in en["positions-choice"]
    assert "budget exhausted (1 token): incomplete text" in en["generation-budget"]
    assert "token paths" in en["enumeration"] and "conditional p(g | x, G)" in en["enumeration"]
    assert "Rejection sampling: 1 / p(G | x) =" in en["enumeration"]
    assert "tries for 12 answers in the grammar" in en["rejection"]
    assert "sequential Monte Carlo" in en["convergence"] and "importance weights" in en["convergence"]
    assert "where the continuation is fixed but can begin with 2 different tokens" in en["positions-choice"]


def test_number_words_agree_in_english():
    def english(render):
        return in_language("en", render)
    assert english(lambda: counted(ngettext("{n} token permitido", "{n} tokens permitidos", 1), 1)) == "1 allowed token"
    assert english(lambda: counted(ngettext("{n} camino de tokens", "{n} caminos de tokens", 12345), 12345)) \
        == "12,345 token paths"
    assert english(lambda: counted(ngettext("{n} intento", "{n} intentos", 1), 1)) == "1 try"
    assert english(lambda: plain_int(1234)) == "1,234" and plain_int(1234) == "1234"


def test_the_word_tables_follow_the_current_language():
    assert KIND_NAMES["regex"] == "expresión regular" and FORCED_LABELS[None] == "se elige el texto"
    assert in_language("en", lambda: KIND_NAMES["regex"]) == "regular expression"
    assert in_language("en", lambda: METHOD_NAMES["smc"]) == "sequential Monte Carlo"
    assert in_language("en", lambda: dict(KIND_NAMES))["json_schema"] == "JSON Schema"
    assert METHOD_NAMES["is"] == "pesos de importancia" and len(FORCED_LABELS) == 4


def test_status_words_in_english(model, tok):
    gen = generate(model, tok, "x", compile_regex("[a-z]{5}"), seed=0, max_tokens=1)
    assert "presupuesto agotado (1 token): texto incompleto" in status_html(gen)
    assert "budget exhausted (1 token): incomplete text" in in_language("en", lambda: status_html(gen))


def _library_messages() -> set:
    """Every id (singular, plural) Babel extracts from py/lesson/*.py with keywords _ and ngettext."""
    found = set()
    for path in sorted(LESSON.glob("*.py")):
        for _, message, _, _ in extract_from_file("python", str(path), keywords={"_": None, "ngettext": (1, 2)}):
            found.add(message)
    return found


def test_babel_finds_the_library_messages():
    messages = _library_messages()
    flat = {m if isinstance(m, str) else m[0] for m in messages}
    assert len(messages) >= 100
    for expected in ("masa conservada", "{n} token permitido", "presupuesto agotado ({budget}): {what}",
                     "Monte Carlo secuencial", "semilla {seed}", "Posición {j}", "suma"):
        assert expected in flat


def _entry(catalog, key):
    """The translation stored under ``key`` (a msgid, or (msgid, plural index)) in ``catalog`` or
    its fallbacks (``lesson.i18n.translations`` chains one catalog per .po file); None if absent."""
    while catalog is not None:
        text = getattr(catalog, "_catalog", {}).get(key)
        if text is not None:
            return text
        catalog = getattr(catalog, "_fallback", None)
    return None


def test_every_library_message_has_an_english_translation():
    catalog = translations("en")
    missing = []
    for message in _library_messages():
        keys = [message] if isinstance(message, str) else [(message[0], 0), (message[0], 1)]
        if not all(_entry(catalog, key) for key in keys):
            missing.append(message)
    assert not missing, missing


def test_every_translation_keeps_the_ids_placeholders():
    catalog = translations("en")
    for message in _library_messages():
        pairs = ([(message, catalog.gettext(message))] if isinstance(message, str) else
                 [(message[0], catalog.ngettext(*message, 1)), (message[1], catalog.ngettext(*message, 2))])
        for spanish, english in pairs:
            assert set(re.findall(r"\{\w+\}", spanish)) == set(re.findall(r"\{\w+\}", english)), (spanish, english)
