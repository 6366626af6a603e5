"""Every number that the prose of «Corregir la distorsión» quotes, computed from the committed weights.

The build calls :func:`compute_figures` in CPython and hands the result (plain JSON data) to the
template; the page's cells compute the same numbers live with the same functions and the same
constants (below), which are also the defaults of the cells.

Figures that are text (the particle-paths view, the log-weight picture and its table) are stored in
both languages, ``{"es": ..., "en": ...}`` (``lesson.i18n.each_language``): each edition's
template takes its own (``fig.curves.svg.es``, ``fig.curves.svg.en``). Every other figure is a
number, a boolean, a name or a code.
"""

from __future__ import annotations

import math

import numpy as np

from masker import compile_choice

from ..enumeration import enumerate_paths
from ..i18n import each_language
from ..course import NAMES, PROMPT, PROTAGONIST, answer, name_of
from ..sampling import generate
from ..smc import convergence, importance_sample, smc, total_variation, exact_table
from ..smc_views import PathsView
from ..smc import systematic_resample
from .exercise import EXTRA_CASES, U, WEIGHTS
from .curves import curve_gap, name_mean_ess, weight_curve, weight_curves_svg, weight_curves_table
from .trap import split_trap

IS_DRAWS = 1000        # the cell «Pesos de importancia» (seed 0)
SIZES = [10, 100, 1000]  # the convergence study
RUNS = 20
THRESHOLD = 0.2        # the page's resampling threshold: ESS below 20 % of the unfinished particles
HIGH_THRESHOLD = 0.5   # the common textbook choice, shown to fail here
PATH_PARTICLES = 20    # the particle-paths picture (seed 0)
THRESHOLD_PARTICLES = 1000  # the cell that compares the two thresholds (RUNS runs)
# The cell «Dos umbrales» seeds its SMC as «Convergencia» seeds SMC with N particles (seed + N + 1,
# lesson.smc.convergence), so its threshold-0.2 runs are the convergence's N = 1000 runs.
THRESHOLD_SEED = THRESHOLD_PARTICLES + 1
STRUCTURAL = frozenset(b'{}":,')  # JSON punctuation: a token made only of these bytes is structural
NOISE_SE = 2.0  # a difference of means counts only beyond 2 standard errors (Welch)
SAME_RUNS = 1e-9  # two thresholds whose runs' TVs all agree within this gave the same runs


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
    out["convergence"], out["conv"] = convergence_rows(conv)
    out["comparison"] = compare_methods(conv)
    out["exercise"] = exercise_summary()
    out["paths"] = paths_summary(model, tok, grammar, texts)
    out["paths"]["z_ratio"] = math.exp(out["paths"]["log_z"] - exact.log_p_grammar)
    out["z_spread"] = z_spread(model, tok, grammar, exact)
    out["curves"] = curves_summary(model, tok, grammar, out["weights"]["favourite"]["name"])
    out["lighter_split"] = lighter_split(model, tok, grammar, out["weights"])
    out["thresholds"] = threshold_summary(model, tok, grammar, table)
    out["sweep"] = threshold_sweep(model, tok, grammar, table, out["conv"],
                                   {n: conv.row("is", n).tvs for n in SIZES})
    closing = out["curves"]["curves"][0]["closing"]
    out["curves"]["high_resamples_at_closing"] = closing in out["thresholds"]["high"]["resampled"]
    out["curves"]["low_resamples_at_closing"] = closing in out["thresholds"]["low"]["resampled"]
    # «las ejecuciones que remuestrean ahí son las que la pierden»: per threshold, the runs that
    # resampled after the closing position and those that lost the protagonist
    for key in ("low", "high"):
        runs = out["thresholds"][key]["runs"]
        at = [x["lost"] for x in runs if closing in x["after"]]
        away = [x["lost"] for x in runs if closing not in x["after"]]
        out["thresholds"][key]["at_closing"] = {"runs": len(at), "lost": sum(at),
                                                "other_runs": len(away), "other_lost": sum(away)}
    largest = SIZES[-1]
    steps = conv.row("is", largest).particle_steps
    out["cost"] = {"n": largest, "is_steps": steps, "smc_steps": conv.row("smc", largest).particle_steps,
                   "tokens_per_answer": steps / largest,
                   "log10_tries": -exact.log_p_grammar / math.log(10)}
    return out


