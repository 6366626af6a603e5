"""Every count, extremum and comparison that the prose of «Del esquema al autómata» takes from its
figures, each against an independent computation (a walk over the vocabulary without the trie, a
naive enumeration of token splits, full forward passes): a change that breaks a sentence of the
page fails here."""

from __future__ import annotations

import math

import pytest

from lesson import compile_json_schema, compile_regex
from lesson.automata.figures import (DATE, MONTHS, PROMPT, SCHEMA, WALK_PREFIX, WORD, WORD_U,
                                     crossing_figures, fast_forward_figures, months_figures,
                                     order_figures, route_figures, stack_figures, walk_figures)
from lesson.automata.forced import compare_fast_forward, exact_splits, path_probability, split_inversion
from lesson.automata.phones import PhoneCheck
from lesson.automata.route import CrossingTable
from lesson.automata.stack import bounded_regex
from lesson.automata.trie import trie_walk
from lesson.automata.dfa_check import PHONE
from lesson.automata.figures import PHONE_FREE_TOKENS, PHONE_N, PHONE_PROMPT, phone_figures
from lesson.early_abort import EarlyAbort, sample_until_invalid
from lesson.automata.stack import NESTED_GBNF
from masker import compile_cfg


# ---------------------------------------------------------------- §4, the trie walk's counts

def brute_walk_counts(automaton, state, vocab) -> dict:
    """The trie walk's counts from the vocabulary alone, no trie: a token is in a dead root branch
    when its first byte is dead, pruned inside a live branch when a later byte is; its node is
    visited when every byte but its last keeps the automaton alive; the walk's steps are the
    distinct token prefixes whose parent prefix is alive (one per trie edge tried)."""
    def alive(piece):
        s = state
        for b in piece:
            s = automaton.step(s, b)
            if s is None:
                return False
        return True
    toks = [v for v in vocab if v]
    prefixes = {v[:k] for v in toks for k in range(1, len(v) + 1)}
    return {"allowed": sum(alive(v) for v in toks),
            "pruned_root": sum(not alive(v[:1]) for v in toks),
            "pruned_inside": sum(alive(v[:1]) and not alive(v) for v in toks),
            "refused_visited": sum(alive(v[:-1]) and not alive(v) for v in toks),
            "unvisited": sum(not alive(v[:-1]) for v in toks),
            "steps": sum(alive(p[:-1]) for p in prefixes),
            "dead_branches": len({v[:1] for v in toks if not alive(v[:1])})}


def walk_cases():
    date = compile_regex(DATE).automaton
    cases = [(date, s) for s in range(0, date.n_states, 5)]
    cfg = compile_cfg(NESTED_GBNF).automaton
    for prefix in ["", "[", '[{"a":']:
        state = cfg.start()
        for b in prefix.encode():
            state = cfg.step(state, b)
        cases.append((cfg, state))
    return cases


def test_trie_walk_counts_equal_a_walk_without_the_trie(tok):
    for automaton, state in walk_cases():
        walk = trie_walk(automaton, state, tok.vocab)
        ref = brute_walk_counts(automaton, state, tok.vocab)
        assert len(walk.allowed) == ref["allowed"]
        assert (walk.pruned_root, walk.pruned_inside) == (ref["pruned_root"], ref["pruned_inside"])
        assert (walk.refused_visited, walk.unvisited) == (ref["refused_visited"], ref["unvisited"])
        assert walk.steps == ref["steps"]
        assert sum(not b.alive for b in walk.branches) == ref["dead_branches"]


def test_the_page_s_trie_sentence(tok):
    """«Cada una de las otras N cuesta un paso … se lleva sus X tokens; dentro de las ramas vivas
    otros Y. De los Z descartados, A se tocan una vez (entre ellos, los N tokens de un byte de las
    ramas muertas) y B no se visitan nunca.»"""
    fig = walk_figures(tok.vocab)
    m = compile_regex(DATE).matcher(tok.vocab)
    m.consume_bytes(WALK_PREFIX)
    ref = brute_walk_counts(compile_regex(DATE).automaton, m.state, tok.vocab)
    assert fig["pruned_root"] + fig["pruned_inside"] == fig["pruned"] == len(tok.vocab) - fig["allowed"]
    assert fig["refused_visited"] + fig["unvisited"] == fig["pruned"]
    assert fig["pruned_root"] == ref["pruned_root"] and fig["pruned_inside"] == ref["pruned_inside"]
    assert fig["unvisited"] == ref["unvisited"] and fig["steps"] == ref["steps"]
    # each dead root branch costs exactly one step: its own byte
    walk = trie_walk(compile_regex(DATE).automaton, m.state, tok.vocab)
    assert all(b.steps == 1 for b in walk.branches if not b.alive)
    assert fig["dead_branches"] == fig["root_branches"] - fig["alive_branches"] == ref["dead_branches"]
    # the dead branches' single-byte tokens are among the tokens visited once
    assert fig["dead_root_tokens"] == sum(bytes([b.byte]) in set(tok.vocab) for b in walk.branches if not b.alive)
    assert fig["dead_root_tokens"] <= fig["refused_visited"]
    assert fig["steps"] < fig["brute"]


