"""«Niveles de garantía» in CPython: the checkers against independent references (the
``jsonschema`` library, ``json``, the compiled grammars), the retry arithmetic against its
inequality and brute force, the hand-written machine against the compiled mask, and the views on
extreme numbers."""

import json
import math
import random

import jsonschema
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lesson.batch import sample_batch
from lesson.enumeration import enumerate_paths
from lesson.niveles.handmask import (ByteTrace, FsmAgreement, compare_masks, enum_object_machine,
                                     envelope_bound, hand_mask, run_bytes)
from lesson.niveles.levels import (FEW_SHOT_PROMPT, JSON_MODE_GBNF, NAMES, PARENS_GBNF, PROMPT,
                                   SCHEMA, LevelResult, LevelsTable, RetryTable, balanced_group,
                                   matches_parens, matches_schema, measure_level, p_first_byte,
                                   parses, retry_arithmetic, with_retries)
from lesson.niveles.figures import FIELDS, FSM_PROMPT, FSM_SCHEMA
from masker import MaskerError, compile_cfg, compile_choice, compile_json_schema

# ---------------------------------------------------------------- checkers

SCHEMA_TEXTS = ['{"nombre":"Benina"}', '{"nombre": "Juliana"}', '{"nombre":"Rosalía"}', '{}',
                '{"nombre":"Benina","edad":3}', '["Benina"]', '"Benina"', '5', 'Benina',
                '{"nombre":"Benina"', '{"Nombre":"Benina"}', '{"nombre":null}', '']


def jsonschema_says(text: str) -> bool:
    try:
        value = json.loads(text)
    except ValueError:
        return False
    return jsonschema.Draft202012Validator(SCHEMA).is_valid(value)


@pytest.mark.parametrize("text", SCHEMA_TEXTS)
def test_matches_schema_agrees_with_the_jsonschema_library(text):
    assert matches_schema(text) == jsonschema_says(text)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.sampled_from(NAMES + ["", "x"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["nombre", "nota", "a"]),
                                                               inner, max_size=3),
    max_leaves=6)


@settings(max_examples=300, deadline=None)
@given(json_values, st.booleans())
def test_matches_schema_agrees_with_jsonschema_on_random_values(value, compact):
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":") if compact else None)
    assert matches_schema(text) == jsonschema_says(text)
    assert parses(text)


@pytest.mark.parametrize("text, expected", [
    ("5", True), (" {}", True), ("{", False), ("Benina", False), ('"a"', True), ("", False),
    ("{}x", False), ("NaN", True)])  # Python's json reads NaN: parses() is json.loads, no stricter
def test_parses_is_json_loads(text, expected):
    assert parses(text) is expected


PARENS = compile_cfg(PARENS_GBNF)


def parens_text(note: str, name: str = "Benina") -> str:
    return json.dumps({"nombre": name, "nota": note}, ensure_ascii=False, separators=(",", ":"))


@pytest.mark.parametrize("note, expected", [
    ("(a)", True), ("(a b c)", True), ("(a b c d)", False), ("((a) b)", True), ("(((ñu)))", True),
    ("(a", False), ("a)", False), ("()", False), ("(a  b)", False), ("(A)", False),
    ("(abcdefghijkl)", True), ("(abcdefghijklm)", False), ("(a)(b)", False), ("(a (b (c d e) f))", True)])
def test_balanced_group_examples_and_the_grammar_agree(note, expected):
    assert balanced_group(note) is expected
    assert matches_parens(parens_text(note)) is expected
    assert PARENS.accepts(parens_text(note)) is expected


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="() abñ", max_size=14))
def test_balanced_group_agrees_with_the_compiled_grammar(note):
    assert balanced_group(note) == PARENS.accepts(parens_text(note))


def test_matches_parens_needs_a_name_of_the_list_and_compact_json():
    assert not matches_parens(parens_text("(a)", "Rosalía"))
    assert not matches_parens('{"nombre": "Benina", "nota": "(a)"}')
    assert not matches_parens('{"nota":"(a)","nombre":"Benina"}')


