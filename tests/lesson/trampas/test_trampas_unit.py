"""The measurements of «Trampas y decisiones» (``lesson.trampas.studies``) against independent references:
the naive path enumeration (full forward passes, brute-force allowed sets), Python's ``json``,
``re`` and ``datetime``, and the ``jsonschema`` library."""

from __future__ import annotations

import json
import math
import re
import xml.etree.ElementTree as ET

import jsonschema
import numpy as np
import pytest

from lesson import generate, sample_batch
from lesson.trampas.studies import (AGE_SCHEMA, BUDGET_SCHEMA, DATE_PATTERN, THREAD_SCHEMA,
                                    AgeStudy, BudgetDemo, EnumScaling, FieldOrder, age_study,
                                    budget_demo, date_schema, date_study, depth_bounded,
                                    enum_scaling, enum_values, field_order, flattened_thread,
                                    is_calendar_date, nesting_depth, order_schema, scaling_svg,
                                    total_variation)
from masker import BudgetTooSmall, compile_json_schema
from masker.errors import LimitExceeded
from tests.lesson.finite import FiniteGrammar
from tests.lesson.reference import all_paths, logsumexp, next_logp

PROMPT = "¿A quién viste en la puerta? Responde en JSON.\n"


def test_field_order_matches_the_naive_enumeration(model, tok):
    """A two-name instance: the conditional and q~ per (hint, answer) summed over every token
    path, computed with full forward passes and brute-force allowed sets."""
    names, hints = ["Ana", "Luis"], ["a Ana", "a Luis"]
    result = field_order(model, tok, prompt=PROMPT, names=names, hints=hints)
    model64 = model.astype(np.float64)
    for order, hint_first in zip(FieldOrder.ORDERS, (True, False)):
        schema = order_schema(hint_first, hints, names)
        keys = list(schema["properties"])
        texts = {}
        for h in hints:
            for n in names:
                obj = {"pista": h, "es": n}
                texts[json.dumps({k: obj[k] for k in keys}, separators=(",", ":")).encode()] = (h, n)
        naive = FiniteGrammar(list(texts), tok.vocab)
        lps, lqs = {}, {}
        for text, _, lp, lq in all_paths(model64, tok.encode(PROMPT), naive):
            lps.setdefault(texts[text], []).append(lp)
            lqs.setdefault(texts[text], []).append(lq)
        log_total = logsumexp([lp for values in lps.values() for lp in values])
        for pair in lqs:
            assert result.joint["masked"][order][pair] == pytest.approx(
                math.exp(logsumexp(lqs[pair])), rel=1e-9)
            assert result.joint["exact"][order][pair] == pytest.approx(
                math.exp(logsumexp(lps[pair]) - log_total), rel=1e-9)
    for kind in FieldOrder.KINDS:
        assert sum(result.answers[kind][FieldOrder.ORDERS[0]].values()) == pytest.approx(1, abs=1e-12)


def test_field_order_defaults_two_distributions_and_their_distances(model, tok):
    result = field_order(model, tok)
    for kind in result.KINDS:
        for order in result.ORDERS:
            assert sum(result.answers[kind][order].values()) == pytest.approx(1, abs=1e-12)
            assert sum(result.joint[kind][order].values()) == pytest.approx(1, abs=1e-12)
        a, b = (result.answers[kind][o] for o in result.ORDERS)
        assert result.tv(kind) == pytest.approx(0.5 * sum(abs(a[n] - b[n]) for n in a))
        assert 0 < result.tv(kind) < 1
    for order in result.ORDERS:
        p, q = result.answers["exact"][order], result.answers["masked"][order]
        assert result.distortion(order) == pytest.approx(0.5 * sum(abs(p[n] - q[n]) for n in p))
    html = result._repr_html_()
    assert f'data-tv="{result.tv("masked")!r}"' in html and f'data-tv-exact="{result.tv("exact")!r}"' in html
    assert html.count("data-q=") == html.count("data-p=") == 2 * len(result.names)
    for kind in result.KINDS:
        for follows in result.follows(result.ORDERS[0], kind).values():
            assert sum(follows.values()) == pytest.approx(1)


