"""JSON Schema -> regex/GBNF text, checked with Python `re` and `jsonschema`.

These tests need no automaton: the emitted regex is matched with `re`
(fullmatch), and strings sampled from the intermediate rules are validated
with the `jsonschema` library (an independent implementation of the spec).
"""
from __future__ import annotations

import ipaddress
import json
import re
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_json_schema_support import SCHEMAS, IRSampler, validator

from masker import compile_json_schema
from masker.json_schema import InvalidSchema, UnsupportedKeyword, schema_to_source
from masker.json_schema.translate import Translator

WS = ["compact", "flexible"]


def regex_of(schema, whitespace="compact"):
    kind, source, _ = schema_to_source(schema, whitespace=whitespace)
    assert kind == "regex"
    return re.compile(source)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
@pytest.mark.parametrize("whitespace", WS)
def test_samples_are_valid_instances(name, whitespace):
    """Strings drawn from the rules parse as JSON, validate, and match the regex."""
    schema = SCHEMAS[name]
    kind, source, _ = schema_to_source(schema, whitespace=whitespace)
    rx = re.compile(source) if kind == "regex" else None
    check = validator(schema)
    sampler = IRSampler(Translator(schema, whitespace).translate(), seed=hash(name) % 1000)
    for _ in range(120):
        text = sampler.sample()
        errors = [e.message for e in check.iter_errors(json.loads(text))]
        assert not errors, (text, errors)
        if rx is not None:
            assert rx.fullmatch(text), text
        if whitespace == "compact":
            outside_strings = re.sub(r'"(?:[^"\\]|\\.)*"', '""', text)
            assert not re.search(r"[ \t\n\r]", outside_strings), text


def test_recursive_schemas_become_gbnf_rules():
    kind, source, _ = schema_to_source(SCHEMAS["tree"])
    assert kind == "gbnf"
    assert source.startswith("root ::= ")
    rule = re.search(r"^(ref\d+-node) ::=", source, re.M).group(1)
    body = source.split(rule + " ::=", 1)[1]
    assert rule in body  # the rule refers to itself: recursion, not unrolling


NUMBER_TABLE = [("0", True), ("-0", True), ("01", False), ("1.0", True), ("1e5", True),
                ("1E+5", True), ("-1.5e-3", True), ("1.", False), (".5", False),
                ("-", False), ("1e", False), ("+1", False), ("00", False), ("-01.5", False),
                ("12345678901234567890", True), ("1.5E-0", True), ("0.0e0", True)]


@pytest.mark.parametrize("text,ok", NUMBER_TABLE)
def test_json_number_grammar(text, ok):
    assert bool(regex_of({"type": "number"}).fullmatch(text)) == ok


def test_integers_allow_minus_zero_and_no_fraction():
    rx = regex_of({"type": "integer"})
    assert rx.fullmatch("-0") and rx.fullmatch("42") and rx.fullmatch("-7")
    assert not rx.fullmatch("1.0") and not rx.fullmatch("1e2") and not rx.fullmatch("007")


STRING_TABLE = [('"a"', True), ('"\\""', True), ('"\\\\"', True), ('"\\/"', True),
                ('"\\b\\f\\n\\r\\t"', True), ('"\\u00e9"', True), ('"\\u00E9"', True),
                ('"\\ud83d\\ude00"', True), ('"é😀«»—"', True), ('"\x7f"', True),
                ('"\\ud83d"', False), ('"\\ude00"', False), ('"\\ude00\\ud83d"', False),
                ('"\\x41"', False), ('"\\a"', False), ('"\\u00g0"', False), ('"\n"', False),
                ('"\x01"', False), ('"a', False), ('"\\"', False), ("'a'", False)]


@pytest.mark.parametrize("text,ok", STRING_TABLE)
def test_json_string_escapes(text, ok):
    assert bool(regex_of({"type": "string"}).fullmatch(text)) == ok


@given(st.text(), st.booleans())
@settings(max_examples=150, deadline=None)
def test_any_python_string_serialised_matches(value, ensure_ascii):
    """json.dumps output matches, with or without \\u escapes (no lone surrogates)."""
    text = json.dumps(value, ensure_ascii=ensure_ascii)
    assert regex_of({"type": "string"}).fullmatch(text)


