"""Each claim of the prose of «Trampas y decisiones» that depends on data, stated as a relation
over the page's figures (``lesson.trampas.figures``, the build's cached copy), so a change that
breaks a claim fails here. The template takes each word (a name, «encoge», «ninguna», «todas»)
from the figure checked here; the quoted MaskBench figures are checked against the project's
notes on the source (``../shared/spec/engines.md``) when that file is present."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import build
from lesson.course import NAMES
from lesson.trampas import BUDGET_SCHEMA
from sitebuild.figures import lesson_figures

SPEC = build.ROOT.parent / "shared" / "spec" / "engines.md"


@pytest.fixture(scope="module")
def fig():
    pages = [spec for spec in build.PAGES if spec["out"] == "trampas.html"]
    figures = lesson_figures(pages, build.ROOT, cache=build.ROOT / ".cache")
    if figures is None:
        pytest.skip("no model weights")
    return figures["trampas.html"]


def _tv(a: dict, b: dict) -> float:
    return 0.5 * sum(abs(a.get(k, 0) - b.get(k, 0)) for k in set(a) | set(b))


def test_field_order_words_are_the_argmax_and_the_distances_of_the_conditional(fig):
    o = fig["order"]
    assert o["top_first"] == max(o["p_first"], key=o["p_first"].get)
    assert o["top_second"] == max(o["p_second"], key=o["p_second"].get)
    assert o["tv_exact"] == pytest.approx(_tv(o["p_first"], o["p_second"]))
    assert o["tv"] == pytest.approx(_tv(o["q_first"], o["q_second"]))
    assert o["distortion"] == pytest.approx([_tv(o["p_first"], o["q_first"]),
                                             _tv(o["p_second"], o["q_second"])])
    # «la máscara encoge el efecto del orden» is the branch the figures choose
    assert o["tv_exact_above_masked"] == (o["tv_exact"] > o["tv"])
    # the mask's distortion differs between the orders (the reason the prose gives)
    assert o["distortion"][0] != pytest.approx(o["distortion"][1], abs=0.01)


def test_the_hint_push_is_against_the_other_hints_small_in_absolute_terms_not_relative(fig):
    o = fig["order"]
    for f in o["follow"]:
        assert f["marginal"] == pytest.approx(o["p_first"][f["name"]])
        assert f["ratio"] == pytest.approx(f["q"] / f["other"])
    pushes = {f["name"]: f["q"] - f["other"] for f in o["follow"]}
    assert o["push"] == pytest.approx(max(pushes.values()))
    assert o["push_name"] == max(pushes, key=pushes.get)
    assert o["boost_name"] == max(o["follow"], key=lambda f: f["ratio"])["name"]
    assert o["lowered"] == [n for n, d in pushes.items() if d < 0]
    # the prose: «en valor absoluto, poco» (push < 0.05) and «en proporción, no tan poco» (boost > 2)
    assert o["push"] < 0.05 and o["boost"] > 2


def test_the_order_effect_is_split_into_its_two_factors(fig):
    """§2, «¿de dónde sale la diferencia?»: the pair is the two orders' top answers; each order's
    odds are the product of its two factor ratios and match the conditional printed by the cell
    «orden»; the change between orders is the product of the two changes. The prose's words:
    the text up to the answer favours b in both orders, what follows favours a in both, and
    the forced text after the answer explains more than the whole change (the other factor goes
    against it)."""
    o, w = fig["order"], fig["order_why"]
    a, b = w["pair"]
    assert (a, b) == (o["top_first"], o["top_second"]) and a != b
    for x, p in zip(w["ratios"], (o["p_first"], o["p_second"])):
        assert x["odds"] == pytest.approx(x["upto"] * x["after"], rel=1e-12)
        assert x["odds"] == pytest.approx(p[a] / p[b], rel=1e-9)
    c = w["change"]
    assert c["odds"] == pytest.approx(w["ratios"][0]["odds"] / w["ratios"][1]["odds"], rel=1e-12)
    assert c["odds"] == pytest.approx(c["upto"] * c["after"], rel=1e-12)
    assert c["after"] == pytest.approx(c["quote"] * c["rest"], rel=1e-12)  # «la comilla … y lo que viene tras ella»
    assert w["upto_favours_b"] == all(x["upto"] < 1 for x in w["ratios"])
    assert w["after_favours_a"] == all(x["after"] > 1 for x in w["ratios"])
    # the branch the page takes today: «Leer la pista antes de contestar no explica el cambio»
    assert w["upto_favours_b"] and w["after_favours_a"]
    assert c["after"] > c["odds"] and c["upto"] < 1


def test_the_mask_moves_the_more_distorted_order_towards_the_other_conditional(fig):
    o = fig["order"]
    p, q = [o["p_first"], o["p_second"]], [o["q_first"], o["q_second"]]
    side = 0 if _tv(p[0], q[0]) > _tv(p[1], q[1]) else 1
    assert o["mask_side"] == side
    shifts = {n: abs(q[side][n] - p[side][n]) for n in o["names"]}
    assert o["shift_name"] == max(shifts, key=shifts.get)
    toward = _tv(q[side], p[1 - side]) < _tv(p[side], p[1 - side])
    assert o["toward_other"] == toward
    # «encoge ... va en contra del efecto del orden y tapa parte de él»: both words hold together
    # here, and the masked distance is still above 0 («parte»)
    assert o["tv_exact_above_masked"] and toward and o["tv"] > 0
    # the named answer moves towards the other order's conditional
    n = o["shift_name"]
    assert abs(q[side][n] - p[1 - side][n]) < abs(p[side][n] - p[1 - side][n])


def test_the_free_answers_fill_the_name_and_none_fits_the_demo_budget(fig):
    b = fig["budget"]
    assert b["free_fill_max"] == (b["name_free"] == b["max_length"])
    assert b["free_min_tokens"] > b["budget"]  # no unbudgeted answer fits in the demo's budget
    assert b["shortest"] <= b["budget"]  # the demo's budget leaves room for a valid answer
    assert b["valid_aware"] == 1.0 and b["name_aware"] < b["name_free"]


def test_the_budget_split_claims(fig):
    s = fig["budget"]["split"]
    p = dict(zip(s["labels"], s["p"]))
    target = dict(zip(s["labels"], s["target"]))
    masked = dict(zip(s["labels"], s["masked"]))
    assert s["top_p"] == max(p, key=p.get) == s["labels"][0]  # the prose quotes p[0] as the top
    assert s["excluded"] == [g for g in s["labels"] if target[g] == 0]
    assert s["top_excluded"] == (s["top_p"] in s["excluded"])
    assert all(masked[g] == 0 for g in s["excluded"])  # the budget-aware mask never writes them
    assert s["top_target"] == max(target, key=target.get)
    assert s["top_masked"] == max(masked, key=masked.get)
    assert s["tv_budget"] == pytest.approx(_tv(p, target))
    assert s["tv_mask"] == pytest.approx(_tv(target, masked))
    assert s["shortest"] < s["budget"]  # more than one name can fit
    assert s["excluded"], "the quiz q-target names an excluded answer"


def test_the_budget_sweep_claims(fig):
    w = fig["budget"]["sweep"]
    b = fig["budget"]
    cut = dict(zip(w["budgets"], w["valid_cut"]))
    assert w["aware_always_valid"] == all(v == 1.0 for v in w["valid_aware"])
    none = w["last_cut_none"]
    assert all(cut[k] == 0 for k in w["budgets"] if k <= none)  # «ninguna con 22 tokens o menos»
    assert cut[min(k for k in w["budgets"] if k > none)] > 0
    full = w["first_cut_full"]
    assert all(cut[k] == 1 for k in w["budgets"] if k >= full)  # «todas desde 30»
    assert all(cut[k] < 1 for k in w["budgets"] if k < full)
    # the sweep at the demo's budget is the demo (same seed, same n)
    assert cut[b["budget"]] == b["valid_plain"]
    assert dict(zip(w["budgets"], w["name_aware"]))[b["budget"]] == pytest.approx(b["name_aware"])
    assert w["name_aware"] == sorted(w["name_aware"])  # «se acorta tanto más cuanto más justo»
    assert w["budgets"][0] == b["shortest"]  # the sweep starts at the shortest valid answer
    assert all('role="img"' in w["svg"][lang] for lang in ("es", "en"))


def test_no_token_spans_two_characters_of_the_date(fig, tok):
    spans = [v for v in tok.vocab if len(v) > 1 and set(v) <= set(b"0123456789-")]
    assert fig["budget"]["date_span_tokens"] == len(spans)
    # «no token spans two characters of the date» <=> the shortest date is one token a character
    assert (fig["budget"]["date_span_tokens"] == 0) == (fig["budget"]["date_shortest"] == len("2000-01-01"))


def test_the_schema_of_the_budget_section(fig):
    edad = BUDGET_SCHEMA["properties"]["edad"]
    assert fig["budget"]["age_range"] == [edad["minimum"], edad["maximum"]]
    assert fig["budget"]["max_length"] == BUDGET_SCHEMA["properties"]["nombre"]["maxLength"]


def test_the_other_sections_words(fig):
    a, d, j = fig["age"], fig["date"], fig["json_mode"]
    assert a["all_valid"] == (a["valid"] == a["n"])
    assert d["strict_dates"] <= d["n"] and d["strict_real"] <= d["strict_dates"]
    assert d["null_share"] <= 1 and d["q_null"] == pytest.approx(d["p_null"] / (d["p_null"] + d["p_quote"]))
    assert j["object_all_empty"] == all(t == "{}" for t in j["object"])
    values = [json.loads(t) for t in j["any"]]
    assert j["any_all_numbers"] == all(type(v) in (int, float) for v in values)
    assert j["none_has_key"] == (not any('"nombre"' in t for t in j["object"] + j["any"]))
    assert j["none_has_key"]  # the feedback of q-json-mode says so without a branch
    assert j["none_names"] == (not any(n in t for n in NAMES for t in j["object"] + j["any"]))
    e = fig["enum"]
    assert e["states_ratio"] == pytest.approx(e["states"][-1] / e["states"][-2])
    assert e["states"] == sorted(e["states"])  # «el DFA crece con la lista»
    assert not any(k.endswith(("_ms", "_us")) or "time" in k for k in e)  # no timing in the prose
    r = fig["budget"]["split"]
    assert r["top_masked_q"] == max(r["masked"])
    assert r["top_masked"] == r["labels"][r["masked"].index(max(r["masked"]))]


def test_the_maskbench_rows_and_their_sums(fig):
    m = fig["engines"]
    for e in m["engines"]:
        assert e["other_failures"] == e["timeouts"] + e["segfaults"] + e["out_of_memory"]
        assert e["row_sum"] == (e["passing"] + e["compile_errors"] + e["other_failures"]
                                + e["validation_errors"] + e["invalidation_errors"])
    assert m["rows_off"] == [e["name"] for e in m["engines"] if e["row_sum"] != m["schemas"]]
    assert m["rows_all_add_up"] == (not m["rows_off"])


def test_the_maskbench_words_are_the_extrema_of_the_quoted_table(fig):
    m = fig["engines"]
    rows = {e["name"]: e for e in m["engines"]}
    assert sorted(m["cheapest_median_mask"]) == sorted(
        sorted(rows, key=lambda n: rows[n]["tbm_p50_us"])[:2])
    assert m["lowest_mean_mask"] == min(rows, key=lambda n: rows[n]["tbm_avg_us"])
    assert m["fastest_compile"] == min(rows, key=lambda n: rows[n]["ttfm_p50_us"])
    assert m["most_compile_errors"] == max(rows, key=lambda n: rows[n]["compile_errors"])
    wrong = {n: r["validation_errors"] + r["invalidation_errors"] for n, r in rows.items()}
    assert m["fewest_wrong"] == min(wrong, key=wrong.get)
    # «los demás ... cientos o miles de veces»; «entre medio segundo y un segundo»; «en un milisegundo»
    assert all(w >= 100 for n, w in wrong.items() if n != m["fewest_wrong"])
    assert all(500_000 <= rows[n]["ttfm_p50_us"] <= 1_000_000 for n in ("XGrammar", "Outlines-core"))
    assert 500 <= rows["LLGuidance"]["ttfm_p50_us"] <= 1_500


def _spec_table() -> dict:
    """The run of 2025-03-27 in engines.md §4.1: {metric: {engine: int}}."""
    text = SPEC.read_text(encoding="utf-8")
    section = text[text.index("Run of 2025-03-27"):text.index("Earlier run")]
    lines = [ln for ln in section.splitlines() if ln.startswith("|")]
    engines = [c.strip() for c in lines[0].strip("|").split("|")][1:]
    table = {}
    for ln in lines[2:]:
        cells = [c.strip() for c in ln.strip("|").split("|")]
        table[cells[0]] = dict(zip(engines, cells[1:]))
    return table


@pytest.mark.skipif(not SPEC.exists(), reason="../shared/spec/engines.md is not here")
def test_the_quoted_maskbench_figures_are_those_of_the_source_notes(fig):
    table = _spec_table()
    text = SPEC.read_text(encoding="utf-8")
    names = {"LLGuidance": "LLGuidance", "XGrammar": "XGrammar", "Outlines-core": "Outlines-core",
             "llama.cpp": "llama.cpp"}
    keys = {"ttfm_p50_us": "TTFM p50", "tbm_p50_us": "TBM p50", "tbm_avg_us": "TBM avg",
            "passing": "passing schemas", "compile_errors": "compile errors",
            "timeouts": "timeouts (900 s)",
            "segfaults": "segfault / OOM", "out_of_memory": "segfault / OOM",
            "validation_errors": '"validation errors" (valid instance rejected)',
            "invalidation_errors": '"invalidation errors" (invalid instance accepted)'}
    for e in fig["engines"]["engines"]:
        for key, metric in keys.items():
            cell = table[metric][names[e["name"]]].replace(",", "")
            if metric == "segfault / OOM":
                cell = cell.split("/")[0 if key == "segfaults" else 1]
            assert e[key] == int(cell.strip()), (e["name"], key)
        assert e["version"].split()[-1] in re.search(r"Run of 2025-03-27 \(([^)]*)\)", text).group(1)
    assert f'{fig["engines"]["schemas"]:,}' in text


def test_each_hint_is_the_personal_a_and_a_name(fig):
    # the English edition glosses «a Ana» as «[I saw] Ana», with the Spanish personal a
    o = fig["order"]
    assert o["hints"] == [f"a {n}" for n in o["names"]]
    assert o["fields"] == ["pista", "es"]  # glossed «hint» and «is»


def test_the_zeros_are_a_dash_the_mask_turns_into_an_age(fig, model, tok):
    """§1: «en la primera posición de la edad el token permitido más probable es el guion (q̃ …),
    y al 0, …; tras el guion solo deja 0, al que el modelo daba …»: the prefix's BPE split, the
    masker's own mask and an independent float64 softmax, recomputed here."""
    import numpy as np
    from lesson.trampas import AGE_SCHEMA, studies
    from lesson.trampas.figures import AGE_PREFIX
    from masker import compile_json_schema
    dash, age = fig["age"]["dash"], fig["age"]
    ids = tok.encode(studies.AGE_PROMPT + AGE_PREFIX)
    logits = model.forward(np.array([ids]))[0, -1].astype(np.float64)
    p = np.exp(logits - logits.max())
    p /= p.sum()
    m = compile_json_schema(AGE_SCHEMA).matcher(tok.vocab)
    m.consume_bytes(AGE_PREFIX)
    allowed = m.mask()
    minus, zero = tok.vocab.index(b"-"), tok.vocab.index(b"0")
    assert dash["q_minus"] == pytest.approx(p[minus] / p[allowed].sum(), rel=1e-6)
    assert dash["q_zero"] == pytest.approx(p[zero] / p[allowed].sum(), rel=1e-6)
    assert dash["minus_is_top_allowed"] == (int(np.argmax(np.where(allowed, p, -1))) == minus)
    m.consume(minus)
    assert dash["after_minus"] == [tok.vocab[t].decode() for t in np.flatnonzero(m.mask())]
    if age["top_age"] == 0 and dash["minus_is_top_allowed"] and dash["after_minus"] == ["0"]:  # the prose
        assert dash["q_minus"] > 10 * dash["q_zero"] and dash["p_zero_after_minus"] < 1e-3
        assert age["minus_zero"] > 0


