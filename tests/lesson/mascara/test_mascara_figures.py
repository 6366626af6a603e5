"""«La máscara»: each claim of the prose against the figure it comes from, and each figure against
an independent computation (a forward pass by hand, the language counter, the masked samples'
token splits, plain arithmetic). The figures are the build's (``lesson_figures``, cached in
``.cache/``), so these tests read what the page shows."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import build
from lesson.enumeration import enumerate_paths
from lesson.course import NAMES, PROMPT, answer
from lesson.token_language import count_paths
from lesson.mascara.figures import LONG_ANSWER
from lesson.mascara.picture import SPAN, bar_width, factor_width, factors_svg, names_svg
from lesson.mascara.why import token_splits
from lesson.numbers import es_decimal
from lesson.sampling import generate
from lesson.views import token_label
from masker import compile_choice
from minigpt.gpt import softmax
from sitebuild.figures import lesson_figures

PAGE = next(spec for spec in build.PAGES if spec["out"] == "mascara.html")


@pytest.fixture(scope="module")
def fig():
    return lesson_figures([PAGE], build.ROOT, cache=build.ROOT / ".cache")["mascara.html"]


def finish_of(fig, name: str) -> float:
    return next(a["finish"] for a in fig["walk"]["allowed"] if a["name"] == name)


# ------------------------------------------------ «¿Por qué Juliana?»: the ratio split into factors

def test_the_split_ratio_is_the_walk_tables_largest_over_smallest_chance_to_finish(fig):
    """The 119 of section 2 (enumerate_paths) and the factors of section 5 (why.py, each token
    split scored by its own forward pass) are two computations of the same quotient."""
    why, finishes = fig["why"], [a["finish"] for a in fig["walk"]["allowed"]]
    assert why["ratio"] == pytest.approx(max(finishes) / min(finishes), rel=1e-6)
    assert why["big"]["finish"] == pytest.approx(finish_of(fig, why["big"]["name"]), rel=1e-6)
    assert why["small"]["finish"] == pytest.approx(finish_of(fig, why["small"]["name"]), rel=1e-6)
    assert why["name"] * why["pair"] * why["paths"] == pytest.approx(why["ratio"], rel=1e-9)
    assert why["pair"] == pytest.approx(why["quote"] * why["brace"], rel=1e-12)


def test_the_inflated_name_is_the_one_the_split_explains(fig):
    """The paragraph is shown for the most inflated name, and it is the walk's worst finisher."""
    assert fig["why"]["small"]["name"] == fig["enumeration"]["most_inflated"]["name"]


def test_the_closing_pair_not_the_name_explains_the_ratio(fig):
    """«El nombre explica poco … Lo que decide es el cierre»; «los demás caminos apenas suman»."""
    why = fig["why"]
    assert why["pair"] > why["name"] and why["quote"] > why["name"]
    assert abs(why["paths"] - 1) < 0.01


def test_the_names_first_token_is_the_branch_after_the_initial_and_bounds_the_name(fig, tok):
    """0,302 is p(u | …, J) as after_initial measures it, and an upper bound of the name's rest."""
    small = fig["why"]["small"]
    u = next(w for w in fig["inflated"]["next"] if w["label"] == small["tokens"][0])
    assert small["first_p"] == pytest.approx(u["p"], rel=1e-9)
    assert small["name_p"] <= small["first_p"]
    # «cota superior»: every token path of the name's rest starts with that token
    assert small["first_always"]
    first = tok.vocab.index(small["tokens"][0].encode())
    assert all(s[0] == first for s in token_splits((small["name"][1:] + '"}').encode(), tok.vocab))
    assert small["finish"] <= small["first_p"]


def test_the_paths_scored_are_every_token_split_of_the_rest(tok):
    for name in NAMES:
        rest = (name[1:] + '"}').encode()
        splits = token_splits(rest, tok.vocab)
        assert all(b"".join(tok.vocab[t] for t in s) == rest for s in splits)
        assert len(splits) == count_paths(compile_choice([rest.decode()]), tok.vocab)[rest]


