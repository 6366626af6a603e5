"""The lesson «Del esquema al autómata»: every view and computation against an independent reference
(Python's ``re``, brute force over bytes and tokens, full forward passes, a recursive-descent parser,
``jsonschema``), and the fast-forward option of the decode loop."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET

import jsonschema
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lesson import compile_cfg, compile_json_schema, compile_regex, generate
from lesson.automata.route import (CrossingTable, DfaDiagram, bytes_label, crossings, dfa_edges,
                                   layers, regex_route)
from lesson.automata.figures import DATE, DIAGRAM, PHONE, SCHEMA, WORD, YES_NO
from lesson.automata.stack import (NESTED_GBNF, StackPlot, StackRow, bounded_regex, earley_items,
                                   nested_prefix, stack_growth)
from lesson.automata.trie import MaskIndex, mask_timings, shortest_prefixes, trie_walk
from lesson.automata.forced import compare_fast_forward, path_probability
from lesson.automata.phones import PhoneCheck
from lesson.early_abort import EarlyAbort
from lesson.sampling import MAX_FORCED_BYTES, forced_bytes
from lesson.views import is_partial
from masker.trie import brute_force_mask
from tests.lesson.reference import next_logp

PROMPT = "¿Quién es la protagonista? Responde en JSON.\n"
PATTERNS = [YES_NO, DIAGRAM, WORD, DATE, PHONE]
ALPHABET = "sSnNoií0123456789 deabrñáéóú\xadé"


def accepts(dfa, data: bytes) -> bool:
    state = 0
    for b in data:
        state = dfa.step(state, b)
        if state is None:
            return False
    return dfa.is_accepting(state)


# ---------------------------------------------------------------- regex -> automaton

@pytest.mark.parametrize("pattern", PATTERNS)
def test_route_ends_in_the_masker_s_minimal_dfa(pattern):
    route = regex_route(pattern)
    assert route.min_states == compile_regex(pattern).automaton.n_states
    assert route.nfa_states >= 1 and route.subset_states >= route.min_states


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=ALPHABET, max_size=8), which=st.sampled_from([YES_NO, DIAGRAM, WORD]))
def test_route_dfa_accepts_what_re_fullmatch_accepts(text, which):
    assert accepts(regex_route(which).dfa, text.encode()) == bool(re.fullmatch(which, text))


@pytest.mark.parametrize("pattern", [YES_NO, DIAGRAM, WORD, PHONE])
def test_diagram_draws_every_state_and_every_live_transition(pattern):
    dfa = compile_regex(pattern).automaton
    svg = ET.fromstring(DfaDiagram(dfa).svg())
    assert svg.get("data-testid") == "dfa-diagram"
    assert int(svg.get("data-states")) == dfa.n_states
    assert int(svg.get("data-accepting")) == sum(dfa.accepting)
    groups = [g for g in svg.iter("{http://www.w3.org/2000/svg}g") if g.get("class", "").startswith("dfa-state")] \
        or [g for g in svg.iter("g") if g.get("class", "").startswith("dfa-state")]
    assert sorted(int(g.get("data-state")) for g in groups) == list(range(dfa.n_states))
    assert sum("accepting" in g.get("class") for g in groups) == sum(dfa.accepting)
    # the edges, against a brute force over (state, byte)
    moves = {(s, b, dfa.step(s, b)) for s in range(dfa.n_states) for b in range(256) if dfa.step(s, b) is not None}
    drawn = {(s, b, t) for (s, t), values in dfa_edges(dfa).items() for b in values}
    assert drawn == moves
    titles = [t.text for t in svg.iter() if t.tag.endswith("title")]
    assert titles[0] == svg.get("aria-label")  # the picture's own text alternative
    assert titles[1:] == [bytes_label(v)[1] for _, v in sorted(dfa_edges(dfa).items())]
    assert "width:100%" in svg.get("style") and svg.get("viewBox")  # scales down to a phone's width
    assert "<svg" in DfaDiagram(dfa)._repr_html_()


def test_diagram_refuses_a_dfa_too_big_to_draw():
    with pytest.raises(ValueError, match="52 states"):
        DfaDiagram(compile_regex(DATE).automaton)
    with pytest.raises(TypeError, match="no state table to draw"):  # counters, not a table
        DfaDiagram(compile_regex(r"\d{100}").automaton)
    with pytest.raises(TypeError, match="no state table to draw"):
        DfaDiagram(compile_cfg(NESTED_GBNF).automaton)


def test_layers_are_breadth_first_distances():
    dfa = compile_regex(DATE).automaton
    depth = {s: i for i, col in enumerate(layers(dfa)) for s in col}
    prefixes = shortest_prefixes(dfa)
    assert sorted(depth) == list(range(dfa.n_states))
    assert all(depth[s] == len(prefixes[s]) for s in depth)


def test_bytes_label_groups_runs():
    assert bytes_label(list(range(ord("a"), ord("z") + 1)))[0] == "a–z"
    assert bytes_label([0x20, 0xC3])[0] == "␣ C3"
    assert bytes_label([ord("0"), ord("1")])[0] == "01"
    short, full = bytes_label([1, 3, 5, 7, 9, 11])
    assert short.endswith("…") and len(full.split()) == 6


# ---------------------------------------------------------------- tokens cross transitions

@pytest.mark.parametrize("pattern,prefix", [(DATE, "12 "), (DATE, "12 de "), (WORD, ""), (WORD, "ca")])
def test_crossings_are_the_brute_force_mask_with_the_paths_walked(tok, pattern, prefix):
    grammar = compile_regex(pattern)
    m = grammar.matcher(tok.vocab)
    m.consume_bytes(prefix)
    rows = crossings(grammar.automaton, tok.vocab, m.state)
    assert sorted(c.token for c in rows) == np.flatnonzero(brute_force_mask(grammar.automaton, m.state, tok.vocab)).tolist()
    for c in rows:
        assert c.edges == len(c.piece) and c.path[0] == m.state
        assert c.partial == is_partial(c.piece)
        probe = grammar.matcher(tok.vocab)
        probe.consume_bytes(prefix.encode() + c.piece)
        assert probe.state == c.path[-1]
    assert [c.edges for c in rows] == sorted((c.edges for c in rows), reverse=True)
    html = CrossingTable(grammar, tok.vocab, prefix)._repr_html_()
    assert f'data-allowed="{len(rows)}"' in html


# ---------------------------------------------------------------- trie walk and index

def walk_states(tok):
    """(automaton, state) pairs: every state of the date DFA and some Earley states."""
    date = compile_regex(DATE).automaton
    out = [(date, s) for s in range(date.n_states)]
    cfg = compile_cfg(NESTED_GBNF).automaton
    for prefix in ["", "[", '[{"a":', "[0,", '{"a":[0']:
        state = cfg.start()
        for b in prefix.encode():
            state = cfg.step(state, b)
        out.append((cfg, state))
    return out


def test_trie_walk_gives_the_brute_force_mask_in_fewer_steps(tok):
    for automaton, state in walk_states(tok):
        walk = trie_walk(automaton, state, tok.vocab)
        assert walk.allowed == np.flatnonzero(brute_force_mask(automaton, state, tok.vocab)).tolist()
        # each trie edge tried is one byte that brute force also reads, for a token below it
        assert walk.steps <= walk.brute_steps <= walk.vocab_bytes
        assert sum(b.tokens for b in walk.branches) == sum(1 for v in tok.vocab if v)
        assert sum(b.allowed for b in walk.branches) == len(walk.allowed)
        # every token not allowed is discarded with a whole subtree (what the page says)
        assert walk.pruned_tokens + len(walk.allowed) == sum(1 for v in tok.vocab if v)
        assert sum(b.tokens for b in walk.branches if not b.alive) <= walk.pruned_tokens
        assert all(b.allowed == 0 for b in walk.branches if not b.alive)
    html = walk._repr_html_()
    assert f'data-steps="{walk.steps}"' in html and 'data-testid="trie-walk"' in html


def test_mask_index_rows_are_brute_force_masks(tok):
    grammar = compile_regex(DATE)
    index = MaskIndex(grammar, tok.vocab)
    dfa = grammar.automaton
    assert index.masks.shape == (dfa.n_states, len(tok.vocab))
    for s in range(dfa.n_states):
        assert np.array_equal(index.lookup(s), brute_force_mask(dfa, s, tok.vocab))
    assert index.nbytes == dfa.n_states * math.ceil(len(tok.vocab) / 8)
    assert index.distinct == len({tuple(np.flatnonzero(r)) for r in index.masks})
    for s, prefix in index.prefixes.items():
        m = grammar.matcher(tok.vocab)
        m.consume_bytes(prefix)
        assert m.state == s
    assert f'data-states="{dfa.n_states}"' in index._repr_html_()


def test_mask_index_refuses_a_recursive_grammar(tok):
    with pytest.raises(TypeError, match="no finite state table"):
        MaskIndex(compile_cfg(NESTED_GBNF), tok.vocab)


def test_mask_timings_measure_all_three_ways(tok):
    grammar = compile_regex(DATE)
    times = mask_timings(grammar, tok.vocab, 0, min_time=0.001)
    assert set(times) == {"brute_force", "trie_walk", "lookup"}
    assert all(math.isfinite(v) and v > 0 for v in times.values())  # measured, never compared


# ---------------------------------------------------------------- JSON needs a stack

def depth_of(text: str) -> int | None:
    """Nesting depth of ``text`` under NESTED_GBNF by recursive descent; None if it is not a value."""
    pos = 0

    def value() -> int:
        nonlocal pos
        if text.startswith("0", pos):
            pos += 1
            return 0
        if text.startswith("[", pos):
            pos += 1
            d = value()
            while text.startswith(",", pos):
                pos += 1
                d = max(d, value())
            if not text.startswith("]", pos):
                raise ValueError
            pos += 1
            return d + 1
        if text.startswith('{"a":', pos):
            pos += 5
            d = value()
            if not text.startswith("}", pos):
                raise ValueError
            pos += 1
            return d + 1
        raise ValueError

    try:
        d = value()
    except (ValueError, RecursionError):
        return None
    return d if pos == len(text) else None


values = st.recursive(st.just("0"), lambda inner: st.one_of(
    st.lists(inner, min_size=1, max_size=3).map(lambda xs: "[" + ",".join(xs) + "]"),
    inner.map(lambda x: '{"a":' + x + "}")), max_leaves=8)
noise = st.text(alphabet='[]{}0,"a:', max_size=10)


@settings(max_examples=200, deadline=None)
@given(text=st.one_of(values, noise), bound=st.integers(0, 3))
def test_bounded_regex_is_the_grammar_cut_at_its_depth(text, bound):
    depth = depth_of(text)
    assert compile_cfg(NESTED_GBNF).accepts(text) == (depth is not None)
    assert compile_regex(bounded_regex(bound)).accepts(text) == (depth is not None and depth <= bound)


def test_stack_growth_earley_linear_dfa_doubling():
    rows = stack_growth(range(1, 7), dfa_depths=range(1, 6))
    diffs = {b.earley_items - a.earley_items for a, b in zip(rows, rows[1:])}
    assert len(diffs) == 1 and diffs.pop() > 0  # the same number of items per level
    dfa = [r.dfa_states for r in rows if r.dfa_states]
    assert all(b > 2 * a - 8 for a, b in zip(dfa, dfa[1:])) and dfa[-1] > 4 * dfa[0]
    assert rows[-1].dfa_states is None
    prefix = nested_prefix(4)
    assert prefix == '[{"a":[{"a":'
    state = compile_cfg(NESTED_GBNF).automaton.start()
    assert earley_items(state) == rows[0].earley_items - (rows[1].earley_items - rows[0].earley_items)


def test_the_live_items_grow_and_the_current_set_does_not():
    """§5: «los ítems vivos (el conjunto actual y los conjuntos a los que apunta: la pila) crecen …,
    mientras que el conjunto actual tiene siempre N»: the current set, counted here by hand from
    the Earley state's own items, is the same at every depth; the rest is the stack. The figure
    ``current_constant`` is that number."""
    from lesson.automata.figures import stack_figures
    from lesson.automata.stack import current_items
    automaton = compile_cfg(NESTED_GBNF).automaton
    sizes = []
    for d in range(1, 9):
        state = automaton.start()
        for b in nested_prefix(d).encode():
            state = automaton.step(state, b)
        own = len(state.scans) + len(state.lexes) + sum(len(w) for w in state.waiting.values())
        assert current_items(state) == own < earley_items(state)
        sizes.append(own)
    assert len(set(sizes)) == 1
    fig = stack_figures()
    assert fig["current_constant"] == sizes[0]
    assert all(r["current"] == sizes[0] for r in fig["rows"])
    assert all(r["earley"] > r["current"] for r in fig["rows"])


def test_bounded_dfa_hits_the_masker_s_limits_at_depth_8():
    """What the prose says after the depth table (``dfa_refused`` of the figures)."""
    from masker.errors import LimitExceeded
    assert compile_regex(bounded_regex(7)).automaton.n_states > 2 * 506
    with pytest.raises(LimitExceeded):
        compile_regex(bounded_regex(8))


def test_the_stack_figures_say_where_the_table_stops_and_the_masker_refuses():
    """The prose after the depth table: the cell stops at ``last_dfa_depth``; each depth of
    ``dfa_past`` still builds, with more states than the table's last; ``dfa_refused`` does not."""
    from lesson.automata.figures import DFA_DEPTHS, stack_figures
    from masker.errors import LimitExceeded
    fig = stack_figures()
    assert fig["last_dfa_depth"] == DFA_DEPTHS[-1] == max(r["depth"] for r in fig["rows"] if r["dfa"])
    depths = [d["depth"] for d in fig["dfa_past"]]
    assert depths == list(range(fig["last_dfa_depth"] + 1, fig["dfa_refused"]))
    largest = max(r["dfa"] for r in fig["rows"] if r["dfa"])
    assert all(d["states"] > largest for d in fig["dfa_past"])
    with pytest.raises(LimitExceeded):
        compile_regex(bounded_regex(fig["dfa_refused"]))


