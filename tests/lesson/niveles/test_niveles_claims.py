"""The claims of «Niveles de garantía»'s prose, each against an independent computation: the token
budget fits every valid answer, the exact p(G | x) that replaces «infinito», the longest unmasked
answer, the first nested answer and the depth histogram, the JSON-mode counts, the names of level
3, the stack's positions ratio; and the pictures draw the numbers they are given.

The figures are the build's (``sitebuild.figures.lesson_figures``, cached in ``.cache/``)."""

import json
import math
import re
from collections import Counter, deque

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import build
from lesson import compile_choice, enumerate_paths
from lesson.course import NAMES, PROMPT, answer
from lesson.niveles.levels import (LevelResult, LevelsTable, depth_counts, fewest_tokens, first_nested,
                                   inside_braces, json_text_grammar, measure_prompt, paren_depth,
                                   stack_cost, StackCost)
from lesson.niveles.pictures import BOTTOM, HEIGHT, TOP, DepthHistogram, depth_svg, nice_step, retry_svg, y_of
from lesson.niveles.figures import N_PROMPT, SEED, prompt_budget
from sitebuild.figures import lesson_figures


@pytest.fixture(scope="module")
def fig():
    pages = [p for p in build.PAGES if p.get("out") == "niveles.html"]
    return lesson_figures(pages, build.ROOT, cache=build.ROOT / ".cache")["niveles.html"]


def fewest_by_search(text: str, vocab) -> int:
    """Breadth-first search over the masker's matcher of the one-text grammar: the depth at which
    the text is first complete (independent of ``fewest_tokens``' dynamic programme)."""
    grammar = compile_choice([text])
    queue, seen = deque([(grammar.matcher(vocab), 0)]), set()
    while queue:
        m, depth = queue.popleft()
        if m.is_accepting():
            return depth
        key = len(m.prefix_bytes)
        if key in seen:
            continue
        seen.add(key)
        for t in m.allowed_token_ids():
            child = m.fork()
            child.consume(int(t))
            queue.append((child, depth + 1))
    raise AssertionError("no path")


# ---------------------------------------------------------------- level 0: the budget

def test_fewest_tokens_agrees_with_a_search_over_the_matcher(tok):
    for name in NAMES:
        assert fewest_tokens(answer(name), tok.vocab) == fewest_by_search(answer(name), tok.vocab)
        assert fewest_tokens(answer(name), tok.vocab) <= len(tok.encode(answer(name)))
    assert fewest_tokens(b"ab", [b"a", b"b", b"ab"]) == 1
    with pytest.raises(ValueError, match="no split"):
        fewest_tokens(b"abc", [b"a", b"b"])


def test_the_budget_fits_every_split_of_every_valid_answer(fig, tok):
    fit = fig["fit"]
    assert fit["fewest"] == {n: fewest_tokens(answer(n), tok.vocab) for n in NAMES}
    assert fit["min"] == min(fit["fewest"].values()) == fit["fewest"][fit["min_name"]]
    assert fit["max"] == max(fit["fewest"].values())
    # every byte is a token, so the longest split of a text is its bytes: the budget is the longest text
    assert all(bytes([b]) in tok.vocab for b in range(256))
    assert fit["budget"] == prompt_budget(tok) == max(len(answer(n).encode()) for n in NAMES)
    assert fit["budget"] >= fit["max"]
    assert fig["sizes"]["prompt"] == N_PROMPT


def test_no_level_0_answer_was_stopped_by_the_budget_and_the_longest_is_the_argmax(fig, model, tok):
    r = measure_prompt(model, tok, PROMPT, n=N_PROMPT, seed=SEED, max_tokens=fig["fit"]["budget"])
    assert fig["unmasked"]["budget_hits"] == r.budget_hits
    assert r.budget_hits == sum(1 for t, c in zip(r.texts, r.token_counts)
                                if c == fig["fit"]["budget"] and viable(t.encode()))
    assert fig["unmasked"]["first_token"] == Counter(r.token_counts)[1]
    longest = max(r.token_counts)
    assert fig["unmasked"]["longest_tokens"] == longest
    assert fig["unmasked"]["longest"] == r.texts[r.token_counts.index(longest)]
    assert (fig["rows"][0]["matched"], fig["rows"][0]["n"]) == (r.matched, r.n)


