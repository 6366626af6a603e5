"""Every number that the prose of «Niveles de garantía» quotes, computed from the committed weights.

The build calls :func:`compute_figures` in CPython (see ``sitebuild.figures.lesson_figures``); the page's cells
compute the same numbers live with the same functions and the same constants (sizes, seeds,
budgets), which are defined here and in :mod:`lesson.niveles.levels`. Times are not quoted in the prose.
"""

from __future__ import annotations

import json

from masker import compile_cfg, compile_choice, compile_json_schema

from ..batch import sample_batch
from ..enumeration import enumerate_paths
from ..views import token_label
from .handmask import compare_masks, enum_object_machine, envelope_bound, run_bytes
from .levels import (FEW_SHOT_PROMPT, JSON_MODE_GBNF, JSON_MODE_UNBOUNDED_GBNF, NAMES, PARENS_GBNF,
                     PROMPT, RETRY_QUESTIONS, RETRY_TRIES, SCHEMA, matches_parens, measure_level, measure_prompt,
                     p_first_byte, retry_arithmetic, with_retries)

# Sizes, seeds and budgets of the page's cells.
N_PROMPT = 200          # level 0, each prompt
PROMPT_TOKENS = 12      # level 0: at most this many tokens per unmasked answer
N_JSON = 100            # level 2
JSON_TOKENS = 120       # level 2: token budget per answer
N_SCHEMA = 200          # level 3
N_GRAMMAR = 100         # level 4
SEED = 0
# The hand-written machine: a closed-enum record in the spirit of a conjugation table.
VERBS = ["amar", "andar", "beber", "caber", "cantar", "comer", "dar", "decir", "dormir", "estar",
         "hablar", "hacer", "ir", "leer", "oír", "pedir", "poder", "querer", "reír", "salir"]
TENSES = ["presente", "pretérito", "futuro", "imperfecto", "condicional"]
PERSONS = ["primera", "segunda", "tercera"]
FIELDS = {"verbo": VERBS, "tiempo": TENSES, "persona": PERSONS}
FSM_SCHEMA = {"type": "object", "properties": {k: {"enum": v} for k, v in FIELDS.items()},
              "required": list(FIELDS), "additionalProperties": False}
FSM_PROMPT = "Conjuga un verbo. Responde en JSON.\n"
FSM_ANSWERS = 12


def levels(model, tok) -> dict:
    """The five levels measured as the page's cells measure them (LevelResult per level)."""
    return {
        0: measure_prompt(model, tok, PROMPT, n=N_PROMPT, seed=SEED, max_tokens=PROMPT_TOKENS),
        "few": measure_prompt(model, tok, FEW_SHOT_PROMPT, n=N_PROMPT, seed=SEED,
                              max_tokens=PROMPT_TOKENS, name="pedirlo con ejemplos"),
        2: measure_level(model, tok, 2, "modo JSON", PROMPT, compile_cfg(JSON_MODE_GBNF), n=N_JSON,
                         seed=SEED, max_tokens=JSON_TOKENS, stop_at_accept=True),
        3: measure_level(model, tok, 3, "esquema", PROMPT, compile_json_schema(SCHEMA), n=N_SCHEMA,
                         seed=SEED),
        4: measure_level(model, tok, 4, "gramática", PROMPT, compile_cfg(PARENS_GBNF), n=N_GRAMMAR,
                         seed=SEED, check=matches_parens, check_name="gramática"),
    }


def row(r) -> dict:
    return {"level": r.level, "name": r.name, "n": r.n, "parsed": r.parsed, "matched": r.matched,
            "parse_rate": r.parse_rate, "schema_rate": r.schema_rate, "positions": r.positions,
            "calls_per_valid": r.calls_per_valid if r.matched else None}


def inside_braces(texts: list[str]) -> dict:
    """What JSON mode's answers hold: how many are the empty object, how many keys in all, how
    many values of each JSON type, and the first few non-empty answers."""
    values = [json.loads(t) for t in texts]
    kinds: dict[str, int] = {}
    keys = 0
    for v in values:
        for item in v.values():
            kind = type(item).__name__
            kinds[kind] = kinds.get(kind, 0) + 1
        keys += len(v)
    return {"empty": sum(1 for v in values if v == {}), "n_values": keys, "kinds": kinds,
            "examples": [t for t in texts if t != "{}"][:4],
            "with_nombre": sum(1 for v in values if "nombre" in v)}