def test_the_closing_quote_and_brace_are_single_tokens_in_this_vocabulary(tok):
    """The q-allowed explanation: no token of the vocabulary holds a straight quote but ``"``."""
    assert [v for v in tok.vocab if b'"' in v] == [b'"']
    assert [v for v in tok.vocab if b"}" in v] == [b"}"]


# ------------------------------------------------ section 2: the token splits of the forced prefix

def test_the_samples_that_use_another_split_are_counted_from_their_tokens(fig):
    walk_split = fig["walk"]["split"]
    prefixes = [s["split"][:len(walk_split)] for s in fig["masked"]]
    part = fig["partitions"]
    assert part["samples"] == len(fig["masked"])
    assert part["samples_other"] == sum(p != walk_split for p in prefixes)
    assert part["samples_bpe"] == sum(p == fig["walk"]["bpe_split"] for p in prefixes)
    assert part["samples_bpe"] == 0  # the q-split feedback: no masked sample uses BPE's split


def test_the_other_splits_are_rare_for_the_model_and_common_under_the_mask(fig):
    """«las otras … juntas, el 0,03 %» and «reciben en total 0,452, unas 1300 veces su parte»."""
    part = fig["partitions"]
    assert part["model_other"] == pytest.approx(1 - fig["walk"]["split_share"], abs=1e-15)
    assert part["model_other"] < 1e-3
    assert part["mask_other"] > 100 * part["model_other"]
    assert part["samples_other"] >= 1


def test_the_ratio_of_the_other_splits_can_be_checked_from_the_printed_shares(fig):
    """«the other 8 together 0.0348% … 0.452 … about 1,300 times their share»: the ratio, rounded
    to two significant figures, is what a reader gets dividing the two printed numbers (the share
    with three significant figures, the mask's with three decimals)."""
    part = fig["partitions"]
    assert part["ratio"] == pytest.approx(part["mask_other"] / part["model_other"], rel=1e-12)
    assert part["ratio_rounded"] == float(f"{part['ratio']:.2g}")
    printed_share = float(f"{100 * part['model_other']:.3g}") / 100
    printed_mask = round(part["mask_other"], 3)
    reader = printed_mask / printed_share
    assert float(f"{reader:.2g}") == part["ratio_rounded"]


def test_the_walks_non_canonical_split_is_the_models_own_preference(fig, model, tok):
    """«the unmasked model itself prefers it»: the split share is over a half, and the position
    where the sample's split leaves BPE's (where the prose's table starts) with what the unmasked
    model wanted there, recomputed from one forward pass, with the allowed set from its
    definition (no masker)."""
    walk, nc = fig["walk"], fig["walk"]["noncanonical"]
    assert walk["split"] != walk["bpe_split"] and nc is not None
    j = nc["position"] - 1
    assert walk["split"][:j] == walk["bpe_split"][:j] and walk["split"][j] != walk["bpe_split"][j]
    assert walk["split_share"] > 0.5  # the model prefers the sample's split
    gen = generate(model, tok, PROMPT, compile_choice([answer(n) for n in NAMES]), seed=walk["seed"])
    p = softmax(model.astype(np.float64).forward(np.array([tok.encode(PROMPT) + gen.token_ids[:j]]))[0, -1])
    top = int(np.argmax(p))
    assert token_label(tok.vocab[top]) == nc["top"]
    assert p[top] == pytest.approx(nc["top_p"], rel=1e-6)
    prefix = b"".join(tok.vocab[t] for t in gen.token_ids[:j])
    texts = [answer(n).encode() for n in NAMES]
    allowed = [v for v, piece in enumerate(tok.vocab) if piece and any(t.startswith(prefix + piece) for t in texts)]
    assert nc["top_allowed"] == (top in allowed)
    assert not nc["top_allowed"]
    assert sorted(a["p"] for a in nc["allowed"]) == pytest.approx(sorted(p[v] for v in allowed), rel=1e-6)
    chosen = [a for a in nc["allowed"] if a["chosen"]]
    assert len(chosen) == 1 and chosen[0]["label"] == walk["split"][j]


