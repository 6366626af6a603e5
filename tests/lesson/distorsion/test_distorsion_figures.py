"""«Corregir la distorsión»: each word of the prose that depends on data, against an independent
recomputation (the library's loops run again here, with the cells' seeds).

The page's figures come from the build's cache (``sitebuild.figures.lesson_figures``: computed
by ``lesson.distorsion.figures`` when absent), so these tests read what the page prints.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import build
from lesson import compile_choice, enumerate_paths, generate, smc
from lesson.course import NAMES, PROMPT, PROTAGONIST, answer
from lesson.distorsion.figures import HIGH_THRESHOLD, RUNS, SIZES, THRESHOLD, THRESHOLD_PARTICLES
from lesson.smc import exact_table, systematic_resample, total_variation
from sitebuild.figures import lesson_figures

PUNCTUATION = set(b'{}":,')


@pytest.fixture(scope="module")
def fig():
    pages = [s for s in build.PAGES if s["out"] == "distorsion.html"]
    figures = lesson_figures(pages, build.ROOT, cache=build.ROOT / ".cache")
    assert figures is not None, "the committed weights are missing"
    return figures["distorsion.html"]


@pytest.fixture(scope="module")
def grammar():
    return compile_choice([answer(n) for n in NAMES])


@pytest.fixture(scope="module")
def sample(model, tok, grammar):
    """The cell «El peso de una muestra»: the masked answer with seed 0."""
    return generate(model, tok, PROMPT, grammar, seed=0)


def test_the_smallest_kept_mass_of_the_prose_is_the_argmin_of_the_cells_masses(fig, sample, tok):
    kept = [pos.kept_mass for pos in sample.positions]
    smallest = fig["one"]["smallest"]
    assert smallest["position"] == 1 + min(range(len(kept)), key=kept.__getitem__)
    assert smallest["kept"] == min(kept)
    assert all(smallest["kept"] <= k for k in kept)


def test_the_smallest_masss_role_is_what_its_token_writes(fig, sample, tok):
    j = fig["one"]["smallest"]["position"]
    written = b"".join(tok.vocab[t] for t in sample.token_ids[:j - 1])
    token = tok.vocab[sample.token_ids[j - 1]]
    role = fig["one"]["smallest"]["role"]
    assert role in ("opens", "closes", "other")
    if role == "opens":  # the prose: «la comilla que abre el valor (justo después de los dos puntos)»
        assert token == b'"' and written.endswith(b'":')
    if role == "closes":
        assert token == b'"' and b"".join(tok.vocab[t] for t in sample.token_ids[j:]) == b"}"


def test_the_structural_tokens_and_their_share_of_ln_w(fig, sample, tok):
    """The prose: «los 7 tokens de pura puntuación JSON suman −132,198 de los −154,878 de ln w»,
    and «la mayor parte» only when the share is above one half."""
    positions = [j for j, t in enumerate(sample.token_ids, 1) if set(tok.vocab[t]) <= PUNCTUATION]
    total = sum(math.log(p.kept_mass) for p in sample.positions)
    part = sum(math.log(sample.positions[j - 1].kept_mass) for j in positions)
    s = fig["one"]["structural"]
    assert s["positions"] == positions and s["count"] == len(positions)
    assert s["log_kept"] == pytest.approx(part, abs=1e-9)
    assert fig["one"]["log_kept"] == pytest.approx(total, abs=1e-9)
    assert s["share"] == pytest.approx(part / total) and 0 < s["share"] <= 1
    # every structural byte of the answer is in those tokens: the rest spell the key and the name
    rest = b"".join(tok.vocab[t] for j, t in enumerate(sample.token_ids, 1) if j not in positions)
    assert rest == b"nombre" + sample.bytes[len(b'{"nombre":"'):-2]


def test_smc_against_is_verdicts_follow_the_runs(fig):
    """The «¿Gana el SMC?» paragraph: a verdict per N from the 20 runs' TVs of each method, and
    "noise" exactly when the difference of means is within two standard errors."""
    rows = {(r["method"], r["n"]): np.array(r["tvs"]) for r in fig["convergence"]}
    for n in SIZES:
        a, b = rows[("is", n)], rows[("smc", n)]
        assert len(a) == len(b) == RUNS
        c = fig["comparison"][str(n)]
        diff, se = a.mean() - b.mean(), math.sqrt(a.var(ddof=1) / RUNS + b.var(ddof=1) / RUNS)
        assert c["diff"] == pytest.approx(diff) and c["se"] == pytest.approx(se)
        expected = "smc" if diff > 2 * se else ("is" if diff < -2 * se else "noise")
        assert c["verdict"] == expected, n
        assert c["smc_lower_mean"] == (b.mean() < a.mean())


def test_the_comparisons_rounded_numbers_agree_with_the_verdicts(fig):
    """The prose writes |diff| and «2 × se = 2se» with se rounded once to 3 decimals: what a
    reader can check with those numbers says the same as the verdict on the unrounded ones."""
    for c in fig["comparison"].values():
        shown, twice = round(abs(c["diff"]), 3), 2 * round(c["se"], 3)
        assert (c["verdict"] == "noise") == (shown < twice), c["n"]
        assert (c["verdict"] == "smc") == (shown > twice and c["diff"] > 0), c["n"]


def test_the_protagonist_needs_many_orders_of_magnitude_more_particles(fig):
    """«en la posición 14, un prefijo de Benina pesa e^-22,2 ≈ 2·10⁻¹⁰ veces lo que uno de Almudena
    […] necesitaría del orden de 10^10 partículas»: the ratio is e^-gap, the order is the rounded
    power of ten of its inverse, and the page's 1000 particles are far below it (K W << 1)."""
    c = fig["curves"]
    gap = c["gap_at_short_closing"]
    assert c["weight_ratio_at_short_closing"] == pytest.approx(math.exp(-gap))
    assert c["particles_order"] == round(gap / math.log(10))
    assert abs(math.log10(1 / c["weight_ratio_at_short_closing"]) - c["particles_order"]) <= 0.5
    assert THRESHOLD_PARTICLES * c["weight_ratio_at_short_closing"] < 1e-3
    assert 10 ** c["particles_order"] > 1000 * THRESHOLD_PARTICLES


