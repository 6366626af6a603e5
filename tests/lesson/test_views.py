"""The lesson's HTML views carry the test hooks with the exact values, and numbers print the
Spanish way."""

from __future__ import annotations

import json
import math
import re
from html import unescape
from html.parser import HTMLParser

import numpy as np

import pytest

from lesson import (compile_cfg, compile_choice, compile_json_schema, compile_regex, enumerate_paths,
                    generate)
from lesson.course import NAMES, answer
from lesson.course import PROMPT as LESSON_PROMPT
from lesson.numbers import es_decimal, es_int, es_percent, es_prob, es_sci, es_sci_log
from lesson.views import PositionsView, SampleTable, is_partial, token_label
from minigpt.bpe import load_tokenizer
from minigpt.gpt import load_model

PROMPT = "—¿Quién vive ahí?\n—"


class Hooks(HTMLParser):
    """Collects elements with data-testid (attributes and text content) and table rows."""

    def __init__(self):
        super().__init__()
        self.found: list[dict] = []
        self.rows: list[dict] = []
        self.strip: list[dict] = []
        self.panels: list[dict] = []
        self._open: list[dict] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "tr" and "data-text" in attrs:
            self.rows.append(attrs)
        if "data-position" in attrs:
            self.strip.append(attrs)
        if "data-panel" in attrs:
            self.panels.append(attrs)
        if "data-testid" in attrs:
            item = {"tag": tag, **attrs, "text": ""}
            self.found.append(item)
            self._open.append(item)

    def handle_endtag(self, tag):
        if self._open and self._open[-1]["tag"] == tag:
            self._open.pop()

    def handle_data(self, data):
        for item in self._open:
            item["text"] += data


def parse(html: str) -> Hooks:
    hooks = Hooks()
    hooks.feed(html)
    return hooks


@pytest.fixture(scope="module")
def setup():
    tok, model = load_tokenizer(), load_model()
    grammar = compile_choice(['{"a":"ñu"}', '{"a":"sí"}'])
    return tok, model, grammar


def test_sample_hooks_hold_exactly_the_generated_text(setup):
    tok, model, grammar = setup
    masked = [generate(model, tok, PROMPT, grammar, seed=s) for s in range(3)]
    prose = generate(model, tok, PROMPT, seed=0, max_tokens=12)
    hooks = parse(SampleTable(masked + [prose])._repr_html_()).found
    assert [h["text"] for h in hooks if h["data-testid"] == "masked-sample"] == [g.text for g in masked]
    assert [h["text"] for h in hooks if h["data-testid"] == "unmasked-sample"] == [prose.text]
    single = parse(masked[0]._repr_html_()).found
    assert [(h["data-testid"], h["text"]) for h in single if h["data-testid"] != "verdict"] == [
        ("masked-sample", masked[0].text)]


def test_positions_view_has_one_entry_and_one_panel_per_token_and_marks_forced(setup):
    tok, model, grammar = setup
    gen = generate(model, tok, PROMPT, grammar, seed=1)
    html = PositionsView(gen)._repr_html_()
    hooks = parse(html)
    assert [int(e["data-position"]) for e in hooks.strip] == list(range(1, len(gen.positions) + 1))
    assert [e["data-forced"] for e in hooks.strip] == [p.forced or "" for p in gen.positions]
    assert [int(p["data-panel"]) for p in hooks.panels] == list(range(1, len(gen.positions) + 1))
    assert html.count('type="radio"') == len(gen.positions) and html.count(" checked") == 1
    first_choice = next(j for j, p in enumerate(gen.positions, 1) if not p.is_forced)
    assert f'aria-label="posición {first_choice}" checked' in html
    assert "masa conservada" in html and html == PositionsView(gen)._repr_html_()  # deterministic


GRAMMAR_KINDS = [
    compile_regex(r"[A-Z][a-zñ]+ tiene [0-9]{1,2} años\."),
    compile_json_schema({"type": "object", "properties": {"nombre": {"type": "string", "maxLength": 6}},
                         "required": ["nombre"]}),
    compile_cfg('root ::= "(" item (" " item)* ")"\nitem ::= [a-z]+ | root'),
]


