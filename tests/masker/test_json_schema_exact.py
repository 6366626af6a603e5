"""Boolean combinations compiled exactly (not, oneOf, if/then/else, two patterns, pattern with
lengths; py/masker/json_schema/boolean.py), contains/minContains and multipleOf, against the ``jsonschema`` validator on random small
schemas (hypothesis):

- every instance the grammar accepts is valid, and every valid instance is accepted, except the
  spellings narrowed on purpose (an integral float such as ``1.0``; docs/json-schema.md);
- every text the grammar produces (random walks over the 256 bytes) is a JSON value the
  validator accepts: a complement must not let another spelling of an excluded value through;
- a refusal names a keyword of the schema, and a schema refused as unsatisfiable has no valid
  instance.
"""
from __future__ import annotations

import json
import math
import random
import re

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from suite_support import compact, narrowed as _narrowed, orders

from masker import compile_json_schema
from masker.errors import LimitExceeded
from masker.json_schema import InvalidSchema, UnsupportedKeyword
from tests.masker.vocabs import BYTE_VOCAB

SCALARS = st.sampled_from([None, True, 0, 1, 2, -1, 1.5, 1.0, "a", "b", "ab", ""])
SIMPLE = st.one_of(
    st.fixed_dictionaries({"type": st.sampled_from(["string", "number", "integer", "null"])}),
    st.fixed_dictionaries({"pattern": st.sampled_from(["a", "^a", "b$", "^[ab]*$", "^.$"])}),
    st.fixed_dictionaries({"maxLength": st.integers(0, 2)}),
    st.fixed_dictionaries({"minLength": st.integers(1, 2)}),
    st.fixed_dictionaries({"minimum": st.sampled_from([0, 1, 1.5])}),
    st.fixed_dictionaries({"maximum": st.sampled_from([0, 2, 0.5])}),
    st.fixed_dictionaries({"enum": st.lists(SCALARS, min_size=1, max_size=3)}),
    st.fixed_dictionaries({"const": SCALARS}),
    st.fixed_dictionaries({"contains": st.sampled_from([{"type": "string"}, {"const": 1}, {"minimum": 1}]),
                           "minContains": st.integers(0, 2)}),
    st.fixed_dictionaries({"contains": st.sampled_from([{"type": "string"}, {"maximum": 0}])}),
    # steps a float holds exactly, so the validator's float arithmetic agrees with ours
    st.fixed_dictionaries({"multipleOf": st.sampled_from([2, 3, 0.5, 0.25])}),
    st.fixed_dictionaries({"items": st.sampled_from([{"type": "string"}, {"maximum": 1}])}),
    st.fixed_dictionaries({"maxItems": st.integers(0, 2)}),
    st.fixed_dictionaries({"minItems": st.integers(1, 2)}),
)


def _extend(inner):
    return st.one_of(
        st.fixed_dictionaries({"not": inner}),
        st.lists(inner, min_size=2, max_size=3).map(lambda xs: {"oneOf": xs}),
        st.lists(inner, min_size=2, max_size=2).map(lambda xs: {"anyOf": xs}),
        st.lists(inner, min_size=2, max_size=2).map(lambda xs: {"allOf": xs}),
        st.tuples(inner, inner, inner).map(lambda t: {"if": t[0], "then": t[1], "else": t[2]}),
        st.tuples(inner, inner).map(lambda t: {**t[0], **t[1]}),
    )


SCHEMAS = st.recursive(SIMPLE, _extend, max_leaves=4)
INSTANCES = st.lists(st.one_of(SCALARS, st.text("ab\"é", max_size=3), st.integers(-3, 3),
                               st.sampled_from([0.5, 0.75, -1.25, 2.5]),
                               st.lists(SCALARS, max_size=2),
                               st.dictionaries(st.sampled_from("ab"), SCALARS, max_size=2)),
                     min_size=1, max_size=8)


def _compile(schema, validator, instances):
    """The grammar, or None after checking the refusal (a keyword of the schema, or an
    unsatisfiable schema with no valid instance)."""
    try:
        return compile_json_schema(schema)
    except UnsupportedKeyword as error:
        assert f'"{error.keyword}"' in json.dumps(schema), (schema, str(error))
    except InvalidSchema as error:
        assert "no JSON value satisfies" in str(error), (schema, str(error))
        assert not any(validator.is_valid(v) for v in instances), schema
    except LimitExceeded:
        pass
    return None