def test_why_the_model_prefers_the_samples_split(fig, model, tok):
    """«¿Por qué?» under the walk: the sample's split against BPE's, stretch by stretch. Each
    stretch's probabilities are recomputed token by token (one forward pass per prefix, not the
    single pass of ``split_factors``); the rows' product is the whole ratio, and that ratio is the
    two splits' probabilities as the exact enumeration of the prefix's splits gives them. The
    prose's branches: the stretch where the tokens differ, and the largest factor, a token the
    two splits share in different contexts."""
    walk, sw = fig["walk"], fig["walk"]["split_why"]
    vocab = {token_label(b): i for i, b in enumerate(tok.vocab)}
    sample = [vocab[t] for t in walk["split"]]
    bpe = tok.encode(walk["written"])
    m = model.astype(np.float64)
    ctx = tok.encode(PROMPT)

    def p_each(split):
        return [float(softmax(m.forward(np.array([ctx + split[:k]]))[0, -1])[t]) for k, t in enumerate(split)]
    pa, pb = p_each(sample), p_each(bpe)
    assert sw["ratio"] == pytest.approx(math.prod(pa) / math.prod(pb), rel=1e-6)
    assert math.prod(r["ratio"] for r in sw["rows"]) == pytest.approx(sw["ratio"], rel=1e-9)
    first = fig["walk"]["noncanonical"]["position"]
    assert sw["rows"][0]["positions"][0] == first
    for r in sw["rows"]:
        idx = [k - 1 for k in r["positions"]]
        assert r["p_sample"] == pytest.approx(math.prod(pa[k] for k in idx), rel=1e-6)
        assert "".join(r["sample"]) == "".join(r["other"])  # the same text in both splits
    # the tails after the differing stretch are the same tokens at other positions of BPE's split
    tail = len(sample) - sum(len(r["sample"]) for r in sw["rows"][1:])
    assert [walk["split"][k] for k in range(tail, len(sample))] == walk["bpe_split"][len(bpe) - (len(sample) - tail):]
    # the exact enumeration of the prefix's splits: the sample's split is split_share of them all,
    # and BPE's is (almost all of) the rest
    every = enumerate_paths(model, tok, PROMPT, compile_choice([walk["written"]])).p_grammar
    assert math.prod(pa) / every == pytest.approx(walk["split_share"], rel=1e-6)
    assert math.prod(pa) + math.prod(pb) <= every * (1 + 1e-9)
    # the prose's branches
    big = sw["rows"][sw["largest"]]
    assert big["ratio"] == max(r["ratio"] for r in sw["rows"])
    assert sw["rows"][0]["ratio"] < 1 and not sw["rows"][0]["same_tokens"]  # «prefiere la de BPE»
    assert big["same_tokens"] and big["sample"] == ['"']  # «lo que decide es la comilla»
    assert big["before_sample"] != big["before_other"]
    assert big["ratio"] > sw["ratio"]  # the quote alone outweighs the whole preference


def test_the_mask_at_position_3_keeps_the_models_local_proportions(fig, model, tok):
    """q~ of the tokens at the first split position, recomputed from one forward pass and the
    definition of the allowed set (a token is allowed iff the prefix plus its bytes is a prefix of a
    text of G), with no masker."""
    part = fig["partitions"]
    j = part["position"] - 1
    texts = [answer(n).encode() for n in NAMES]
    gen = generate(model, tok, PROMPT, compile_choice([answer(n) for n in NAMES]), seed=fig["walk"]["seed"])
    prefix = b"".join(tok.vocab[t] for t in gen.token_ids[:j])
    allowed = [v for v, piece in enumerate(tok.vocab)
               if piece and any(t.startswith(prefix + piece) for t in texts)]
    p = softmax(model.astype(np.float64).forward(np.array([tok.encode(PROMPT) + gen.token_ids[:j]]))[0, -1])
    q = {tok.vocab[v]: p[v] / p[allowed].sum() for v in allowed}
    labels = {part["walk_token"]: part["walk_q"], **{o["label"]: o["q"] for o in part["other"]}}
    assert sorted(labels) == sorted(v.decode() for v in q)
    for label, value in labels.items():
        assert value == pytest.approx(q[label.encode()], rel=1e-9)
    kept = math.prod(pos.q_chosen for pos in gen.positions[:fig["walk"]["forced_before"]])
    assert part["mask_walk"] == pytest.approx(kept, rel=1e-9)