# ---------------------------------------------------------------- §3, crossings

def test_the_longest_crossing_and_its_ties(tok):
    fig = crossing_figures(tok.vocab)
    m = compile_regex(DATE).matcher(tok.vocab)
    m.consume_bytes(fig["prefix"])
    lengths = [len(v) for t, v in enumerate(tok.vocab) if m.mask()[t]]
    assert fig["max_edges"] == max(lengths) and fig["top_tied"] == lengths.count(max(lengths))
    assert fig["allowed"] == len(lengths)


def test_partial_tokens_of_the_vocabulary(tok):
    """«N tokens que no son caracteres completos, todos de un solo byte»."""
    fig = crossing_figures(tok.vocab)

    def partial(v):
        try:
            v.decode("utf-8")
            return False
        except UnicodeDecodeError:
            return True
    assert fig["partial_vocab"] == sum(partial(v) for v in tok.vocab)
    assert fig["partial_merges"] == sum(partial(v) and len(v) > 1 for v in tok.vocab)


@pytest.mark.parametrize("prefix,limit", [("12 de ", 8), ("12 de ", 3), ("12 ", 8), ("", 4)])
def test_crossing_table_shows_every_row_tied_with_the_last(tok, prefix, limit):
    table = CrossingTable(compile_regex(DATE), tok.vocab, prefix, limit=limit)
    shown = table.shown()
    assert shown == table.rows[:len(shown)] and len(shown) >= min(limit, len(table.rows))
    rest = table.rows[len(shown):]
    assert not rest or rest[0].edges < shown[-1].edges  # nothing tied with the last row is left out
    assert f'data-shown="{len(shown)}"' in table._repr_html_()


# ---------------------------------------------------------------- §2, the route and the quizzes on it

def test_the_month_alternation_is_a_minimal_trie():
    """«los 12 meses suman N bytes y quedan en M estados»: M is the number of distinct right
    languages of the texts' prefixes (Myhill-Nerode for a finite set), fewer than the trie's nodes."""
    fig = months_figures()
    texts = [m.encode() for m in MONTHS]
    prefixes = {t[:k] for t in texts for k in range(len(t) + 1)}
    futures = {frozenset(t[len(p):] for t in texts if t.startswith(p)) for p in prefixes}
    assert fig["months_bytes"] == sum(map(len, texts))
    assert fig["months_states"] == len(futures) < len(prefixes)


def test_adding_u_with_diaeresis_keeps_the_word_s_states():
    """The quiz q-utf8: its right option is «the same number of states»."""
    assert route_figures(WORD_U)["states"] == route_figures(WORD)["states"]


def test_keys_in_any_order_more_than_double_and_in_a_fixed_order_grow_linearly():
    """The quiz q-order."""
    fig = order_figures()
    assert len(fig["fixed_steps"]) == 1 and fig["fixed_steps"][0] > 0
    assert fig["any_doubles"] and all(b >= 2 * a for a, b in zip(fig["any"], fig["any"][1:]))
    assert all(n >= 2 ** k for k, n in zip(fig["keys"], fig["any"]))
    assert fig["any"][0] == fig["fixed"][0]  # one key: the two are the same object


# ---------------------------------------------------------------- §5, the stack

def test_the_bounded_dfa_more_than_doubles_as_the_prose_says():
    fig = stack_figures()
    dfa = [r["dfa"] for r in fig["rows"] if r["dfa"]]
    assert len(fig["doubling_offsets"]) == 1
    c = fig["doubling_offsets"][0]
    assert c > 0 and all(b == 2 * a + c for a, b in zip(dfa, dfa[1:]))  # «de s se pasa a 2s + c»
    # depth 7 is computed (not «—»), and the first depth past the table is the one refused
    assert fig["rows"][6]["depth"] == 7 and fig["rows"][6]["dfa"] == compile_regex(bounded_regex(7)).automaton.n_states
    assert fig["dfa_refused"] == fig["last_dfa_depth"] + 1 and fig["refused_limit"] > dfa[-1]
    assert [r["dfa"] for r in fig["rows"]][fig["last_dfa_depth"]:] == [None]