def viable(prefix: bytes) -> bool:
    from masker import MaskerError
    try:
        json_text_grammar().matcher([]).consume_bytes(prefix)
    except MaskerError:
        return False
    return True


def test_the_exact_p_of_the_schema_is_the_five_answers_and_finite(fig, model, tok):
    exact = fig["exact"]
    five = enumerate_paths(model, tok, PROMPT, compile_choice([answer(n) for n in NAMES]))
    assert exact["p"] == pytest.approx(five.p_grammar, rel=1e-9)
    assert 0 < exact["p"] < 1 and exact["tries"] == pytest.approx(1 / exact["p"], rel=1e-12)
    # «0 válidas de 200 es lo esperado»: 200 tries expect far less than one valid answer
    assert exact["expected_valid"] == pytest.approx(N_PROMPT * exact["p"]) and exact["expected_valid"] < 1e-3
    assert fig["rows"][0]["matched"] == fig["rows"][1]["matched"] == 0


# ---------------------------------------------------------------- levels 1 to 4

def test_the_easiest_and_hardest_questions_are_the_argmax_and_argmin(fig):
    r = fig["retry"]
    ps = [q["p"] for q in r["questions"]]
    assert ps[r["easiest"]] == max(ps) and ps[r["hardest"]] == min(ps) == r["zero"]
    assert r["hardest_is_json"] == (r["questions"][r["hardest"]]["prompt"] == PROMPT)
    assert r["n_questions"] == len(ps)


def test_json_mode_counts_against_a_recount():
    texts = ['{}', '{"a":1,"b":null}', '{"nombre":"x","c":[1]}', '{}']
    got = inside_braces(texts)
    assert (got["empty"], got["n_values"], got["with_nombre"]) == (2, 4, 1)
    assert got["kinds"] == {"int": 1, "NoneType": 1, "str": 1, "list": 1}


def test_json_mode_prose_counts(fig):
    jm, unbounded = fig["json_mode"], fig["unbounded"]
    assert sum(jm["kinds"].values()) == jm["n_values"]
    assert 0 < unbounded["cut"] < unbounded["n"]  # «a menudo no termina»: some do, some do not
    assert unbounded["cut"] == unbounded["n"] - unbounded["parsed"]


def test_level_3_top_name_is_the_most_frequent(fig):
    names = fig["names_level3"]
    counts = names["counts"]
    assert sum(counts.values()) == fig["rows"][3]["n"]
    assert counts[names["top"]] == max(counts.values()) == names["top_count"]
    assert list(counts.values()) == sorted(counts.values(), reverse=True)  # the quiz takes the last as the smallest
    assert NAMES[0] == "Benina"  # the quiz: «en la lista, Benina va primero»


def depth_by_reduction(note: str) -> int:
    """Depth of a balanced note by removing innermost groups until none is left."""
    depth = 0
    while "(" in note:
        note, n = re.subn(r"\([^()]*\)", "x", note)
        assert n
        depth += 1
    return depth


@pytest.mark.parametrize("note", ["(a)", "((a) b)", "(a (b (c)) (d))", "(((ñu)))", "(a b c)"])
def test_paren_depth_agrees_with_innermost_reduction(note):
    assert paren_depth(note) == depth_by_reduction(note)


def test_the_first_nested_answer_and_the_histogram(fig):
    nesting = fig["nesting"]
    counts = dict(nesting["counts"])
    assert sum(counts.values()) == fig["rows"][4]["n"]
    assert nesting["nested"] == sum(c for d, c in counts.items() if d >= 2)
    first = nesting["first_nested"]
    assert first is not None and depth_by_reduction(json.loads(first["text"])["nota"]) >= 2
    texts = [first["text"]]
    assert first_nested(["{\"nota\":\"(a)\"}"] * 3 + texts) == (3, first["text"])
    assert first_nested(['{"nota":"(a)"}']) is None
    assert depth_counts(['{"nota":"(a)"}', '{"nota":"((a) b)"}', '{"nota":"(((a)))"}']) == {1: 1, 2: 1, 3: 1}