@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SCHEMAS, INSTANCES)
def test_instances_accepted_exactly_when_valid(schema, instances):
    validator = jsonschema.Draft202012Validator(schema)
    grammar = _compile(schema, validator, instances)
    if grammar is None:
        return
    for value in instances:
        accepted = any(grammar.accepts(compact(v)) for v in orders(value))
        valid = validator.is_valid(value)
        if accepted:
            assert valid, (schema, compact(value))
        elif valid:
            assert _narrowed(value), (schema, compact(value))


def _walk(grammar, rng: random.Random, max_bytes: int = 14) -> str | None:
    """A random text of the grammar (None when the walk ran out of bytes). At most 14 bytes:
    a number then has at most 13 digits, which a float (what ``json.loads`` and the validator
    use) holds exactly, so 1234567.5 is never rounded into an integer."""
    m = grammar.matcher(BYTE_VOCAB)
    out = bytearray()
    while len(out) < max_bytes:
        allowed = [i for i, ok in enumerate(m.mask()) if ok]
        if m.is_accepting() and (not allowed or rng.random() < 0.3):
            return out.decode("utf-8")
        if not allowed:
            return None
        b = rng.choice(allowed)
        m.consume(b)
        out.append(b)
    return out.decode("utf-8") if m.is_accepting() else None


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SCHEMAS, st.integers(0, 2**32 - 1))
def test_every_text_the_grammar_writes_is_valid(schema, seed):
    validator = jsonschema.Draft202012Validator(schema)
    grammar = _compile(schema, validator, [])
    if grammar is None:
        return
    rng = random.Random(seed)
    for _ in range(12):
        text = _walk(grammar, rng)
        if text is not None and _finite(json.loads(text)):
            assert validator.is_valid(json.loads(text)), (schema, text)