# ---------------------------------------------------------------- §6, fast-forward

def naive_splits(vocab, data: bytes) -> set[tuple[int, ...]]:
    if not data:
        return {()}
    return {(t,) + rest for t, v in enumerate(vocab) if v and data.startswith(v)
            for rest in naive_splits(vocab, data[len(v):])}


@pytest.fixture(scope="module")
def ff(model, tok):
    return fast_forward_figures(model, tok)


def test_exact_splits_are_every_split(tok):
    for data in [b'{"nombre":"', b"12 de mayo", "señora".encode()]:
        found = exact_splits(tok.vocab, data)
        assert len(found) == len(set(map(tuple, found))) and set(map(tuple, found)) == naive_splits(tok.vocab, data)


def test_the_bpe_split_is_not_the_most_likely_one(model, tok, ff):
    """«de las 9 particiones, la de BPE es la 2.ª más probable sin máscara: la primera … N veces»."""
    grammar = compile_json_schema(SCHEMA)
    opening = ff["opening"].encode()
    logs = {tuple(s): path_probability(model, tok, PROMPT, grammar, s) for s in exact_splits(tok.vocab, opening)}
    bpe = tuple(tok.encode_bytes(opening))
    ranked = sorted(logs, key=lambda s: -logs[s][0])
    assert ff["all_splits"] == len(logs) and ff["bpe_rank"] == 1 + ranked.index(bpe)
    assert ff["best_is_bpe"] == (ranked[0] == bpe)
    assert ff["best_over_bpe"] == pytest.approx(math.exp(logs[ranked[0]][0] - logs[bpe][0]), rel=1e-9)
    # the forced opening: the masked loop writes one of its splits, so their q~ sum to 1
    assert sum(math.exp(q) for _, q in logs.values()) == pytest.approx(1, abs=1e-9) == ff["q_sum"]
    assert ff["quote_merges"] == sum(b'"' in v and len(v) > 1 for v in tok.vocab)


def test_the_inversion_in_the_split_table(model, tok, ff):
    """«… es N veces menos probable sin máscara … y el bucle paso a paso la escribe M veces más»."""
    c = compare_fast_forward(model, tok, PROMPT, compile_json_schema(SCHEMA), range(5))
    rows = c.split_rows()
    inv = c.inversion()
    low = next(r for r in rows if r[0] == inv["low"])
    high = next(r for r in rows if r[0] == inv["high"])
    assert low[1] < high[1] and low[2] > high[2]
    assert inv["p_ratio"] == pytest.approx(math.exp(high[1] - low[1])) and inv["q_ratio"] == pytest.approx(math.exp(low[2] - high[2]))
    gaps = [h[1] - lo[1] for lo in rows for h in rows if lo[1] < h[1] and lo[2] > h[2]]
    assert math.log(inv["p_ratio"]) == pytest.approx(max(gaps))
    assert ff["inversion"]["p_ratio"] == pytest.approx(inv["p_ratio"]) and ff["inversion"]["high_is_bpe"] == (inv["high"] == c.bpe)
    # the two loops counted apart: step-by-step runs over the seen splits, fast-forward all on BPE
    n = len(c.stepwise)
    assert sum(r[3] for r in rows) == n and sum(r[4] for r in rows) == n
    assert next(r for r in rows if r[0] == c.bpe)[4] == n
    assert split_inversion([([1], -1.0, -2.0), ([2], -2.0, -3.0)]) is None


# ---------------------------------------------------------------- §7, the phone samples' view

class FakeGen:
    def __init__(self, text):
        self.text = text
        self.token_ids = list(text.encode())  # one byte token per character