def test_the_stack_positions_ratio_is_the_table_s(fig):
    rows = fig["rows"]
    assert fig["stack"]["positions"] == pytest.approx(rows[4]["calls_per_valid"] / rows[3]["calls_per_valid"])
    low = LevelResult(3, "a", 2, 2, 2, 10, 1.0)
    high = LevelResult(4, "b", 2, 2, 2, 30, 6.0)
    assert stack_cost(low, high) == {"positions": 3.0, "seconds": 6.0, "seconds_per_position": 2.0}
    low.model_rows, low.model_calls, low.model_seconds, low.mask_seconds = 4, 3, 0.5, 0.25
    high.model_rows, high.model_calls, high.model_seconds, high.mask_seconds = 20, 7, 2.0, 3.0
    line = StackCost(low, high)._repr_html_()
    assert '3,00 veces las posiciones' in line and '<span data-measured="">6,0</span> veces el tiempo' in line
    # the time split: rows deterministic, seconds marked as measured; the rest is what is left
    split = line.split('data-testid="time-split"')[1]
    cells = re.findall(r'<tr data-level="(\d)" data-model-rows="(\d+)" data-model-calls="(\d+)">(.*?)</tr>', split)
    assert [(lv, rows, calls) for lv, rows, calls, _ in cells] == [("3", "4", "3"), ("4", "20", "7")]
    measured = [re.findall(r'<span data-measured="">([^<]+)</span>', body) for _, _, _, body in cells]
    assert measured == [["0,50", "0,25", "0,25", "1,00"], ["2,00", "3,00", "1,00", "6,00"]]
    with pytest.raises(ValueError, match="valid answers"):
        stack_cost(LevelResult(3, "a", 2, 0, 0, 10, 1.0), high)


def test_levels_without_valid_answers_are_not_called_infinite():
    html = LevelsTable([LevelResult(0, "nada", 200, 0, 0, 227, 0.5),
                        LevelResult(3, "todo", 200, 200, 200, 3242, 0.1)])._repr_html_()
    assert "∞" not in html and "sin medir: 0 válidas de 200" in html
    assert "16,2" in html


# ---------------------------------------------------------------- pictures

def points(svg: str, series: str) -> list[tuple[float, float]]:
    coords = re.search(rf'data-series="{series}" points="([^"]+)"', svg).group(1)
    return [tuple(map(float, p.split(","))) for p in coords.split()]


def rate_at(y: float) -> float:
    return 1 - (y - TOP) / (HEIGHT - TOP - BOTTOM)


def test_retry_plot_draws_the_rates_it_is_given():
    rows = [{"k": 1, "per_question": 0.8, "naive": 0.8}, {"k": 2, "per_question": 0.7, "naive": 0.5},
            {"k": 3, "per_question": 0.65, "naive": 0.3}]
    ps = [0.9, 0.0]
    svg = retry_svg(rows, ps)
    for series, key in (("per_question", "per_question"), ("naive", "naive")):
        drawn = points(svg, series)
        assert [rate_at(y) for _, y in drawn] == pytest.approx([r[key] for r in rows], abs=1e-3)
        xs = [x for x, _ in drawn]
        assert xs == sorted(xs) and len(set(xs)) == 3
    assert [rate_at(y) for _, y in points(svg, "question-1")] == pytest.approx([1, 1, 1], abs=1e-3)
    assert [rate_at(y) for _, y in points(svg, "question-0")] == pytest.approx([0.1, 0.01, 0.001], abs=1e-3)
    assert 'role="img"' in svg and "0,650" in svg  # the text alternative gives the numbers
    with pytest.raises(ValueError):
        retry_svg([], ps)


