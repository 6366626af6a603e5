"""Allowed-token sets of compiled JSON Schemas vs llguidance 1.9.1 (no forcing).

Random walks choose tokens both engines allow; at every prefix the two
allowed sets and the may-end bit are compared over the whole vocabulary
(256 bytes, and the trained 512-token vocabulary when weights/merges.txt
exists). Differences by design, each the narrower side being ours or
llguidance's, are the only ones tolerated:

1. raw U+007F inside strings: RFC 8259 allows it and so do we; llguidance
   excludes it (tokens containing 0x7F, ours only);
2. the escape `\\/`: RFC 8259 allows it and so do we; llguidance does not
   (ours only: `/` right after a backslash);
3. `-0` for bounded integers/numbers: we allow `-0` when 0 is in range
   (it is the value 0); llguidance does not (ours only, where the text
   then ends in `-` or `-0`);
4. formats (schemas in SUBSET): our date/date-time check month lengths and
   leap years and write `T`/`Z` upper-case only, so there we only check
   that our set is inside llguidance's;
5. escapes: we write enum/const strings only in their canonical form,
   keys of additionalProperties with raw characters only, and refuse lone
   surrogates; llguidance allows other escape forms there (theirs only,
   with a backslash in the token or in the last bytes of the prefix).
Everything else must agree exactly.
"""
from __future__ import annotations

import random
import re

import pytest
from test_json_schema_support import SCHEMAS

from masker import compile_json_schema
from tests.masker.oracle import Oracle, json_schema_lark
from tests.masker.vocabs import BYTE_VOCAB, trained_vocab

EXTRA = {
    "flat_types": {"type": "object", "properties": {
        "s": {"type": "string"}, "b": {"type": "boolean"}, "z": {"type": "null"},
        "n": {"type": "number"}}, "required": ["s", "b", "z", "n"],
        "additionalProperties": False},
    "enum_mixed": {"enum": [1, 2.5, -3, "sí", True, None, [1, 2], {"k": "v"}]},
    "int_range": {"type": "array", "items": {"type": "integer", "minimum": -120,
                                             "maximum": 4096}, "maxItems": 3},
    "str_len": {"type": "array", "items": {"type": "string", "minLength": 2, "maxLength": 4},
                "minItems": 1, "maxItems": 3},
    "nested": {"type": "object", "properties": {
        "autor": {"type": "object", "properties": {
            "nombre": {"type": "string", "maxLength": 10},
            "obras": {"type": "array", "items": {"type": "string", "maxLength": 8},
                      "maxItems": 2}},
            "required": ["nombre"], "additionalProperties": False},
        "año": {"type": "integer", "minimum": 1800, "maximum": 1920}},
        "required": ["autor", "año"], "additionalProperties": False},
    "all_optional": {"type": "object", "properties": {
        "a": {"type": "integer"}, "b": {"type": "boolean"}, "c": {"const": "x"}},
        "additionalProperties": False},
    "uuid_list": {"type": "array", "items": {"type": "string", "format": "uuid"},
                  "maxItems": 2},
    "datetime": {"type": "object", "properties": {
        "when": {"type": "string", "format": "date-time"}}, "required": ["when"],
        "additionalProperties": False},
    "bool_or_int": {"type": ["boolean", "integer"]},
    "list_of_objects": {"type": "array", "items": {"type": "object", "properties": {
        "id": {"type": "integer", "minimum": 1}, "tag": {"enum": ["a", "b"]}},
        "required": ["id"], "additionalProperties": False}, "maxItems": 3},
    "ref_chain": {"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"type": "string",
                                                              "maxLength": 3}},
                  "type": "object", "properties": {"x": {"$ref": "#/$defs/a"}},
                  "required": ["x"], "additionalProperties": False},
    "linked_list": {"$defs": {"l": {"anyOf": [{"type": "null"}, {
        "type": "object", "properties": {"v": {"type": "integer"}, "next": {"$ref": "#/$defs/l"}},
        "required": ["v", "next"], "additionalProperties": False}]}}, "$ref": "#/$defs/l"},
}
# "person" uses format email, whose regex is ours (llguidance has its own); the others use
# `not` or dependencies, which llguidance refuses. They are checked in test_json_schema*.py.
NOT_COMPARED = ("person", "not_forms", "dependencies", "dependencies_draft4")
ORACLE_SCHEMAS = {k: v for k, v in {**SCHEMAS, **EXTRA}.items() if k not in NOT_COMPARED}