def _integral_as_written(text: str) -> bool:
    """False when a number of ``text`` is an integer once read as a float but not as written
    (``4878360854823121.9`` reads 4878360854823122.0): the validator then checks the float, and
    "type": "integer" disagrees with the text's exact value, which is what the grammar writes."""
    from decimal import Decimal
    for literal in re.findall(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?", re.sub(r'"(?:[^"\\]|\\.)*"', '""', text)):
        exact, read = Decimal(literal), float(literal)
        if math.isfinite(read) and read.is_integer() != (exact == exact.to_integral_value()):
            return False
    return True


def _finite(value) -> bool:
    """False when a number overflows a float (``1e999``: Python reads inf, which the validator
    cannot check): such texts are valid JSON numbers, out of Python's reach."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(map(_finite, value))
    if isinstance(value, dict):
        return all(map(_finite, value.values()))
    return True


@pytest.mark.parametrize("schema, good, bad", [
    ({"type": "string", "not": {"pattern": "^a"}}, ['"b"', '""'], ['"ab"', "1"]),
    ({"not": {"pattern": "^a"}}, ['"b"'], ['"ab"', "1", "null"]),  # pattern holds for non-strings
    ({"type": "string", "pattern": "a", "maxLength": 3}, ['"ab"', '"bba"'], ['"bbb"', '"aaaa"']),
    ({"allOf": [{"type": "string", "pattern": "a"}, {"pattern": "b"}]}, ['"ab"', '"ba"'], ['"a"', '"b"']),
    ({"oneOf": [{"type": "string", "pattern": "a"}, {"type": "string", "pattern": "b"}]},
     ['"a"', '"b"'], ['"ab"', '"c"']),
    ({"type": "number", "not": {"enum": [1, 2.5]}}, ["0", "3", "2.4"], ["1", "2.5", "1.0", "2.50"]),
    ({"type": "string", "not": {"const": "a"}}, ['"b"', '""'], ['"a"', '"\\u0061"']),
    ({"if": {"type": "string", "pattern": "^x"}, "then": {"maxLength": 2}, "else": {"minLength": 2}},
     ['"x"', '"xy"', '"ab"', "1"], ['"xyz"', '"a"']),
    # arrays: a difference keeps only canonical arrays of scalars, so no other spelling of an
    # excluded element slips through
    ({"type": "array", "items": {"type": "number"}, "not": {"contains": {"const": 1}}},
     ["[2]", "[]", "[2,3.5]"], ["[1]", "[1.0]", "[2,1]", "[1e0]", "[2,10e-1]"]),
    ({"type": "array", "items": {"type": "string"}, "not": {"contains": {"const": "a"}}},
     ['["b"]', '[]'], ['["a"]', '["\\u0061"]', '["b","a"]']),
    ({"oneOf": [{"type": "array", "items": {"type": "string"}}, {"type": "array", "maxItems": 1}]},
     ['["a","b"]', "[1]"], ["[]", '["a"]', "[1,2]"]),
])
def test_examples(schema, good, bad):
    grammar = compile_json_schema(schema)
    for text in good:
        assert grammar.accepts(text), text
    for text in bad:
        assert not grammar.accepts(text), text


@pytest.mark.parametrize("schema", [
    {"type": "array", "items": {"type": "number"}, "not": {"contains": {"const": 1}}},
    {"type": "array", "not": {"contains": {"enum": ["a", 2.5]}}},
    {"oneOf": [{"type": "array", "items": {"type": "string"}}, {"type": "array", "maxItems": 1}]},
])
def test_texts_of_array_differences_are_valid(schema):
    validator = jsonschema.Draft202012Validator(schema)
    grammar = compile_json_schema(schema)
    rng = random.Random(7)
    texts = [t for t in (_walk(grammar, rng) for _ in range(300)) if t is not None]
    assert len(texts) > 100
    for text in texts:
        assert validator.is_valid(json.loads(text)), text


def test_a_difference_over_objects_without_a_positive_form_is_refused_by_name():
    # the objects with a key outside "a" whose value is not an integer: the grammar cannot say
    # "some extra key" when the object may hold any key
    with pytest.raises(UnsupportedKeyword) as info:
        compile_json_schema({"type": "object", "not": {
            "properties": {"a": {}}, "additionalProperties": {"type": "integer"}}})
    assert info.value.keyword == "not" and "over objects" in str(info.value)


def test_the_state_limit_is_named_with_the_size_reached():
    with pytest.raises(UnsupportedKeyword) as info:
        compile_json_schema({"type": "string", "pattern": "a", "maxLength": 5000})
    assert info.value.keyword == "pattern" and "it reached" in str(info.value)


@pytest.mark.parametrize("schema, good, bad", [
    ({"$ref": "#foo", "$defs": {"a": {"$anchor": "foo", "type": "integer"}}}, ["1"], ['"a"']),
    ({"$id": "http://example.com/root.json", "type": "object",
      "properties": {"a": {"$ref": "http://example.com/root.json#/$defs/b"}},
      "$defs": {"b": {"type": "string"}}}, ['{"a":"x"}'], ['{"a":1}']),
    # "#/$defs/inner" inside a sub-schema with its own $id means that resource's $defs, even
    # where the sub-schema is merged into the place of the $ref that reached it
    ({"$id": "http://example.com/a.json", "properties": {"foo": {
        "$id": "b.json", "$defs": {"inner": {"type": "string"}}, "$ref": "#/$defs/inner"}},
      "$ref": "b.json", "type": "string"}, ['"x"'], ["1"]),
])
def test_references_by_anchor_and_by_id(schema, good, bad):
    grammar = compile_json_schema(schema)
    for text in good:
        assert grammar.accepts(text), text
    for text in bad:
        assert not grammar.accepts(text), text


# Object keywords, each exact: properties, required, additionalProperties, several
# patternProperties (a listed name that a pattern matches meets both schemas), propertyNames,
# minProperties/maxProperties, and an allOf of two such parts (kept apart when a
# patternProperties meets other object keywords).
KEYS = ["a", "b", "ab", "ba", "c", ""]
VALUE_SCHEMAS = st.sampled_from([True, False, {"type": "string"}, {"type": "integer"},
                                 {"maxLength": 1}, {"minimum": 1}])
OBJECT_PARTS = st.fixed_dictionaries({}, optional={
    "properties": st.dictionaries(st.sampled_from(["a", "b", "ab"]), VALUE_SCHEMAS, max_size=2),
    "required": st.lists(st.sampled_from(["a", "b", "c"]), max_size=2, unique=True),
    "additionalProperties": VALUE_SCHEMAS,
    "patternProperties": st.dictionaries(st.sampled_from(["^a", "b$", "^.$", "^$"]),
                                         VALUE_SCHEMAS, min_size=1, max_size=2),
    "propertyNames": st.sampled_from([{"pattern": "^[ab]+$"}, {"maxLength": 1},
                                      {"enum": ["a", "ab", "c"]}, {"not": {"const": "b"}}]),
    "minProperties": st.integers(0, 3),
    "maxProperties": st.integers(0, 3),
})
# differences over objects (not, oneOf, if) are written as the ways an object breaks a schema
DIFFERENCE_PARTS = st.fixed_dictionaries({}, optional={
    "properties": st.dictionaries(st.sampled_from(["a", "b", "ab"]), VALUE_SCHEMAS, max_size=2),
    "required": st.lists(st.sampled_from(["a", "b", "c"]), max_size=2, unique=True),
    "minProperties": st.integers(0, 2),
    "maxProperties": st.integers(0, 2),
})
CLOSED = st.sampled_from([{}, {"properties": {"a": True, "b": True}, "additionalProperties": False}])
OBJECT_SCHEMAS = st.one_of(
    OBJECT_PARTS.map(lambda s: {"type": "object", **s}),
    st.lists(OBJECT_PARTS, min_size=2, max_size=2).map(lambda xs: {"type": "object", "allOf": xs}),
    st.tuples(CLOSED, DIFFERENCE_PARTS).map(lambda t: {"type": "object", **t[0], "not": t[1]}),
    st.tuples(CLOSED, st.lists(st.one_of(DIFFERENCE_PARTS, OBJECT_PARTS), min_size=2, max_size=3))
    .map(lambda t: {"type": "object", **t[0], "oneOf": t[1]}),
    st.tuples(DIFFERENCE_PARTS, DIFFERENCE_PARTS, DIFFERENCE_PARTS)
    .map(lambda t: {"type": "object", "if": t[0], "then": t[1], "else": t[2]}),
)
OBJECTS = st.lists(st.dictionaries(st.sampled_from(KEYS), SCALARS, max_size=4),
                   min_size=1, max_size=8)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(OBJECT_SCHEMAS, OBJECTS)
def test_object_keywords_accept_exactly_the_valid_objects(schema, instances):
    _accepted_exactly_when_valid(schema, instances)


def _accepted_exactly_when_valid(schema, instances):
    """Each instance (in any key order) is accepted exactly when the validator says it is
    valid, but for the documented narrowing; a refusal is checked by ``_compile``."""
    validator = jsonschema.Draft202012Validator(schema)
    grammar = _compile(schema, validator, instances)
    if grammar is None:
        return
    for value in instances:
        accepted = any(grammar.accepts(compact(v)) for v in orders(value))
        valid = validator.is_valid(value)
        assert accepted == valid or (valid and _narrowed(value)), (schema, compact(value))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(OBJECT_SCHEMAS, st.integers(0, 2**32 - 1))
def test_every_object_the_grammar_writes_is_valid(schema, seed):
    validator = jsonschema.Draft202012Validator(schema)
    grammar = _compile(schema, validator, [])
    if grammar is None:
        return
    rng = random.Random(seed)
    for _ in range(12):
        text = _walk(grammar, rng, max_bytes=24)
        if (text is not None and _finite(json.loads(text)) and not _repeats_a_key(text)
                and _integral_as_written(text)):
            assert validator.is_valid(json.loads(text)), (schema, text)


def _repeats_a_key(text: str) -> bool:
    """True for an object that writes a key twice: the grammar does not forbid that among the
    extra keys (a documented limit, docs/json-schema.md), and a parser keeps only one."""
    keys = []
    json.loads(text, object_pairs_hook=lambda pairs: keys.append(len(pairs) != len(dict(pairs))))
    return any(keys)


# An enum of objects and arrays beside object and array keywords: each value is checked whole
# (check.ValueCheck.accepts_value), kept exactly when the validator says it is valid.
ENUM_VALUES = st.lists(st.one_of(st.dictionaries(st.sampled_from(KEYS), SCALARS, max_size=3),
                                 st.lists(SCALARS, max_size=3), SCALARS), min_size=1, max_size=4)
ARRAY_PART = st.fixed_dictionaries({}, optional={
    "items": VALUE_SCHEMAS, "contains": VALUE_SCHEMAS, "uniqueItems": st.booleans(),
    "minItems": st.integers(0, 2)})


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ENUM_VALUES, st.one_of(OBJECT_PARTS, ARRAY_PART, DIFFERENCE_PARTS.map(lambda d: {"not": d})))
def test_enum_values_are_kept_exactly_when_valid(values, part):
    _accepted_exactly_when_valid({"enum": values, **part}, values)


# uniqueItems over a finite set of item values: an enum (possibly with repeats, 1 and 1.0,
# next to a type or a not), booleans, null; arrays drawn from those values and a few others.
UNIQUE_VALUES = st.sampled_from([0, 1, 1.0, 2, "a", "b", True, False, None, [1], {"k": 1}])
UNIQUE_ITEMS = st.one_of(
    st.builds(lambda vs: {"enum": vs}, st.lists(UNIQUE_VALUES, min_size=1, max_size=6)),
    st.builds(lambda v: {"const": v}, UNIQUE_VALUES),
    st.builds(lambda vs, t: {"enum": vs, "type": t}, st.lists(UNIQUE_VALUES, min_size=1,
                                                              max_size=6),
              st.sampled_from(["integer", "string", ["boolean", "null"]])),
    st.builds(lambda vs, v: {"enum": vs, "not": {"const": v}},
              st.lists(UNIQUE_VALUES, min_size=1, max_size=6), UNIQUE_VALUES),
    st.sampled_from([{"type": "boolean"}, {"type": "null"}, {"type": ["boolean", "null"]},
                     {"type": "boolean", "not": {"const": False}}, False]))
UNIQUE_SCHEMAS = st.builds(
    lambda items, lo, hi: {"type": "array", "items": items, "uniqueItems": True,
                           **({"minItems": lo} if lo else {}),
                           **({"maxItems": hi} if hi is not None else {})},
    UNIQUE_ITEMS, st.integers(0, 3), st.one_of(st.none(), st.integers(0, 4)))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(UNIQUE_SCHEMAS, st.integers(0, 2**32 - 1))
def test_unique_items_accepted_exactly_when_valid(schema, seed):
    """uniqueItems over a finite set of values: each array accepted exactly when valid (1 and
    1.0 are the same value; only the first spelling is written, the documented narrowing).
    The arrays mix the schema's own values with others, with and without repeats."""
    items = schema["items"]
    own = items.get("enum", [items["const"]] if "const" in items else []) if items else []
    pool = own + [True, False, None, "z", 2]
    rng = random.Random(seed)
    instances = [[rng.choice(pool) for _ in range(rng.randint(0, 5))] for _ in range(30)]
    instances += [[v, v] for v in pool] + [[v, w, v] for v in pool for w in own[:2]]
    _accepted_exactly_when_valid(schema, instances)


def test_unique_items_refusals_name_the_limit():
    with pytest.raises(UnsupportedKeyword, match="finite set of values"):
        compile_json_schema({"type": "array", "items": {"type": "string"}, "uniqueItems": True})
    with pytest.raises(UnsupportedKeyword, match="13700 orders of them"):
        compile_json_schema({"type": "array", "items": {"enum": list(range(7))},
                             "uniqueItems": True})
    grammar = compile_json_schema({"type": "array", "items": {"enum": list(range(7))},
                                   "uniqueItems": True, "maxItems": 3})
    assert grammar.accepts("[6,0,3]") and not grammar.accepts("[6,0,6]")


DEP_NAMES = "abcdef"
DEP_SCHEMAS = st.builds(
    lambda deps, props, closed: {"type": "object", "dependentRequired": deps,
                                 **({"properties": {n: {"type": "integer"} for n in props}}
                                    if props else {}),
                                 **({"additionalProperties": False} if closed else {})},
    st.dictionaries(st.sampled_from(DEP_NAMES), st.lists(st.sampled_from(DEP_NAMES), max_size=3,
                                                         unique=True), max_size=6),
    st.lists(st.sampled_from(DEP_NAMES), max_size=6, unique=True), st.booleans())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(DEP_SCHEMAS, st.integers(0, 2**32 - 1))
def test_dependencies_accepted_exactly_when_valid(schema, seed):
    """dependentRequired with up to 6 triggers (chains, cycles, independent ones): an object is
    accepted exactly when valid; past 16 combinations the keyword is refused by name."""
    rng = random.Random(seed)
    instances = [{n: rng.randint(0, 2) for n in rng.sample(DEP_NAMES, rng.randint(0, 4))}
                 for _ in range(30)]
    _accepted_exactly_when_valid(schema, instances)


def test_a_chain_of_dependencies_stays_small():
    chain = {"type": "object", "dependentRequired": {c: [chr(ord(c) + 1)] for c in "abcdefghij"}}
    grammar = compile_json_schema(chain)
    assert grammar.accepts('{"k":1}') and grammar.accepts('{"h":1,"i":1,"j":1,"k":1}')
    assert not grammar.accepts('{"h":1,"j":1,"k":1}')
    with pytest.raises(UnsupportedKeyword, match="more than 16 combinations"):
        compile_json_schema({"type": "object", "dependentRequired": {
            c: [c.upper()] for c in "abcde"}})