def test_depth_plot_bars_are_proportional_to_the_counts():
    counts = {1: 99, 2: 1, 3: 0}
    svg = depth_svg(counts)
    top = 4 * nice_step(99 / 4)
    for d, c in counts.items():
        y = float(re.search(rf'data-depth="{d}" data-count="{c}" x="[^"]+" y="([^"]+)"', svg).group(1))
        assert rate_at(y) * top == pytest.approx(c, abs=0.05)
        assert y_of(c / top) == pytest.approx(y, abs=0.01)
    html = DepthHistogram(counts)._repr_html_()
    assert html.count("<tr data-depth=") == 3 and 'aria-label="Respuestas por profundidad' in html
    with pytest.raises(ValueError):
        DepthHistogram({})


def test_nice_step_is_the_smallest_round_step_above():
    for x in (0.2, 1, 1.5, 3, 7, 24.75, 26, 99, 240):
        step = nice_step(x)
        assert step >= x
        assert str(step).rstrip("0") in {"1", "2", "25", "5"}
        smaller = [s for s in (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500) if s < step]
        assert all(s < x for s in smaller)


def test_distinct_states_counts_the_masks_a_decoder_computes(fig, model, tok):
    from lesson import compile_cfg, compile_json_schema
    from lesson.niveles.levels import PARENS_GBNF, SCHEMA, distinct_states, matches_parens, measure_level
    vocab = [bytes([b]) for b in range(256)]
    ab, ac = [ord("a"), ord("b")], [ord("a"), ord("c")]
    assert distinct_states(compile_choice(["ab", "ac"]), [ab, ac], vocab) == 2  # start, after «a»
    assert distinct_states(compile_choice(["ab", "ac"]), [ab], vocab) == 2
    stack = fig["stack"]
    for level, grammar, kw in ((3, compile_json_schema(SCHEMA), {"n": 200}),
                               (4, compile_cfg(PARENS_GBNF), {"n": 100, "check": matches_parens})):
        r = measure_level(model, tok, level, "x", PROMPT, grammar, seed=0, **kw)
        assert stack[f"positions{level}"] == r.positions == fig["rows"][level]["positions"]
        assert stack[f"states{level}"] == distinct_states(grammar, r.token_ids, tok.vocab)
        # the time split's deterministic part: one model row per distinct prefix still being
        # written, recounted from the answers; one call per position of the longest answer
        longest = max(map(len, r.token_ids))
        rows = sum(len({tuple(t[:j]) for t in r.token_ids if len(t) > j}) for j in range(longest))
        assert stack[f"rows{level}"] == r.model_rows == rows and stack[f"calls{level}"] == longest
        assert stack[f"n{level}"] == r.n
        # the build's shares are parts of its time
        assert 0 <= stack[f"mask_share{level}"] and 0 < stack[f"model_share{level}"]
        assert stack[f"mask_share{level}"] + stack[f"model_share{level}"] <= 1
        assert stack[f"rest_seconds{level}"] >= 0
        # distinct masks (as bytes) can only be fewer than distinct states
        masks = set()
        for tokens in r.token_ids[:20]:
            m = grammar.matcher(tok.vocab)
            for t in tokens:
                masks.add(m.mask().tobytes())
                m.consume(t)
        assert len(masks) <= stack[f"states{level}"]
    assert stack["states4"] > stack["states3"]  # the prose: the stack's states repeat less
    # the prose: level 3's answers share their prefixes far more (rows per position)
    assert stack["rows3"] / stack["positions3"] < stack["rows4"] / stack["positions4"]


def test_the_prose_words_of_levels_2_and_4_hold(fig):
    """«más de la mitad» (empty objects), «la mayoría» (depth 1) and «apenas anida» (under a tenth)
    are branches of the template on these relations; here they are stated for the build's figures,
    so a change that flips one shows up as a changed sentence and this test."""
    rows = fig["rows"]
    assert fig["json_mode"]["empty"] * 2 > rows[2]["n"]
    counts = dict(fig["nesting"]["counts"])
    assert counts[1] * 2 > rows[4]["n"]
    assert fig["nesting"]["nested"] * 10 < rows[4]["n"]
    assert fig["stack"]["seconds"] > 0 and fig["stack"]["positions"] > 1
    kinds = fig["json_mode"]["kinds"]
    assert kinds["int"] * 2 > fig["json_mode"]["n_values"]  # «sobre todo números enteros»


