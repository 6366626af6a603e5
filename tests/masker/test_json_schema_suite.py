"""The masker against the JSON-Schema-Test-Suite, draft 2020-12 (the harness is
tests/masker/suite_support.py; bench/bench_json_schema_suite.py prints the same figures with
llguidance beside them), and the rule the suite tests most: a keyword constrains only the
instances of its own type, so a schema without ``type`` accepts every other type.

Skipped when ../shared/json-schema-test-suite is missing.
"""
from __future__ import annotations

import json

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from suite_support import SUITE, compact, measure, narrowed, orders, suite_groups

from masker import compile_json_schema
from masker.json_schema import InvalidSchema, UnsupportedKeyword

# Floors: what the masker reached in issue 27 (210 groups, 414 of 431 valid instances); a change
# that compiles fewer groups or accepts fewer valid instances fails here. Issue 27's targets are
# 230 groups and 95 % of valid instances.
MIN_COMPILED = 230
MIN_VALID_SHARE = 0.95

needs_suite = pytest.mark.skipif(not SUITE.is_dir(), reason="../shared/json-schema-test-suite missing")


@pytest.fixture(scope="module")
def figures():
    return measure()


@needs_suite
def test_no_invalid_instance_is_accepted(figures):
    bad = [(r.name, r.invalid_accepted) for r in figures.compiled if r.invalid_accepted]
    assert figures.invalid > 200 and bad == [], bad


@needs_suite
def test_every_refusal_names_its_keyword_or_the_schema_is_unsatisfiable(figures):
    groups = {r.name: group for r, (_, _, group) in zip(figures.results, suite_groups())}
    for result in figures.results:
        if result.refusal is None:
            continue
        kind, keyword, message = result.refusal
        group = groups[result.name]
        if kind == "UnsupportedKeyword":
            assert f'"{keyword}"' in json.dumps(group["schema"]), (result.name, message)
        else:  # refused as unsatisfiable: the suite agrees that nothing is valid
            assert kind == "InvalidSchema" and "no JSON value satisfies" in message, message
            assert not any(case["valid"] for case in group["tests"]), result.name


@needs_suite
def test_coverage_does_not_fall(figures):
    assert len(figures.compiled) >= MIN_COMPILED, len(figures.compiled)
    assert figures.valid_accepted >= MIN_VALID_SHARE * figures.valid, (
        figures.valid_accepted, figures.valid)


# ---- a schema without "type": every keyword applies to its own type only -------------------

KEYWORDS = st.one_of(
    st.fixed_dictionaries({"maxLength": st.integers(0, 3)}),
    st.fixed_dictionaries({"minLength": st.integers(0, 3)}),
    st.fixed_dictionaries({"minimum": st.integers(-3, 3)}),
    st.fixed_dictionaries({"maximum": st.integers(-3, 3)}),
    st.fixed_dictionaries({"maxItems": st.integers(0, 2)}),
    st.fixed_dictionaries({"minItems": st.integers(0, 2)}),
    st.fixed_dictionaries({"required": st.lists(st.sampled_from("ab"), min_size=1, max_size=2,
                                                unique=True)}),
    st.fixed_dictionaries({"properties": st.fixed_dictionaries(
        {"a": st.sampled_from([{"type": "integer"}, {"maxLength": 1}, False])})}),
    st.fixed_dictionaries({"not": st.fixed_dictionaries({"required": st.just(["a"])})}),
)
SCHEMAS = st.one_of(
    KEYWORDS,
    st.tuples(KEYWORDS, KEYWORDS).map(lambda p: {**p[0], **p[1]}),
    st.lists(KEYWORDS, min_size=2, max_size=3).map(lambda bs: {"oneOf": bs}),
    st.lists(KEYWORDS, min_size=2, max_size=3).map(lambda bs: {"anyOf": bs}),
)
# No floats: an integral float such as 1.0 is written as 1 here (docs/json-schema.md).
INSTANCES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text("ab\"é", max_size=4)),
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.sampled_from("abc"), inner, max_size=3)),
    max_leaves=6)


@settings(max_examples=150, deadline=None)
@given(SCHEMAS, st.lists(INSTANCES, min_size=1, max_size=6))
def test_typeless_schemas_agree_with_the_validator(schema, instances):
    """Random small schemas without ``type`` (single keywords, pairs, ``oneOf`` and ``anyOf``
    of them): each instance is accepted exactly when the ``jsonschema`` validator says it is
    valid. A refused ``oneOf`` must name ``oneOf``; a schema refused as unsatisfiable must have
    no valid instance."""
    validator = jsonschema.Draft202012Validator(schema)
    try:
        grammar = compile_json_schema(schema)
    except UnsupportedKeyword as error:
        assert error.keyword == "oneOf", (schema, error)
        return
    except InvalidSchema as error:  # refused as unsatisfiable: then nothing is valid
        assert "no JSON value satisfies" in str(error)
        assert not any(validator.is_valid(instance) for instance in instances), schema
        return
    for instance in instances:
        accepted = any(grammar.accepts(compact(v)) for v in orders(instance))  # any key order
        valid = validator.is_valid(instance)
        # (a difference over arrays keeps arrays of scalars only: narrower, never wider)
        assert accepted == valid or (valid and narrowed(instance)), (schema, compact(instance))


def test_a_keyword_constrains_only_its_own_type():
    grammar = compile_json_schema({"maxLength": 2})
    for text in ("100", "-1.5", "null", "true", "[1,\"abc\"]", '{"a":"abc"}', '"ab"', '""'):
        assert grammar.accepts(text), text
    assert not grammar.accepts('"abc"')
    # not required: every non-object has all the required names, so only objects pass
    negated = compile_json_schema({"not": {"required": ["a"]}})
    assert negated.accepts('{"b":1}') and not negated.accepts('{"a":1}')
    assert not negated.accepts("1") and not negated.accepts('"x"')