def test_bounded_regex_rejects_negative_depth():
    with pytest.raises(ValueError, match="depth"):
        bounded_regex(-1)


@pytest.mark.parametrize("rows", [
    [StackRow(1, 9, 10), StackRow(2, 13, None)],
    [StackRow(0, 0, 0)],
    [StackRow(1, 10 ** 300, 10 ** 300), StackRow(50, 1, 1)],
])
def test_stack_plot_renders_extreme_numbers(rows):
    html = StackPlot(rows)._repr_html_()
    assert 'data-testid="stack-plot"' in html and "nan" not in html.lower()
    assert html.count('class="grid"') <= 6
    with pytest.raises(ValueError):
        StackPlot([])


# ---------------------------------------------------------------- fast-forward

def reference_forced(matcher, stop_at_accept=False) -> bytes:
    """Forced bytes by trying every byte through copies of the matcher."""
    out = b""
    probe = matcher.copy()
    while len(out) < MAX_FORCED_BYTES and not (stop_at_accept and probe.is_accepting()):
        alive = []
        for b in range(256):
            trial = probe.copy()
            try:
                trial.consume_bytes(bytes([b]))
            except Exception:
                continue
            alive.append(b)
        if len(alive) != 1:
            break
        out += bytes(alive)
        probe.consume_bytes(bytes(alive))
    return out