SUBSET = {"dates", "datetime", "uuid_list"}


def _explained(prefix, token, ours_only, subset=False):
    if ours_only:
        return (b"\x7f" in token or (prefix.endswith(b"\\") and token.startswith(b"/"))
                or re.search(rb"-0?$", prefix + token) is not None)
    return subset or b"\\" in token or b"\\" in prefix[-6:]


def walk_compare(grammar, lark, vocab, *, n_walks=10, max_steps=40, seed=0, subset=False):
    """(states compared, unexplained mismatches, explained differences)."""
    rng, root = random.Random(seed), Oracle(lark, vocab)
    states, bad, explained = 0, [], 0
    for _ in range(n_walks):
        ours, theirs = grammar.matcher(vocab), root.copy()
        for _ in range(max_steps):
            a = set(ours.mask().nonzero()[0].tolist())
            b, may_end = theirs.allowed()
            states += 1
            diff = [(t, True) for t in a - b] + [(t, False) for t in b - a]
            wrong = [t for t, mine in diff if not _explained(ours.prefix_bytes, vocab[t], mine, subset)]
            if wrong or may_end != ours.is_accepting():
                bad.append((ours.prefix_bytes, [vocab[t] for t in wrong[:6]],
                            ours.is_accepting(), may_end))
                break
            explained += bool(diff)
            both = sorted(a & b)
            if not both or (ours.is_accepting() and rng.random() < 0.15):
                break
            token = rng.choice(both)
            ours.consume(token)
            theirs.consume(token)
    return states, bad, explained


_TRAINED = trained_vocab()
VOCABS = [pytest.param(BYTE_VOCAB, id="bytes256"),
          pytest.param(_TRAINED, id="trained512", marks=pytest.mark.skipif(
              _TRAINED is None, reason="weights/merges.txt missing: no trained vocabulary"))]


@pytest.mark.parametrize("vocab", VOCABS)
@pytest.mark.parametrize("whitespace", ["compact", "flexible"])
@pytest.mark.parametrize("name", sorted(ORACLE_SCHEMAS))
def test_allowed_sets_match_llguidance(name, whitespace, vocab):
    schema = ORACLE_SCHEMAS[name]
    grammar = compile_json_schema(schema, whitespace=whitespace)
    states, bad, _ = walk_compare(grammar, json_schema_lark(schema, whitespace), vocab,
                                  seed=len(name), subset=name in SUBSET)
    assert bad == []
    assert states >= 20


def test_lesson_schema_b_exact_on_trained_vocab_table():
    """oracles.md 2.6: at the empty prefix `{` and `{"` are allowed, nothing else."""
    vocab = _TRAINED or BYTE_VOCAB
    m = compile_json_schema(SCHEMAS["lesson_b"]).matcher(vocab)
    allowed = {vocab[i] for i in m.mask().nonzero()[0]}
    assert allowed <= {b"{", b'{"'} and b"{" in allowed
    assert set(Oracle(json_schema_lark(SCHEMAS["lesson_b"]), vocab).allowed()[0]) == set(
        m.mask().nonzero()[0].tolist())


def test_minus_zero_is_ours_only_as_the_lesson_says():
    """«La máscara» §7: our compiler lets ``-0`` through for ``"minimum": 0`` (it is the value 0)
    and llguidance 1.9.1 does not: after ``{"edad":`` the minus sign is in our allowed set and
    not in llguidance's (difference 3 of this file's docstring)."""
    schema = {"type": "object", "properties": {"edad": {"type": "integer", "minimum": 0}},
              "required": ["edad"], "additionalProperties": False}
    ours = compile_json_schema(schema).matcher(BYTE_VOCAB)
    theirs = Oracle(json_schema_lark(schema), BYTE_VOCAB)
    for b in b'{"edad":':
        ours.consume(b)
        theirs.consume(b)
    assert ours.mask()[ord("-")] and ord("-") not in theirs.allowed()[0]
    assert compile_json_schema(schema).accepts(b'{"edad":-0}')
