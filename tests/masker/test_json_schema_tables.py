"""Compiled JSON Schemas walked token by token, and sampled with the mask.

Tables: every accepted text must be fed token by token with each token in
the mask before it is consumed, ending in an accepting state; every
rejected text must hit a token outside the mask or end non-accepting.
Texts are split by longest match over each vocabulary (the mask allows
every split, so any split is a fair test).
"""
from __future__ import annotations

import json
import random

import pytest
from test_json_schema_support import SCHEMAS, validator

from masker import compile_json_schema
from tests.masker.vocabs import BYTE_VOCAB, MIXED_VOCAB, trained_vocab

_TRAINED = trained_vocab()
VOCABS = [pytest.param(BYTE_VOCAB, id="bytes256"), pytest.param(MIXED_VOCAB, id="mixed"),
          pytest.param(_TRAINED, id="trained512", marks=pytest.mark.skipif(
              _TRAINED is None, reason="weights/merges.txt missing: no trained vocabulary"))]


def split_longest(data, vocab):
    by_bytes = {tok: i for i, tok in enumerate(vocab)}
    longest, ids, i = max(map(len, vocab)), [], 0
    while i < len(data):
        n = next(n for n in range(min(longest, len(data) - i), 0, -1) if data[i:i + n] in by_bytes)
        ids.append(by_bytes[data[i:i + n]])
        i += n
    return ids


def accepted(grammar, vocab, text):
    m = grammar.matcher(vocab)
    for tid in split_longest(text.encode("utf-8"), vocab):
        if not m.mask()[tid]:
            return False
        m.consume(tid)
    return m.is_accepting()


TABLES = {
    "string": ({"type": "string"},
               ['""', '"a"', '"\\""', '"\\\\"', '"\\/"', '"\\b\\f\\n\\r\\t"', '"\\u00e9"',
                '"\\u00E9"', '"\\ud83d\\ude00"', '"ñ«»—😀"'],
               ['"\\ud83d"', '"\\ude00x"', '"\\x41"', '"\\u12"', '"\n"', '"\t"', '"a', "a",
                '"\\ud83d\\u0041"']),
    "number": ({"type": "number"},
               ["0", "-0", "1.0", "1e5", "1E+5", "-1.5e-3", "10", "0.5"],
               ["01", "1.", ".5", "-", "+1", "1e", "--1", "0x1", "1.5.2"]),
    "integer_range": ({"type": "integer", "minimum": -40, "maximum": 1500},
                      ["-40", "-0", "0", "7", "99", "100", "1500", "-9"],
                      ["-41", "1501", "2000", "-100", "1.0", "007", "15000"]),
    "exclusive_range": ({"type": "integer", "exclusiveMinimum": 9, "exclusiveMaximum": 12},
                        ["10", "11"], ["9", "12", "-0", "0"]),
    "enum_non_ascii": ({"enum": ["señor", "«hola»", "—", "😀", 3, None]},
                       ['"señor"', '"«hola»"', '"—"', '"😀"', "3", "null"],
                       ['"senor"', '"se\\u00f1or"', '"«hola"', '3.0', '"3"', "nul"]),
    "const_object": ({"const": {"año": 1885, "título": "Miau"}},
                     ['{"año":1885,"título":"Miau"}'],
                     ['{"título":"Miau","año":1885}', '{"año":1885}']),
    "lesson_b": (SCHEMAS["lesson_b"], ['{"personaje":"Benina"}', '{"personaje":"Obdulia"}'],
                 ['{"personaje":"Ben"}', '{"personaje":"Benina","x":1}', '{}',
                  '{ "personaje":"Benina"}']),
    "tree": (SCHEMAS["tree"],
             ['{"name":"raíz"}', '{"name":"a","children":[]}',
              '{"name":"a","children":[{"name":"b","children":[{"name":"c"}]},{"name":"d"}]}'],
             ['{"children":[]}', '{"name":"a","children":[{}]}',
              '{"name":"a","children":[{"name":"b"},]}', '{"name":"123456789"}']),
    "expr": (SCHEMAS["expr"], ["7", '["+",1,["*",2,3]]'], ['["+",1]', '["-",1,2]', "10"]),
}