@pytest.mark.parametrize("grammar", GRAMMAR_KINDS, ids=["regex", "json_schema", "cfg"])
def test_views_render_any_grammar_kind(setup, grammar):
    tok, model, _ = setup
    gen = generate(model, tok, PROMPT, grammar, seed=4, max_tokens=40)
    for html in (gen._repr_html_(), PositionsView(gen)._repr_html_(), SampleTable([gen])._repr_html_()):
        assert "<table" in html or "<figure" in html or 'data-testid="positions-view"' in html
    hooks = parse(PositionsView(gen)._repr_html_())
    assert len(hooks.strip) == len(gen.positions) == len(hooks.panels)
    verdict = [h for h in parse(gen._repr_html_()).found if h["data-testid"] == "verdict"]
    assert verdict[0]["data-accepted"] == str(grammar.accepts(gen.bytes)).lower()


def test_a_long_generation_keeps_one_panel_open_and_a_wrapping_strip(setup):
    tok, model, _ = setup
    gen = generate(model, tok, "La", compile_regex("[a-záéíóúñ ,.]+"), seed=0, max_tokens=220)
    assert len(gen.positions) == 220 and gen.status == "budget"
    html = PositionsView(gen)._repr_html_()
    hooks = parse(html)
    assert len(hooks.strip) == 220 and len(hooks.panels) == 220
    assert html.count(" checked") == 1 and ".pv-strip { display: flex; flex-wrap: wrap" in html


def test_unmasked_positions_view_has_no_mask_columns(setup):
    tok, model, _ = setup
    gen = generate(model, tok, PROMPT, seed=0, max_tokens=6)
    html = PositionsView(gen)._repr_html_()
    assert "sin máscara" in html and "masa conservada" not in html


def test_enumeration_hooks_carry_the_values(setup):
    tok, model, grammar = setup
    result = enumerate_paths(model, tok, PROMPT, grammar)
    hooks = parse(result._repr_html_())
    (p,) = [h for h in hooks.found if h["data-testid"] == "p-grammar"]
    assert float(p["data-value"]) == result.p_grammar
    assert [h["data-testid"] for h in hooks.found].count("enumeration-table") == 1
    assert {r["data-text"] for r in hooks.rows} == {'{"a":"ñu"}', '{"a":"sí"}'}
    for row in hooks.rows:
        mine = result.row(row["data-text"])
        assert float(row["data-conditional"]) == mine.conditional
        assert float(row["data-masked"]) == mine.masked


def test_token_labels_show_partial_utf8_as_bytes():
    assert token_label(b"\xc3") == "<0xC3>" and is_partial(b"\xc3")
    assert token_label("ñ".encode()) == "ñ" and not is_partial("ñ".encode())
    assert token_label(b"a \xc3") == "a␣<0xC3>"
    assert token_label(b"\xb1or\n") == "<0xB1>or↵"


@pytest.mark.parametrize("value, text", [
    (4.849317675365746e-69, "4,85·10⁻⁶⁹"), (2.0621457840964768e+68, "2,06·10⁶⁸"),
    (0.4481, "0,448"), (9.996e-5, "1,00·10⁻⁴"), (0.0, "0"), (123.456, "123"), (1.5, "1,50"),
])
def test_scientific_numbers(value, text):
    assert es_sci(value) == text


def test_other_number_formats():
    assert es_decimal(0.44814, 3) == "0,448"
    assert es_prob(0.0005) == "5,00·10⁻⁴" and es_prob(0.25) == "0,250"
    assert es_int(3429) == "3429" and es_int(1488000) == "1\u202f488\u202f000" and es_int(-12345) == "\u221212\u202f345"
    assert es_percent(0.1234) == "12,3\u202f%"
    assert math.isclose(float(es_sci(6.5345e51, 6).split("·")[0].replace(",", ".")), 6.5345)