def one_sample(model, tok, grammar) -> dict:
    """The masked sample with seed 0 (the cell «El peso de una muestra»): ln p, ln q~ and ln of
    the product of its kept masses (ln p - ln q~ equals the last one); ``smallest``, the argmin of
    its kept masses (1-based position, mass, token, and ``role``: "opens" for the quote after
    ':', "closes" for the one before '}', else "other"); ``structural``, the positions whose token is
    made only of JSON punctuation (STRUCTURAL) and the sum of their ln kept masses."""
    gen = generate(model, tok, PROMPT, grammar, seed=0)
    kept = [pos.kept_mass for pos in gen.positions]
    j = int(np.argmin(kept))
    structural = [i for i, t in enumerate(gen.token_ids, start=1) if set(tok.vocab[t]) <= STRUCTURAL]
    log_structural = sum(math.log(kept[i - 1]) for i in structural)
    before = b"".join(tok.vocab[t] for t in gen.token_ids[:j])
    after = b"".join(tok.vocab[t] for t in gen.token_ids[j + 1:])
    # what the smallest mass's token writes: the quote that opens the value (after ':'), the one
    # that closes it (before '}'), or something else
    role = ("opens" if tok.vocab[gen.token_ids[j]] == b'"' and before.endswith(b":") else
            "closes" if tok.vocab[gen.token_ids[j]] == b'"' and after == b"}" else "other")
    return {"text": gen.text, "name": name_of(gen.text), "log_p": gen.log_p, "log_q": gen.log_q,
            "log_kept": gen.log_kept, "tokens": len(gen.token_ids),
            "smallest": {"position": j + 1, "kept": kept[j],
                         "token": tok.vocab[gen.token_ids[j]].decode("utf-8", "replace"), "role": role},
            "structural": {"positions": structural, "count": len(structural), "log_kept": log_structural,
                           "share": log_structural / gen.log_kept},
            "median_kept": float(np.median(kept))}


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
    # the imbalance's two sources: names (each draw replaced by its name's mean weight) and token
    # splits within a name (the variance of ln w inside each name)
    lw = draws.log_weights[0]
    names = np.array([name_of(t.decode()) if t is not None else "" for t in draws.texts[0]])
    finite = np.isfinite(lw)
    within = float(sum(((lw[finite & (names == n)] - lw[finite & (names == n)].mean()) ** 2).sum()
                       for n in set(names[finite].tolist())) / finite.sum())
    ess_names = name_mean_ess(draws)["ess_name_means"]  # what the cell «fuentes» prints
    imbalance = {"var_log_w": float(lw[finite].var()), "within_names": within,
                 "within_share": within / float(lw[finite].var()),
                 "ess_name_means": ess_names, "ess": draws.final_ess(0),
                 "extremes_same_name": names[int(order[0])] == names[int(np.argmin(np.where(finite, lw, np.inf)))],
                 "extremes_name": names[int(order[0])]}
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
            "lightest_weight": math.exp(float(draws.log_weights[0].min())), "imbalance": imbalance}


def paths_summary(model, tok, grammar, texts) -> dict:
    """SMC with PATH_PARTICLES particles (seed 0, THRESHOLD): where it resampled, the position of
    the names' initial, which names were alive after the initial and which remain at the end;
    and the picture itself, rendered at build time in each language (``view``: {"es", "en"})."""
    result = smc(model, tok, PROMPT, grammar, PATH_PARTICLES, ess_threshold=THRESHOLD, seed=0)
    encoded = [t.encode() for t in texts]
    prefix = answer("")[:-2].encode()  # '{"nombre":"'
    initial = next(j for j, s in enumerate(result.history, start=1)
                   if any(len(lab) > len(prefix) and lab.startswith(prefix) for lab in s.labels))
    after = result.history[initial - 1]
    names_after = sorted({name_of(t) for lab in after.labels for t in encoded
                          if len(lab) > len(prefix) and t.startswith(lab)})
    final = sorted({name_of(t) for t in result.texts[0] if t is not None})
    return {"trap": split_trap(model, tok, result, grammar),
            "resampled": result.resampled[0], "initial_position": initial, "names_after": names_after,
            "names_final": final, "positions": len(result.history), "ess": result.final_ess(0),
            "log_z": float(result.log_z[0]), "p_grammar": math.exp(float(result.log_z[0])),
            "estimate": {name_of(t): v for t, v in result.estimate(0).items()},
            "view": each_language(lambda: PathsView(result, texts)._repr_html_())}


