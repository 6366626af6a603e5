"""Every number that the prose of «Niveles de garantía» quotes, computed from the committed weights.

The build calls :func:`compute_figures` in CPython (see ``sitebuild.figures.lesson_figures``); the page's cells
compute the same numbers live with the same functions and the same constants (sizes, seeds,
budgets), which are defined here and in :mod:`lesson.niveles.levels`. The prose quotes no time:
the cells' precomputed outputs run in another process, and times differ between runs; it takes
only the comparison of :func:`stack`'s time ratio with its positions ratio, and the shares of
levels 3 and 4's time spent on masks and in the model, each named as one measurement of the
build.
"""

from __future__ import annotations

import json
import math
from collections import Counter

from masker import compile_cfg, compile_choice, compile_json_schema

from ..batch import sample_batch
from ..course import answer
from ..enumeration import enumerate_paths
from ..token_language import count_language
from ..views import token_label
from .handmask import (compare_masks, enum_object_machine, envelope_bound, prefix_shared_bound, reachable_states,
                       run_bytes)
from .levels import (FEW_SHOT_PROMPT, brace_bound, JSON_MODE_GBNF, JSON_MODE_UNBOUNDED_GBNF, NAMES, PARENS_GBNF,
                     PROMPT, RETRY_QUESTIONS, RETRY_TRIES, SCHEMA, depth_counts, fewest_tokens, first_nested,
                     distinct_states, inside_braces, matches_parens, parses, measure_level, measure_prompt, p_first_byte,
                     retry_arithmetic, stack_cost, state_sources, with_retries, initial_choice, position_split)

# Sizes, seeds and budgets of the page's cells. Level 0's token budget is not a constant: it is
# the longest token path of any text of SCHEMA's grammar (:func:`prompt_budget`), so every split of
# every valid compact answer fits.
N_PROMPT = 200          # level 0, each prompt
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


def prompt_budget(tok) -> int:
    """Level 0's token budget: the tokens of the longest token path that spells a text of SCHEMA's
    grammar (``count_language``'s ``longest_tokens``; every text byte by byte, at most)."""
    return count_language(compile_json_schema(SCHEMA), tok.vocab).longest_tokens


def fit(tok) -> dict:
    """What a valid answer needs: per name, the fewest tokens of its compact answer
    (:func:`fewest_tokens`), their smallest and largest, and level 0's budget."""
    fewest = {n: fewest_tokens(answer(n), tok.vocab) for n in NAMES}
    shortest = min(NAMES, key=lambda n: fewest[n])
    most = max(NAMES, key=lambda n: fewest[n])
    return {"fewest": fewest, "min": fewest[shortest], "min_name": shortest,
            "max": fewest[most], "max_name": most, "budget": prompt_budget(tok)}


def exact_schema(model, tok) -> dict:
    """p(G | x) of SCHEMA's grammar by exact enumeration: the probability that the unmasked answer
    *starts* with one of the five compact texts (as «La máscara» computes it), the expected tries
    1/p and N_PROMPT * p. It is not the probability of a valid level-0 answer: ``json.loads`` also
    reads spaced texts, and the model has no end token. Per name: its conditional p(g | x, G) and
    its masked q~(g | x); ``inflated``, the name the mask raises most (argmax of q~ / p), and
    whether it is also the model's least likely (argmin of p); ``model_top``, the argmax of p;
    ``masked_top``, the argmax of q~ (the most probable name under the mask)."""
    e = enumerate_paths(model, tok, PROMPT, compile_json_schema(SCHEMA))
    names = {n: {"conditional": e.row(answer(n)).conditional, "masked": e.row(answer(n)).masked} for n in NAMES}
    inflated = max(NAMES, key=lambda n: names[n]["masked"] / names[n]["conditional"])
    least = min(NAMES, key=lambda n: names[n]["conditional"])
    return {"p": e.p_grammar, "tries": e.expected_tries, "n": N_PROMPT, "expected_valid": N_PROMPT * e.p_grammar,
            "names": names, "inflated": inflated, "inflated_is_least": inflated == least,
            "model_top": max(NAMES, key=lambda n: names[n]["conditional"]),
            "masked_top": max(NAMES, key=lambda n: names[n]["masked"])}