@pytest.mark.parametrize("grammar,prefix,expected", [
    (lambda: compile_json_schema(SCHEMA), b"", b'{"nombre":"'),
    (lambda: compile_json_schema(SCHEMA), b'{"nombre":"ab', None),
    (lambda: compile_regex(DATE), b"12", b" de "),
    (lambda: compile_regex(DATE), b"12 de s", b"eptiembre de "),
    (lambda: compile_regex(YES_NO), b"s", "í".encode()),
    (lambda: compile_cfg(NESTED_GBNF), b'[{', b'"a":'),
])
def test_forced_bytes_match_a_byte_by_byte_reference(tok, grammar, prefix, expected):
    m = grammar().matcher(tok.vocab)
    m.consume_bytes(prefix)
    found = forced_bytes(m)
    assert found == reference_forced(m)
    if expected is not None:
        assert found == expected
    assert m.prefix_bytes == prefix  # untouched


def test_forced_bytes_stop_where_the_text_may_end(tok):
    m = compile_regex("ab(cd)?").matcher(tok.vocab)
    assert forced_bytes(m, stop_at_accept=True) == b"ab"
    assert forced_bytes(m) == b"abcd"  # the default end rule goes on while a token may follow
    m.consume_bytes(b"ab")
    assert forced_bytes(m, stop_at_accept=True) == b""
    assert forced_bytes(m) == reference_forced(m) == b"cd"
    loop = compile_regex("a*").matcher(tok.vocab)
    assert len(forced_bytes(loop)) == MAX_FORCED_BYTES