def test_the_two_threshold_cell_at_0_2_is_the_convergence_row_at_the_largest_n(fig):
    """One figure for one configuration: «Dos umbrales» seeds SMC as «Convergencia» does."""
    assert THRESHOLD_PARTICLES == SIZES[-1]
    assert fig["thresholds"]["low"]["tv"] == pytest.approx(fig["conv"][f"smc_{SIZES[-1]}"], abs=1e-12)


def test_threshold_claims(fig, model, tok, grammar):
    """High threshold: the protagonist's mean estimate is below the low threshold's and the exact
    value, it loses its particles in more runs, and the resampling positions are the cell's."""
    t = fig["thresholds"]
    assert t["high"]["protagonist"] < t["low"]["protagonist"]
    assert t["high"]["protagonist"] < t["protagonist_exact"]
    assert t["lost_more_high"] == (t["high"]["protagonist_lost"] > t["low"]["protagonist_lost"])
    assert t["high"]["tv"] > t["low"]["tv"]
    exact = exact_table(enumerate_paths(model, tok, PROMPT, grammar))
    assert t["protagonist_exact"] == pytest.approx(exact[answer(PROTAGONIST).encode()])


def test_the_curves_picture_shows_the_short_name_paying_first(fig, model, tok, grammar):
    """«se adelantaron»: the protagonist closes its quote before the other name; right then its
    prefix weighs less by more than the two paths differ at the end; the high threshold
    resamples right after that position and the low one does not (the prose's branch)."""
    c = fig["curves"]
    short, other = c["curves"]
    assert short["name"] == PROTAGONIST and len(PROTAGONIST) < len(other["name"])
    assert short["closing"] < other["closing"]
    at = short["closing"] - 1
    gap = other["cumulative"][at] - short["cumulative"][at]
    assert c["gap_at_short_closing"] == pytest.approx(gap) and gap > abs(c["final_gap"])
    assert c["early"] is True
    assert c["high_resamples_at_closing"] == (short["closing"] in fig["thresholds"]["high"]["resampled"])
    assert c["low_resamples_at_closing"] == (short["closing"] in fig["thresholds"]["low"]["resampled"])
    # the closing quote is forced: '"' is the only token of the vocabulary that starts with a quote
    assert [v for v in tok.vocab if v.startswith(b'"')] == [b'"']