def test_total_variation_is_half_the_l1_distance_over_the_union_of_outcomes():
    assert total_variation({"a": 1.0}, {"b": 1.0}) == 1.0
    assert total_variation({"a": 0.5, "b": 0.5}, {"a": 0.5, "b": 0.5}) == 0.0
    assert total_variation({"a": 0.75, "b": 0.25}, {"a": 0.25, "b": 0.75}) == pytest.approx(0.5)


def test_budget_demo_aware_answers_are_valid_within_the_budget(model, tok):
    demo = budget_demo(model, tok, budget=22, n=12, seed=0)
    assert demo.valid_aware == 1.0 and demo.valid_plain < 1.0
    for gen in demo.aware:
        assert len(gen.token_ids) <= 22
        jsonschema.validate(json.loads(gen.text), BUDGET_SCHEMA)
    for gen in demo.plain:
        if gen.status == "budget":
            with pytest.raises(json.JSONDecodeError):
                json.loads(gen.text)
    free = [json.loads(g.text)["nombre"] for g in demo.free]
    assert demo.name_free == pytest.approx(sum(map(len, free)) / len(free))
    html = demo._repr_html_()
    for hook in ('data-testid="budget-demo"', 'data-budget="22"', 'data-n="12"',
                 f'data-valid-plain="{demo.valid_plain!r}"', 'data-valid-aware="1.0"'):
        assert hook in html


def test_budget_demo_refuses_a_budget_below_the_shortest_answer(model, tok):
    shortest = compile_json_schema(BUDGET_SCHEMA).matcher(tok.vocab).min_tokens_to_finish()
    with pytest.raises(BudgetTooSmall):
        budget_demo(model, tok, budget=shortest - 1, n=2)


def test_generate_budget_aware_at_the_exact_shortest_budget(model, tok):
    grammar = compile_json_schema(BUDGET_SCHEMA)
    shortest = grammar.matcher(tok.vocab).min_tokens_to_finish()
    for seed in range(3):
        gen = generate(model, tok, PROMPT, grammar, seed=seed, max_tokens=shortest, budget_aware=True)
        assert gen.complete and len(gen.token_ids) <= shortest
        jsonschema.validate(json.loads(gen.text), BUDGET_SCHEMA)
    with pytest.raises(BudgetTooSmall):
        generate(model, tok, PROMPT, grammar, max_tokens=shortest - 1, budget_aware=True)


def test_budget_aware_decoder_refuses_a_reader_pick_that_cannot_finish(model, tok):
    from lesson.sampling import Decoder
    texts = (b'"si"', b'"no"')
    grammar = compile_json_schema({"enum": ["si", "no"]})
    decoder = Decoder(model, tok, PROMPT, grammar, max_tokens=3, budget_aware=True)
    decoder.step(tok.vocab.index(b'"'))  # two tokens left
    allowed = set(np.flatnonzero(decoder.matcher.mask()).tolist())
    expected = {t for t, piece in enumerate(tok.vocab) if piece and any(
        b'"' + piece + u in texts for u in tok.vocab if u)}
    assert allowed == expected
    plain = {t for t, piece in enumerate(tok.vocab) if piece and any(
        g.startswith(b'"' + piece) for g in texts)}
    refused = sorted(plain - allowed)
    assert refused  # some token fits the grammar but not the budget
    with pytest.raises(ValueError):
        decoder.step(refused[0])


def test_age_study_is_schema_valid_and_counts(model, tok):
    study = age_study(model, tok, n=20, seed=0)
    assert study.n == 20 and sum(c for _, c in study.counts) == 20
    for text, age in zip(study.texts, study.ages):
        obj = json.loads(text)
        jsonschema.validate(obj, AGE_SCHEMA)
        assert obj["edad"] == age and isinstance(age, int)
    assert study.rule_ok == sum(18 <= a <= 100 for a in study.ages)