# ------------------------------------------------ section 6: what 20 accepted answers can tell

def test_the_rejection_evidence_is_the_arithmetic_of_the_exact_table(fig):
    rej = fig["rejection"]
    n = rej["accepted"]
    assert sum(r["observed"] for r in rej["rows"]) == n
    for r in rej["rows"]:
        assert r["expected_conditional"] == pytest.approx(n * r["conditional"])
        assert r["expected_masked"] == pytest.approx(n * r["masked"])
    llr = sum(r["observed"] * math.log(r["conditional"] / r["masked"]) for r in rej["rows"])
    assert rej["log_ratio"] == pytest.approx(llr) and rej["odds"] == pytest.approx(math.exp(llr))
    kl = sum(r["conditional"] * math.log(r["conditional"] / r["masked"]) for r in rej["rows"])
    assert rej["kl"] == pytest.approx(kl) and kl > 0
    # the smallest number of answers whose mean evidence reaches the odds the prose names
    target = math.log(rej["odds_target"])
    assert kl * rej["needed"] >= target > kl * (rej["needed"] - 1)


def test_twenty_answers_do_not_tell_the_conditional_from_the_mask(fig):
    """«las dos explican lo que sale», «un indicio, no una prueba», «harían falta unas 76 respuestas»."""
    rej = fig["rejection"]
    assert rej["gap_in_sd"] < 2
    assert rej["odds"] < rej["odds_target"]
    assert rej["needed"] > rej["accepted"] and rej["needed_tries"] > rej["tries"]


# ------------------------------------------------ sections 4, 7 and 8

def test_colder_sampling_concentrates_both_distributions_at_the_temperatures_measured(fig):
    sweep = sorted(fig["sweep"], key=lambda r: r["temperature"])
    one = next(r for r in sweep if r["temperature"] == 1.0)
    assert fig["sweep_colder_concentrates"]
    assert sweep[0]["top_conditional_p"] > one["top_conditional_p"]
    assert sweep[0]["top_masked_q"] > one["top_masked_q"]


def test_a_long_answer_with_kept_masses_near_one_has_a_product_far_from_one(fig):
    kept, positions = LONG_ANSWER
    assert fig["long_answer"]["product"] == pytest.approx(kept ** positions)
    assert kept >= 0.99 and fig["long_answer"]["product"] < 0.2


def test_a_free_string_would_close_long_after_the_context_ends(fig):
    free = fig["free_text"]
    assert free["expected_tokens"] > 1000 * free["context"]
    assert free["max_close"] >= free["mean_close"]


def test_after_a_text_that_is_a_prefix_of_another_the_loop_must_choose(tok):
    """The q-prefix feedbacks: after ``ab`` the text is complete and ``c`` is still allowed; the
    allowed set is empty only after ``abc``, where the loop stops."""
    m = compile_choice(["ab", "abc"]).matcher(tok.vocab)
    m.consume_bytes("ab")
    assert m.is_accepting() and m.can_continue() and not m.is_finished()
    assert tok.vocab.index(b"c") in list(m.allowed_token_ids())
    m.consume_bytes("c")
    assert m.is_finished() and len(m.allowed_token_ids()) == 0


@pytest.mark.parametrize("stop_at_accept, missing", [(False, b"ab"), (True, b"abc")])
def test_with_single_letter_tokens_one_text_never_comes_out(stop_at_accept, missing):
    """The q-prefix answer, for its vocabulary of single letters a, b and c: each end rule leaves
    one text of {ab, abc} with no token path, and the other with one."""
    paths = count_paths(compile_choice(["ab", "abc"]), [b"a", b"b", b"c"], stop_at_accept=stop_at_accept)
    assert paths.get(missing, 0) == 0 and sum(paths.values()) == 1