@given(st.text(max_size=8), st.integers(0, 4), st.integers(0, 6))
@settings(max_examples=150, deadline=None)
def test_string_lengths_count_code_points(value, lo, extra):
    rx = regex_of({"type": "string", "minLength": lo, "maxLength": lo + extra})
    for ensure_ascii in (True, False):
        text = json.dumps(value, ensure_ascii=ensure_ascii)
        assert bool(rx.fullmatch(text)) == (lo <= len(value) <= lo + extra)


@given(st.one_of(st.none(), st.integers(-10**6, 10**6)),
       st.one_of(st.none(), st.integers(-10**6, 10**6)), st.integers(-10**7, 10**7))
@settings(max_examples=300, deadline=None)
def test_integer_ranges_match_exactly(lo, hi, value):
    schema = {"type": "integer"}
    schema.update({k: v for k, v in (("minimum", lo), ("maximum", hi)) if v is not None})
    if lo is not None and hi is not None and lo > hi:
        with pytest.raises(InvalidSchema):
            schema_to_source(schema)
        return
    rx = regex_of(schema)
    inside = (lo is None or value >= lo) and (hi is None or value <= hi)
    assert bool(rx.fullmatch(str(value))) == inside


@given(st.integers(-20, 20), st.integers(0, 30), st.booleans(), st.booleans(),
       st.decimals(-60, 60, places=3, allow_nan=False))
@settings(max_examples=300, deadline=None)
def test_number_bounds_match_exactly(lo, width, lo_x, hi_x, value):
    hi = lo + width
    schema = {"type": "number", ("exclusiveMinimum" if lo_x else "minimum"): lo,
              ("exclusiveMaximum" if hi_x else "maximum"): hi}
    try:
        rx = regex_of(schema)
    except InvalidSchema:
        assert lo == hi and (lo_x or hi_x)
        return
    text = str(value)
    inside = (value > lo if lo_x else value >= lo) and (value < hi if hi_x else value <= hi)
    assert bool(rx.fullmatch(text)) == inside


def test_number_bounds_inside_one_unit_interval_are_refused():
    with pytest.raises(UnsupportedKeyword) as exc:
        schema_to_source({"type": "number", "minimum": 0.25, "maximum": 0.75})
    assert exc.value.keyword == "minimum"


@given(st.decimals(-30, 30, places=2), st.decimals(0, 40, places=3), st.booleans(),
       st.booleans(), st.decimals(-80, 80, places=3, allow_nan=False))
@settings(max_examples=300, deadline=None)
def test_fractional_number_bounds_match_exactly(lo, width, lo_x, hi_x, value):
    hi = lo + width
    schema = {"type": "number", ("exclusiveMinimum" if lo_x else "minimum"): float(lo),
              ("exclusiveMaximum" if hi_x else "maximum"): float(hi)}
    try:
        rx = regex_of(schema)
    except (InvalidSchema, UnsupportedKeyword):
        return
    inside = (value > lo if lo_x else value >= lo) and (value < hi if hi_x else value <= hi)
    assert bool(rx.fullmatch(str(value))) == inside


def test_integer_fractional_bounds_round_inward():
    rx = regex_of({"type": "integer", "minimum": 0.5, "exclusiveMaximum": 3.0})
    assert [v for v in range(-3, 6) if rx.fullmatch(str(v))] == [1, 2]


def test_enum_and_const_non_ascii_canonical_form():
    rx = regex_of(SCHEMAS["unicode"])
    assert rx.fullmatch('{"s":"canción","t":"ab"}')
    assert rx.fullmatch('{"s":"a\\"b\\\\c\\n","t":"ñ😀"}')
    assert not rx.fullmatch('{"s":"canci\\u00f3n","t":"ab"}')  # only the canonical form
    assert not rx.fullmatch('{"s":"cancion","t":"ab"}')
    assert not rx.fullmatch('{"s":"😀","t":"abc"}')


def test_enum_values_filtered_by_siblings():
    rx = regex_of({"type": "string", "enum": ["a", 1, "bb", None], "maxLength": 1})
    assert rx.fullmatch('"a"') and not rx.fullmatch("1") and not rx.fullmatch('"bb"')