def test_date_study_against_re_datetime_and_a_full_forward_pass(model, tok):
    study = date_study(model, tok, n=10, seed=0)
    for value in study.strict:
        assert re.fullmatch(DATE_PATTERN.strip("^$"), value)
        jsonschema.validate({"fecha": value}, date_schema(False))
    for value in study.nullable:
        jsonschema.validate({"fecha": value}, date_schema(True))
    # the first position of the value, by brute force over the vocabulary
    grammar = compile_json_schema(date_schema(True))
    prefix_ids = tok.encode('{"fecha":')
    logp = next_logp(model.astype(np.float64), tok.encode(study_prompt()) + prefix_ids)
    ok = [t for t, piece in enumerate(tok.vocab)
          if piece and _is_prefix_of_some_text(grammar, b'{"fecha":' + piece)]
    p_null = sum(math.exp(logp[t]) for t in ok if tok.vocab[t].startswith(b"n"))
    p_quote = sum(math.exp(logp[t]) for t in ok if tok.vocab[t].startswith(b'"'))
    assert study.p_null == pytest.approx(p_null, rel=1e-9)
    assert study.p_quote == pytest.approx(p_quote, rel=1e-9)
    assert study.q_null == pytest.approx(p_null / (p_null + p_quote))


def study_prompt() -> str:
    from lesson.trampas.studies import DATE_PROMPT
    return DATE_PROMPT


def _is_prefix_of_some_text(grammar, data: bytes) -> bool:
    m = grammar.matcher([b"x"])
    try:
        m.consume_bytes(data)
    except Exception:
        return False
    return True


@pytest.mark.parametrize("text, real", [("2024-02-29", True), ("2023-02-29", False),
                                        ("1999-13-01", False), ("0940-20-67", False), (None, False)])
def test_is_calendar_date(text, real):
    assert is_calendar_date(text) is real


def test_enum_scaling_rows_and_plot(tok):
    result = enum_scaling(tok, sizes=[10, 100])
    html = result._repr_html_()
    assert html.count("<tr data-size=") == 2 and 'data-testid="enum-scaling"' in html
    assert result.states[0] < result.states[1]
    values = enum_values(100)
    assert len(set(values)) == 100 and values[:10] == enum_values(10)
    grammar = compile_json_schema({"enum": values})
    assert all(grammar.accepts(json.dumps(v)) for v in values)


@pytest.mark.parametrize("compile_ms, mask_us", [([0.0, 0.0], [0.0, 0.0]), ([1e-300, 1e300], [1e-300, 5.0]),
                                                 ([3.0, 3.0], [7.0, 7.0])])
def test_scaling_plot_survives_extreme_numbers(compile_ms, mask_us):
    svg = scaling_svg(EnumScaling([10, 10_000_000], compile_ms, mask_us, [1, 2]))
    root = ET.fromstring(svg)  # well-formed
    assert root.tag == "figure"
    assert "nan" not in svg and "inf" not in svg


def test_views_survive_empty_and_huge_inputs():
    assert "0 respuestas" in AgeStudy([], [], (18, 100))._repr_html_()
    assert AgeStudy([10**12] * 3, ["{}"] * 3, (18, 100))._repr_html_()


def test_depth_bounded_grows_and_rejects_one_level_deeper():
    bound = depth_bounded(depths=(0, 1, 2))
    assert bound.states == sorted(bound.states) and len(set(bound.states)) == 3

    def thread(depth):
        node = {"texto": "a", "respuestas": []}
        for _ in range(depth):
            node = {"texto": "b", "respuestas": [node]}
        return node

    recursive = compile_json_schema(THREAD_SCHEMA)
    for depth in (0, 1, 2):
        flat = compile_json_schema(flattened_thread(depth))
        for d in range(depth + 2):
            text = json.dumps(thread(d), separators=(",", ":"))
            jsonschema.validate(json.loads(text), THREAD_SCHEMA)
            assert recursive.accepts(text)
            assert flat.accepts(text) is (d <= depth), (depth, d)
            assert nesting_depth(thread(d)) == d