def test_with_the_projects_tokens_stop_at_accept_writes_the_long_text_across_the_end(fig, tok):
    """§4, «Benina» / «Benina Casia»: with ``stop_at_accept=True`` the long text comes out only
    through the paths whose tokens jump over the end of the short one, and the mask gives it almost
    everything while the conditional gives it almost nothing (paths counted by brute force over
    every token split)."""
    pr = fig["prefix_rules"]
    short, long = pr["short_text"].encode(), pr["long_text"].encode()
    splits = token_splits(long, tok.vocab)
    boundaries = [{sum(len(tok.vocab[t]) for t in split[:k]) for k in range(1, len(split))} for split in splits]
    jumping = [split for split, cut in zip(splits, boundaries) if len(short) not in cut]
    assert pr["default"]["short"]["paths"] == 0 and pr["default"]["long"]["paths"] == len(splits)
    assert pr["stop"]["long"]["paths"] == len(jumping) > 0
    assert pr["stop"]["short"]["paths"] == len(token_splits(short, tok.vocab))
    crossing = {token_label(tok.vocab[t]) for split in jumping for t in split
                if any(i < len(short) < i + len(tok.vocab[t]) for i in range(len(short))
                       if long[i:i + len(tok.vocab[t])] == tok.vocab[t])}
    assert set(pr["crossing"]) == crossing  # «el token a␣ … salta por encima de ese final»
    # «casi siempre escribiría Benina … la máscara da … a Benina Casia»
    assert pr["stop"]["short"]["conditional"] > 0.99 and pr["stop"]["long"]["masked"] > 0.99
    assert pr["stop"]["short"]["masked"] + pr["stop"]["long"]["masked"] == pytest.approx(1)
    ratio = pr["stop"]["long"]["masked"] / pr["stop"]["long"]["conditional"]
    assert pr["stop"]["long_ratio"] == pytest.approx(ratio)
    # «mucho mayor que la de los cinco nombres»: ten times the largest ratio of the five names
    assert ratio > 10 * max(r["ratio"] for r in fig["enumeration"]["rows"])


# ------------------------------------------------ the picture

def test_the_picture_draws_each_probability_as_a_bar_of_proportional_width():
    rows = [{"name": "A", "conditional": 0.75, "masked": 0.1},
            {"name": "B", "conditional": 0.25, "masked": 0.9}]
    svg = names_svg(rows)
    bars = re.findall(r'<rect x="[\d.]+" y="[\d.]+" width="([\d.]+)" height="\d+" fill="#\w+" '
                      r'data-kind="(\w+)" data-name="(\w)" data-value="([\d.e-]+)"', svg)
    assert len(bars) == 4
    for width, kind, name, value in bars:
        row = next(r for r in rows if r["name"] == name)
        assert float(value) == row[kind]
        assert float(width) == pytest.approx(bar_width(row[kind]), abs=0.01)
    assert bar_width(1.0) > bar_width(0.5) > bar_width(0.0) == 0
    assert 'role="img"' in svg and "<title" in svg
    assert f"máscara {es_decimal(0.9, 4)}" in svg  # the text alternative carries every value


def test_the_pages_picture_draws_the_enumeration_rows(fig):
    svg = fig["names_svg"]["es"]
    for r in fig["enumeration"]["rows"]:
        for kind in ("conditional", "masked"):
            assert f'data-kind="{kind}" data-name="{r["name"]}" data-value="{r[kind]!r}"' in svg


def test_the_walks_conditional_column_nearly_matches_the_exact_table(fig):
    """«la columna condicionada casi coincide con la tabla exacta» (the walk's split holds almost
    all of the prefix's probability)."""
    exact = {r["name"]: r["conditional"] for r in fig["enumeration"]["rows"]}
    gap = max(abs(a["conditional"] - exact[a["name"]]) for a in fig["walk"]["allowed"])
    assert fig["walk"]["table_gap"] == pytest.approx(gap, abs=1e-15)
    assert gap < 0.01 and fig["walk"]["split_share"] > 0.99


def test_no_temperature_measured_removes_the_distortion(fig):
    """«ninguna de las temperaturas medidas la arregla»: the total variation, recomputed from each
    row's two leaders' shares, stays far from 0 at every temperature of the sweep."""
    assert len(fig["sweep"]) >= 3
    assert min(r["tv"] for r in fig["sweep"]) > 0.3
    for r in fig["sweep"]:
        assert r["top_conditional"] != r["top_masked"]


