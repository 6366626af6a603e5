"""Every number that the prose of «Trampas y decisiones» quotes, computed from the committed weights.

The build calls :func:`compute_figures` in CPython and hands the result (plain JSON data) to the
template as ``fig``. The defaults here are the defaults of the page's cells, so the prose and the
cells' precomputed outputs show the same numbers. Figures of other engines are not computed here:
they are quoted with their source in ``ENGINE_FIGURES``.
"""

from __future__ import annotations

import json

from masker import compile_json_schema, compile_regex

from ..batch import sample_batch
from . import studies

AGE_N = 60
BUDGET, BUDGET_N = 22, 40
DATE_N = 60
THREAD_BUDGET, THREAD_N = 80, 8
JSON_MODE_TOKENS = 40

# Published figures of production engines, quoted (not measured here). MaskBench
# (guidance-ai/jsonschemabench, maskbench/README.md, run of 2025-03-27: 11,306 JSON Schemas,
# Llama-3 tokenizer of about 128k tokens, one CPU thread; llguidance 0.7.10, xgrammar 0.1.17,
# llama-cpp-python 0.3.8, outlines-core 0.2.3), in µs: time to first mask, median ("TTFM p50",
# mostly the compile time), and time between masks, median and mean ("TBM p50", "TBM avg").
# Each engine's figures cover only the schemas it compiled.
ENGINE_FIGURES = {
    "source": "MaskBench (guidance-ai/jsonschemabench, maskbench/README.md), ejecución del "
              "27-03-2025: 11 306 esquemas, tokenizador de Llama 3 (unos 128 000 tokens), un hilo de CPU",
    "engines": [
        {"name": "LLGuidance", "ttfm_p50_us": 1_037, "tbm_p50_us": 46, "tbm_avg_us": 64},
        {"name": "XGrammar", "ttfm_p50_us": 919_459, "tbm_p50_us": 9, "tbm_avg_us": 728},
        {"name": "Outlines-core", "ttfm_p50_us": 587_900, "tbm_p50_us": 34, "tbm_avg_us": 1_858},
        {"name": "llama.cpp", "ttfm_p50_us": 312, "tbm_p50_us": 17_021, "tbm_avg_us": 16_565},
    ],
}


def compute_figures(model, tok) -> dict:
    """All prose figures of the lesson as JSON-ready data (floats unrounded)."""
    return {
        "age": age_figures(model, tok),
        "order": order_figures(model, tok),
        "budget": budget_figures(model, tok),
        "date": date_figures(model, tok),
        "enum": enum_figures(tok),
        "engines": ENGINE_FIGURES,
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
            "example": study.texts[0], "minus_zero": zero}


def order_figures(model, tok) -> dict:
    result = studies.field_order(model, tok)
    first, second = result.ORDERS
    follows = result.follows(first)
    return {"prompt": studies.ORDER_PROMPT, "names": result.names, "hints": result.hints,
            "fields": list(studies.ORDER_KEYS), "tv": result.tv, "answers": result.answers,
            "agree_first": result.agree[first], "agree_second": result.agree[second],
            "follow": [{"hint": h, "name": n, "q": follows[h][n], "marginal": result.answers[first][n]}
                       for h, n in zip(result.hints, result.names)],
            "follow_gap": max(abs(follows[h][n] - result.answers[first][n])
                              for h, n in zip(result.hints, result.names)),
            "positions": sum(result.positions.values()),
            "top_first": max(result.names, key=result.answers[first].get),
            "top_second": max(result.names, key=result.answers[second].get)}


def budget_figures(model, tok) -> dict:
    demo = studies.budget_demo(model, tok, budget=BUDGET, n=BUDGET_N)
    date = compile_regex(r"[0-9]{4}-[0-9]{2}-[0-9]{2}").matcher(tok.vocab)
    return {"budget": demo.budget, "n": demo.n, "shortest": demo.shortest,
            "valid_plain": demo.valid_plain, "valid_aware": demo.valid_aware,
            "name_free": demo.name_free, "name_aware": demo.name_aware,
            "tokens_free": demo.tokens_free, "max_length": studies.BUDGET_SCHEMA["properties"]["nombre"]["maxLength"],
            "example_plain": demo.plain[0].text, "example_aware": demo.aware[0].text,
            "date_shortest": date.min_tokens_to_finish()}


def date_figures(model, tok) -> dict:
    study = studies.date_study(model, tok, n=DATE_N)
    return {"prompt": studies.DATE_PROMPT, "n": DATE_N, "p_null": study.p_null,
            "p_quote": study.p_quote, "q_null": study.q_null, "null_share": study.null_share,
            "strict_real": study._real(study.strict), "strict_examples": study.strict[:3],
            "pattern": studies.DATE_PATTERN}


def enum_figures(tok) -> dict:
    """DFA states per size (deterministic), and the compile and mask times of the build machine
    in CPython (quoted as such: the page's cell measures the reader's browser)."""
    result = studies.enum_scaling(tok)
    return {"sizes": result.sizes, "states": result.states, "compile_ms": result.compile_ms,
            "mask_us": result.mask_us, "vocab": len(tok.vocab),
            "compile_ratio": result.compile_ms[-1] / result.compile_ms[-2]}


def thread_figures(model, tok) -> dict:
    grammar = compile_json_schema(studies.THREAD_SCHEMA)
    gens = sample_batch(model, tok, studies.THREAD_PROMPT, grammar, n=THREAD_N, seed=0,
                        max_tokens=THREAD_BUDGET, budget_aware=True)
    cut = sample_batch(model, tok, studies.THREAD_PROMPT, grammar, n=THREAD_N, seed=0,
                       max_tokens=THREAD_BUDGET)
    bound = studies.depth_bounded()
    growth = [b / a for a, b in zip(bound.states, bound.states[1:])]  # per extra level
    return {"route": type(grammar.automaton).__name__, "syntax": grammar.syntax,
            "shortest": grammar.matcher(tok.vocab).min_tokens_to_finish(),
            "budget": THREAD_BUDGET, "n": THREAD_N, "samples": [g.text for g in gens[:3]],
            "valid_cut": sum(g.complete for g in cut), "valid_aware": sum(g.complete for g in gens),
            "depths": [studies.nesting_depth(json.loads(g.text)) for g in gens],
            "bound_depths": bound.depths, "bound_states": bound.states,
            "bound_chars": bound.chars,
            "growth": bound.states[-1] / bound.states[-2],
            "growth_min": min(growth), "growth_max": max(growth)}


def json_mode_figures(model, tok) -> dict:
    out = {}
    for name, schema in (("object", {"type": "object"}), ("any", {})):
        grammar = compile_json_schema(schema)
        gens = sample_batch(model, tok, studies.BUDGET_PROMPT, grammar, n=4, seed=0,
                            max_tokens=JSON_MODE_TOKENS, budget_aware=True)
        out[name] = [g.text for g in gens]
    out["tokens"] = JSON_MODE_TOKENS
    return out