def unbounded_json(model, tok) -> dict:
    """JSON mode without bounds (JSON_MODE_UNBOUNDED_GBNF), the same size and budget: how many
    answers the budget cuts (they do not parse)."""
    r = measure_level(model, tok, 2, "modo JSON sin cotas", PROMPT, compile_cfg(JSON_MODE_UNBOUNDED_GBNF),
                      n=N_JSON, seed=SEED, max_tokens=JSON_TOKENS, stop_at_accept=True)
    return {"n": r.n, "parsed": r.parsed, "cut": r.n - r.parsed, "budget": JSON_TOKENS}


def fsm(model, tok) -> dict:
    """The hand-written machine's figures: states of the compiled automaton and the bound, and
    the agreement of the library's machine with the compiled mask on the cell's samples."""
    grammar = compile_json_schema(FSM_SCHEMA)
    gens = sample_batch(model, tok, FSM_PROMPT, grammar, n=FSM_ANSWERS, seed=SEED)
    start, step = enum_object_machine(FIELDS)
    agreement = compare_masks(grammar, step, start, [g.token_ids for g in gens], tok.vocab)
    # the longest token of the first answer: one token, several transitions
    first = gens[0]
    longest = max(first.token_ids, key=lambda t: len(tok.vocab[t]))
    return {"syntax": grammar.syntax, "dfa_states": grammar.automaton.n_states,
            "bound": envelope_bound(FIELDS), "answers": FSM_ANSWERS, "positions": agreement.positions,
            "mismatches": agreement.mismatches, "hand_states": agreement.states,
            "example": first.text, "example_tokens": len(first.token_ids),
            "longest": token_label(tok.vocab[longest]), "longest_bytes": len(tok.vocab[longest]),
            "n_verbs": len(VERBS), "n_tenses": len(TENSES), "n_persons": len(PERSONS),
            "combinations": len(VERBS) * len(TENSES) * len(PERSONS),
            "quote_steps": len(run_bytes(step, ("key", 0, b'"verbo'), b'":"'))}


def compute_figures(model, tok) -> dict:
    """All figures of the lesson as JSON-ready data (floats unrounded; the templates format them)."""
    measured = levels(model, tok)
    measured[1] = with_retries(measured[0], RETRY_TRIES)
    ps = [enumerate_paths(model, tok, q, compile_choice(texts)).p_grammar for q, texts in RETRY_QUESTIONS]
    arithmetic = retry_arithmetic(ps)
    p_brace, p_brace_few = p_first_byte(model, tok, PROMPT), p_first_byte(model, tok, FEW_SHOT_PROMPT)
    zero = min(range(len(ps)), key=lambda i: ps[i])
    return {
        "prompt": PROMPT, "few_shot_prompt": FEW_SHOT_PROMPT, "names": NAMES,
        "schema": json.dumps(SCHEMA, ensure_ascii=False),
        "sizes": {"prompt": N_PROMPT, "prompt_tokens": PROMPT_TOKENS, "json": N_JSON,
                  "json_tokens": JSON_TOKENS, "schema": N_SCHEMA, "grammar": N_GRAMMAR,
                  "tries": RETRY_TRIES},
        "brace": {"p": p_brace, "p_few": p_brace_few, "ratio": p_brace_few / p_brace},
        "rows": [row(measured[k]) for k in (0, 1, 2, 3, 4)],
        "few": row(measured["few"]),
        "unmasked_examples": [t for t in measured[0].texts if len(t.strip()) > 1][:3],
        "few_examples": [t for t in measured["few"].texts if len(t.strip()) > 1][:3],
        "longest_unmasked": max(measured[0].texts, key=len),
        "one_token": sum(1 for t in measured[0].texts if len(tok.encode(t)) <= 1),
        "retry": {"questions": [{"prompt": q, "texts": t, "p": p} for (q, t), p in zip(RETRY_QUESTIONS, ps)],
                  "rows": arithmetic, "mean_p": sum(ps) / len(ps), "zero": ps[zero],
                  "zero_prompt": RETRY_QUESTIONS[zero][0]},
        "json_mode": inside_braces(measured[2].texts),
        "unbounded": unbounded_json(model, tok),
        "grammar_examples": measured[4].texts[:3],
        "fsm": fsm(model, tok),
        "quiz": quiz_toy(),
    }


QUIZ_PS = [0.5, 0.0]  # two questions: one the model answers half the time, one never
QUIZ_K = 5


def quiz_toy() -> dict:
    """The quiz's retry question: failure after QUIZ_K tries, per question and naive."""
    r = retry_arithmetic(QUIZ_PS, [QUIZ_K])[0]
    return {"ps": QUIZ_PS, "k": QUIZ_K, "per_question": r["per_question"], "naive": r["naive"],
            "mean_p": sum(QUIZ_PS) / len(QUIZ_PS), "easy_fail": (1 - QUIZ_PS[0]) ** QUIZ_K}