def test_the_factor_picture_adds_up_the_logarithms_of_the_factors():
    """Each segment is as long as its factor's log10 on the axis, in order, one after another;
    a factor below 1.001 is left out of the bar (it stays in the title)."""
    why = {"name": 2.0, "quote": 30.0, "brace": 5.0, "paths": 1.0, "ratio": 300.0}
    svg = factors_svg(why)
    segments = re.findall(r'<rect x="([\d.]+)" y="10" width="([\d.]+)" height="26" fill="#\w+" '
                          r'data-part="(\w+)" data-factor="([\d.e-]+)"', svg)
    assert [part for *_, part, _ in segments] == ["name", "quote", "brace"]
    decades = 3  # 300 lies between 10**2 and 10**3
    x = SPAN[0]
    for left, width, part, factor in segments:
        assert float(factor) == why[part]
        assert float(left) == pytest.approx(x, abs=0.01)
        assert float(width) == pytest.approx(math.log10(why[part]) / decades * (SPAN[1] - SPAN[0]), abs=0.01)
        x += float(width)
    assert x - SPAN[0] == pytest.approx(factor_width(300.0, decades), abs=0.05)
    assert "otros caminos ×1,00" in svg and 'role="img"' in svg


def test_the_pages_factor_picture_draws_the_why_figures(fig):
    for part in ("name", "quote", "brace"):
        assert f'data-part="{part}" data-factor="{fig["why"][part]!r}"' in fig["factors_svg"]["es"]


def test_the_brace_is_far_down_the_models_list_after_the_question(fig, model, tok):
    """«la llave queda muy lejos»: its rank, recomputed from one forward pass, is the table's, and
    the top tokens shown are each more likely than the brace by orders of magnitude."""
    p = softmax(model.astype(np.float64).forward(np.array([tok.encode(PROMPT)]))[0, -1])
    brace = tok.vocab.index(b"{")
    alone = fig["model_alone"]
    assert alone["brace"]["rank"] == 1 + int((p > p[brace]).sum())
    assert alone["brace"]["rank"] > len(tok.vocab) // 2
    assert min(t["p"] for t in alone["top"]) > 1e4 * alone["brace"]["p"]
    # «La llave está en el suelo»: the floor recounted, the brace and the quote in it
    floor = alone["floor"]
    within = p <= floor["factor"] * p.min()
    assert floor["count"] == int(within.sum()) and floor["low"] == pytest.approx(p.min(), rel=1e-9)
    assert floor["high"] == pytest.approx(p[within].max(), rel=1e-9)
    assert floor["brace_in"] == bool(within[brace]) and floor["quote_in"] == bool(within[tok.vocab.index(b'"')])
    assert floor["brace_in"] and floor["count"] > 10  # the prose's branch: the rank inside it is noise


def test_the_masks_choice_of_initial_is_close_to_its_table_but_not_equal(fig):
    """«la probabilidad de cada nombre queda cerca de la de su inicial … la mayor diferencia es …;
    no coinciden del todo porque la máscara también escribe el prefijo con otras particiones»."""
    masked = {r["name"]: r["masked"] for r in fig["enumeration"]["rows"]}
    gaps = [abs(a["q"] - masked[a["name"]]) for a in fig["walk"]["allowed"]]
    assert fig["walk"]["mask_gap"] == pytest.approx(max(gaps), abs=1e-15)
    assert 0 < max(gaps) < 0.05
    assert fig["partitions"]["mask_other"] > 0.1  # the other splits the sentence blames are common