def valid_bound(model, tok) -> dict:
    """An upper bound on the probability of a valid level-0 answer, of any spacing: it must start
    with ``{`` after any whitespace (:func:`lesson.niveles.levels.brace_bound`); with the tries
    per valid answer it implies (at least 1/bound) and the valid answers N_PROMPT tries expect
    (at most N_PROMPT * bound)."""
    b = brace_bound(model, tok, PROMPT)
    out = {**b, "min_tries": 1 / b["bound"], "max_expected": N_PROMPT * b["bound"]}
    # as the prose writes them, two significant figures rounded the safe way: an upper bound up,
    # a lower bound down (4.19e7 is «al menos 4,1·10⁷», not 4,2)
    out.update(bound_up=round_sig(out["bound"], 2, up=True), max_expected_up=round_sig(out["max_expected"], 2, up=True),
               min_tries_down=round_sig(out["min_tries"], 2, up=False))
    return out


def round_sig(x: float, digits: int, *, up: bool) -> float:
    """``x`` > 0 rounded to ``digits`` significant figures towards +∞ (``up``) or towards 0:
    round_sig(4.19e7, 2, up=False) == 4.1e7, round_sig(2.387e-8, 2, up=True) == 2.4e-8."""
    step = 10.0 ** (math.floor(math.log10(x)) - digits + 1)
    scaled = x / step
    # a float just above an integer (4.1000000001) is that integer: no spurious step
    whole = round(scaled) if abs(scaled - round(scaled)) < 1e-9 else (math.ceil(scaled) if up else math.floor(scaled))
    return float(f"{whole * step:.{digits}g}")


def levels(model, tok) -> dict:
    """The five levels measured as the page's cells measure them (LevelResult per level)."""
    budget = prompt_budget(tok)
    return {
        0: measure_prompt(model, tok, PROMPT, n=N_PROMPT, seed=SEED, max_tokens=budget),
        "few": measure_prompt(model, tok, FEW_SHOT_PROMPT, n=N_PROMPT, seed=SEED,
                              max_tokens=budget, name="pedirlo con ejemplos"),
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


def unbounded_json(model, tok) -> dict:
    """JSON mode without bounds (JSON_MODE_UNBOUNDED_GBNF), the same size and budget: how many
    answers the budget cuts (they do not parse), and of those that parse, how many are the empty
    object ``{}`` (``empty``): ``finished_with_content`` answers with a member finished in time."""
    r = measure_level(model, tok, 2, "modo JSON sin cotas", PROMPT, compile_cfg(JSON_MODE_UNBOUNDED_GBNF),
                      n=N_JSON, seed=SEED, max_tokens=JSON_TOKENS, stop_at_accept=True)
    parsed = [json.loads(t) for t in r.texts if parses(t)]
    empty = sum(value == {} for value in parsed)
    return {"n": r.n, "parsed": r.parsed, "cut": r.n - r.parsed, "budget": JSON_TOKENS,
            "empty": empty, "finished_with_content": len(parsed) - empty}


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
            "bound": envelope_bound(FIELDS), "prefix_shared": prefix_shared_bound(FIELDS),
            "hand_reachable": reachable_states(*enum_object_machine(FIELDS)), "answers": FSM_ANSWERS, "positions": agreement.positions,
            "mismatches": agreement.mismatches, "hand_states": agreement.states,
            "example": first.text, "example_tokens": len(first.token_ids),
            "longest": token_label(tok.vocab[longest]), "longest_bytes": len(tok.vocab[longest]),
            "n_verbs": len(VERBS), "n_tenses": len(TENSES), "n_persons": len(PERSONS),
            "combinations": len(VERBS) * len(TENSES) * len(PERSONS),
            "quote_steps": len(run_bytes(step, ("key", 0, b'"verbo'), b'":"'))}


def unmasked(r) -> dict:
    """Level 0's answers: how many stopped at their first token, how many the budget stopped, and
    the one that lasted longest in tokens (the first such), with its token count."""
    longest = max(range(r.n), key=lambda i: r.token_counts[i])
    return {"first_token": sum(1 for c in r.token_counts if c == 1), "budget_hits": r.budget_hits,
            "longest": r.texts[longest], "longest_tokens": r.token_counts[longest],
            "longest_chars": len(r.texts[longest]),
            "longest_is_widest": len(r.texts[longest]) == max(map(len, r.texts))}