def random_walk(grammar, vocab, rng, max_bytes=300):
    """A text of the grammar by uniform random tokens among the allowed ones (None if too long)."""
    m = grammar.matcher(vocab)
    while not m.is_finished():
        if m.is_accepting() and rng.random() < 0.3:
            break
        allowed = m.allowed_token_ids()
        m.consume(rng.choice(allowed))
        if len(m.prefix_bytes) > max_bytes:
            return None
    return m.prefix_bytes.decode("utf-8")


def test_every_text_of_the_json_mode_grammar_parses_as_an_object():
    grammar = compile_cfg(JSON_MODE_GBNF)
    vocab = [bytes([b]) for b in range(256)]
    rng = random.Random(0)
    texts = [t for t in (random_walk(grammar, vocab, rng) for _ in range(150)) if t is not None]
    assert len(texts) > 100
    for text in texts:
        assert isinstance(json.loads(text), dict), text


def test_json_mode_grammar_refuses_what_json_refuses():
    grammar = compile_cfg(JSON_MODE_GBNF)
    for text in ['{"a":01}', '{"a":1,}', "{'a':1}", '{"a"}', '[1]', '{"a":"x\ny"}']:
        assert not grammar.accepts(text), text
    for text in ['{}', '{"a":-0}', '{"":[1,{"b":null}]}', '{"a":true,"b":false,"c":"12 chars ok!"}']:
        assert grammar.accepts(text), text


# ---------------------------------------------------------------- retries

@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=8), st.integers(1, 8))
def test_retries_per_question_never_beat_the_naive_rate(ps, k):
    row = retry_arithmetic(ps, [k])[0]
    assert row["per_question"] >= row["naive"] - 1e-12
    brute = sum(math.prod(1 - p for _ in range(k)) for p in ps) / len(ps)
    assert row["per_question"] == pytest.approx(brute, abs=1e-12)


def test_retry_arithmetic_one_try_and_errors():
    rows = retry_arithmetic([0.9, 0.1, 0.0])
    assert rows[0]["per_question"] == pytest.approx(rows[0]["naive"])
    assert [r["k"] for r in rows] == [1, 2, 3, 4, 5]
    assert rows[-1]["per_question"] > 1 / 3  # the impossible question never gets fixed
    with pytest.raises(ValueError, match="at least one"):
        retry_arithmetic([])
    with pytest.raises(ValueError, match=r"ps\[1\] = 1.5"):
        retry_arithmetic([0.5, 1.5])


def test_with_retries_against_a_plain_count():
    good, bad = '{"nombre":"Benina"}', "prosa"
    texts = [bad, good, bad, bad, bad, bad] + [bad] * 3
    tries = LevelResult(0, "x", len(texts), 1, 1, len(texts) * 10, 0.9, texts)
    r = with_retries(tries, k=3)
    assert (r.n, r.matched, r.parsed) == (3, 1, 1)
    assert r.positions == (2 + 3 + 3) * 10  # the first group stops at its second try
    assert r.texts[0] == good
    with pytest.raises(ValueError, match="k must be"):
        with_retries(tries, k=0)
    with pytest.raises(ValueError, match="no group"):
        with_retries(tries, k=10)


def test_p_first_byte_equals_the_exact_enumeration(model, tok):
    for prompt in (PROMPT, FEW_SHOT_PROMPT):
        exact = enumerate_paths(model, tok, prompt, compile_choice(["{"])).p_grammar
        assert p_first_byte(model, tok, prompt) == pytest.approx(exact, rel=1e-9)


# ---------------------------------------------------------------- levels measured

def test_schema_and_grammar_levels_always_meet_their_format(model, tok):
    r3 = measure_level(model, tok, 3, "esquema", PROMPT, compile_json_schema(SCHEMA), n=30, seed=3)
    assert r3.parse_rate == r3.schema_rate == 1
    assert all(jsonschema_says(t) for t in r3.texts)
    r4 = measure_level(model, tok, 4, "gramática", PROMPT, PARENS, n=20, seed=3, check=matches_parens)
    assert r4.parse_rate == r4.schema_rate == 1
    assert r4.positions == r4.calls_per_valid * r4.n