@settings(max_examples=200, deadline=None)
@given(st.binary(min_size=1, max_size=12), st.data())
def test_segments_cover_the_same_bytes_in_both_splits(text, data):
    """``segments`` of two random splits of the same bytes: consecutive, covering every token once,
    each segment spelling the same bytes in both, and no shorter cut possible (no proper prefix of
    a segment ends at a common boundary)."""
    from lesson.mascara.why import segments

    def split(cuts):
        points = sorted({0, len(text), *cuts})
        return [text[a:b] for a, b in zip(points, points[1:])]
    a = split(data.draw(st.lists(st.integers(1, len(text)), max_size=6)))
    b = split(data.draw(st.lists(st.integers(1, len(text)), max_size=6)))
    segs = segments(a, b)
    assert [i for sa, _ in segs for i in sa] == list(range(len(a)))
    assert [j for _, sb in segs for j in sb] == list(range(len(b)))
    for sa, sb in segs:
        assert b"".join(a[i] for i in sa) == b"".join(b[j] for j in sb)
        ends_a = {sum(len(a[i]) for i in sa[:k]) for k in range(1, len(sa))}
        ends_b = {sum(len(b[j]) for j in sb[:k]) for k in range(1, len(sb))}
        assert not ends_a & ends_b
    with pytest.raises(ValueError, match="same bytes"):
        segments([b"ab"], [b"a"])


def test_the_forks_of_benina_casia_carry_the_masks_probability(fig, model, tok):
    """§4, «La elección se hace en un solo sitio»: ``crossing_forks`` walks the masked paths
    inside «Benina» with allowed sets built from the two texts; its forks' arrival × q̃ of jumping
    sum to the masker's exact q̃(Benina Casia) under stop_at_accept (``enumerate_paths``), and the
    page's fork is the one that carries most of it, with the model's p of its tokens recomputed
    from one forward pass."""
    from lesson.mascara.why import crossing_forks
    pr, b = fig["prefix_rules"], fig["prefix_rules"]["fork"]
    forks = crossing_forks(model, tok, PROMPT, pr["short_text"], pr["long_text"])
    exact = enumerate_paths(model, tok, PROMPT, compile_choice([pr["short_text"], pr["long_text"]]),
                            stop_at_accept=True).row(pr["long_text"]).masked
    assert sum(f["reach"] * f["q_cross"] for f in forks) == pytest.approx(exact, rel=1e-9)
    assert exact == pytest.approx(pr["stop"]["long"]["masked"], rel=1e-12)
    assert sum(f["reach"] for f in forks) <= 1 + 1e-12
    top = forks[0]
    assert all(top["reach"] * top["q_cross"] >= f["reach"] * f["q_cross"] for f in forks)
    assert b["written"] == top["written"].decode() and b["same_text"] == all(f["written"] == top["written"] for f in forks)
    vocab = {token_label(v): i for i, v in enumerate(tok.vocab)}
    ids = [vocab[t] for t in b["path"]]
    p = softmax(model.astype(np.float64).forward(np.array([tok.encode(PROMPT) + ids]))[0, -1])
    assert p[vocab[b["cross_token"]]] == pytest.approx(b["p_cross"], rel=1e-6) if b["crossing_count"] == 1 else True
    assert p[vocab[b["end_token"]]] == pytest.approx(b["p_end"], rel=1e-6) if b["ending_count"] == 1 else True
    # the prose: the crossing token gets most of the model's probability there, the ending one little
    assert b["p_cross"] > 0.5 > 100 * b["p_end"]
    assert b["q_cross"] == pytest.approx(b["p_cross"] / sum(q for _, q in top["tokens"]), rel=1e-9)
    assert pr["stop"]["long"]["conditional"] < 0.01 < 0.99 < b["q_cross"]


def test_the_initials_after_each_split_average_to_the_table(fig, model, tok):
    """§2, «No coinciden del todo porque…»: the splits' weights sum to 1 and their weighted q̃ of
    the initial is the table's q̃ of the name (exact enumeration, a different walk); the two
    printed splits are the heaviest, the first the sample's, and the initial's q̃ after it is
    the walk's own «q̃ después»."""
    ip, walk = fig["initials_by_split"], fig["walk"]
    rows = {r["name"]: r for r in fig["enumeration"]["rows"]}
    assert ip["sum"] == pytest.approx(rows[ip["name"]]["masked"], rel=1e-9)
    assert ip["table"] == rows[ip["name"]]["masked"]
    a, b = ip["splits"]
    assert a["weight"] >= b["weight"] and a["tokens"] == walk["split"]
    assert a["q"] == pytest.approx(next(x["q"] for x in walk["allowed"] if x["name"] == ip["name"]), rel=1e-9)
    assert a["q"] != pytest.approx(b["q"], rel=1e-3)  # «reparte de otra manera»
    assert ip["count"] == walk["splits"]