def threshold_summary(model, tok, grammar, table) -> dict:
    """SMC with THRESHOLD_PARTICLES particles over RUNS runs at THRESHOLD and at HIGH_THRESHOLD:
    mean total variation, and the mean estimate of the protagonist's text (the shortest name:
    it closes the quote first, and a high threshold resamples its particles away right then)."""
    out = {}
    protagonist = answer(PROTAGONIST).encode()
    for key, th in (("low", THRESHOLD), ("high", HIGH_THRESHOLD)):
        r = smc(model, tok, PROMPT, grammar, THRESHOLD_PARTICLES, ess_threshold=th, runs=RUNS,
                seed=THRESHOLD_SEED)
        out[key] = {"threshold": th,
                    "tv": float(np.mean([total_variation(r.estimate(i), table) for i in range(RUNS)])),
                    "protagonist": float(np.mean([r.estimate(i).get(protagonist, 0.0) for i in range(RUNS)])),
                    "protagonist_lost": sum(r.estimate(i).get(protagonist, 0.0) == 0.0 for i in range(RUNS)),
                    "resampled": sorted({p for run in r.resampled for p in run}),
                    # the runs as the cell groups them: the positions after which each resampled,
                    # and whether it lost the protagonist
                    "runs": [{"after": sorted(set(run)), "lost": r.estimate(i).get(protagonist, 0.0) == 0.0}
                             for i, run in enumerate(r.resampled)]}
    out["protagonist_exact"] = table[protagonist]
    out["lost_more_high"] = out["high"]["protagonist_lost"] > out["low"]["protagonist_lost"]
    return out


SWEEP_THRESHOLDS = [0.1, 0.15, 0.2, 0.25, 0.3, 0.5]  # the resampling thresholds swept (0.2: the page's)