def test_the_20_particle_estimate_of_p_grammar_is_the_cells(fig, model, tok, grammar):
    """The prose: «4,57·10⁻⁶⁷, 2,5 veces el valor exacto», from the cell «Partículas» (seed 0)."""
    r = smc(model, tok, PROMPT, grammar, 20, ess_threshold=THRESHOLD, seed=0)
    assert fig["paths"]["log_z"] == pytest.approx(float(r.log_z[0]), abs=1e-9)
    assert fig["paths"]["z_ratio"] == pytest.approx(math.exp(r.log_z[0] - fig["exact"]["log_p_grammar"]))
    z = fig["z_spread"]
    assert z["min"] <= z["median"] <= z["max"] and 0 <= z["above"] <= z["runs"] == RUNS


def test_the_exercise_answer_in_the_solution(fig):
    e = fig["exercise"]
    expected = systematic_resample(np.array(e["weights"]) / sum(e["weights"]), e["u"]).tolist()
    assert e["expected"] == expected
    # by hand: each point (u + k) / M picks the first cumulative sum above it
    cumulative = np.cumsum(e["weights"])
    m = len(e["weights"])
    assert expected == [int(np.argmax(cumulative > (e["u"] + k) / m)) for k in range(m)]
    assert e["copies"] == [expected.count(i) for i in range(m)]
    for w, c in zip(e["weights"], e["copies"]):  # floor(M W) or ceil(M W) copies
        assert math.floor(m * w) <= c <= math.ceil(m * w)


def test_the_high_threshold_is_the_one_the_prose_calls_common(fig):
    assert fig["high_threshold"] == HIGH_THRESHOLD == 0.5 and fig["threshold"] == THRESHOLD


def test_the_mask_does_not_improve_with_n(fig):
    """«La máscara no mejora con N … cerca de la que da la enumeración exacta»: at the largest N
    the mask's mean TV is within two standard errors of the runs of the exact q~-to-conditional
    distance, and no smaller N is farther from it by more than the runs' spread."""
    rows = {(r["method"], r["n"]): np.array(r["tvs"]) for r in fig["convergence"]}
    exact_tv = fig["exact"]["tv"]
    largest = rows[("mask", SIZES[-1])]
    se = largest.std(ddof=1) / math.sqrt(len(largest))
    assert abs(largest.mean() - exact_tv) < 2 * se + 0.01
    means = [rows[("mask", n)].mean() for n in SIZES]
    assert max(means) - min(means) < 0.05  # flat, against IS's fall of more than 0.2
    assert rows[("is", SIZES[0])].mean() - rows[("is", SIZES[-1])].mean() > 0.2


def _greedy_split_kept(model, tok, grammar, text: bytes) -> tuple[list[bytes], list[float]]:
    """ln p(A_j) along the most likely split of ``text``, by a full forward pass per position and a
    brute-force allowed set (every token whose bytes keep the prefix a prefix of some text)."""
    texts = [answer(n).encode() for n in NAMES]
    ids, written, labels, kept = tok.encode(PROMPT), b"", [], []
    while written != text:
        logits = model.astype(np.float64).forward(np.array([ids]))[0, -1]
        p = np.exp(logits - logits.max())
        p /= p.sum()
        allowed = [t for t, piece in enumerate(tok.vocab)
                   if any(g.startswith(written + piece) for g in texts)]
        spells = [t for t in allowed if text.startswith(written + tok.vocab[t])]
        t = max(spells, key=lambda t: p[t])
        kept.append(math.log(p[allowed].sum()))
        labels.append(tok.vocab[t])
        written += tok.vocab[t]
        ids.append(t)
    return labels, kept


def test_the_closing_quote_carries_most_of_the_inflated_names_lost_weight(fig, model, tok, grammar):
    """§3: «la mayor parte … en un solo token: la comilla que cierra el nombre»."""
    ls, w = fig["lighter_split"], fig["weights"]
    curves = {}
    for key in ("inflated", "favourite"):
        labels, kept = _greedy_split_kept(model, tok, grammar, answer(w[key]["name"]).encode())
        closing = max(j for j, b in enumerate(labels) if b'"' in b)
        curves[key] = (sum(kept), kept[closing])
    gap = curves["favourite"][0] - curves["inflated"][0]
    quote = curves["favourite"][1] - curves["inflated"][1]
    assert ls["gap"] == pytest.approx(gap, abs=1e-3) and ls["quote"] == pytest.approx(quote, abs=1e-3)
    assert ls["quote_most"] == (quote > gap / 2) and ls["quote_most"]