def test_writing_the_rest_of_the_long_text_is_what_the_conditional_counts(fig, model, tok):
    """§4: «escribir después Casia cuesta …»: p(rest | the fork's path and the crossing token),
    recomputed by the exact enumeration with that answer prefix; the fork's two branches, so
    weighed, put the conditional near the long text's exact one (the other forks add little)."""
    pr, b = fig["prefix_rules"], fig["prefix_rules"]["fork"]
    vocab = {token_label(v): i for i, v in enumerate(tok.vocab)}
    prefix = [vocab[t] for t in b["path"]] + [vocab[b["cross_token"]]]
    exact = enumerate_paths(model, tok, PROMPT, compile_choice([pr["long_text"]]), answer_prefix=prefix)
    assert b["p_rest"] == pytest.approx(exact.p_grammar, rel=1e-6)
    assert b["rest"] == pr["long_text"][len(b["written"]) + len(b["cross_token"].replace("␣", " ")):]
    here = b["p_cross"] * b["p_rest"] / (b["p_cross"] * b["p_rest"] + b["p_end"])
    assert here == pytest.approx(pr["stop"]["long"]["conditional"], rel=0.2)
    assert b["p_rest"] < 1e-3 < b["p_cross"]  # the prose: cheap to jump, dear to finish


def test_the_why_ratio_is_the_ratio_of_the_two_inflations(fig):
    """§5, «Este cociente es el que infla a …»: the mask's q̃ of each name is close to its
    initial's and the conditional multiplies by finishing inside G, so the two names'
    inflations (q̃ / conditional) divide to the finishing ratio of the walk's split, up to the
    prefix's other splits: here within a tenth."""
    why, rows = fig["why"], {r["name"]: r for r in fig["enumeration"]["rows"]}
    small, big = why["small"]["name"], why["big"]["name"]
    assert small == fig["enumeration"]["most_inflated"]["name"]
    inflation = {n: rows[n]["masked"] / rows[n]["conditional"] for n in (small, big)}
    assert inflation[small] == pytest.approx(fig["enumeration"]["most_inflated"]["ratio"], rel=1e-9)
    assert inflation[small] / inflation[big] == pytest.approx(why["ratio"], rel=0.1)


def test_the_conditional_would_not_write_the_minus_sign(fig, model, tok):
    """§7, «la condicionada le daría al signo …»: recomputed by brute force over the same
    endings, each text's probability as the sum over its token paths after the sample's prefix
    (``why.token_splits`` and one forward pass per path); the sign gets far less than the mask's
    q̃ of it."""
    from lesson.mascara.figures import ANY_SCHEMA
    from lesson.mascara.why import path_steps, token_splits
    from lesson import generate, compile_json_schema
    cq = fig["any_grammar"]
    obj = generate(model, tok, PROMPT, compile_json_schema(ANY_SCHEMA), seed=0)
    written, k = b"", 0
    while not written.endswith(b'"edad":'):
        written += tok.vocab[obj.token_ids[k]]
        k += 1
    context = tok.encode(PROMPT) + obj.token_ids[:k]
    m64 = model.astype(np.float64)
    lo, hi = ANY_SCHEMA["properties"]["edad"]["minimum"], ANY_SCHEMA["properties"]["edad"]["maximum"]
    totals = {}
    for v in ["-0"] + [str(a) for a in range(lo, hi + 1)]:
        totals[v] = sum(math.exp(sum(path_steps(m64, context, path)))
                        for path in token_splits(f"{v}}}".encode(), tok.vocab))
    share = totals["-0"] / sum(totals.values())
    assert cq["minus_conditional"] == pytest.approx(share, rel=1e-5)
    assert cq["minus_conditional"] < 1e-3 * cq["minus_q"]