@pytest.mark.parametrize("seed", range(4))
def test_fast_forward_writes_valid_texts_with_fewer_model_calls(model, tok, seed):
    grammar = compile_json_schema(SCHEMA)
    step = generate(model, tok, PROMPT, grammar, seed=seed)
    fast = generate(model, tok, PROMPT, grammar, seed=seed, fast_forward=True)
    for gen in (step, fast):
        assert grammar.accepts(gen.bytes)
        jsonschema.validate(__import__("json").loads(gen.text), SCHEMA)
    assert step.model_calls == len(step.token_ids)  # one call per position
    assert fast.model_calls < step.model_calls
    # one call per forced run (with the token before it), one per sampled position, except a
    # sampled position right after a run: the run's call already gave its distribution
    kinds = [p.forced == "fast_forward" for p in fast.positions]
    runs = sum(1 for i, k in enumerate(kinds) if k and (i == 0 or not kinds[i - 1]))
    after_run = sum(1 for i, k in enumerate(kinds) if not k and i > 0 and kinds[i - 1])
    assert fast.model_calls == runs + kinds.count(False) - after_run
    # the forced opening is written in the tokenizer's BPE split, with q = 1
    opening = tok.encode_bytes(b'{"nombre":"')
    assert fast.token_ids[:len(opening)] == opening
    assert all(p.forced == "fast_forward" and p.q_chosen == 1.0 for p in fast.positions[:len(opening)])
    assert fast.positions[-1].forced == "fast_forward"  # the closing "}