def test_the_dash_probability_over_the_samples_splits(fig, model, tok):
    """§1: «en las 60 respuestas, que lo parten de N maneras, la máscara da al guion entre … y …,
    … de media»: recomputed from the samples (``sample_batch``, the study's seed): each sample's
    split of the forced prefix, the model's p of ``-`` after it (an independent float64 softmax)
    over the kept mass the sampler itself recorded at that position; a sample that drew ``-``
    there recorded exactly that q̃."""
    import numpy as np
    from lesson import sample_batch
    from lesson.trampas import AGE_SCHEMA, studies
    from lesson.trampas.figures import AGE_N, AGE_PREFIX
    from masker import compile_json_schema
    qs = fig["age"]["dash"]["samples_q_minus"]
    gens = sample_batch(model, tok, studies.AGE_PROMPT, compile_json_schema(AGE_SCHEMA), n=AGE_N, seed=0)
    minus = tok.vocab.index(b"-")
    values, splits = [], set()
    for g in gens:
        k = next(k for k in range(1, len(g.token_ids) + 1)
                 if b"".join(tok.vocab[t] for t in g.token_ids[:k]) == AGE_PREFIX.encode())
        splits.add(tuple(g.token_ids[:k]))
        logits = model.forward(np.array([tok.encode(studies.AGE_PROMPT) + g.token_ids[:k]]))[0, -1].astype(np.float64)
        p = np.exp(logits - logits.max())
        p /= p.sum()
        q = p[minus] / g.positions[k].kept_mass
        if g.token_ids[k] == minus:
            assert g.positions[k].q_chosen == pytest.approx(q, rel=1e-4)  # the sampler runs in float64
        values.append(q)
    assert qs["n"] == len(values) == AGE_N and qs["splits"] == len(splits)
    # the figure divides by the float32 model's kept mass, the sampler's is float64
    assert qs["min"] == pytest.approx(min(values), rel=1e-4) and qs["max"] == pytest.approx(max(values), rel=1e-4)
    assert qs["mean"] == pytest.approx(sum(values) / len(values), rel=1e-4)
    assert qs["min"] <= fig["age"]["dash"]["q_minus"] <= qs["max"] or qs["splits"] > 1
    # the cell's line and the prose count the same -0 answers
    assert fig["age"]["dash"]["minus_zero"] == fig["age"]["minus_zero"] == sum('"edad":-0' in g.text for g in gens)