def test_depth_bounded_says_when_the_regular_route_gives_up():
    """Depth 5 passes the default DFA limit: compile_json_schema falls back to Earley, which
    has no states to count, so the table refuses with LimitExceeded instead of an AttributeError."""
    with pytest.raises(LimitExceeded, match="depth 5"):
        depth_bounded(depths=(4, 5))
    with pytest.raises(ValueError, match="at least 0"):
        depth_bounded(depths=(-1,))


def test_bad_reader_inputs_are_refused_with_a_clear_error(model, tok):
    with pytest.raises(ValueError, match="lo <= hi"):
        age_study(model, tok, n=2, rule=(100, 18))
    with pytest.raises(ValueError, match="same length"):
        field_order(model, tok, names=["Ana", "Juan"], hints=["a Ana"])
    with pytest.raises(ValueError, match="same length"):
        field_order(model, tok, names=[], hints=[])
    for sizes in ([0], [], [10, -3]):
        with pytest.raises(ValueError, match="at least 1"):
            enum_scaling(tok, sizes=sizes)


def test_recursive_thread_with_budget_aware_sampling(model, tok):
    grammar = compile_json_schema(THREAD_SCHEMA)
    gens = sample_batch(model, tok, "Escribe un hilo de comentarios en JSON.\n", grammar, n=3,
                        seed=0, max_tokens=60, budget_aware=True)
    for gen in gens:
        assert gen.complete and len(gen.token_ids) <= 60
        jsonschema.validate(json.loads(gen.text), THREAD_SCHEMA)


def test_budget_demo_view_with_no_valid_answer_does_not_crash(model, tok):
    demo = budget_demo(model, tok, budget=22, n=2, seed=0)
    empty = BudgetDemo(22, demo.shortest, demo.plain, demo.plain, demo.plain)
    assert math.isnan(empty.name_free) or empty.name_free >= 0
    assert 'data-testid="budget-demo"' in empty._repr_html_()


def test_enum_ratios_divide_the_last_row_of_the_same_table():
    result = EnumScaling([10, 100, 1000], [1.0, 2.0, 8.0], [30.0, 40.0, 20.0], [5, 9, 27])
    r = result.ratios()
    assert r == pytest.approx({"size": 10.0, "states": 3.0, "compile": 4.0, "mask": 0.5})
    line = result._repr_html_()
    assert ('estados del DFA ×3,0; compilar <span data-measured="">×4,0</span>; '
            'una máscara <span data-measured="">×0,5</span>') in line  # times: left out when compared
    assert EnumScaling([10], [1.0], [1.0], [3]).ratios() is None


def test_follows_other_pools_the_other_hints_by_their_probability():
    hints, names = ["h0", "h1", "h2"], ["a", "b", "c"]
    table = [[0.30, 0.05, 0.05], [0.10, 0.10, 0.00], [0.20, 0.10, 0.10]]  # rows: hints
    joint = {(h, n): table[i][k] for i, h in enumerate(hints) for k, n in enumerate(names)}
    order = FieldOrder.ORDERS[0]
    result = FieldOrder(names, hints, {"exact": {order: joint}}, {}, {})
    other = result.follows_other(order, "exact")
    # hint masses 0.40, 0.20, 0.40; P(a | h1 or h2) = (0.10 + 0.20) / (0.20 + 0.40), and so on
    assert other == pytest.approx({"a": 0.30 / 0.60, "b": 0.15 / 0.80, "c": 0.05 / 0.60})
    with pytest.raises(ValueError):
        FieldOrder(["a"], ["h0"], {"exact": {order: {("h0", "a"): 1.0}}}, {}, {}).follows_other(order, "exact")


@pytest.mark.parametrize("lang", ["es", "en"])
def test_scaling_plot_size_labels_fit_in_the_box(lang):
    """Each size label is centred on its point; half its width (about 0.6 em a character at
    font-size 10) must fit between the point and either edge of the viewBox."""
    from lesson.i18n import set_language
    set_language(lang)
    try:
        root = ET.fromstring(scaling_svg(EnumScaling([10, 100, 1000, 10000], [1.0] * 4, [1.0] * 4, [1] * 4)))
    finally:
        set_language("es")
    svg = root.find("svg")
    width = float(svg.get("viewBox").split()[2])
    labels = [t for t in svg.findall("text") if t.get("text-anchor") == "middle"]
    assert [t.text for t in labels][-1] in ("10 000", "10,000", "10\u202f000", "10\u00a0000")
    for t in labels:
        half = 0.6 * float(t.get("font-size")) * len(t.text) / 2
        assert half <= float(t.get("x")) and float(t.get("x")) + half <= width