@pytest.mark.parametrize("vocab", VOCABS)
@pytest.mark.parametrize("name", sorted(TABLES))
def test_accept_reject_tables(name, vocab):
    schema, yes, no = TABLES[name]
    grammar = compile_json_schema(schema)
    check = validator(schema)
    for text in yes:
        assert check.is_valid(json.loads(text)), text  # the table itself is right
        assert accepted(grammar, vocab, text), text
    for text in no:
        assert not accepted(grammar, vocab, text), text


def test_token_spanning_two_symbols():
    """`{"` is one token in MIXED_VOCAB: it covers the brace and the key's quote."""
    vocab = MIXED_VOCAB
    m = compile_json_schema(SCHEMAS["lesson_b"]).matcher(vocab)
    both = vocab.index(b'{"')
    assert m.mask()[both] and m.mask()[vocab.index(b"{")]
    m.consume(both)
    m.consume_bytes(b'personaje":"Ben')
    assert m.mask()[vocab.index(b"ina")] and not m.mask()[vocab.index(b'"}')]
    m.consume(vocab.index(b"ina"))
    m.consume(vocab.index(b'"}'))
    assert m.is_accepting() and not m.can_continue()


def sample_with_mask(grammar, vocab, rng, max_steps=800):
    """Random tokens from the mask until the matcher may stop (or None after max_steps).

    Closing punctuation is favoured so that walks end in reasonable time."""
    m = grammar.matcher(vocab)
    weight = {i: (25 if tok in (b'"', b"]", b"}", b",") else 1) for i, tok in enumerate(vocab)}
    for _ in range(max_steps):
        if m.is_accepting() and (not m.can_continue() or rng.random() < 0.3):
            return m.prefix_bytes.decode("utf-8")
        ids = m.mask().nonzero()[0].tolist()
        m.consume(rng.choices(ids, weights=[weight[i] for i in ids])[0])
    return None


SAMPLED = ["lesson_b", "tree", "person", "numbers", "dates", "tuple", "pattern", "extra_keys",
           "free_object", "nullable", "all_of", "one_of", "expr", "unicode", "dependencies",
           "dependencies_draft4", "pattern_properties", "not_forms"]


@pytest.mark.parametrize("whitespace", ["compact", "flexible"])
@pytest.mark.parametrize("name", SAMPLED)
def test_mask_samples_validate(name, whitespace):
    schema = SCHEMAS[name]
    grammar = compile_json_schema(schema, whitespace=whitespace)
    check, rng, done = validator(schema), random.Random(name), 0
    for _ in range(12):
        text = sample_with_mask(grammar, _TRAINED or BYTE_VOCAB, rng)
        if text is None:
            continue
        done += 1
        errors = [e.message for e in check.iter_errors(json.loads(text))]
        assert errors == [], text
    assert done >= 6


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_mutated_samples_accepted_only_if_valid(name):
    """Soundness on near misses: one-character edits of valid texts are either rejected by
    the compiled grammar or parse as JSON and validate."""
    from masker.json_schema.translate import Translator
    from test_json_schema_support import IRSampler

    schema = SCHEMAS[name]
    grammar, check = compile_json_schema(schema), validator(schema)
    sampler = IRSampler(Translator(schema).translate(), seed=7)
    rng, edits = random.Random(name), '"\\{}[],:0123456789.-eE+ aé'
    for _ in range(60):
        text = sampler.sample(max_depth=3)
        i = rng.randrange(len(text) + 1)
        kind = rng.randrange(3)
        mutated = (text[:i] + rng.choice(edits) + text[i:] if kind == 0 else
                   text[:i] + text[i + 1:] if kind == 1 else
                   text[:i] + rng.choice(edits) + text[i + 1:])
        if grammar.accepts(mutated):
            assert check.is_valid(json.loads(mutated)), (text, mutated)