def test_phone_check_prints_distinct_and_digit_starts():
    """«{first} se salen del patrón en el primer token ({digit} de ellas empiezan por una cifra)»:
    the digit count is of the samples that left at the first token, not of all of them."""
    free = EarlyAbort(n=4, max_tokens=11, texts=[b"612", b"5a", b"x", b"6 a"], tokens=[1, 1, 1, 2],
                      status=["left"] * 4, tokens_whole=[1, 1, 1, 2], model_calls=1, rows_computed=1)
    check = PhoneCheck(r"\d+", [FakeGen("1"), FakeGen("1"), FakeGen("2")], free)
    assert check.distinct == 2 and check.digit_start == 3 and check.first_dead_digits == 2
    assert free.died_at[0] == 3
    html = check._repr_html_()
    assert "2 números distintos" in html and "3 se salen del patrón en el primer token (2 de ellas empiezan" in html


def test_the_phone_prose_counts_digit_starts_among_the_first_token_deaths(model, tok):
    """«999 de las 1000 se salieron del patrón ya en el primer token (solo 13 de ellas empezaban
    siquiera por una cifra)»: the 13 are a part of the 999 (a sample that began with a digit and
    left later is not among them)."""
    fig = phone_figures(model, tok)
    free = sample_until_invalid(model, tok, PHONE_PROMPT, compile_regex(PHONE), n=PHONE_N, seed=0,
                                max_tokens=PHONE_FREE_TOKENS)
    first = [t for t, s, k in zip(free.texts, free.status, free.tokens) if s == "left" and k == 1]
    assert fig["free_first_dead"] == len(first)
    assert fig["free_first_dead_digit"] == sum(t[:1].isdigit() for t in first) <= fig["free_digit_start"]


# ---------------------------------------------------------------- smaller sentences of the prose

def test_after_the_walk_prefix_only_month_initials_live(tok):
    """«Tras 12␣de␣, el autómata de la fecha solo acepta la inicial de un mes.»"""
    fig = walk_figures(tok.vocab)
    assert sorted(fig["alive_bytes"]) == sorted({m[0] for m in MONTHS})


def test_the_state_after_c3_is_not_accepting():
    """«En el segundo dibujo, el estado al que lleva C3 no es de aceptación.»"""
    dfa = compile_regex(WORD).automaton
    middle = dfa.step(0, 0xC3)
    assert middle is not None and not dfa.is_accepting(middle)
    assert all(dfa.step(middle, b) is None for b in range(0x80))  # only a second byte leaves it


def test_no_json_token_in_the_vocabulary(tok):
    """«en el nuestro no existe ninguno» (tokens such as ":")."""
    fig = crossing_figures(tok.vocab)
    assert fig["json_in_vocab"] == [] and fig["json_missing"]


def test_fast_forward_texts_all_valid(ff):
    assert ff["valid_fast"] == ff["n"] and ff["calls_fast"] < ff["calls_stepwise"]


# ---------------------------------------------------------------- §4, the picture of the walk

def test_pruning_picture_draws_the_walk_s_counts(tok):
    import xml.etree.ElementTree as ET
    from lesson.automata.trie import pruning_svg
    m = compile_regex(DATE).matcher(tok.vocab)
    m.consume_bytes(WALK_PREFIX)
    walk = trie_walk(compile_regex(DATE).automaton, m.state, tok.vocab)
    rows = walk.by_length()
    # the rows are the walk's own split, length by length
    assert sum(r[0] for r in rows.values()) == len(walk.allowed)
    assert sum(r[1] for r in rows.values()) == walk.refused_visited
    assert sum(r[2] for r in rows.values()) == walk.unvisited
    assert set(rows) == {len(v) for v in tok.vocab if v}
    svg = ET.fromstring(pruning_svg(rows))
    assert svg.get("role") == "img" and "width:100%" in svg.get("style")
    bars = [g for g in svg.iter() if g.get("class") == "trie-bar"]
    assert [int(g.get("data-length")) for g in bars] == list(rows)
    widest = max(sum(v) for v in rows.values())
    for g in bars:
        counts = tuple(map(int, g.get("data-counts").split(",")))
        assert counts == rows[int(g.get("data-length"))]
        widths = [float(r.get("width")) for r in g.iter() if r.tag.endswith("rect")]
        assert widths == pytest.approx([c / widest * (320 - 60 - 36) for c in counts if c], abs=0.06)
    # «desde N bytes no se visita ninguno»: the first length of the all-unvisited tail
    start = walk.unvisited_from()
    assert start == walk_figures(tok.vocab)["unvisited_from"]
    assert all(rows[n][:2] == (0, 0) for n in rows if n >= start)
    assert rows[start - 1][0] + rows[start - 1][1] > 0
    with pytest.raises(ValueError):
        pruning_svg({})