# ---------------------------------------------------------------- where level 4's states come from

@settings(max_examples=60, deadline=None)
@given(st.recursive(st.text(alphabet="abcñá", min_size=1, max_size=13),
                    lambda inner: st.lists(inner, min_size=1, max_size=4).map(lambda xs: ("g", xs)),
                    max_leaves=6),
       st.integers(min_value=1, max_value=3))
def test_the_bounded_regex_is_the_grammars_language_cut_at_a_depth(note, depth):
    """``bounded_parens_regex(d)`` accepts a note exactly when PARENS_GBNF does and its nesting is
    at most d (random trees of words and groups, some too long, too wide or too deep)."""
    from lesson.niveles.levels import bounded_parens_regex, matches_parens
    from masker import compile_regex

    def write(x):
        return x if isinstance(x, str) else "(" + " ".join(map(write, x[1])) + ")"
    text = write(note) if isinstance(note, tuple) else "(" + note + ")"
    whole = '{"nombre":"Benina","nota":"' + text + '"}'
    m = compile_regex(bounded_parens_regex(depth)).matcher([bytes([b]) for b in range(256)])
    ok = True
    for b in whole.encode():
        if not m.mask()[b]:
            ok = False
            break
        m.consume(b)
    accepted = ok and m.is_accepting()
    assert accepted == (matches_parens(whole) and paren_depth(text) <= depth)


def test_the_stack_does_not_make_level_4s_states(fig, model, tok):
    """§7: «no las impone la pila»: the notes that never nest alone go through almost all the keys;
    a DFA of the same language cut at the notes' depth meets far fewer states on the same answers
    (recounted here from a fresh measurement); two prefixes with the same future (same mask, same
    state of the minimal DFA) get two Earley keys."""
    from lesson import compile_cfg, compile_json_schema, compile_regex
    from lesson.niveles.levels import (PARENS_GBNF, SAME_FUTURE, SCHEMA, bounded_parens_regex,
                                       distinct_states, matches_parens, measure_level)
    src = fig["stack"]["sources"]
    r3 = measure_level(model, tok, 3, "x", PROMPT, compile_json_schema(SCHEMA), n=200, seed=0)
    r4 = measure_level(model, tok, 4, "x", PROMPT, compile_cfg(PARENS_GBNF), n=100, seed=0, check=matches_parens)
    depths = [paren_depth(json.loads(t)["nota"]) for t in r4.texts]
    flat = [ids for ids, d in zip(r4.token_ids, depths) if d == 1]
    assert src["answers"] == 100 and src["flat_answers"] == len(flat) and src["depth"] == max(depths)
    assert src["earley4"] == fig["stack"]["states4"] == distinct_states(compile_cfg(PARENS_GBNF), r4.token_ids, tok.vocab)
    assert src["flat_earley"] == distinct_states(compile_cfg(PARENS_GBNF), flat, tok.vocab)
    assert src["dfa3"] == fig["stack"]["states3"]
    dfa = compile_regex(bounded_parens_regex(src["depth"]))
    assert src["dfa4"] == distinct_states(dfa, r4.token_ids, tok.vocab)
    # the words of the prose: most notes do not nest, they alone make most keys, and a stackless
    # DFA needs less than half of them; the language explains dfa3 -> dfa4
    assert src["flat_answers"] > src["answers"] / 2
    assert src["flat_earley"] > src["earley4"] / 2
    assert src["dfa3"] < src["dfa4"] < src["earley4"] / 2
    same = src["same_future"]
    assert same["prefixes"] == list(SAME_FUTURE)
    masks, keys, states = [], [], []
    for prefix in SAME_FUTURE:
        m, d = compile_cfg(PARENS_GBNF).matcher(tok.vocab), dfa.matcher(tok.vocab)
        m.consume_bytes(prefix)
        d.consume_bytes(prefix)
        masks.append(m.mask())
        keys.append(m.state_key())
        states.append(d.state_key())
    assert same["same_mask"] and (masks[0] == masks[1]).all()
    assert not same["same_earley_key"] and keys[0] != keys[1]
    assert same["same_dfa_state"] and states[0] == states[1]