@pytest.mark.parametrize("ln_x, text", [(-1000.0, "5,08·10⁻⁴³⁵"), (1000.0, "1,97·10⁴³⁴"), (-math.inf, "0"),
                                        (math.inf, "∞"), (math.log(0.4481), "0,448"),
                                        (math.log(4.849317675365746e-69), "4,85·10⁻⁶⁹")])
def test_numbers_in_the_log_domain_never_overflow(ln_x, text):
    assert es_sci_log(ln_x) == text


@pytest.mark.parametrize("temperature", [0.05, 0.1, 0.5, 1.0, 2.0, 5.0])
def test_every_view_renders_at_extreme_temperatures(setup, temperature):
    """Probabilities far below the float64 range (p(G | x) ~ 1e-1150 at T = 0.05) still print."""
    tok, model, _ = setup
    grammar = compile_choice([answer(n) for n in NAMES])
    result = enumerate_paths(model, tok, LESSON_PROMPT, grammar, temperature=temperature)
    html = result._repr_html_()
    assert "intentos de media" in html and "OverflowError" not in html
    if result.log_p_grammar < -709:
        assert result.expected_tries == math.inf and "·10" in html
    gen = generate(model, tok, LESSON_PROMPT, grammar, seed=0, temperature=temperature)
    for view in (gen, PositionsView(gen), SampleTable([gen])):
        assert "masked-sample" in view._repr_html_() or "positions-view" in view._repr_html_()


def test_figures_of_the_any_grammar_cell_are_valid_and_consistent(setup):
    import json
    import re

    import jsonschema

    from lesson.mascara.figures import ANY_PATTERN, ANY_SCHEMA, any_grammar
    tok, model, _ = setup
    f = any_grammar(model, tok)
    assert re.fullmatch(ANY_PATTERN, f["sentence"])
    jsonschema.validate(json.loads(f["object"]), ANY_SCHEMA)
    assert int(f["age_text"]) == f["age"] and (f["minus_q"] is not None) == f["age_text"].startswith("-")
    assert 1 <= f["choices"] < f["tokens"]


def test_the_whole_vocabulary_list_carries_every_probability_and_the_allowed_set(setup):
    tok, model, grammar = setup
    gen = generate(model, tok, PROMPT, grammar, seed=2)
    html = PositionsView(gen)._repr_html_()
    bodies = re.findall(r'data-p="([^"]*)" data-allowed="([0-9a-f]*)"', html)
    assert len(bodies) == len(gen.positions)
    for (probs, hexmask), pos in zip(bodies, gen.positions):
        values = np.array([float(x) for x in probs.split(",")])
        assert values.shape == (len(tok.vocab),)
        np.testing.assert_allclose(values, pos.probs, rtol=5e-3, atol=0)
        allowed = {4 * i + bit for i, digit in enumerate(hexmask) for bit in range(4) if int(digit, 16) >> bit & 1}
        assert allowed == {t for t, _, _ in pos.allowed}
    labels = json.loads(unescape(re.search(r'data-vocab="([^"]*)"', html).group(1)))
    assert labels == [token_label(piece) for piece in tok.vocab]


def test_every_view_writes_numbers_the_spanish_way(setup):
    """Decimal comma, powers of ten as ·10ⁿ: no 0.25, no 1e-05 in any view's visible text."""
    from lesson import rejection_sample
    tok, model, grammar = setup
    gen = generate(model, tok, PROMPT, grammar, seed=0)
    views = [gen, PositionsView(gen), SampleTable([gen]), enumerate_paths(model, tok, PROMPT, grammar),
             rejection_sample(model, tok, LESSON_PROMPT, compile_choice(["Rosalía ", "Benina "]), accepted=2)]
    for view in views:
        html = view._repr_html_()
        text = re.sub(r"<style>.*?</style>|<[^>]+>", " ", html, flags=re.S)
        assert not re.search(r"\d\.\d|\de[-+]\d", text), (type(view).__name__, re.search(r".{20}(\d\.\d|\de[-+]\d).{20}", text))