def test_properties_in_schema_order_optional_skippable():
    rx = regex_of(SCHEMAS["person"])
    assert rx.fullmatch('{"nombre":"Ana","edad":30}')
    assert rx.fullmatch('{"nombre":"Ana","edad":30,"ciudad":"Cádiz"}')
    assert not rx.fullmatch('{"edad":30,"nombre":"Ana"}')
    assert not rx.fullmatch('{"nombre":"Ana"}')
    assert not rx.fullmatch('{"nombre":"Ana","edad":30,}')


def test_flexible_whitespace_inside_only():
    rx = regex_of(SCHEMAS["lesson_b"], "flexible")
    assert rx.fullmatch('{ "personaje" :\n\t"Benina" }')
    assert not rx.fullmatch(' {"personaje":"Benina"}')
    assert not rx.fullmatch('{"personaje":"Benina"} ')
    assert not regex_of(SCHEMAS["lesson_b"]).fullmatch('{ "personaje":"Benina"}')


def test_extra_keys_never_repeat_listed_names():
    rx = regex_of(SCHEMAS["extra_keys"])
    assert rx.fullmatch('{"id":1,"x":"abc"}') and rx.fullmatch('{"idx":"a","i":""}')
    assert not rx.fullmatch('{"id":1,"id":"abc"}')
    assert not rx.fullmatch('{"x":"abcd"}')


def test_pattern_anchored_and_searched():
    rx = regex_of(SCHEMAS["pattern"])
    assert rx.fullmatch('{"code":"AB-123","free":"xxadcyy","neg":"x"}')
    assert rx.fullmatch('{"code":"AB-123","free":"a\\"c","neg":"x!"}')
    assert not rx.fullmatch('{"code":"AB-1234","free":"adc","neg":"x"}')
    assert not rx.fullmatch('{"code":"AB-123","free":"abc","neg":"x"}')
    assert not rx.fullmatch('{"code":"AB-123","free":"adc","neg":"7"}')
    assert not rx.fullmatch('{"code":"AB-123","free":"adc","neg":"٣"}')  # Unicode \d


PATTERNS = ["^[a-c]+$", "b", "^\\d{2,3}", "x|y$", "^(ab|c)*d?$", "[^a]", "^.{2}$",
            "^\\S+\\s\\w$", "^[\\D]$", "é+"]


@pytest.mark.parametrize("pattern", PATTERNS)
@given(value=st.text(alphabet="abcdxyé \n1٣\"\\", max_size=5))
@settings(max_examples=60, deadline=None)
def test_pattern_sound_and_complete_on_escaped_forms(pattern, value):
    """Sound: a match of the JSON text implies re.search on the value. Complete
    (match <=> search) except for the documented narrowings: positive \\d \\w \\s
    are ASCII, and `$` does not match before a final newline."""
    rx = regex_of({"type": "string", "pattern": pattern})
    text = json.dumps(value, ensure_ascii=False)
    ours, theirs = bool(rx.fullmatch(text)), bool(re.search(pattern, value))
    assert theirs or not ours
    narrowed = (re.search(r"\\[dws]", pattern) and not value.isascii()) or (
        pattern.endswith("$") and value.endswith("\n"))
    if not narrowed:
        assert ours == theirs


@settings(max_examples=300, deadline=None)
@given(st.ip_addresses(v=6), st.integers(0, 40), st.sampled_from("0123456789abcdefg:.%"))
def test_ipv6_agrees_with_ipaddress(address, where, char):
    """format ipv6 against Python's ipaddress (no zone identifier: a validator rejects it too),
    on the written forms of random addresses and on one-character edits of them."""
    rx = regex_of({"type": "string", "format": "ipv6"})
    for text in (address.compressed, address.exploded):
        assert rx.fullmatch(json.dumps(text)), text
    text = address.compressed
    edited = text[:where] + char + text[where + 1:]
    try:
        valid = ipaddress.IPv6Address(edited) is not None and "%" not in edited
    except ValueError:
        valid = False
    assert bool(rx.fullmatch(json.dumps(edited))) == valid, edited