def test_level_3_always_ends_and_its_sample_order_is_noise(fig, tok):
    """§4: level 3's language is finite (the enum), so its answers always end; §5: the sample's
    top name differs from the mask's only by noise (every name within 2.5 binomial sd of n·q~)."""
    from lesson.token_language import count_language
    from lesson.niveles.levels import SCHEMA
    from masker import compile_json_schema
    counts = count_language(compile_json_schema(SCHEMA), tok.vocab)
    assert fig["finite_level3"] == {"texts": len(counts.texts), "longest_tokens": counts.longest_tokens}
    assert len(counts.texts) == len(NAMES)
    noise, n = fig["noise_level3"], fig["rows"][3]["n"]
    for name, row in noise["names"].items():
        q = fig["exact"]["names"][name]["masked"]
        assert row["expected"] == pytest.approx(n * q) and row["sd"] == pytest.approx((n * q * (1 - q)) ** 0.5)
        assert row["observed"] == fig["names_level3"]["counts"][name]
    assert noise["max_abs_z"] == pytest.approx(max(abs(r["observed"] - r["expected"]) / r["sd"]
                                                   for r in noise["names"].values()))
    if fig["exact"]["masked_top"] != fig["names_level3"]["top"]:  # the prose says «ruido» then
        assert noise["max_abs_z"] < 2.5


def test_a_zero_in_n_tries_and_the_bounds_rounded_the_safe_way(fig):
    """The q-budget feedback: (1 − u)^n = 0.05 for the 95 % upper bound u, and (1 − 1/n)^n; the
    prose's bounds keep two figures, an upper bound rounded up and a lower one down."""
    z = fig["zero_sample"]
    assert (1 - z["upper95"]) ** z["n"] == pytest.approx(0.05)
    assert 2.9 / z["n"] < z["upper95"] < 3.1 / z["n"]  # the rule of three
    assert z["p_zero_at_one_in_n"] == pytest.approx((1 - 1 / z["n"]) ** z["n"])
    b = fig["valid_bound"]
    assert b["bound"] <= b["bound_up"] and b["max_expected"] <= b["max_expected_up"]
    assert b["min_tries_down"] <= b["min_tries"]
    for x in (b["bound_up"], b["max_expected_up"], b["min_tries_down"]):
        assert float(f"{x:.2g}") == x


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=1e-80, max_value=1e80))
def test_round_sig_rounds_the_safe_way(x):
    from lesson.niveles.figures import round_sig
    up, down = round_sig(x, 2, up=True), round_sig(x, 2, up=False)
    assert down <= x * (1 + 1e-12) and up >= x * (1 - 1e-12)
    assert float(f"{up:.2g}") == up and float(f"{down:.2g}") == down
    assert up - down <= 1.0001 * 10 ** (math.floor(math.log10(x)) - 1) * 1.0001


def test_unbounded_json_mode_finishes_only_the_empty_object(fig):
    """§4: the answers of the unbounded JSON mode that parse are the empty object, when the prose
    says so: parsed = empty + finished with content."""
    u = fig["unbounded"]
    assert u["parsed"] == u["empty"] + u["finished_with_content"] and u["cut"] == u["n"] - u["parsed"]


