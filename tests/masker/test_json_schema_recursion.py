"""Recursion through combinators (issue 12, part 1): a ``$ref`` reached through ``anyOf``,
``oneOf``, ``allOf``, ``items`` or ``properties``, with or without sibling keywords, becomes a
named rule; a cycle with no base case is refused clearly.

Each table is truth-checked with the ``jsonschema`` validator (every "yes" text is valid, every
"no" text is not, or is not JSON), walked token by token on the 256-byte and the trained
vocabularies, and the allowed sets are compared with llguidance 1.9.1 (no forcing) along random
walks.
"""
from __future__ import annotations

import json
import random

import pytest
from test_json_schema_oracle import walk_compare
from test_json_schema_support import validator
from test_json_schema_tables import VOCABS, accepted, sample_with_mask

from masker import compile_json_schema
from masker.json_schema import InvalidSchema
from masker.json_schema.translate import Translator
from tests.masker.oracle import json_schema_lark
from tests.masker.vocabs import BYTE_VOCAB, trained_vocab

OPTIONAL_SELF = {"$defs": {"t": {"type": "object", "properties": {
    "l": {"anyOf": [{"type": "null"}, {"$ref": "#/$defs/t"}]}}}}, "$ref": "#/$defs/t"}
LINKED_NODE = {"$defs": {"Node": {"type": "object", "properties": {
    "value": {"type": "integer"},
    "next": {"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}]}},
    "required": ["value", "next"]}}, "$ref": "#/$defs/Node"}
# Held-out shapes, written for these tests.
EXPRESSION = {"$defs": {"expr": {"oneOf": [
    {"type": "integer", "minimum": 0, "maximum": 99},
    {"type": "object", "properties": {"op": {"enum": ["+", "-", "*"]},
                                      "args": {"type": "array", "minItems": 2, "maxItems": 3,
                                               "items": {"$ref": "#/$defs/expr"}}},
     "required": ["op", "args"], "additionalProperties": False}]}},
    "$ref": "#/$defs/expr"}
COMMENTS = {"$defs": {"comment": {"type": "object", "properties": {
    "autor": {"type": "string", "maxLength": 6},
    "texto": {"type": "string"},
    "respuestas": {"type": "array", "items": {"allOf": [{"$ref": "#/$defs/comment"}],
                                              "description": "a reply"}}},
    "required": ["autor", "texto"], "additionalProperties": False}},
    "type": "object", "properties": {"hilo": {"$ref": "#/$defs/comment"}},
    "required": ["hilo"], "additionalProperties": False}
FAMILY = {"$defs": {"persona": {"type": "object", "properties": {
    "nombre": {"type": "string", "maxLength": 10},
    "madre": {"oneOf": [{"$ref": "#/$defs/persona"}, {"type": "null"}]},
    "hijos": {"type": "array", "items": {"$ref": "#/$defs/persona"}, "maxItems": 2}},
    "required": ["nombre"], "additionalProperties": False}},
    "$ref": "#/$defs/persona"}
# $ref with constraining siblings, reached through anyOf and items: one rule per (pointer,
# merged siblings), so "kids" must be non-empty at every level.
SIBLINGS = {"$defs": {"n": {"type": "object", "properties": {
    "k": {"type": "array", "items": {"anyOf": [{"type": "null"},
                                               {"$ref": "#/$defs/n", "required": ["k"]}]}}},
    "additionalProperties": False}}, "$ref": "#/$defs/n"}
# The same language written by hand without siblings next to the recursive $ref (llguidance
# refuses "circular references with sibling keys"): the oracle gets this form.
SIBLINGS_BY_HAND = {"$defs": {"n": {"type": "object", "properties": {
    "k": {"type": "array", "items": {"anyOf": [{"type": "null"}, {"$ref": "#/$defs/m"}]}}},
    "additionalProperties": False},
    "m": {"type": "object", "properties": {
        "k": {"type": "array", "items": {"anyOf": [{"type": "null"}, {"$ref": "#/$defs/m"}]}}},
        "required": ["k"], "additionalProperties": False}}, "$ref": "#/$defs/n"}
INTO_PROPERTIES = {"type": "object", "properties": {
    "a": {"type": "integer", "maximum": 9},
    "b": {"type": "array", "items": {"$ref": "#/properties/a"}, "maxItems": 2},
    "c": {"anyOf": [{"type": "null"}, {"$ref": "#"}]}},
    "additionalProperties": False}
INTO_ANYOF_ITEM = {"anyOf": [{"type": "boolean"},
                             {"type": "array", "items": {"$ref": "#/anyOf/1"}, "maxItems": 2}]}

TABLES = {
    "optional_self": (OPTIONAL_SELF, ['{"l":null}', '{"l":{"l":null}}', "{}",
                                      '{"l":{"l":{"l":{}}}}', '{"l":{},"x":1}'],
                      ['{"l":1}', '{"l":{"l":1}}', '{"l":[]}', "null"]),
    "linked_node": (LINKED_NODE, ['{"value":1,"next":{"value":2,"next":null}}',
                                  '{"value":1,"next":null}'],
                    ['{"value":1}', '{"value":1,"next":{"value":2}}', '{"next":null}',
                     '{"value":1.5,"next":null}']),
    "expression": (EXPRESSION, ["7", '{"op":"+","args":[1,2]}',
                                '{"op":"*","args":[{"op":"-","args":[3,4,5]},99]}'],
                   ['{"op":"+","args":[1]}', '{"op":"/","args":[1,2]}', "100",
                    '{"op":"+","args":[1,{"op":"+"}]}']),
    "comments": (COMMENTS, ['{"hilo":{"autor":"ana","texto":"hola"}}',
                            '{"hilo":{"autor":"ana","texto":"¿sí?","respuestas":[{"autor":"luis",'
                            '"texto":"no","respuestas":[]},{"autor":"eva","texto":"—"}]}}'],
                 ['{"hilo":{"autor":"ana"}}',
                  '{"hilo":{"autor":"ana","texto":"a","respuestas":[{"autor":"luis"}]}}',
                  '{"hilo":{"autor":"anastasia","texto":"a"}}']),
    "family": (FAMILY, ['{"nombre":"Benina"}', '{"nombre":"Ana","madre":null}',
                        '{"nombre":"Ana","madre":{"nombre":"Eva","madre":null},'
                        '"hijos":[{"nombre":"Luis"},{"nombre":"Sol","hijos":[]}]}'],
               ['{"madre":null}', '{"nombre":"Ana","madre":{}}',
                '{"nombre":"Ana","hijos":[{"nombre":"a"},{"nombre":"b"},{"nombre":"c"}]}']),
    "siblings": (SIBLINGS, ["{}", '{"k":[null]}', '{"k":[{"k":[]},null]}',
                            '{"k":[{"k":[{"k":[null]}]}]}'],
                 ['{"k":[{}]}', '{"k":[{"k":[{}]}]}', '{"k":[1]}']),
    "into_properties": (INTO_PROPERTIES, ['{"a":3,"b":[1,2]}', '{"c":{"a":9,"c":null}}', "{}",
                                          '{"c":{"c":{"b":[0]}}}'],
                        ['{"b":[10]}', '{"c":{"b":[1,2,3]}}', '{"c":{"a":10}}']),
    "into_anyof_item": (INTO_ANYOF_ITEM, ["true", "[]", "[[],[[]]]"],
                        ["[true]", "[[],[],[]]", "[[1]]"]),
}


def _valid(check, text):
    try:
        return check.is_valid(json.loads(text))
    except ValueError:
        return False


@pytest.mark.parametrize("vocab", [v for v in VOCABS if v.id != "mixed"])
@pytest.mark.parametrize("name", sorted(TABLES))
def test_recursive_tables(name, vocab):
    schema, yes, no = TABLES[name]
    grammar, check = compile_json_schema(schema), validator(schema)
    assert grammar.syntax == "gbnf"  # recursive: a context-free grammar, never unrolled
    for text in yes:
        assert _valid(check, text), text  # the table itself is right
        assert accepted(grammar, vocab, text), text
    for text in no:
        assert not _valid(check, text), text
        assert not accepted(grammar, vocab, text), text


def test_recursion_is_a_rule_not_an_unrolling():
    """The recursive target is translated once per (pointer, siblings): a handful of rules,
    whatever the depth of the texts."""
    for schema in (OPTIONAL_SELF, LINKED_NODE, FAMILY, COMMENTS):
        t = Translator(schema)
        t.translate()
        assert len(t.ref_names) == 1, t.ref_names
    t = Translator(SIBLINGS)
    t.translate()
    assert sorted(p for p, _ in t.ref_names) == ["#/$defs/n", "#/$defs/n"]


@pytest.mark.parametrize("whitespace", ["compact", "flexible"])
@pytest.mark.parametrize("name", sorted(TABLES))
def test_recursive_samples_validate(name, whitespace):
    schema = TABLES[name][0]
    grammar, check = compile_json_schema(schema, whitespace=whitespace), validator(schema)
    rng, done = random.Random(name), 0
    for _ in range(10):
        text = sample_with_mask(grammar, trained_vocab() or BYTE_VOCAB, rng)
        if text is None:
            continue
        done += 1
        assert [e.message for e in check.iter_errors(json.loads(text))] == [], text
    assert done >= 5


ORACLE_VOCABS = [v for v in VOCABS if v.id != "mixed"]


def _any_of(schema):
    """``schema`` with ``oneOf`` read as ``anyOf`` for llguidance, which refuses ``oneOf``; our
    ``oneOf`` branches are proven disjoint, so both mean the same here."""
    if isinstance(schema, dict):
        return {("anyOf" if k == "oneOf" else k): _any_of(v) for k, v in schema.items()}
    if isinstance(schema, list):
        return [_any_of(v) for v in schema]
    return schema


@pytest.mark.parametrize("vocab", ORACLE_VOCABS)
@pytest.mark.parametrize("name", sorted(TABLES))
def test_recursive_allowed_sets_match_llguidance(name, vocab):
    schema = TABLES[name][0]
    grammar = compile_json_schema(schema)
    theirs = _any_of(SIBLINGS_BY_HAND if schema is SIBLINGS else schema)
    states, bad, _ = walk_compare(grammar, json_schema_lark(theirs, "compact"), vocab,
                                  seed=len(name), n_walks=6)
    assert bad == []
    assert states >= 20


CYCLES = {
    "alias_to_itself": {"$defs": {"t": {"$ref": "#/$defs/t"}}, "$ref": "#/$defs/t"},
    "required_self": {"$defs": {"t": {"type": "object", "properties": {
        "a": {"$ref": "#/$defs/t"}}, "required": ["a"]}}, "$ref": "#/$defs/t"},
    "anyof_of_cycles": {"$defs": {"t": {"anyOf": [{"$ref": "#/$defs/t"}, {"$ref": "#/$defs/u"}]},
                                  "u": {"allOf": [{"$ref": "#/$defs/t"}]}},
                        "$ref": "#/$defs/t"},
    "array_min_one_self": {"$defs": {"t": {"type": "array", "minItems": 1,
                                           "items": {"$ref": "#/$defs/t"}}},
                           "$ref": "#/$defs/t"},
}


@pytest.mark.parametrize("name", sorted(CYCLES))
def test_pure_cycle_is_a_clear_error(name):
    with pytest.raises(InvalidSchema, match="cycle with no base case") as info:
        compile_json_schema(CYCLES[name])
    assert info.value.path.startswith("#/$defs/")


def test_many_extensions_of_one_base_side_by_side_compile():
    """100 schemas extending one base through allOf (the Debug Adapter Protocol's shape): one
    rule per (pointer, siblings), side by side, none refused."""
    base = {"type": "object", "properties": {"seq": {"type": "integer"}}, "required": ["seq"]}
    schema = {"$defs": {"base": base}, "type": "object", "properties": {
        f"m{i}": {"allOf": [{"$ref": "#/$defs/base"}, {"properties": {"kind": {"const": i}}}]}
        for i in range(100)}, "additionalProperties": False}
    grammar = compile_json_schema(schema)
    assert grammar.accepts('{"m7":{"seq":1,"kind":7}}')
    assert not grammar.accepts('{"m7":{"seq":1,"kind":8}}')


def test_nested_variants_are_capped(monkeypatch):
    """A pointer met inside itself with new siblings at every level is refused by name once
    MAX_REF_VARIANTS variants are nested (here the cap is lowered to 1 to reach it)."""
    from masker.json_schema import UnsupportedKeyword, translate
    monkeypatch.setattr(translate, "MAX_REF_VARIANTS", 1)
    with pytest.raises(UnsupportedKeyword, match="met inside itself") as info:
        compile_json_schema(SIBLINGS)
    assert info.value.keyword == "$ref"


def test_properties_keep_the_written_order_around_a_ref():
    """allOf [{properties: name}, {$ref: program}]: the keys come in the order written (name
    first), as when the $ref was merged in place (MaskBench Github_hard o32922)."""
    program = {"type": "object", "properties": {"cmd": {"type": "string"}},
               "required": ["cmd"]}
    schema = {"$defs": {"program": program}, "type": "array", "items": {"allOf": [
        {"properties": {"name": {"type": "string"}}}, {"$ref": "#/$defs/program"}]}}
    grammar = compile_json_schema(schema)
    assert grammar.accepts('[{"name":"a","cmd":"b"},{"cmd":"c"}]')
    ref_last = {"$defs": {"program": program}, "$ref": "#/$defs/program",
                "properties": {"name": {"type": "string"}}}
    assert compile_json_schema(ref_last).accepts('{"cmd":"b","name":"a"}')


ANY_JSON = {"$defs": {"v": {"anyOf": [
    {"type": "string"}, {"type": "number"}, {"type": "boolean"}, {"type": "null"},
    {"type": "array", "items": {"$ref": "#/$defs/v"}},
    {"type": "object", "additionalProperties": {"$ref": "#/$defs/v"}}]}}, "$ref": "#/$defs/v"}
# the recursive schemas above that have strings or numbers (the others have no lexeme)
WITH_LEXEMES = ["any_json", "comments", "expression", "family", "into_properties",
                "linked_node", "optional_self"]


@pytest.mark.parametrize("vocab", [BYTE_VOCAB, trained_vocab()], ids=["bytes", "trained"])
@pytest.mark.parametrize("name", WITH_LEXEMES)
def test_lexemes_give_the_masks_of_the_plain_lowering(name, vocab):
    """Many random walks through one grammar (so the tokens cached per lexeme state serve other
    contexts: deeper levels, later items): at every prefix the mask equals the brute force's
    and the mask of the same schema lowered without lexemes."""
    if vocab is None:
        pytest.skip("no trained vocabulary")
    schema = ANY_JSON if name == "any_json" else TABLES[name][0]
    fast, plain = compile_json_schema(schema), compile_json_schema(schema, lexemes=False)
    assert fast.automaton.lexemes and not plain.automaton.lexemes
    rng, compared = random.Random(len(name)), 0
    for _ in range(30):
        a, b = fast.matcher(vocab), plain.matcher(vocab)
        for _ in range(40):
            mask = a.mask()
            assert (mask == b.mask()).all() and (mask == a.brute_force_mask()).all(), a.prefix_bytes
            assert a.is_accepting() == b.is_accepting()
            compared += 1
            allowed = mask.nonzero()[0].tolist()
            if not allowed or (a.is_accepting() and rng.random() < 0.1):
                break
            token = rng.choice(allowed)
            a.consume(token)
            b.consume(token)
    assert compared >= 50