def test_the_growth_per_level_comes_from_max_items(fig):
    """§6: with ``maxItems: 2`` the flattened thread's states about double per level; with no cap
    (and with ``maxItems: 1``) each level adds about the same number, the prose's «unos N»."""
    from lesson.trampas import studies
    t = fig["thread"]
    assert t["cap"] == studies.THREAD_SCHEMA["$defs"]["comentario"]["properties"]["respuestas"]["maxItems"]
    none = studies.depth_bounded(t["bound_depths"], max_replies=None).states
    one = studies.depth_bounded(t["bound_depths"], max_replies=1).states
    assert t["no_cap_states"] == none and t["one_cap_states"] == one
    steps = [b - a for a, b in zip(none, none[1:])]
    assert t["no_cap_steps"] == steps and t["no_cap_step"] == round(sum(steps) / len(steps))
    assert max(steps) - min(steps) <= 0.05 * t["no_cap_step"]  # «cada nivel añade unos N»
    assert all(abs(a - b) <= 0.05 * b for a, b in zip(one, none))  # «casi los mismos»
    assert t["growth_min"] > 2 and max(b / a for a, b in zip(none, none[1:])) < t["growth_min"]


def test_a_bare_number_is_complete_and_still_open(fig, tok):
    """§7: «un número suelto siempre puede seguir (cada respuesta está completa y aún admite otra
    cifra)»: each answer of the empty schema, fed back to the masker."""
    from masker import compile_json_schema
    j = fig["json_mode"]
    grammar = compile_json_schema({})
    ends = []
    for text in j["any"]:
        m = grammar.matcher(tok.vocab)
        m.consume_bytes(text)
        ends.append(m.is_accepting() and m.can_continue())
    assert j["any_always_open"] == all(ends)
