"""The Laboratorio's «vocabulario» choice (``lesson.laboratorio.vocab``): masks over a real
vocabulary, checked against brute force (each token run through the automaton on its own), the
example against a breadth-first search over bytes, the search against a plain filter, and every
refusal as the Lab's error view."""
from __future__ import annotations

import json
import re
from collections import deque

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from lesson.i18n import get_language, set_language
from lesson.laboratorio.lab import PRESETS, compile_constraint
from lesson.laboratorio.vocab import (MAX_TEXT_TOKENS, SHOWN, VocabMasks, act_vocab, example_text,
                                      search_key)
from lesson.automata.scale import real_trie
from lesson.views import token_label
from masker import compile_regex
from masker.trie import brute_force_mask
from tests.masker.strategies import REGEXES

VOCAB = "cl100k_base"  # the smaller of the two: brute force over 100,256 tokens


def shortest_length(automaton, max_bytes: int = 60) -> int | None:
    """Bytes in a shortest text of ``automaton``: breadth-first over bytes, states merged by their
    ``cache_key`` (equal keys, equal futures). None past ``max_bytes``."""
    start = automaton.start()
    seen, queue = {automaton.cache_key(start)}, deque([(start, 0)])
    while queue:
        state, depth = queue.popleft()
        if automaton.is_accepting(state):
            return depth
        if depth == max_bytes:
            continue
        for b in range(256):
            nxt = automaton.step(state, b)
            if nxt is None:
                continue
            key = automaton.cache_key(nxt)
            if key not in seen:
                seen.add(key)
                queue.append((nxt, depth + 1))
    return None


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_each_presets_example_is_one_of_its_shortest_texts(preset):
    grammar = compile_constraint(PRESETS[preset]["kind"], PRESETS[preset]["constraint"])
    text = example_text(grammar)
    assert grammar.accepts(text)
    if grammar.automaton.cache_key(grammar.automaton.start()) is not None:
        assert len(text.encode()) == shortest_length(grammar.automaton, 120)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pattern=REGEXES)
def test_a_random_regexs_example_is_a_shortest_text(pattern):
    grammar = compile_regex(pattern)
    text = example_text(grammar, max_bytes=60)
    length = shortest_length(grammar.automaton, 60)
    if length is None:
        assert text is None
    else:
        assert text is not None and grammar.accepts(text.encode("utf-8", "surrogatepass"))
        assert len(text.encode()) == length


@pytest.fixture(scope="module")
def date_masks():
    grammar = compile_constraint("regex", PRESETS["fecha"]["constraint"])
    return grammar, VocabMasks(VOCAB, grammar, "12 de mayo de 1897")


def test_each_position_is_the_brute_force_mask(date_masks):
    grammar, masks = date_masks
    automaton, state = grammar.automaton, grammar.automaton.start()
    tokens = masks.tokens
    assert b"".join(p.piece for p in masks.positions[:-1]) == "12 de mayo de 1897".encode()
    assert masks.accepted and masks.refused is None and masks.positions[-1].piece is None
    for p in masks.positions:
        reference = brute_force_mask(automaton, state, tokens)
        assert p.allowed == int(reference.sum())
        assert np.array_equal(masks.allowed_ids(p.index), np.flatnonzero(reference))
        assert p.forced == (p.allowed == 1)
        if p.piece is not None:
            for b in p.piece:
                state = automaton.step(state, b)


def test_the_search_is_a_filter_of_the_allowed_tokens(date_masks):
    _grammar, masks = date_masks
    for index, query in ((1, ""), (1, "1"), (3, "MA"), (3, "zzz")):
        allowed = masks.allowed_ids(index).tolist()
        expected = [i for i in allowed if query.lower() in token_label(masks.tokens[i]).lower()]
        matches, ids = masks.search(index, query)
        assert (matches, ids) == (len(expected), expected[:SHOWN])
    with pytest.raises(IndexError):
        masks.search(len(masks.positions) + 1)
    # a typed space finds the «␣» of a label; a byte's <0x..> spelling is not searched
    spaced = masks.search(3, " ma")[1]
    assert spaced and all(token_label(masks.tokens[i]).startswith("␣") for i in spaced)
    assert search_key("<0xE2>a B") == "a␣b" and search_key("\n") == "↵"


def test_a_text_the_mask_refuses_stops_there_and_an_unfinished_one_says_so():
    grammar = compile_constraint("regex", PRESETS["fecha"]["constraint"])
    refused = VocabMasks(VOCAB, grammar, "12 de mayx de 1897")
    last = refused.positions[-1]
    assert last.refused and refused.refused is last and not refused.accepted
    assert b"x" in last.piece and all(not p.refused for p in refused.positions[:-1])
    assert f'data-refused="{last.index}"' in refused.view()
    # the summary counts the whole text's tokens, not the positions walked before the refusal
    whole = len(real_trie(VOCAB).encoder.encode("12 de mayx de 1897"))
    assert refused.text_tokens == whole > len(refused.positions)
    assert f'data-positions="{whole}"' in refused.view() and f"{whole} tokens" in refused.view()
    unfinished = VocabMasks(VOCAB, grammar, "12 de ma")
    assert unfinished.refused is None and not unfinished.accepted and unfinished.positions[-1].allowed > 0


def state(**fields):
    return {"vocab": VOCAB, "kind": "regex", "constraint": PRESETS["fecha"]["constraint"], "text": "",
            **fields}


def error_kind(view) -> str | None:
    html = view._repr_html_()
    found = re.search(r'data-testid="lab-error" data-kind="([^"]+)"', html)
    return found.group(1) if found else None


def test_act_vocab_shows_the_view_and_a_panel_and_every_refusal_as_the_labs_error():
    view = act_vocab("masks", json.dumps(state()))
    assert isinstance(view, VocabMasks) and view.example and view.text == example_text(
        compile_constraint("regex", PRESETS["fecha"]["constraint"]))
    panel = act_vocab("panel", state(), 1, "")._repr_html_()
    assert f'data-allowed="{view.positions[0].allowed}"' in panel
    assert error_kind(act_vocab("masks", state(kind="none"))) == "settings.kind"
    assert error_kind(act_vocab("masks", state(vocab="gpt2"))) == "settings.vocab"
    assert error_kind(act_vocab("masks", state(vocab="minigpt"))) == "settings.vocab"
    assert error_kind(act_vocab("masks", state(text="1 " * (MAX_TEXT_TOKENS + 1)))) == "settings.text"
    assert error_kind(act_vocab("masks", state(constraint="(ab"))) not in (None, "settings.text")
    assert error_kind(act_vocab("panel", state(), 99)) == "run"
    assert error_kind(act_vocab("sideways", state())) == "run"


def test_the_view_speaks_english_on_the_english_page(date_masks):
    _grammar, masks = date_masks
    saved = get_language()
    set_language("en")
    try:
        html = masks.view() + masks.panel(3, "ma")
    finally:
        set_language(saved)
    text = re.sub(r"<style>.*?</style>|<[^>]+>", " ", html, flags=re.S)
    for word in ("permitidos", "posición", "máscara", "texto", "índice", "Buscar"):
        assert word not in text, word
    assert "allowed" in text and "canonical BPE" in text