def test_the_positions_split_by_stretch_add_up_and_the_name_costs_alike(fig, model, tok):
    """§7: «las dos últimas líneas de la celda reparten esas posiciones por tramos»: each level's
    stretches add up to its positions per answer, recounted here by walking each answer's bytes
    (where each token starts); «El nombre cuesta lo mismo en los dos niveles» within 5 %."""
    from lesson import compile_cfg, compile_json_schema
    from lesson.niveles.levels import PARENS_GBNF, SCHEMA, matches_parens, measure_level, position_split
    split = fig["positions_split"]
    for level, grammar, kw in ((3, compile_json_schema(SCHEMA), {"n": 200}),
                               (4, compile_cfg(PARENS_GBNF), {"n": 100, "check": matches_parens})):
        r = measure_level(model, tok, level, "x", PROMPT, grammar, seed=0, **kw)
        assert sum(split[str(level)].values()) == pytest.approx(r.positions / r.n)
        assert split[str(level)] == pytest.approx(position_split(r, tok.vocab))
        opening = 0
        for ids in r.token_ids:  # tokens starting inside {"nombre":"…" (up to the name's quote)
            text, start = b"".join(tok.vocab[t] for t in ids), 0
            end = text.index(b'"', 11) + 1
            for t in ids:
                opening += start < end
                start += len(tok.vocab[t])
        assert split[str(level)]['{"nombre":"…"'] == pytest.approx(opening / r.n)
    a, b = split["3"]['{"nombre":"…"'], split["4"]['{"nombre":"…"']
    assert abs(a - b) < 0.05 * a
    assert list(split["4"]) == ['{"nombre":"…"', ',"nota":"(', "…", ')"}']


def test_the_one_free_choice_is_the_initial(fig, model, tok):
    """§5's quiz: the masks' q̃ of the five initials sum to 1 (every allowed token starts one);
    each name's «terminar tras la inicial» recomputed by brute force (every token split of the
    rest, one forward pass each); the quiz's branch: the most inflated name's initial is the top."""
    import math as _m
    from lesson.mascara.why import path_steps, token_splits
    from lesson.course import answer as _answer
    ini, exact = fig["initial_choice"], fig["exact"]
    assert sum(r["q"] for r in ini["rows"].values()) == pytest.approx(1.0, abs=1e-9)
    name = exact["inflated"]
    text = _answer(name)
    opening = tok.encode(text[:text.index(name)])
    context = tok.encode(PROMPT) + opening + [tok.vocab.index(name[0].encode())]
    rest = text[text.index(name) + 1:].encode()
    m64 = model.astype(np.float64)
    brute = sum(_m.exp(sum(path_steps(m64, context, p))) for p in token_splits(rest, tok.vocab))
    assert ini["rows"][name]["finish"] == pytest.approx(brute, rel=1e-6)
    assert ini["top"] == max(ini["rows"], key=lambda n: ini["rows"][n]["q"])
    assert ini["top"] == name  # the quiz: «la mayor de las cinco»
    fav = exact["model_top"]
    assert ini["finish_ratio"] == pytest.approx(ini["rows"][fav]["finish"] / ini["rows"][name]["finish"])
    assert ini["finish_ratio"] > 10


def test_the_default_budget_of_levels_3_and_4_is_what_the_context_leaves(fig, model, tok):
    """§6: «el bucle usa lo que el contexto deja tras el prompt, N tokens»: the sampler's own
    default (``check_settings`` with no max_tokens and a grammar), and no level-4 answer reached it."""
    from lesson.sampling import check_settings
    from lesson import compile_cfg
    from lesson.niveles.levels import PARENS_GBNF
    _, budget = check_settings(model, tok, PROMPT, compile_cfg(PARENS_GBNF), 1.0, None, None, None)
    assert fig["default_budget"] == budget
    assert max(r for r in [fig["stack"]["calls4"]]) < budget


def test_the_chi_square_of_level_3s_counts(fig):
    """§5: «la prueba χ² … da … con 4 grados de libertad, p = …»: the statistic recomputed from
    the figure's observed and expected counts, and p against a numerical integral of the χ²
    density with 4 degrees of freedom (x e^{-x/2} / 4)."""
    noise = fig["noise_level3"]
    chi2 = sum((v["observed"] - v["expected"]) ** 2 / v["expected"] for v in noise["names"].values())
    assert noise["chi2"] == pytest.approx(chi2) and noise["dof"] == 4
    xs = np.linspace(chi2, chi2 + 200, 400_001)
    tail = np.trapezoid(xs * np.exp(-xs / 2) / 4, xs)
    assert noise["p"] == pytest.approx(tail, rel=1e-6)
    assert 0.05 < noise["p"]  # the prose: «es ruido» at the 5 % level