def test_json_mode_level_parses_and_misses_the_schema(model, tok):
    r2 = measure_level(model, tok, 2, "modo JSON", PROMPT, compile_cfg(JSON_MODE_GBNF), n=30,
                       seed=0, max_tokens=120, stop_at_accept=True)
    assert r2.parse_rate == 1
    assert all(isinstance(json.loads(t), dict) for t in r2.texts)
    assert r2.schema_rate == sum(map(jsonschema_says, r2.texts)) / r2.n


def test_prompt_level_counts_what_json_loads_reads(model, tok):
    r0 = measure_level(model, tok, 0, "pedirlo", PROMPT, n=50, seed=0, max_tokens=8)
    assert r0.parsed == sum(map(parses, r0.texts))
    assert r0.matched == sum(map(jsonschema_says, r0.texts))
    assert r0.positions == 50 * 8


# ---------------------------------------------------------------- the hand-written machine

def test_hand_machine_agrees_with_the_compiled_schema_on_sampled_answers(model, tok):
    grammar = compile_json_schema(FSM_SCHEMA)
    gens = sample_batch(model, tok, FSM_PROMPT, grammar, n=8, seed=5)
    start, step = enum_object_machine(FIELDS)
    agreement = compare_masks(grammar, step, start, [g.token_ids for g in gens], tok.vocab)
    assert agreement.mismatches == 0 and agreement.differing_tokens == 0
    assert agreement.positions == sum(len(g.token_ids) for g in gens)
    # a deliberately wrong hand mask (the first token always allowed) is caught at every position
    def wrong(state, vocab):
        mask = hand_mask(step, state, vocab)
        mask[0] = True
        return mask
    wrong_agreement = compare_masks(grammar, step, start, [g.token_ids for g in gens], tok.vocab, wrong)
    assert wrong_agreement.mismatches == agreement.positions


field_names = st.text(alphabet="abñ", min_size=1, max_size=3)
enum_fields = st.dictionaries(field_names, st.lists(st.text(alphabet="aeé\"", max_size=3), min_size=1,
                                                    max_size=4, unique=True), min_size=1, max_size=3)
SMALL_VOCAB = [bytes([b]) for b in range(256)] + [b'":"', b'","', b'"}', b"ab", b'a"', b'{"', b"\xc3\xa9"]


@settings(max_examples=60, deadline=None)
@given(enum_fields, st.integers(0, 10**6))
def test_hand_mask_equals_the_compiled_mask_on_random_enum_objects(fields, seed):
    schema = {"type": "object", "properties": {k: {"enum": v} for k, v in fields.items()},
              "required": list(fields), "additionalProperties": False}
    grammar = compile_json_schema(schema)
    start, step = enum_object_machine(fields)
    rng = random.Random(seed)
    m, state = grammar.matcher(SMALL_VOCAB), start
    while True:
        compiled = m.mask()
        assert (hand_mask(step, state, SMALL_VOCAB) == compiled).all(), m.prefix_bytes
        allowed = np.flatnonzero(compiled)
        if not len(allowed):
            assert m.is_accepting()
            break
        t = int(rng.choice(list(allowed)))
        m.consume(t)
        state = run_bytes(step, state, SMALL_VOCAB[t])[-1]


def test_tokens_cross_several_phases_in_one_step():
    start, step = enum_object_machine(FIELDS)
    states = run_bytes(step, ("key", 0, b'"verbo'), b'":"')
    assert [s[0] for s in states] == [":", "value", "value"]
    assert run_bytes(step, start, b"{x")[-1] is None
    html = ByteTrace(step, start, b"{x")._repr_html_()
    assert "rechazado" in html and "El token «{x», byte a byte" in html
    # bytes that are no token of the vocabulary: the caller's caption, escaped, not «El token»
    html = ByteTrace(step, ("key", 0, b'"verbo'), b'":"', caption='Los bytes <":">, byte a byte')._repr_html_()
    assert "<caption>Los bytes &lt;&quot;:&quot;&gt;, byte a byte</caption>" in html and "El token" not in html


