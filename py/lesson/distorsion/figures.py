"""Every number that the prose of «Corregir la distorsión» quotes, computed from the committed weights.

The build calls :func:`compute_figures` in CPython and hands the result (plain JSON data) to the
template; the page's cells compute the same numbers live with the same functions and the same
constants (below), which are also the defaults of the cells.
"""

from __future__ import annotations

import math

import numpy as np

from masker import compile_choice

from ..enumeration import enumerate_paths
from ..course import NAMES, PROMPT, PROTAGONIST, answer, name_of
from ..sampling import generate
from ..smc import convergence, importance_sample, smc, total_variation, exact_table
from ..smc_views import PathsView

IS_DRAWS = 1000        # the cell «Pesos de importancia» (seed 0)
SIZES = [10, 100, 1000]  # the convergence study
RUNS = 20
THRESHOLD = 0.2        # the page's resampling threshold: ESS below 20 % of the unfinished particles
HIGH_THRESHOLD = 0.5   # the common textbook choice, shown to fail here
PATH_PARTICLES = 20    # the particle-paths picture (seed 0)
THRESHOLD_PARTICLES = 1000  # the cell that compares the two thresholds (RUNS runs, seed 0)


def compute_figures(model, tok) -> dict:
    """All figures of the lesson as JSON-ready data (floats unrounded; the template formats them)."""
    texts = [answer(n) for n in NAMES]
    grammar = compile_choice(texts)
    exact = enumerate_paths(model, tok, PROMPT, grammar)
    table = exact_table(exact)
    out = {"prompt": PROMPT, "texts": texts, "names": NAMES, "protagonist": PROTAGONIST,
           "sizes": SIZES, "runs": RUNS, "threshold": THRESHOLD, "high_threshold": HIGH_THRESHOLD,
           "is_draws": IS_DRAWS, "path_particles": PATH_PARTICLES,
           "threshold_particles": THRESHOLD_PARTICLES}
    rows = [{"text": r.label, "name": name_of(r.label), "conditional": r.conditional, "masked": r.masked}
            for r in exact.rows]
    out["exact"] = {"p_grammar": exact.p_grammar, "log_p_grammar": exact.log_p_grammar,
                    "rows": rows, "tv": 0.5 * sum(abs(r["conditional"] - r["masked"]) for r in rows),
                    "paths": exact.paths, "forward_rows": exact.forward_rows,
                    "expected_tries": exact.expected_tries}
    out["one"] = one_sample(model, tok, grammar)
    out["weights"] = weights_summary(model, tok, grammar, exact)
    conv = convergence(model, tok, PROMPT, grammar, exact, sizes=SIZES, runs=RUNS, seed=0,
                       ess_threshold=THRESHOLD)
    out["convergence"] = [{"method": r.method, "n": r.n, "mean": r.mean, "min": float(r.tvs.min()),
                           "max": float(r.tvs.max()), "steps": r.particle_steps} for r in conv.rows]
    out["conv"] = {f"{r.method}_{r.n}": r.mean for r in conv.rows}
    out["paths"] = paths_summary(model, tok, grammar, texts)
    out["thresholds"] = threshold_summary(model, tok, grammar, table)
    largest = SIZES[-1]
    steps = conv.row("is", largest).particle_steps
    out["cost"] = {"n": largest, "is_steps": steps, "smc_steps": conv.row("smc", largest).particle_steps,
                   "tokens_per_answer": steps / largest,
                   "log10_tries": -exact.log_p_grammar / math.log(10)}
    return out


def one_sample(model, tok, grammar) -> dict:
    """The masked sample with seed 0: ln p, ln q~ and ln of the product of its kept masses
    (ln p - ln q~ equals the last one: the weight is the product of the kept masses)."""
    gen = generate(model, tok, PROMPT, grammar, seed=0)
    written, closing = b"", None
    for j, (t, pos) in enumerate(zip(gen.token_ids, gen.positions), start=1):
        if closing is None and written.startswith(b'{"nombre":"') and len(written) > 11 and b'"' in tok.vocab[t]:
            closing = {"position": j, "kept": pos.kept_mass}
        written += tok.vocab[t]
    middle = [pos.kept_mass for pos in gen.positions]
    return {"text": gen.text, "name": name_of(gen.text), "log_p": gen.log_p, "log_q": gen.log_q,
            "log_kept": gen.log_kept, "tokens": len(gen.token_ids), "closing": closing,
            "median_kept": float(np.median(middle))}