# ------------------------------------------------ «Las partículas en vivo»: what the resamplings did

def test_the_particles_paragraph_follows_the_runs_ancestry(fig, model, tok, grammar):
    """«el remuestreo da N copias a la partición S, que entonces pesaba W; la comilla que cierra la
    clave le cuesta X nats más que tras S'; el remuestreo siguiente no elige entre nombres…»:
    recounted from the run's history by hand (labels, ancestors), and the closing quote's kept
    mass from a fresh forward pass per split."""
    trap = fig["paths"]["trap"]
    assert trap is not None and trap["other"] is not None  # the prose's first branch
    run = smc(model, tok, PROMPT, grammar, 20, ess_threshold=THRESHOLD, seed=0)
    first = run.resampled[0][0]
    assert trap["position"] == first
    step = run.history[first - 1]
    # every particle has written {"nombre, nothing more; its key split from its own tokens
    key = answer("")[:answer("").index(":") - 1].encode()
    assert all(label == key for label in step.labels)
    copies = np.bincount(step.ancestors, minlength=20)
    groups = {g["split"]: g for g in trap["splits"]}
    assert sum(g["copies"] for g in groups.values()) == 20
    assert sum(len(g["particles"]) for g in groups.values()) == 20
    for g in groups.values():
        assert g["copies"] == int(copies[g["particles"]].sum())
        assert g["weight"] == pytest.approx(float(step.weights[g["particles"]].sum()))
        pieces = g["split"].split("|")
        assert "".join(pieces).encode() == key[2:]
        ids = tok.encode(PROMPT) + [tok.vocab.index(b"{"), tok.vocab.index(b'"')] + [tok.vocab.index(p.encode()) for p in pieces]
        logits = model.forward(np.array([ids]))[0, -1].astype(np.float64)
        p = np.exp(logits - logits.max())
        assert g["log_kept_next"] == pytest.approx(math.log(p[tok.vocab.index(b'"')] / p.sum()), abs=1e-6)
    heavy, other = groups[trap["heavy"]], groups[trap["other"]]
    assert heavy["copies"] == max(g["copies"] for g in groups.values()) == trap["heavy_copies"]
    assert trap["heavy_extra_nats"] == pytest.approx(other["log_kept_next"] - heavy["log_kept_next"])
    assert trap["heavy_extra_nats"] > 1  # «mucho más cara»: more than a factor e
    if trap["second"] is not None:
        assert trap["second"] in run.resampled[0] and trap["second"] > fig["paths"]["initial_position"]
        # «sus supervivientes descienden todos de…»: none of the survivors comes from the heavy split
        assert trap["heavy"] not in trap["survivor_splits"] or len(trap["survivor_splits"]) > 1
        assert set(trap["names_lost"]).isdisjoint(fig["paths"]["names_final"])