def test_compare_masks_names_the_position_of_a_forbidden_token(tok):
    grammar = compile_json_schema(FSM_SCHEMA)
    start, step = enum_object_machine(FIELDS)
    with pytest.raises(ValueError, match="answer 0, position 1"):
        compare_masks(grammar, step, start, [[tok.vocab.index(b"{"), tok.vocab.index(b"x")]], tok.vocab)


def test_envelope_bound_is_above_the_minimal_dfa():
    for fields in (FIELDS, {"a": ["x"]}, {"verbo": ["amar", "amor"], "b": ["1", "22"]}):
        schema = {"type": "object", "properties": {k: {"enum": v} for k, v in fields.items()},
                  "required": list(fields), "additionalProperties": False}
        assert compile_json_schema(schema).automaton.n_states <= envelope_bound(fields)
    assert envelope_bound({"a": ["x"]}) == len('{"a":"x"}') + 1
    with pytest.raises(ValueError, match="no values"):
        enum_object_machine({"a": []})
    with pytest.raises(ValueError, match="at least one key"):
        envelope_bound({})


# ---------------------------------------------------------------- views on extreme numbers

def test_levels_table_survives_extreme_numbers():
    rows = [LevelResult(0, "nada", 200, 0, 0, 2400, 0.5),
            LevelResult(1, "enorme", 10**9, 10**9, 1, 10**15, 1e-300),
            LevelResult(3, "todo", 1, 1, 1, 1, 0.0),
            LevelResult(4, "vacío", 0, 0, 0, 0, 0.0)]
    html = LevelsTable(rows)._repr_html_()
    assert html.count("<tr data-level=") == 4
    assert 'data-level="0" data-n="200" data-parse-rate="0.0" data-schema-rate="0.0"' in html
    assert "∞" not in html and "sin medir: 0 válidas de 200" in html  # not infinite: not measured
    assert rows[1]._repr_html_()


def test_retry_table_survives_zero_one_and_tiny_rates():
    html = RetryTable([("a?\n", ["x"], 0.0), ("b?\n", ["y z"], 1.0), ("c?\n", ["<"], 1e-300)])._repr_html_()
    assert html.count("data-k=") == 5 and "y␣z" in html and "&lt;" in html
    assert FsmAgreement(0, 0, 0, 0, 0)._repr_html_()


# ---------------------------------------------------------------- level 0's early stop

from lesson import sample_until_invalid  # noqa: E402
from lesson.niveles.levels import json_text_grammar, measure_prompt  # noqa: E402


def viable(prefix: bytes) -> bool:
    """Some continuation of ``prefix`` is in the level-0 grammar (any text json.loads reads)."""
    try:
        json_text_grammar().matcher([]).consume_bytes(prefix)
    except MaskerError:
        return False
    return True


@settings(max_examples=200, deadline=None)
@given(json_values, st.sampled_from([None, 1, 2]), st.sampled_from(["", " ", "\n", "\t "]))
def test_the_level_0_grammar_never_stops_a_prefix_of_json(value, indent, pad):
    text = (pad + json.dumps(value, ensure_ascii=False, indent=indent) + pad).encode()
    for cut in range(len(text) + 1):
        assert viable(text[:cut]), text[:cut]
    matcher = json_text_grammar().matcher([])
    matcher.consume_bytes(text)
    assert matcher.is_accepting()  # and the whole text is complete


@pytest.mark.parametrize("text", ["NaN", "-Infinity", ' [1.5e-3, "\\u00e9\\n"] ', "0"])
def test_the_level_0_grammar_accepts_what_json_loads_reads(text):
    json.loads(text)
    matcher = json_text_grammar().matcher([])
    matcher.consume_bytes(text.encode())
    assert matcher.is_accepting()