def threshold_sweep(model, tok, grammar, table, conv_means: dict, is_tvs: dict | None = None) -> dict:
    """The setting that decides «Convergencia»'s verdict: the SMC's mean total variation over RUNS
    runs for each threshold of SWEEP_THRESHOLDS and each N of SIZES, seeded as «Convergencia»
    seeds its SMC (seed + N + 1, seed 0), so the 0.2 row is that cell's; beside it importance
    sampling's mean for each N (``conv_means``, "is_N"), and where the largest N's runs resampled
    (``resampled``). ``below_is``: per threshold, the Ns where the SMC's mean is below importance
    sampling's; with ``is_tvs`` (importance sampling's run-by-run TVs per N, «Convergencia»'s),
    ``beyond_noise``: the Ns where it is lower by more than NOISE_SE standard errors (Welch, as
    :func:`compare_methods`), else every N of ``below_is``. ``contested``: the Ns where some
    threshold is below beyond noise, ``none_below`` the others; ``window``: the thresholds below
    beyond noise at every contested N. ``identical``: per N, the groups of two or more
    thresholds whose RUNS runs gave the same TVs, run by run, within SAME_RUNS (one measurement,
    not several), as ``{"n", "thresholds"}``. Per row, ``z``: per N, importance sampling's mean
    minus the SMC's over their standard error (positive: SMC lower); ``narrow``: the (threshold,
    N, z) of the window's cells with z below NOISE_SE + 0.2, bold by a hair."""
    rows, tvs_of = [], {}
    for th in SWEEP_THRESHOLDS:
        means, beyond, zs = {}, [], {}
        for n in SIZES:
            r = smc(model, tok, PROMPT, grammar, n, ess_threshold=th, runs=RUNS, seed=n + 1)
            tvs = np.array([total_variation(r.estimate(i), table) for i in range(RUNS)])
            tvs_of[(th, n)] = tvs
            means[str(n)] = float(tvs.mean())
            if is_tvs is not None:
                a = np.asarray(is_tvs[n])
                se = math.sqrt(a.var(ddof=1) / len(a) + tvs.var(ddof=1) / len(tvs))
                zs[str(n)] = float((a.mean() - tvs.mean()) / se)
                if a.mean() - tvs.mean() > NOISE_SE * se:
                    beyond.append(n)
        # where the largest N's runs resampled (positions, 1-based, in at least one run)
        resampled = sorted({p for run in r.resampled for p in run})
        below = [n for n in SIZES if means[str(n)] < conv_means[f"is_{n}"]]
        rows.append({"threshold": th, "means": means, "resampled": resampled, "below_is": below, "z": zs,
                     "beyond_noise": beyond if is_tvs is not None else below})
    # the Ns where some threshold beats importance sampling beyond noise, and the thresholds that
    # beat it at all of those Ns (the window the prose names); the Ns where none does
    contested = [n for n in SIZES if any(n in r["beyond_noise"] for r in rows)]
    window = [r["threshold"] for r in rows if contested and all(n in r["beyond_noise"] for n in contested)]
    identical = []
    for n in SIZES:
        groups: list[list] = []
        for th in SWEEP_THRESHOLDS:
            for g in groups:
                if np.allclose(tvs_of[(g[0], n)], tvs_of[(th, n)], rtol=0, atol=SAME_RUNS):
                    g.append(th)
                    break
            else:
                groups.append([th])
        identical += [{"n": n, "thresholds": g} for g in groups if len(g) > 1]
    return {"thresholds": SWEEP_THRESHOLDS, "sizes": SIZES, "rows": rows, "noise_se": NOISE_SE,
            "same_runs": SAME_RUNS,
            "is": {str(n): conv_means[f"is_{n}"] for n in SIZES}, "contested": contested,
            "none_below": [n for n in SIZES if n not in contested], "window": window,
            "page_in_window": THRESHOLD in window, "identical": identical,
            "narrow": [{"threshold": r["threshold"], "n": n, "z": r["z"][str(n)]} for r in rows
                       if r["threshold"] in window for n in contested
                       if str(n) in r["z"] and r["z"][str(n)] < NOISE_SE + 0.2]}


def convergence_rows(conv) -> tuple[list[dict], dict]:
    """The cell «Convergencia» as data: per (method, N) the mean, min, max and every run's TV and
    the tokens per run; and the means alone, keyed "method_N"."""
    rows = [{"method": r.method, "n": r.n, "mean": r.mean, "min": float(r.tvs.min()),
             "max": float(r.tvs.max()), "tvs": r.tvs.tolist(), "steps": r.particle_steps} for r in conv.rows]
    return rows, {f"{r.method}_{r.n}": r.mean for r in conv.rows}


def compare_methods(conv) -> dict:
    """Per N, importance sampling against SMC over the RUNS runs of «Convergencia» (independent
    seeds, so unpaired): the difference of mean TVs (is - smc), its standard error (Welch,
    sqrt(s_is^2 / R + s_smc^2 / R)) and ``verdict``: "smc" when SMC's mean is lower by more than
    NOISE_SE standard errors, "is" when importance sampling's is, "noise" otherwise; also
    ``overlap``, whether the two min–max ranges overlap. Keys are str(N)."""
    out = {}
    for n in sorted({r.n for r in conv.rows}):
        a, b = conv.row("is", n).tvs, conv.row("smc", n).tvs
        diff = float(a.mean() - b.mean())
        se = math.sqrt(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b))
        verdict = "smc" if diff > NOISE_SE * se else ("is" if diff < -NOISE_SE * se else "noise")
        out[str(n)] = {"n": n, "is": float(a.mean()), "smc": float(b.mean()), "diff": diff, "se": se,
                       "verdict": verdict, "overlap": bool(a.min() <= b.max() and b.min() <= a.max()),
                       "smc_lower_mean": bool(b.mean() < a.mean())}
    return out