@pytest.mark.parametrize("fmt,good,bad", [
    ("date", ["2024-02-29", "0001-01-01", "1999-12-31"], ["2023-02-29", "1900-02-29",
                                                            "0000-01-01", "2024-13-01", "24-01-01"]),
    ("time", ["23:59:59Z", "00:00:00.5+01:30"], ["24:00:00Z", "12:00:00", "1:00:00Z"]),
    ("date-time", ["2000-02-29T12:00:00-05:00"], ["2000-02-29 12:00:00Z"]),
    ("email", ["a.b+c@example.com"], ["a@b", "@x.com", "a..b@x.com"]),
    ("uuid", ["123e4567-e89b-12d3-a456-426614174000"], ["123e4567e89b12d3a456426614174000"]),
    ("hostname", ["a.example-1.org", "localhost"], ["-a.org", "a..b", "a_b.org"]),
    ("byte", ["", "QUJD", "QUI=", "QQ=="], ["QUJ", "Q===", "QU=I"]),
    ("ipv6", ["::", "::1", "fe80::1:2", "2001:db8::ff00:42:8329", "::ffff:192.0.2.128",
              "1:2:3:4:5:6:7:8"], ["1:2:3:4:5:6:7:8:9", "1::2::3", "12345::", "fe80::1%eth0", ":1"]),
    ("uri-reference", ["", "a/b", "/a/b?x#y", "//host:80/p", "http://x.org/a?b#c", "#f", "../a"],
     ["a b", "a:b c", "\\x"]),
    ("duration", ["P1D", "PT1H", "P1Y2M3DT4H5M6S", "P2W", "PT0S", "P1M", "PT36H"],
     ["P", "PT", "P1S", "P1H", "P1DT", "1D", "P1W2D", "PT1D"]),
])
def test_formats(fmt, good, bad):
    rx = regex_of({"type": "string", "format": fmt})
    check = validator({"format": fmt})
    for g in good:
        assert rx.fullmatch(json.dumps(g)) and check.is_valid(g), g
    for b in bad:
        assert not rx.fullmatch(json.dumps(b)), b


@pytest.mark.parametrize("schema,keyword", [
    ({"type": "object", "not": {"properties": {"a": {}}, "additionalProperties": {"type": "integer"}}},
     "not"),
    ({"type": "object", "if": {"patternProperties": {"^a": {"const": 1}}}, "then": {"required": ["b"]}},
     "if"),
    # cycles of 61 and 67 letters: their product has 61 x 67 = 4,087 states, past 4,000
    ({"type": "object", "patternProperties": {"^(?:a{61})*$": {}, "^(?:a{67})*$": {}}},
     "patternProperties"),
    ({"type": "array", "uniqueItems": True}, "uniqueItems"),
    ({"type": "string", "format": "regex"}, "format"),
    ({"type": "array", "contains": {"type": "integer"}, "maxItems": 3}, "contains"),
    ({"type": "array", "contains": {"type": "integer"}, "maxContains": 3}, "maxContains"),
    ({"type": "string", "format": "uri-template"}, "format"),
    ({"type": "string", "pattern": "^a+b$", "maxLength": 5000}, "pattern"),
    ({"type": "string", "pattern": "(?i)abc"}, "pattern"),
    ({"type": "string", "pattern": "(a)\\1"}, "pattern"),
    ({"type": "string", "pattern": "a(?=b)"}, "pattern"),
    ({"type": "number", "multipleOf": 12345.678}, "multipleOf"),
    ({"$ref": "other.json#/x"}, "$ref"),
    ({"oneOf": [{"type": "object", "required": ["a"]},
                {"type": "object", "patternProperties": {"^a": {"type": "integer"}}}]}, "oneOf"),
    ({"type": "object", "propertyNames": {"pattern": "^[a-z]{5000}$"}}, "propertyNames"),
    ({"type": "array", "unevaluatedItems": False}, "unevaluatedItems"),
])
def test_refused_keywords_are_named(schema, keyword):
    with pytest.raises(UnsupportedKeyword) as exc:
        schema_to_source(schema)
    assert exc.value.keyword == keyword
    assert repr(keyword) in str(exc.value)