def test_the_threshold_sweep_repeats_the_convergence_and_names_the_window(fig, model, tok, grammar):
    """«El umbral importa»: the sweep's row at the page's threshold is «Convergencia»'s SMC row (the
    same seeds); each bold cell is below importance sampling's mean beyond noise (for the page's
    threshold, the same verdict as «Convergencia»'s comparison); the window is the thresholds bold
    at every contested N; thresholds reported as giving the same runs do."""
    sweep = fig["sweep"]
    page = next(r for r in sweep["rows"] if r["threshold"] == THRESHOLD)
    for n in SIZES:
        assert page["means"][str(n)] == pytest.approx(fig["conv"][f"smc_{n}"])
        assert sweep["is"][str(n)] == pytest.approx(fig["conv"][f"is_{n}"])
    for r in sweep["rows"]:
        assert r["below_is"] == [n for n in SIZES if r["means"][str(n)] < sweep["is"][str(n)]]
        assert set(r["beyond_noise"]) <= set(r["below_is"])  # beyond noise implies below
    # beyond noise, recomputed for the page's threshold from «Convergencia»'s own comparison
    for n in SIZES:
        assert (n in page["beyond_noise"]) == (fig["comparison"][str(n)]["verdict"] == "smc")
    contested = [n for n in SIZES if any(n in r["beyond_noise"] for r in sweep["rows"])]
    assert sweep["contested"] == contested and sweep["none_below"] == [n for n in SIZES if n not in contested]
    assert sweep["window"] == [r["threshold"] for r in sweep["rows"] if contested and set(contested) <= set(r["beyond_noise"])]
    # «dan las mismas distancias»: a group's first two thresholds rerun with the sweep's seeds
    # and compared run by run
    for g in sweep["identical"]:
        rows = [r for r in sweep["rows"] if r["threshold"] in g["thresholds"]]
        means = [r["means"][str(g["n"])] for r in rows]
        assert len(rows) >= 2 and max(means) - min(means) <= sweep["same_runs"]
    # «por poco»: the window's cells bold by less than 0.2 standard errors, named with their z
    for c in sweep["narrow"]:
        row = next(r for r in sweep["rows"] if r["threshold"] == c["threshold"])
        assert c["threshold"] in sweep["window"] and c["z"] == row["z"][str(c["n"])]
        assert sweep["noise_se"] < c["z"] < sweep["noise_se"] + 0.2
    for r in sweep["rows"]:
        assert r["beyond_noise"] == [n for n in SIZES if r["z"][str(n)] > sweep["noise_se"]]
    if sweep["identical"]:
        g = sweep["identical"][0]
        table = exact_table(enumerate_paths(model, tok, PROMPT, grammar))
        runs = [smc(model, tok, PROMPT, grammar, g["n"], ess_threshold=th, runs=RUNS, seed=g["n"] + 1)
                for th in g["thresholds"][:2]]
        tvs = [[total_variation(r.estimate(i), table) for i in range(RUNS)] for r in runs]
        assert np.allclose(tvs[0], tvs[1], rtol=0, atol=sweep["same_runs"])
    assert [g["n"] for g in sweep["identical"]] == sorted(g["n"] for g in sweep["identical"])
    assert sweep["page_in_window"] == (THRESHOLD in sweep["window"])
    # the prose: the threshold decides, so at least one other threshold loses to the weights somewhere
    assert any(len(r["below_is"]) < len(SIZES) for r in sweep["rows"])


def test_the_imbalance_splits_into_names_and_token_splits(fig, model, tok, grammar):
    """§3: the ESS if each draw weighed its name's mean weight, and the share of the variance of
    ln w within names, recomputed from the same draws."""
    from lesson import importance_sample
    from lesson.course import name_of
    imb = fig["weights"]["imbalance"]
    draws = importance_sample(model, tok, PROMPT, grammar, fig["is_draws"], seed=0)
    lw = draws.log_weights[0]
    names = [name_of(t.decode()) for t in draws.texts[0]]
    total = lw.var()
    within = sum(((lw[[i for i, n in enumerate(names) if n == m]] -
                   lw[[i for i, n in enumerate(names) if n == m]].mean()) ** 2).sum() for m in set(names)) / len(lw)
    assert imb["within_share"] == pytest.approx(within / total)
    w = np.exp(lw - lw.max())
    mean_w = {m: w[[i for i, n in enumerate(names) if n == m]].mean() for m in set(names)}
    per = np.array([mean_w[n] for n in names])
    assert imb["ess_name_means"] == pytest.approx(per.sum() ** 2 / (per ** 2).sum())
    assert imb["ess_name_means"] > imb["ess"]  # the names explain part of the imbalance, not all
    assert imb["within_share"] > 0.5  # «el resto está dentro de cada nombre»: most of the variance
    # «de 466 a 164, el ESS lo pierde dentro de cada nombre»: the names alone lose less
    assert imb["ess"] < imb["ess_name_means"] < fig["is_draws"]


def test_the_runs_that_resample_at_the_closing_are_the_ones_that_lose_the_protagonist(fig):
    """«El umbral importa»: the cell groups the runs by where they resampled; the figure's groups
    add up to the runs, their losses to the runs without the protagonist, and the prose's branch
    (every run that resamples after the closing loses it, no other does) holds at 0,5."""
    closing = fig["curves"]["curves"][0]["closing"]
    for key in ("low", "high"):
        t = fig["thresholds"][key]
        ac = t["at_closing"]
        assert len(t["runs"]) == RUNS == ac["runs"] + ac["other_runs"]
        assert sum(x["lost"] for x in t["runs"]) == t["protagonist_lost"] == ac["lost"] + ac["other_lost"]
        assert ac["runs"] == sum(closing in x["after"] for x in t["runs"])
    high = fig["thresholds"]["high"]["at_closing"]
    assert high["runs"] > 0 and high["lost"] == high["runs"] and high["other_lost"] == 0