def test_fast_forward_records_the_model_s_real_probabilities(model, tok):
    m64 = model.astype(np.float64)
    grammar = compile_json_schema(SCHEMA)
    gen = generate(model, tok, PROMPT, grammar, seed=1, fast_forward=True)
    ids = tok.encode(PROMPT)
    for pos in gen.positions:
        assert pos.p_chosen == pytest.approx(math.exp(next_logp(m64, ids)[pos.chosen]), rel=1e-9)
        ids = ids + [pos.chosen]
    # the choices in between are masked as usual: their q is the renormalised p
    free = [p for p in gen.positions if p.forced is None]
    assert free and all(p.q_chosen == pytest.approx(p.p_chosen / p.kept_mass) for p in free)


def test_fast_forward_is_ignored_without_a_grammar_and_keeps_the_budget(model, tok):
    plain = generate(model, tok, PROMPT, seed=0, max_tokens=5)
    assert generate(model, tok, PROMPT, seed=0, max_tokens=5, fast_forward=True).token_ids == plain.token_ids
    short = generate(model, tok, PROMPT, compile_json_schema(SCHEMA), seed=0, max_tokens=4, fast_forward=True)
    assert len(short.token_ids) == 4 and short.status == "budget" and not short.complete


def test_path_probability_against_full_forward_passes(model, tok):
    m64 = model.astype(np.float64)
    grammar = compile_json_schema(SCHEMA)
    path = tok.encode_bytes(b'{"nombre":"')
    log_p, log_q = path_probability(model, tok, PROMPT, grammar, path)
    ids, ref_p, ref_q = tok.encode(PROMPT), 0.0, 0.0
    matcher = grammar.matcher(tok.vocab)
    for t in path:
        lp = next_logp(m64, ids)
        allowed = brute_force_mask(grammar.automaton, matcher.state, tok.vocab)
        ref_p += lp[t]
        ref_q += lp[t] - np.log(np.exp(lp[allowed]).sum())
        matcher.consume(t)
        ids = ids + [t]
    assert log_p == pytest.approx(ref_p, rel=1e-9) and log_q == pytest.approx(ref_q, abs=1e-9)
    with pytest.raises(ValueError):
        path_probability(model, tok, PROMPT, grammar, tok.encode("hola"))