@pytest.mark.parametrize("prefix", [b"Benina", b"{a", b'{"a" 1', b"5 de", b"[1,,", b'"x"y', b"tru e", b"01"])
def test_the_level_0_grammar_stops_what_no_continuation_can_save(prefix):
    assert not viable(prefix)
    for tail in (b"", b"}", b'"}', b"]", b" "):
        assert not parses((prefix + tail).decode())


def test_level_0_stops_only_hopeless_answers(model, tok):
    run = sample_until_invalid(model, tok, PROMPT, json_text_grammar(), n=80, seed=1, max_tokens=6)
    for text, count in zip(run.texts, run.tokens):
        assert 1 <= count <= 6
        assert count == 6 or not viable(text), text
    r = measure_prompt(model, tok, PROMPT, n=80, seed=1, max_tokens=6)
    assert r.positions == sum(run.tokens)
    assert r.texts == [t.decode("utf-8", errors="replace") for t in run.texts]
    assert r.parsed == sum(map(parses, r.texts))
    with pytest.raises(ValueError, match="at least 1"):
        measure_prompt(model, tok, PROMPT, n=0)
    with pytest.raises(ValueError, match="context"):
        measure_prompt(model, tok, PROMPT, n=2, max_tokens=1000)


def test_prefix_sharing_and_minimisation_split_the_bound():
    """§8: bound → prefix_shared_bound (a trie per field) → the minimal DFA. The trie count is
    recounted from the hand-written machine, which shares prefixes and also sends every complete
    value to one state: its reachable states (breadth-first over all bytes) are the trie's minus
    one per value plus one per field. The examples of the prose are merged states of the DFA."""
    from collections import deque
    from lesson.niveles.handmask import prefix_shared_bound
    for fields in (FIELDS, {"a": ["x"]}, {"verbo": ["amar", "amor"], "b": ["1", "22"]}):
        start, step = enum_object_machine(fields)
        seen, queue = {start}, deque([start])
        while queue:
            state = queue.popleft()
            for b in range(256):
                nxt = step(state, b)
                if nxt is not None and nxt not in seen:
                    seen.add(nxt)
                    queue.append(nxt)
        n_values = sum(len(v) for v in fields.values())
        assert prefix_shared_bound(fields) == len(seen) + n_values - len(fields)
        schema = {"type": "object", "properties": {k: {"enum": v} for k, v in fields.items()},
                  "required": list(fields), "additionalProperties": False}
        assert compile_json_schema(schema).automaton.n_states <= prefix_shared_bound(fields) <= envelope_bound(fields)
    # the page: prefixes save fewer states than minimisation does beyond them
    dfa = compile_json_schema(FSM_SCHEMA).automaton.n_states
    assert envelope_bound(FIELDS) - prefix_shared_bound(FIELDS) < prefix_shared_bound(FIELDS) - dfa
    # the prose's examples of states with the same future, one state in the compiled DFA
    vocab = [bytes([b]) for b in range(256)]
    grammar = compile_json_schema(FSM_SCHEMA)

    def state_after(text: str):
        m = grammar.matcher(vocab)
        for b in text.encode():
            m.consume(b)
        return m.state
    assert state_after('{"verbo":"am') == state_after('{"verbo":"cant')
    assert state_after('{"verbo":"amar"') == state_after('{"verbo":"comer"')
    with pytest.raises(ValueError, match="at least one key"):
        prefix_shared_bound({})


def test_the_hand_machine_merges_the_value_endings():
    """§8: the hand machine's reachable states (breadth-first) are the prefix-shared count minus
    one per value plus one per field: it merges each field's value endings into one state."""
    from lesson.niveles.handmask import prefix_shared_bound, reachable_states
    n_values = sum(len(v) for v in FIELDS.values())
    assert reachable_states(*enum_object_machine(FIELDS)) == prefix_shared_bound(FIELDS) - n_values + len(FIELDS)
    assert compile_json_schema(FSM_SCHEMA).automaton.n_states < reachable_states(*enum_object_machine(FIELDS))