def schema_names(r) -> dict:
    """Level 3's answers per name, most frequent first (ties in NAMES order), and the top one."""
    counts = Counter(json.loads(t)["nombre"] for t in r.texts)
    ranked = sorted(NAMES, key=lambda n: (-counts[n], NAMES.index(n)))
    return {"counts": {n: counts[n] for n in ranked}, "top": ranked[0], "top_count": counts[ranked[0]]}


def sampling_noise(r, exact: dict) -> dict:
    """Level 3's sample against the mask's exact distribution (``exact_schema``): per name, the
    expected count n·q~ and its binomial standard deviation √(n q~ (1 − q~)), and ``z``, how many
    standard deviations the observed count lies from the expected one; ``max_abs_z`` over the
    names (the prose calls the sample's ranking noise when it is below 2.5); ``chi2``, ``dof`` and
    ``p``: Pearson's test of the counts against the masked distribution (p None for an odd dof)."""
    counts = Counter(json.loads(t)["nombre"] for t in r.texts)
    rows = {}
    for name in NAMES:
        q = exact["names"][name]["masked"]
        expected, sd = r.n * q, math.sqrt(r.n * q * (1 - q))
        rows[name] = {"observed": counts[name], "expected": expected, "sd": sd, "z": (counts[name] - expected) / sd}
    # Pearson's χ² against the masked distribution, len(NAMES) - 1 degrees of freedom; with an
    # even number k of them the tail is exp(-x/2) Σ_{i<k/2} (x/2)^i / i! (exact, no library)
    chi2 = sum((v["observed"] - v["expected"]) ** 2 / v["expected"] for v in rows.values())
    dof = len(NAMES) - 1
    p = (math.exp(-chi2 / 2) * sum((chi2 / 2) ** i / math.factorial(i) for i in range(dof // 2))
         if dof % 2 == 0 else None)
    return {"names": rows, "max_abs_z": max(abs(v["z"]) for v in rows.values()),
            "chi2": chi2, "dof": dof, "p": p}


def zero_in_sample(n: int) -> dict:
    """What 0 successes in ``n`` tries says (the q-budget quiz): the exact one-sided 95 % upper
    bound on the rate, 1 − 0.05^(1/n) (about 3/n, the rule of three), and the chance of a zero when
    the rate is 1/n, (1 − 1/n)^n."""
    return {"n": n, "upper95": 1 - 0.05 ** (1 / n), "p_zero_at_one_in_n": (1 - 1 / n) ** n}


def finite_level3(tok) -> dict:
    """Level 3's language (SCHEMA compiled) is finite: its texts and the tokens of its longest path
    (``count_language`` raises LanguageTooLarge for an infinite one), so a level-3 answer always
    ends, within that many tokens."""
    counts = count_language(compile_json_schema(SCHEMA), tok.vocab)
    return {"texts": len(counts.texts), "longest_tokens": counts.longest_tokens}


def nesting(r) -> dict:
    """Level 4's notes by depth (depth_counts, as [depth, answers] pairs: JSON keys would be
    strings), the first nested answer and how many nest."""
    counts = depth_counts(r.texts)
    nested = first_nested(r.texts)
    return {"counts": [[d, c] for d, c in counts.items()], "nested": sum(c for d, c in counts.items() if d >= 2),
            "first_nested": None if nested is None else {"index": nested[0], "text": nested[1]},
            "max_depth": max(counts)}


def stack(measured, tok) -> dict:
    """Level 4 against level 3 (stack_cost): the positions ratio is deterministic (fixed seeds);
    the time ratios are this build's wall clock. Also, per level k: ``positions{k}``, the distinct
    matcher states its answers met (``states{k}``, distinct_states: the masks it had to compute),
    the model rows (``rows{k}``, deterministic), the answers (``n{k}``) and this build's shares of
    its time in the masker and in the model (``mask_share{k}``, ``model_share{k}``, in [0, 1]), with
the model calls (``calls{k}``) and the seconds in the model, the masker and the rest of the loop
(``model_seconds{k}``, ``mask_seconds{k}``, ``rest_seconds{k}``)."""
    out = stack_cost(measured[3], measured[4])
    out["sources"] = state_sources(measured[3], measured[4], tok.vocab)
    grammars = {3: compile_json_schema(SCHEMA), 4: compile_cfg(PARENS_GBNF)}
    for k, grammar in grammars.items():
        r = measured[k]
        out[f"positions{k}"] = r.positions
        out[f"states{k}"] = distinct_states(grammar, r.token_ids, tok.vocab)
        out[f"rows{k}"] = r.model_rows
        out[f"calls{k}"] = r.model_calls
        out[f"model_seconds{k}"], out[f"mask_seconds{k}"] = r.model_seconds, r.mask_seconds
        out[f"rest_seconds{k}"] = r.seconds - r.model_seconds - r.mask_seconds
        out[f"n{k}"] = r.n
        # this build's split of the level's wall time (noisy: the prose names it as one measurement)
        out[f"mask_share{k}"] = r.mask_seconds / r.seconds
        out[f"model_share{k}"] = r.model_seconds / r.seconds
    return out


def retries(model, tok) -> dict:
    """Level 1's questions with their exact p_i, the arithmetic for k = 1..5, the easiest and the
    hardest question (argmax and argmin of p_i)."""
    ps = [enumerate_paths(model, tok, q, compile_choice(texts)).p_grammar for q, texts in RETRY_QUESTIONS]
    easiest = max(range(len(ps)), key=lambda i: ps[i])
    hardest = min(range(len(ps)), key=lambda i: ps[i])
    return {"questions": [{"prompt": q, "texts": t, "p": p} for (q, t), p in zip(RETRY_QUESTIONS, ps)],
            "rows": retry_arithmetic(ps), "mean_p": sum(ps) / len(ps), "easiest": easiest,
            "hardest": hardest, "easiest_p": ps[easiest], "zero": ps[hardest],
            "zero_prompt": RETRY_QUESTIONS[hardest][0], "hardest_is_json": RETRY_QUESTIONS[hardest][0] == PROMPT,
            "n_questions": len(ps)}


def compute_figures(model, tok) -> dict:
    """All figures of the lesson as JSON-ready data (floats unrounded; the templates format them)."""
    measured = levels(model, tok)
    measured[1] = with_retries(measured[0], RETRY_TRIES)
    p_brace, p_brace_few = p_first_byte(model, tok, PROMPT), p_first_byte(model, tok, FEW_SHOT_PROMPT)
    exact = exact_schema(model, tok)
    return {
        "prompt": PROMPT, "few_shot_prompt": FEW_SHOT_PROMPT, "names": NAMES,
        "schema": json.dumps(SCHEMA, ensure_ascii=False),
        "sizes": {"prompt": N_PROMPT, "json": N_JSON, "json_tokens": JSON_TOKENS, "schema": N_SCHEMA,
                  "grammar": N_GRAMMAR, "tries": RETRY_TRIES},
        # the token budget of levels 3 and 4 (no max_tokens: what the context leaves after PROMPT)
        "default_budget": model.config.n_ctx - len(tok.encode(PROMPT)),
        "fit": fit(tok), "exact": exact, "valid_bound": valid_bound(model, tok),
        "brace": {"p": p_brace, "p_few": p_brace_few, "ratio": p_brace_few / p_brace},
        "rows": [row(measured[k]) for k in (0, 1, 2, 3, 4)],
        "few": row(measured["few"]),
        "unmasked": unmasked(measured[0]),
        "retry": retries(model, tok),
        "json_mode": inside_braces(measured[2].texts),
        "unbounded": unbounded_json(model, tok),
        "names_level3": schema_names(measured[3]),
        "noise_level3": sampling_noise(measured[3], exact),
        "finite_level3": finite_level3(tok),
        "zero_sample": zero_in_sample(N_PROMPT),
        "grammar_examples": measured[4].texts[:3],
        "nesting": nesting(measured[4]),
        "stack": stack(measured, tok),
        "positions_split": {str(k): position_split(measured[k], tok.vocab) for k in (3, 4)},
        "initial_choice": initial_figures(model, tok, exact),
        "fsm": fsm(model, tok),
    }


def initial_figures(model, tok, exact: dict) -> dict:
    """Level 3's one free choice (``initial_choice``): per name ``q`` (the mask's q~ of its
    initial) and ``finish``; ``top``: the name whose initial gets most, and for the most inflated
    name and the model's favourite, the ratio of their ``finish``."""
    rows = {r["name"]: r for r in initial_choice(model, tok).rows}
    top = max(rows, key=lambda n: rows[n]["q"])
    inflated, favourite = exact["inflated"], exact["model_top"]
    return {"rows": rows, "top": top,
            "finish_ratio": rows[favourite]["finish"] / rows[inflated]["finish"]}