def test_fast_forward_comparison_view(model, tok):
    grammar = compile_json_schema(SCHEMA)
    c = compare_fast_forward(model, tok, PROMPT, grammar, range(2))
    assert c.calls[1] < c.calls[0] and c.valid == (2, 2) and c.opening == b'{"nombre":"'
    assert c.forced == sum(p.forced in ("token", "split") for r in c.stepwise for p in r.gen.positions) > 0
    for ids, _, _, _ in c.opening_splits():
        assert b"".join(tok.vocab[t] for t in ids).startswith(b'{"nombre":"')
    assert c.stepwise[0].gen.prefix_split(0) == ()
    html = c._repr_html_()
    assert f'data-calls-stepwise="{c.calls[0]}"' in html and f'data-calls-fast-forward="{c.calls[1]}"' in html
    assert f'data-forced="{c.forced}"' in html


# ---------------------------------------------------------------- the phone exercise

class FakeGen:
    def __init__(self, text):
        self.text = text
        self.token_ids = list(text.encode())  # one byte token per character


def test_phone_check_counts_with_re():
    masked = [FakeGen(t) for t in ["612 345 678", "712 345 678", "512 345 678"]]
    free = EarlyAbort(n=3, max_tokens=11, texts=[b"612 345 678", b"h", b"x"], tokens=[11, 1, 1],
                      status=["complete", "left", "left"], tokens_whole=[11, 1, 1], model_calls=11,
                      rows_computed=10)
    check = PhoneCheck(PHONE, masked, free, (0.0, 1e-300))
    assert check.invalid == 1
    html = check._repr_html_()
    assert 'data-n="3" data-invalid="1"' in html and 'data-n="3" data-valid="1"' in html
    empty = PhoneCheck(PHONE, [])._repr_html_()
    assert 'data-n="0" data-invalid="0"' in empty and "phone-unmasked" not in empty
    assert "1 llamada, la del prompt" in PhoneCheck(PHONE, masked, EarlyAbort(
        n=3, max_tokens=11, texts=[b"h"] * 3, tokens=[1] * 3, status=["left"] * 3, tokens_whole=[1] * 3,
        model_calls=1, rows_computed=0))._repr_html_()
    assert " s;" not in empty and " s;" in html  # times only when measured
    # rows after the first token: distinct prefixes «61», «612», … and «71», … and «51», …
    assert check.masked_tokens == 3 * 10
    assert check.masked_rows == len({t[:k] for t in ["612 345 678", "712 345 678", "512 345 678"]
                                     for k in range(1, 11)}) == 30
    shared = PhoneCheck(PHONE, [FakeGen("612 345 678"), FakeGen("612 345 679")])
    # they part at the last digit: the ten prefixes before it are shared
    assert shared.masked_tokens == 20 and shared.masked_rows == 10
    assert "20 tokens más, que el modelo calculó en 10 filas" in shared._repr_html_()


def test_phone_samples_from_the_model_all_match(model, tok):
    from lesson import sample_batch
    gens = sample_batch(model, tok, "El teléfono de doña Paca es el ", compile_regex(PHONE), n=200, seed=3)
    assert all(re.fullmatch(PHONE, g.text) for g in gens)
    assert PhoneCheck(PHONE, gens).invalid == 0


def test_compare_fast_forward_rejects_no_seeds(model, tok):
    with pytest.raises(ValueError, match="seeds is empty"):
        compare_fast_forward(model, tok, "Hola", compile_regex(PHONE), seeds=[])


def test_stack_plot_prints_the_current_set_beside_the_live_items():
    """§5: «el conjunto actual tiene siempre 4»: the table has a column for it, one value per row
    (— where it was not measured)."""
    html = StackPlot([StackRow(1, 9, 10, 4), StackRow(2, 13, None, 4), StackRow(3, 17, 58)])._repr_html_()
    cells = re.findall(r"<tr><td class='num'>(\d+)</td><td class='num'>([^<]*)</td><td class='num'>([^<]*)</td>", html)
    assert [(d, cur) for d, _, cur in cells] == [("1", "4"), ("2", "4"), ("3", "—")]
    assert "ítems del conjunto actual" in html