def weights_summary(model, tok, grammar, exact) -> dict:
    """IS_DRAWS masked draws (seed 0) with their weights: ESS, the heaviest draws' share, and per
    name the share of draws against the share of weight and the exact conditional."""
    draws = importance_sample(model, tok, PROMPT, grammar, IS_DRAWS, seed=0)
    w = draws.weights(0)
    order = np.argsort(-w, kind="stable")
    freq, est = draws.frequencies(0), draws.estimate(0)
    per_name = []
    for r in exact.rows:
        own = [lw for t, lw in zip(draws.texts[0], draws.log_weights[0].tolist()) if t == r.text]
        per_name.append({"name": name_of(r.label), "draws": freq.get(r.text, 0.0),
                         "weight": est.get(r.text, 0.0), "conditional": r.conditional, "masked": r.masked,
                         "mean_log_w": float(np.mean(own)) if own else None})
    inflated = max(per_name, key=lambda r: r["masked"] / r["conditional"])
    favourite = max(per_name, key=lambda r: r["conditional"])
    # how many times lighter, on the geometric mean, a draw of the inflated name is than one of the
    # conditional's favourite
    lighter = math.exp(favourite["mean_log_w"] - inflated["mean_log_w"])
    top_share = float(w[order[:IS_DRAWS // 100]].sum())
    return {"ess": draws.final_ess(0), "top1": float(w[order[0]]), "top_percent": top_share,
            "top_name": name_of(draws.texts[0][int(order[0])]),
            "log_z": float(draws.log_z[0]), "z_ratio": math.exp(float(draws.log_z[0]) - exact.log_p_grammar),
            "tv": draws.tv(exact), "tv_mask": draws.tv(exact, weighted=False),
            "per_name": per_name, "inflated": inflated, "favourite": favourite, "lighter": lighter,
            "inflated_most_drawn": inflated["draws"] == max(r["draws"] for r in per_name),
            "p_grammar": math.exp(float(draws.log_z[0])),
            "heaviest_weight_log": float(draws.log_weights[0, order[0]]),
            "lightest_weight_log": float(draws.log_weights[0].min()),
            "heaviest_weight": math.exp(float(draws.log_weights[0, order[0]])),
            "lightest_weight": math.exp(float(draws.log_weights[0].min()))}


def paths_summary(model, tok, grammar, texts) -> dict:
    """SMC with PATH_PARTICLES particles (seed 0, THRESHOLD): where it resampled, the position of
    the names' initial, which names were alive after the initial and which remain at the end;
    and the picture itself, rendered at build time."""
    result = smc(model, tok, PROMPT, grammar, PATH_PARTICLES, ess_threshold=THRESHOLD, seed=0)
    encoded = [t.encode() for t in texts]
    prefix = answer("")[:-2].encode()  # '{"nombre":"'
    initial = next(j for j, s in enumerate(result.history, start=1)
                   if any(len(lab) > len(prefix) and lab.startswith(prefix) for lab in s.labels))
    after = result.history[initial - 1]
    names_after = sorted({name_of(t) for lab in after.labels for t in encoded
                          if len(lab) > len(prefix) and t.startswith(lab)})
    final = sorted({name_of(t) for t in result.texts[0] if t is not None})
    return {"resampled": result.resampled[0], "initial_position": initial, "names_after": names_after,
            "names_final": final, "positions": len(result.history), "ess": result.final_ess(0),
            "estimate": {name_of(t): v for t, v in result.estimate(0).items()},
            "view": PathsView(result, texts)._repr_html_()}


def threshold_summary(model, tok, grammar, table) -> dict:
    """SMC with THRESHOLD_PARTICLES particles over RUNS runs at THRESHOLD and at HIGH_THRESHOLD:
    mean total variation, and the mean estimate of the protagonist's text (the shortest name:
    it closes the quote first, and a high threshold resamples its particles away right then)."""
    out = {}
    protagonist = answer(PROTAGONIST).encode()
    for key, th in (("low", THRESHOLD), ("high", HIGH_THRESHOLD)):
        r = smc(model, tok, PROMPT, grammar, THRESHOLD_PARTICLES, ess_threshold=th, runs=RUNS, seed=0)
        out[key] = {"threshold": th,
                    "tv": float(np.mean([total_variation(r.estimate(i), table) for i in range(RUNS)])),
                    "protagonist": float(np.mean([r.estimate(i).get(protagonist, 0.0) for i in range(RUNS)])),
                    "protagonist_lost": sum(protagonist not in r.estimate(i) for i in range(RUNS)),
                    "resampled": sorted({p for run in r.resampled for p in run})}
    out["protagonist_exact"] = table[protagonist]
    return out