def z_spread(model, tok, grammar, exact) -> dict:
    """The estimate of p(G | x) with PATH_PARTICLES particles (THRESHOLD) over RUNS runs of one
    call (seed 0; these runs are not the cell «Partículas», whose single run draws other numbers),
    as ratios to the exact value: smallest, median, largest, mean, and how many overestimate."""
    r = smc(model, tok, PROMPT, grammar, PATH_PARTICLES, ess_threshold=THRESHOLD, runs=RUNS, seed=0)
    ratios = np.exp(r.log_z - exact.log_p_grammar)
    return {"min": float(ratios.min()), "median": float(np.median(ratios)),
            "max": float(ratios.max()), "mean": float(ratios.mean()), "above": int((ratios > 1).sum()),
            "runs": RUNS}


def curves_summary(model, tok, grammar, other: str) -> dict:
    """ln w along the model's most likely split of the protagonist's answer and of ``other``'s
    (:func:`lesson.distorsion.curves.weight_curve`), where each closes the quote, the gap between
    the two prefixes right after the protagonist's closing quote, and the picture and its table in
    each language (``svg``, ``table``: {"es", "en"})."""
    curves = [weight_curve(model, tok, PROMPT, grammar, answer(n), n) for n in (PROTAGONIST, other)]
    short, long_ = curves
    at = short.closing
    return {"names": [c.name for c in curves],
            "curves": [{"name": c.name, "closing": c.closing, "cumulative": c.cumulative,
                        "log_kept": c.log_kept, "tokens": len(c.labels),
                        "closing_cost": -c.log_kept[c.closing - 1], "final": c.cumulative[-1]}
                       for c in curves],
            "gap_at_short_closing": long_.cumulative[at - 1] - short.cumulative[at - 1],
            # right then, the short name's prefix weighs e^-gap of the long one's: a resampling step
            # there expects K * W << 1 copies of it unless K is of the order of 1 / e^-gap, whose
            # power of ten (rounded) the prose quotes («del orden de 10^10 partículas»)
            "weight_ratio_at_short_closing": math.exp(short.cumulative[at - 1] - long_.cumulative[at - 1]),
            "particles_order": round((long_.cumulative[at - 1] - short.cumulative[at - 1]) / math.log(10)),
            "final_gap": long_.cumulative[-1] - short.cumulative[-1],
            # the short name pays its closing quote first, and right then weighs far less than the
            # long one, though at the end the two are closer than that gap
            "early": short.closing < long_.closing and (long_.cumulative[at - 1] - short.cumulative[at - 1]
                                                        > abs(long_.cumulative[-1] - short.cumulative[-1])),
            "svg": each_language(weight_curves_svg, curves), "table": each_language(weight_curves_table, curves)}


def lighter_split(model, tok, grammar, weights: dict) -> dict:
    """Where a draw of the inflated name loses its weight against one of the conditional's
    favourite, along each name's most likely split (:func:`weight_curve`): the gap in ln w (nats)
    at the end, the part of it paid at the quote that closes the name, and whether that quote
    carries most of it (the word «la mayor parte» of §3)."""
    light, heavy = (weight_curve(model, tok, PROMPT, grammar, answer(weights[k]["name"]), weights[k]["name"])
                    for k in ("inflated", "favourite"))
    out = curve_gap(light, heavy)  # what the cell «fuentes» prints (WeightSources)
    return {**out, "gap_factor": math.exp(out["gap"]), "quote_most": out["quote"] > out["gap"] / 2}


def exercise_summary() -> dict:
    """The exercise's answer for the page's weights and u (the library's systematic resampling),
    how many copies each particle gets, and how many more cases the checker tries."""
    expected = systematic_resample(np.array(WEIGHTS) / sum(WEIGHTS), U).tolist()
    return {"weights": list(WEIGHTS), "u": U, "expected": expected,
            "copies": [expected.count(i) for i in range(len(WEIGHTS))], "extra_cases": len(EXTRA_CASES)}