def test_order_factors_split_the_conditional_into_its_two_factors(model, tok):
    """``order_factors`` on a two-name instance against the naive enumeration: each factor is the
    sum over every token path (full forward passes) of the prefixes up to the answer and of the
    full texts; their product, normalised, is ``field_order``'s exact answer distribution (a
    third computation, over the schema's grammar); the odds split into the two ratios."""
    from lesson.trampas.studies import OrderFactors, order_factors, order_texts
    names, hints = ["Ana", "Luis"], ["a Ana", "a Luis"]
    result = order_factors(model, tok, prompt=PROMPT, names=names, hints=hints)
    exact = field_order(model, tok, prompt=PROMPT, names=names, hints=hints).answers["exact"]
    model64 = model.astype(np.float64)

    def log_p(texts):
        naive = FiniteGrammar([t.encode() for t in texts], tok.vocab)
        return {text.decode(): lp for text, lp in _summed(all_paths(model64, tok.encode(PROMPT), naive)).items()}
    for order, hint_first in zip(OrderFactors.ORDERS, (True, False)):
        pairs = {(h, n): order_texts(hint_first, h, n) for h in hints for n in names}
        pre = log_p(sorted({t[0] for t in pairs.values()}))
        full = log_p(sorted({t[1] for t in pairs.values()}))
        for n in names:
            up = logsumexp([pre[t] for t in sorted({pairs[(h, n)][0] for h in hints})])
            whole = logsumexp([full[pairs[(h, n)][1]] for h in hints])
            assert result.log_upto[order][n] == pytest.approx(up, rel=1e-9)
            assert result.log_after[order][n] == pytest.approx(whole - up, rel=1e-9)
            closed = log_p(sorted({pairs[(h, n)][0] + '"' for h in hints}))
            quote = logsumexp([closed[t + '"'] for t in sorted({pairs[(h, n)][0] for h in hints})])
            assert result.log_quote[order][n] == pytest.approx(quote - up, rel=1e-9)
        for n, p in result.conditional(order).items():
            assert p == pytest.approx(exact[order][n], rel=1e-9)
        x = result.ratios(order)
        a, b = result.pair
        assert x["odds"] == pytest.approx(exact[order][a] / exact[order][b], rel=1e-9)
        assert x["odds"] == pytest.approx(x["upto"] * x["after"], rel=1e-12)
    c = result.change()
    assert c["odds"] == pytest.approx(c["upto"] * c["after"], rel=1e-12)
    assert c["after"] == pytest.approx(c["quote"] * c["rest"], rel=1e-12)
    html = result._repr_html_()
    assert html.count("<tr data-order=") == 2 * len(names)
    with pytest.raises(ValueError, match="same length"):
        order_factors(model, tok, names=["Ana"], hints=[])


def _summed(paths) -> dict:
    """{text: ln p(text)} over every token path of each text (``all_paths`` rows)."""
    out = {}
    for text, _, lp, _ in paths:
        out.setdefault(text, []).append(lp)
    return {t: logsumexp(v) for t, v in out.items()}


def test_order_texts_spell_the_schemas_compact_objects():
    from lesson.trampas.studies import order_texts
    for hint_first in (True, False):
        keys = list(order_schema(hint_first)["properties"])
        prefix, full = order_texts(hint_first, "a Ana", "Ana")
        obj = {"pista": "a Ana", "es": "Ana"}
        assert full == json.dumps({k: obj[k] for k in keys}, separators=(",", ":"))
        assert full.startswith(prefix) and full[len(prefix)] == '"' and prefix.endswith("Ana")
