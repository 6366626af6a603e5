"""«Del esquema al autómata» §4 on o200k_base (``lesson.automata.scale``): the four masks agree
with the masker and with brute force, the answer's positions are the masker's counts, and the
figures the prose quotes hold the relations its words state."""
from __future__ import annotations

import html
import json
import re

import numpy as np
import pytest

from lesson.automata import figures
from lesson.automata.scale import STRUCTURE, CostsTable, answer_positions, date_mask_costs, real_trie
from lesson.automata.trie import brute_steps
from lesson.i18n import get_language, set_language
from masker import compile_json_schema, compile_regex
from masker.trie import brute_force_mask


@pytest.fixture(scope="module")
def real():
    return real_trie("o200k_base")


@pytest.mark.parametrize("pattern, prefix", [(figures.DATE, figures.WALK_PREFIX),
                                             (figures.STRING, figures.STRING_PREFIX)])
def test_the_four_masks_are_the_maskers(real, pattern, prefix):
    costs = date_mask_costs(real, pattern, prefix, min_time=0)
    assert costs.same
    matcher = compile_regex(pattern).matcher(real.tokens)
    matcher.consume_bytes(prefix)
    assert costs.allowed == int(matcher.mask().sum())
    assert costs.edges == sum(costs.level_edges) and len(costs.level_edges) <= real.longest
    assert costs.index_bytes == costs.index_states * -(-real.n_tokens // 8)


def test_each_position_counts_the_brute_force_mask(real):
    positions = answer_positions(real, figures.SCALE_SCHEMA, figures.SCALE_ANSWER)
    text = json.dumps(figures.SCALE_ANSWER, ensure_ascii=False, separators=(",", ":")).encode()
    assert b"".join(p.text for p in positions) == text
    grammar = compile_json_schema(figures.SCALE_SCHEMA)
    automaton, state = grammar.automaton, grammar.automaton.start()
    for k, p in enumerate(positions):
        if k in (0, 2, 3, len(positions) - 1):  # brute force over 200,000 tokens: a few
            assert int(brute_force_mask(automaton, state, real.tokens).sum()) == p.allowed
        assert p.forced == (p.allowed == 1)
        assert p.crosses == (bool(set(p.text) & STRUCTURE) and len(p.text) > 1)
        if b"".join(q.text for q in positions[:k]) == b'{"':
            # «tras {" … el BPE canónico nunca escribiría aquí los más cortos»: it wrote the longest
            assert len(p.few) > 1 and p.label == p.few[-1]
        for b in p.text:
            state = automaton.step(state, b)


def test_brute_steps_count_each_tokens_bytes_up_to_the_refused_one():
    dfa = compile_regex("ab").automaton
    # a: 1; ab: 2; abc: 3 (c refused); b: 1 (refused); xa: 1 (x refused)
    assert brute_steps(dfa, dfa.start(), [b"a", b"ab", b"abc", b"b", b"xa"]) == 8


def test_the_figures_hold_what_the_prose_says():
    fig = figures.scale_figures()
    assert fig["n_tokens"] == 199_998 and fig["nodes"] > fig["n_tokens"]
    assert fig["date"]["same"] and fig["string"]["same"]
    # «entre min y max», «tras {" , N», «ninguna posición queda forzada» when none is
    assert fig["min_allowed"] <= fig["after_open"] <= fig["max_allowed"] <= fig["n_tokens"]
    assert (fig["forced"] == 0) == (fig["min_allowed"] > 1)
    assert fig["crossing_count"] == len(fig["crossing"]) > 0
    # «la fuerza bruta da N pasos, R veces los del recorrido»: counted token by token
    for state in ("date", "string"):
        assert fig[state]["brute_steps"] > fig[state]["edges"]
        assert fig[state]["brute_ratio"] == round(fig[state]["brute_steps"] / fig[state]["edges"], 1)
    assert all(set(t.encode()) & STRUCTURE for t in fig["crossing"])
    assert '":"' in fig["crossing"]  # the prose's example
    # the wide state is wide and the narrow one narrow: the contrast the prose draws
    assert fig["string"]["edges"] > 100 * fig["date"]["edges"]
    assert fig["string"]["levels"] > fig["date"]["levels"]
    assert fig["string"]["widest"] <= fig["string"]["edges"]


@pytest.mark.parametrize("language, yes", [("es", "sí"), ("en", "yes")])
def test_the_tables_show_the_positions_and_the_costs_they_were_given(real, language, yes):
    """The cell's two views: one row per position with its counts and words, and each way's
    microseconds in its state's column, in the page's language."""
    positions = answer_positions(real, figures.SCALE_SCHEMA, figures.SCALE_ANSWER)
    costs = {"a": date_mask_costs(real, figures.DATE, figures.WALK_PREFIX, min_time=0),
             "b": date_mask_costs(real, figures.STRING, figures.STRING_PREFIX, min_time=0)}
    saved = get_language()
    set_language(language)
    try:
        rows = re.findall(r'<tr data-allowed="(\d+)" data-forced="(\d)" data-crosses="(\d)">'
                          r"<td><code>(.*?)</code>.*?</td><td>(\w+)</td>", positions._repr_html_())
        table = CostsTable(costs)._repr_html_()
    finally:
        set_language(saved)
    assert [(int(a), f == "1", c == "1", html.unescape(label)) for a, f, c, label, _ in rows] == [
        (p.allowed, p.forced, p.crosses, p.label) for p in positions]
    assert all((word == yes) == (f == "1") for _, f, _, _, word in rows)
    cells = [float(us) for us in re.findall(r"data-us='([^']+)'", table)]
    assert cells == [c.us[way] for way in costs["a"].us for c in costs.values()]
