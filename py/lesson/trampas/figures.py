"""Every number that the prose of «Trampas y decisiones» quotes, computed from the committed weights.

The build calls :func:`compute_figures` in CPython and hands the result (plain JSON data) to the
template as ``fig``. The defaults here are the defaults of the page's cells, so the prose and the
cells' precomputed outputs show the same numbers. Figures of other engines are not computed here:
they are quoted with their source in ``ENGINE_FIGURES``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from masker import compile_choice, compile_json_schema, compile_regex

from ..batch import sample_batch
from ..course import KEY, NAMES, PROMPT, answer, name_of
from ..i18n import _, each_language
from ..views import token_label
from . import studies
from .budget import budget_split, budget_sweep
from .budget_plot import sweep_svg, sweep_table

AGE_N = 60
BUDGET, BUDGET_N = 22, 40
SPLIT_BUDGET = 16  # one token above the shortest answer: the most likely name no longer fits
SWEEP_BUDGETS = list(range(18, 31, 2))  # from the shortest valid answer to where cutting stops failing
DATE_N = 60
THREAD_BUDGET, THREAD_N = 80, 8
THREAD_MAX_LENGTH = 10  # studies.comment's maxLength for «texto»
JSON_MODE_TOKENS = 40

# Published figures of production engines, quoted (not measured here), from the MaskBench README
# of guidance-ai/jsonschemabench (maskbench/README.md, as summarised in the project's
# ../shared/spec/engines.md §4.1): the run of 2025-03-27, 11,306 JSON Schemas, Llama-3 tokenizer
# of about 128k tokens, one CPU thread per sequence (Azure NC96ads_A100_v4, AMD EPYC 7V13), 15 min
# and 40 GiB per schema. guidance-ai, who publish it, develop llguidance, one of the engines.
# In µs: time to first mask, median ("TTFM p50", mostly the compile time; the README: "the TTFM
# is cut off at 900s due to timeout", so a schema that timed out counts as 900 s), and time
# between masks, median and mean ("TBM p50", "TBM avg"). Counts of schemas: passing, compile
# errors, timeouts (900 s), segmentation faults, out of memory, "validation errors" (a valid
# instance rejected) and "invalidation errors" (an invalid instance accepted). The notes' rows
# do not all add up to the 11,306 schemas (XGrammar 40 short, Outlines-core 2 over); the
# notes do not say why.
ENGINE_FIGURES = {
    # "source": the run, in words of each language (engine_source; engine_figures stores both)
    "publisher": "guidance-ai",
    "schemas": 11_306,
    "date": "27-03-2025",  # day-month-year; the English edition writes it year-month-day
    "engines": [
        {"name": "LLGuidance", "version": "llguidance 0.7.10", "ttfm_p50_us": 1_037,
         "tbm_p50_us": 46, "tbm_avg_us": 64, "passing": 8_909, "compile_errors": 2_377,
         "timeouts": 0, "segfaults": 0, "out_of_memory": 0,
         "validation_errors": 20, "invalidation_errors": 0},
        {"name": "XGrammar", "version": "xgrammar 0.1.17", "ttfm_p50_us": 919_459,
         "tbm_p50_us": 9, "tbm_avg_us": 728, "passing": 8_122, "compile_errors": 90,
         "timeouts": 241, "segfaults": 37, "out_of_memory": 0,
         "validation_errors": 1_408, "invalidation_errors": 1_368},
        {"name": "Outlines-core", "version": "outlines-core 0.2.3", "ttfm_p50_us": 587_900,
         "tbm_p50_us": 34, "tbm_avg_us": 1_858, "passing": 7_050, "compile_errors": 1_773,
         "timeouts": 60, "segfaults": 0, "out_of_memory": 188,
         "validation_errors": 1_415, "invalidation_errors": 822},
        {"name": "llama.cpp", "version": "llama-cpp-python 0.3.8", "ttfm_p50_us": 312,
         "tbm_p50_us": 17_021, "tbm_avg_us": 16_565, "passing": 6_505, "compile_errors": 1_301,
         "timeouts": 1, "segfaults": 0, "out_of_memory": 0,
         "validation_errors": 2_850, "invalidation_errors": 649},
    ],
}


# Measured here, not quoted: ``bench/bench_vocab.py --stride 10 --instances 2 --json`` wrote it
# (this masker and llguidance 1.9.1 side by side, o200k_base, every 10th MaskBench schema).
MEASURED_VOCAB = Path(__file__).with_name("measured_vocab.json")


def measured_figures() -> dict:
    """Our figures on a real vocabulary, from the last run of ``bench/bench_vocab.py`` kept in
    ``measured_vocab.json`` (see its ``command``, ``measured`` date and ``cpus``): µs per mask
    (p50, p99, max; ours also for the computed masks alone, without cache hits), ms to the first
    mask (p50) for this masker and for llguidance measured beside it, and their ratios; what was
    taken and dropped, how many masks differ, and the schema with most of the slowest masks.
    Raises FileNotFoundError when the file is missing."""
    data = json.loads(MEASURED_VOCAB.read_text(encoding="utf-8"))
    ours, theirs = data["mask_us"]["ours"], data["mask_us"]["llguidance"]
    computed = data["mask_us_computed"]["ours"]
    first_ours, first_theirs = (data["first_mask_ms"]["ours"][0],
                                data["first_mask_ms"]["llguidance"][0])
    slow_name, slow_count = data["slowest_schema_share"][0]
    year, month, day = data["measured"].split("-")
    return {"measured": f"{day}-{month}-{year}",  # as ``date`` above: day-month-year
            "cpus": data["cpus"], "python": data["python"],
            "vocab": data["vocab"], "n_tokens": data["n_tokens"], "schemas": data["schemas"],
            "files": data["maskbench_files"], "stride": data["stride"],
            "instances": data["instances_per_schema"], "masks": data["masks"],
            "llguidance": data["llguidance"], "command": data["command"],
            "ours": {"compile_ms": data["compile_ms"]["ours"][0], "p50": ours[0], "p99": ours[1],
                     "max": ours[2]},
            "theirs": {"compile_ms": data["compile_ms"]["llguidance"][0], "p50": theirs[0],
                       "p99": theirs[1], "max": theirs[2]},
            "ratio_p50": ours[0] / theirs[0], "ratio_p99": ours[1] / theirs[1],
            "ratio_compile": data["compile_ms"]["ours"][0] / data["compile_ms"]["llguidance"][0],
            "files_taken": data["files_taken"], "ours_refused": data["skipped"]["ours_refused"],
            "llg_refused": data["skipped"]["llg_refused"],
            "schemas_with_masks": data["schemas_with_masks"], "instances_walked": data["instances"],
            "cache_hits": data["cache_hits"],
            "computed": {"p50": computed[0], "p99": computed[1], "max": computed[2]},
            "first_ms": {"ours": first_ours, "theirs": first_theirs},
            "ratio_first": first_ours / first_theirs,
            "disagreeing": data["masks_disagreeing"],
            "disagreeing_known": data["masks_disagreeing"] - data["masks_disagreeing_otherwise"],
            "disagreeing_percent": round(100 * data["masks_disagreeing"] / data["masks"]),
            "after_ours_refused": data["files_taken"] - data["skipped"]["ours_refused"],
            "ratio_computed_p50": computed[0] / theirs[0],
            "ratio_computed_p99": computed[1] / theirs[1],
            "disagreeing_other": data["masks_disagreeing_otherwise"],
            "slowest_schema": slow_name.removesuffix(".json"), "slowest_share": slow_count}


OUTCOMES = ("passing", "compile_errors", "timeouts", "segfaults", "out_of_memory",
            "validation_errors", "invalidation_errors")


def engine_source() -> str:
    """The run the quoted figures come from, in the current language (``fig.engines.source``)."""
    return _("MaskBench (guidance-ai/jsonschemabench, maskbench/README.md), ejecución del "
             "27-03-2025: 11 306 esquemas, tokenizador de Llama 3 (unos 128 000 tokens), un hilo de CPU")


def engine_figures() -> dict:
    """The quoted MaskBench figures and the words the prose takes from them (each an argmin or
    argmax over the four engines); per engine, ``other_failures`` (timeouts, segfaults, out of
    memory) and ``row_sum`` (all outcomes), and ``rows_off``: the engines whose outcomes do not
    add up to the schemas of the run."""
    engines = ENGINE_FIGURES["engines"]

    def by(key):
        return [e["name"] for e in sorted(engines, key=lambda e: e[key])]

    wrong = {e["name"]: e["validation_errors"] + e["invalidation_errors"] for e in engines}
    rows = [{**e, "other_failures": e["timeouts"] + e["segfaults"] + e["out_of_memory"],
             "row_sum": sum(e[k] for k in OUTCOMES)} for e in engines]
    off = [e["name"] for e in rows if e["row_sum"] != ENGINE_FIGURES["schemas"]]
    return {**ENGINE_FIGURES, "source": each_language(engine_source), "engines": rows, "rows_off": off,
            "rows_all_add_up": not off, "fastest_compile": by("ttfm_p50_us")[0],
            "slowest_compile": by("ttfm_p50_us")[-1],
            "cheapest_median_mask": by("tbm_p50_us")[:2], "lowest_mean_mask": by("tbm_avg_us")[0],
            "most_compile_errors": by("compile_errors")[-1],
            "fewest_wrong": min(wrong, key=wrong.get), "most_passing": by("passing")[-1]}


def compute_figures(model, tok) -> dict:
    """All prose figures of the lesson as JSON-ready data (floats unrounded)."""
    return {
        "age": age_figures(model, tok),
        "order": order_figures(model, tok),
        "order_why": order_why(model, tok),
        "budget": budget_figures(model, tok),
        "date": date_figures(model, tok),
        "enum": enum_figures(tok),
        "engines": engine_figures(),
        "measured": measured_figures(),
        "thread": thread_figures(model, tok),
        "json_mode": json_mode_figures(model, tok),
    }


def age_figures(model, tok) -> dict:
    study = studies.age_study(model, tok, n=AGE_N)
    top_age, top_count = study.counts[0]
    zero = sum(t.endswith(':-0}') for t in study.texts)
    return {"prompt": studies.AGE_PROMPT, "n": study.n, "distinct": len(study.counts),
            "top_age": top_age, "top_share": top_count / study.n, "rule": list(study.rule),
            "rule_ok": study.rule_ok, "min": min(study.ages), "max": max(study.ages),
            "valid": study.valid, "all_valid": study.valid == study.n,
            "example": study.texts[0], "minus_zero": zero, "dash": dash_to_zero(model, tok)}


AGE_PREFIX = studies.AGE_PREFIX  # what the schema forces before the age


def dash_to_zero(model, tok) -> dict:
    """Where §1's «-0» come from: :func:`studies.dash_to_zero` on the page's AGE_N samples (the
    cell «edades» prints the same view)."""
    return studies.dash_to_zero(model, tok, n=AGE_N, seed=0).data


def order_figures(model, tok) -> dict:
    """Field order (§2): both orders enumerated exactly. ``p_*``/``q_*``: the conditional's and
    the mask's answer distributions per order; ``tv``/``tv_exact``: total variation between the
    orders under the mask and under the conditional; ``distortion``: between mask and conditional
    in each order; ``follow``: per hint (hint first), the conditional P(answer = hint's name |
    hint) (``q``) against P(same answer | another hint) (``other``) and their ratio; ``push``:
    the largest rise ``q - other`` (absolute), ``push_name`` its name, ``boost_name``/``boost``: the name whose ratio is
    the largest and that ratio, ``lowered``: the names whose hint lowers them; ``mask_side``:
    the order (index) where the mask's distortion is larger, ``toward_other``: whether the mask
    moves that order's answers towards the other order's conditional (smaller TV to it),
    ``shift_name``: the answer the mask moves most there."""
    result = studies.field_order(model, tok)
    first, second = result.ORDERS
    exact = result.answers["exact"]
    follows = result.follows(first, "exact")
    other = result.follows_other(first, "exact")
    pairs = list(zip(result.hints, result.names))
    follow = [{"hint": h, "name": n, "q": follows[h][n], "other": other[n],
               "ratio": follows[h][n] / other[n], "marginal": exact[first][n]} for h, n in pairs]
    boost = max(follow, key=lambda f: f["ratio"])
    return {"prompt": studies.ORDER_PROMPT, "names": result.names, "hints": result.hints,
            "fields": list(studies.ORDER_KEYS), "tv": result.tv("masked"),
            "tv_exact": result.tv("exact"),
            "tv_exact_above_masked": result.tv("exact") > result.tv("masked"),
            "p_first": exact[first], "p_second": exact[second],
            "q_first": result.answers["masked"][first], "q_second": result.answers["masked"][second],
            "distortion": [result.distortion(first), result.distortion(second)],
            "agree_first": result.agree["exact"][first], "agree_second": result.agree["exact"][second],
            "follow": follow, "push": max(f["q"] - f["other"] for f in follow),
            "push_name": max(follow, key=lambda f: f["q"] - f["other"])["name"],
            "boost_name": boost["name"], "boost": boost["ratio"],
            "lowered": [f["name"] for f in follow if f["q"] < f["other"]],
            **mask_side(result),
            "positions": sum(result.positions.values()),
            "top_first": max(result.names, key=exact[first].get),
            "top_second": max(result.names, key=exact[second].get),
            "top_first_masked": max(result.names, key=result.answers["masked"][first].get),
            "top_second_masked": max(result.names, key=result.answers["masked"][second].get)}


def order_why(model, tok) -> dict:
    """Why the order moves the answer (§2, the cell «orden-factores»): studies.order_factors.
    ``pair`` (a, b); per order (in ORDERS' order), the ratios a:b of the two factors and their
    product (``ratios``: upto, after, odds); ``change``: the same ratios, first order / second;
    ``upto_favours_b``: whether the stretch up to the answer favours b in both orders;
    ``after_favours_a``: whether the forced text after it favours a in both."""
    r = studies.order_factors(model, tok)
    ratios = [r.ratios(o) for o in r.ORDERS]
    return {"pair": list(r.pair), "ratios": ratios, "change": r.change(),
            "upto_favours_b": all(x["upto"] < 1 for x in ratios),
            "after_favours_a": all(x["after"] > 1 for x in ratios),
            "conditional": [r.conditional(o) for o in r.ORDERS]}


def mask_side(result) -> dict:
    """Where the mask's distortion of the field-order answers is larger, and which way it goes:
    towards the other order's conditional (``toward_other``) or away from it."""
    orders = result.ORDERS
    side = max((0, 1), key=lambda i: result.distortion(orders[i]))
    p = result.answers["exact"][orders[side]]
    q = result.answers["masked"][orders[side]]
    p_other = result.answers["exact"][orders[1 - side]]
    shift = max(result.names, key=lambda n: abs(q[n] - p[n]))
    return {"mask_side": side, "shift_name": shift,
            "toward_other": studies.total_variation(q, p_other) < studies.total_variation(p, p_other)}


def budget_figures(model, tok) -> dict:
    """The token budget (§3): the demo at ``BUDGET`` tokens, the budget's two effects measured
    exactly on the course's five names at ``SPLIT_BUDGET`` tokens, and the sweep of budgets."""
    demo = studies.budget_demo(model, tok, budget=BUDGET, n=BUDGET_N)
    date = compile_regex(r"[0-9]{4}-[0-9]{2}-[0-9]{2}").matcher(tok.vocab)
    max_length = studies.BUDGET_SCHEMA["properties"]["nombre"]["maxLength"]
    age = studies.BUDGET_SCHEMA["properties"]["edad"]
    free_names = [len(json.loads(g.text)["nombre"]) for g in demo.free]
    return {"prompt": studies.BUDGET_PROMPT, "budget": demo.budget, "n": demo.n,
            "shortest": demo.shortest,
            "valid_plain": demo.valid_plain, "valid_aware": demo.valid_aware,
            "name_free": demo.name_free, "name_aware": demo.name_aware,
            "tokens_free": demo.tokens_free, "max_length": max_length,
            "age_range": [age["minimum"], age["maximum"]],
            "free_fill_max": all(n == max_length for n in free_names),
            "free_min_tokens": min(len(g.token_ids) for g in demo.free),
            "example_plain": demo.plain[0].text, "example_aware": demo.aware[0].text,
            "date_shortest": date.min_tokens_to_finish(),
            # tokens that could cover two characters of the date (digits and hyphens only):
            # with none, every token writes one character and the shortest date is 10 tokens
            "date_span_tokens": sum(len(v) > 1 and all(c in b"0123456789-" for c in v)
                                    for v in tok.vocab),
            "split": split_figures(model, tok), "sweep": sweep_figures(model, tok)}


def split_figures(model, tok) -> dict:
    """p(y | x, G), p(y | x, G, |y| <= k) and the budget-aware q~ on the course's grammar."""
    grammar = compile_choice([answer(n) for n in NAMES])
    split = budget_split(model, tok, PROMPT, grammar, SPLIT_BUDGET, label=name_of)
    shortest = {n: len(tok.encode(answer(n))) for n in NAMES}  # the BPE split, for the prose
    top = max(split.labels, key=dict(zip(split.labels, split.p)).get)
    return {"budget": SPLIT_BUDGET, "labels": split.labels, "p": split.p, "target": split.target,
            "masked": split.masked, "tv_budget": split.tv_budget, "tv_mask": split.tv_mask,
            "excluded": split.excluded, "top_p": top, "top_excluded": top in split.excluded,
            "top_target": max(split.labels, key=dict(zip(split.labels, split.target)).get),
            "top_masked": max(split.labels, key=dict(zip(split.labels, split.masked)).get),
            "top_masked_q": max(split.masked),
            "shortest": grammar.matcher(tok.vocab).min_tokens_to_finish(),
            "bpe_tokens": shortest}


def sweep_figures(model, tok) -> dict:
    """The budget sweep on ``BUDGET_SCHEMA`` (the picture of §3), data and SVG."""
    grammar = compile_json_schema(studies.BUDGET_SCHEMA)
    sweep = budget_sweep(model, tok, studies.BUDGET_PROMPT, grammar, SWEEP_BUDGETS, n=BUDGET_N)
    cut_full = [k for k, v in zip(sweep.budgets, sweep.valid_cut) if v == 1.0]
    cut_none = [k for k, v in zip(sweep.budgets, sweep.valid_cut) if v == 0.0]
    return {"budgets": sweep.budgets, "valid_cut": sweep.valid_cut, "valid_aware": sweep.valid_aware,
            "name_aware": sweep.name_aware, "name_free": sweep.name_free, "n": sweep.n,
            "aware_always_valid": all(v == 1.0 for v in sweep.valid_aware),
            "first_cut_full": cut_full[0] if cut_full else None,
            "last_cut_none": cut_none[-1] if cut_none else None,
            "svg": each_language(sweep_svg, sweep), "table": each_language(sweep_table, sweep)}


def date_figures(model, tok) -> dict:
    study = studies.date_study(model, tok, n=DATE_N)
    return {"prompt": studies.DATE_PROMPT, "n": DATE_N, "p_null": study.p_null,
            "p_quote": study.p_quote, "q_null": study.q_null, "null_share": study.null_share,
            "strict_real": study._real(study.strict), "strict_examples": study.strict[:3],
            "strict_dates": sum(isinstance(v, str) and re.fullmatch(studies.DATE_PATTERN, v) is not None
                                for v in study.strict),
            "pattern": studies.DATE_PATTERN}


def enum_figures(tok) -> dict:
    """DFA states per size and their last ratio (deterministic). No times: this run is not the
    one the page's cell prints, and times vary from run to run, so the prose quotes none."""
    result = studies.enum_scaling(tok)
    return {"sizes": result.sizes, "states": result.states, "vocab": len(tok.vocab),
            "states_ratio": result.ratios()["states"]}


def thread_figures(model, tok) -> dict:
    """§6: the recursive thread sampled with THREAD_BUDGET tokens, cut and budget-aware, its
    flattening by depth, and ``cut_why``: why the cut threads end invalid, from
    :func:`studies.thread_state` (comments of the valid ones and their token range and mean,
    comments begun by the invalid ones, where their last comment sat, the finished texts' mean
    length against THREAD_MAX_LENGTH)."""
    grammar = compile_json_schema(studies.THREAD_SCHEMA)
    gens = sample_batch(model, tok, studies.THREAD_PROMPT, grammar, n=THREAD_N, seed=0,
                        max_tokens=THREAD_BUDGET, budget_aware=True)
    cut = sample_batch(model, tok, studies.THREAD_PROMPT, grammar, n=THREAD_N, seed=0,
                       max_tokens=THREAD_BUDGET)
    bound = studies.depth_bounded()
    growth = [b / a for a, b in zip(bound.states, bound.states[1:])]  # per extra level
    # why the cut threads are invalid (studies.thread_state, printed by the cell's CutThreads)
    states = [studies.thread_state(g.text) for g in cut]
    valid = [(g, st) for g, st in zip(cut, states) if st["last"] is None]
    invalid = [st for st in states if st["last"] is not None]
    lengths = [n for st in states for n in st["texts"]]
    single = [len(g.token_ids) for g, st in valid if st["comments"] == 1]
    cut_why = {"valid_comments": sorted({st["comments"] for _, st in valid}),
               "valid_tokens": [min(single), max(single)] if single else None,
               "per_comment": sum(single) / len(single) if single else None,
               "invalid_comments": sorted({st["comments"] for st in invalid}),
               "first_reply": sum(st["last"] == "first reply" for st in invalid),
               "second_reply": sum(st["last"] == "second reply" for st in invalid),
               "text_mean": sum(lengths) / len(lengths),
               "max_length": THREAD_MAX_LENGTH}
    return {"route": type(grammar.automaton).__name__, "syntax": grammar.syntax,
            "shortest": grammar.matcher(tok.vocab).min_tokens_to_finish(),
            "budget": THREAD_BUDGET, "n": THREAD_N, "samples": [g.text for g in gens[:3]],
            "valid_cut": sum(g.complete for g in cut), "valid_aware": sum(g.complete for g in gens),
            "depths": [studies.nesting_depth(json.loads(g.text)) for g in gens],
            "bound_depths": bound.depths, "bound_states": bound.states,
            "bound_chars": bound.chars,
            "growth": bound.states[-1] / bound.states[-2],
            "growth_min": min(growth), "growth_max": max(growth), "cut_why": cut_why, **cap_sweep(bound)}


def cap_sweep(bound) -> dict:
    """The setting behind §6's growth: THREAD_SCHEMA's ``maxItems: 2``. The same flattening with
    ``maxItems: 1`` and with no ``maxItems`` (``depth_bounded``): their states per depth, and for no
    cap the states each level adds (``no_cap_steps``; the prose quotes their mean rounded)."""
    one = studies.depth_bounded(bound.depths, max_replies=1).states
    none = studies.depth_bounded(bound.depths, max_replies=None).states
    steps = [b - a for a, b in zip(none, none[1:])]
    return {"cap": 2, "one_cap_states": one, "no_cap_states": none, "no_cap_steps": steps,
            "no_cap_step": round(sum(steps) / len(steps))}


def json_mode_figures(model, tok) -> dict:
    """JSON mode (§7): the answers with ``{"type": "object"}`` and ``{}``, and the words the prose
    takes from them (all empty objects; all numbers; every answer uses the whole budget; no
    answer has the key the prompt asks for)."""
    out, lengths = {}, {}
    for name, schema in (("object", {"type": "object"}), ("any", {})):
        grammar = compile_json_schema(schema)
        gens = sample_batch(model, tok, studies.BUDGET_PROMPT, grammar, n=4, seed=0,
                            max_tokens=JSON_MODE_TOKENS, budget_aware=True)
        out[name] = [g.text for g in gens]
        lengths[name] = [len(g.token_ids) for g in gens]
        if name == "any":  # «un número suelto siempre puede seguir»: complete, and still open
            ends = []
            for g in gens:
                m = grammar.matcher(tok.vocab)
                m.consume_bytes(g.bytes)
                ends.append(m.is_accepting() and m.can_continue())
            out["any_always_open"] = all(ends)
    values = [json.loads(t) for t in out["object"] + out["any"]]
    out.update(tokens=JSON_MODE_TOKENS, object_all_empty=all(t == "{}" for t in out["object"]),
               any_all_numbers=all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                   for v in map(json.loads, out["any"])),
               any_fill_budget=all(n == JSON_MODE_TOKENS for n in lengths["any"]),
               none_has_key=not any(isinstance(v, dict) and KEY in v for v in values),
               none_names=not any(n in t for n in NAMES for t in out["object"] + out["any"]))
    return out