def test_annotations_accepted_unknown_keywords_listed():
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "x",
              "title": "t", "description": "d", "examples": [1], "default": 1,
              "$comment": "c", "deprecated": False, "readOnly": True, "type": "integer",
              "x-vendor": 1, "nullable": True}
    kind, source, ignored = schema_to_source(schema)
    assert kind == "regex" and ignored == ["#/nullable", "#/x-vendor"]


@pytest.mark.parametrize("schema", [
    {"type": "object", "properties": {"a": {}}, "required": ["b"], "additionalProperties": False},
    {"type": "strin"}, {"enum": []}, {"type": "string", "minLength": 3, "maxLength": 2},
    {"$ref": "#/$defs/missing"}, {"allOf": [{"type": "string"}, {"type": "integer"}]}, 42,
])
def test_invalid_or_unsatisfiable_schemas(schema):
    with pytest.raises(InvalidSchema):
        schema_to_source(schema)


def test_one_of_with_discriminator_is_anyof():
    rx = regex_of(SCHEMAS["one_of"])
    assert rx.fullmatch('{"kind":"circle","r":1.5}') and rx.fullmatch('"x"')
    assert not rx.fullmatch('{"kind":"circle","side":1}')


def test_pattern_with_lengths_when_pattern_is_one_class_repeated():
    rx = regex_of({"type": "string", "pattern": "^[a-z0-9]+$", "minLength": 2, "maxLength": 4})
    assert [t for t in ["a", "ab", "abcd", "abcde", "aB"] if rx.fullmatch(json.dumps(t))] == [
        "ab", "abcd"]


def test_pattern_anchors_inside_top_level_alternation():
    rx = regex_of({"type": "string", "pattern": "^01$|^07$"})
    assert rx.fullmatch('"01"') and rx.fullmatch('"07"') and not rx.fullmatch('"017"')
    rx = regex_of({"type": "string", "pattern": "^$|(^a+$)"})
    assert rx.fullmatch('""') and rx.fullmatch('"aa"') and not rx.fullmatch('"ab"')


def test_not_forms_by_de_morgan():
    from masker import compile_json_schema
    g = compile_json_schema(SCHEMAS["not_forms"])  # GBNF: extra keys take any JSON value
    assert g.accepts('{"a":1,"d":2}') and g.accepts('{"a":null,"e":true,"z":[1]}')
    assert not g.accepts('{"a":1,"d":2,"e":true}')
    assert not g.accepts('{"a":"x"}') and not g.accepts('{"a":1,"b":1}')
    assert not g.accepts('{"a":1,"c":1}')


def test_unsatisfiable_branch_is_dropped_not_an_error():
    schema = {"anyOf": [{"type": "object", "properties": {"a": False}, "required": ["a"]},
                        {"type": "integer", "minimum": 1, "maximum": 2}]}
    assert regex_of(schema).pattern == "[12]"


@pytest.mark.parametrize("schema, pointer, words", [
    ({"type": "object", "properties": 5}, "#/properties", "must be an object"),
    ({"type": "object", "required": "nombre"}, "#/required", "list of property names"),
    ({"type": "object", "properties": {"a": {"type": "string", "required": True}}},
     "#/properties/a/required", "draft 3"),
    ({"type": "string", "maxLength": "x"}, "#/maxLength", "non-negative integer"),
    ({"type": "array", "minItems": -1}, "#/minItems", "non-negative integer"),
    ({"type": "integer", "minimum": True}, "#/minimum", "a number"),
    ({"type": "number", "multipleOf": 0}, "#/multipleOf", "greater than 0"),
    ({"anyOf": []}, "#/anyOf", "non-empty list"),
    ({"type": "string", "pattern": 3}, "#/pattern", "a string"),
])
def test_a_keyword_with_a_value_of_the_wrong_type_is_refused_by_its_pointer(schema, pointer, words):
    with pytest.raises(InvalidSchema) as info:
        compile_json_schema(schema)
    assert info.value.path == pointer and words in str(info.value)


def test_integral_floats_are_counts():
    grammar = compile_json_schema({"type": "string", "maxLength": 2.0})
    assert grammar.accepts('"ab"') and not grammar.accepts('"abc"')
