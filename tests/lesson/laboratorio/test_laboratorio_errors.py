"""The «Laboratorio»'s errors: every code the masker can raise has a message in the catalog, each
error names its place in the reader's text, and the settings a link can hold are checked in Python.

The catalog (:mod:`lesson.laboratorio.error_catalog`) is checked against the masker's own source:
every code it can raise (a ``code="..."`` argument, or a masker error class's ``code``) is found by
reading the source (``ast``), and each must be raised in one place only and have a case below, a bad
input that reaches it; a new code without a case fails ``test_every_code_has_a_case``, a catalog
entry no code uses fails ``test_every_catalog_entry_is_a_code_the_masker_raises``, and a case whose
message is missing or keeps English words fails ``test_each_code_gets_a_spanish_message``. The
English texts of the same entries are checked in ``test_laboratorio_english.py`` and, for every
id, in ``tests/site/test_i18n.py``.
"""
from __future__ import annotations

import ast
import json
import pathlib
import re

import pytest
from hypothesis import given, settings, strategies as st

from lesson.laboratorio.error_catalog import DETAIL, FIELDS, MESSAGES, unknown
from lesson.laboratorio.python_messages import JSON_MESSAGES, RE_MESSAGES, json_message, re_message
from lesson.numbers import es_number
from lesson.laboratorio.text_places import string_offset
from lesson.laboratorio.lab import (MAX_TOKENS, SEED_MAX, ConstraintError, Lab, check_settings, compile_constraint,
                                    spanish_error)
from lesson.laboratorio.protocol import act
from lesson.laboratorio.tree import decode_tree
from masker import MaskerError, compile_cfg, compile_choice, compile_json_schema, compile_regex
from masker.budget import Distances, token_edges
from masker.errors import LimitExceeded
from masker.json_schema.emit import to_regex
from masker.json_schema.errors import UnsupportedKeyword
from masker.json_schema.translate import Translator

MASKER = pathlib.Path(__file__).resolve().parents[3] / "py" / "masker"
ENGLISH = re.compile(r"\b(the|is|not|expected|found|missing|must|supported|only|after|before|never|defined|"
                     r"bad|unknown|unexpected|matches|needs|too|many|cannot|and|of|or|with|at|an|in|for|this|that|to|be|"
                     r"are|expecting|line|column|char|invalid|delimiter|value)\b", re.IGNORECASE)


def masker_codes() -> dict[str, list[str]]:
    """code -> ["file:line", ...] for every code the masker's source raises: a ``code="..."``
    keyword argument of a call, or a ``code = "..."`` in a class body (the root class's default,
    "masker.error", left out: it is what no raise site says)."""
    out: dict[str, list[str]] = {}
    for path in sorted(MASKER.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            found = []
            if isinstance(node, ast.Call):
                found = [k.value for k in node.keywords if k.arg == "code"]
            elif isinstance(node, ast.ClassDef):
                found = [s.value for s in node.body if isinstance(s, (ast.Assign, ast.AnnAssign))
                         and any(getattr(t, "id", None) == "code" for t in
                                 (s.targets if isinstance(s, ast.Assign) else [s.target]))]
            for value in found:
                if isinstance(value, ast.Constant) and value.value != "masker.error":
                    out.setdefault(value.value, []).append(f"{path.name}:{node.lineno}")
    return out


def _raised(call):
    try:
        call()
    except MaskerError as exc:
        return exc
    raise AssertionError("no error")


_BYTES = [bytes([i]) for i in range(256)]


def _reader():
    from masker.json_schema.pattern import _PatternReader
    return _PatternReader("x", "#")


def _deep_regex():
    return compile_regex("(" * 3000 + "a" + ")" * 3000)


def _deep_schema():
    schema: dict = {"type": "integer"}
    for _ in range(2000):
        schema = {"items": schema}
    return compile_json_schema(schema)


def _any_of(n):
    return {"anyOf": [{"const": i} for i in range(n)]}


def _consume(grammar, data: bytes):
    matcher = grammar.matcher(_BYTES)
    for byte in data:
        matcher.consume_bytes(bytes([byte]))


def _budget_steps():
    """The token steps of one state, as a budget-aware mask walks them (``budget.token_edges``),
    with a trie-walk limit below what the state needs."""
    matcher = compile_cfg('root ::= "a" root | "b"').matcher(_BYTES)
    token_edges(matcher.grammar.automaton, matcher.state, matcher._index.trie, 2)


def _budget_states():
    matcher = compile_cfg('root ::= "a" root | "b"').matcher(_BYTES)
    matcher._index.distances = Distances(matcher.grammar.automaton, matcher._index.trie, 10 ** 6, max_states=1)
    matcher.mask(budget=5)


# regex_parse.GROUP_FEATURES, one pattern each
FEATURES = ["(?=a)b", "(?!a)b", "(?<=a)b", "(?<!a)b", "(a)(?P=n)", "(?>a)", "(a)(?(1)b)", "(?i)a"]

# code -> bad inputs that raise it: the lab's form (kind, text) for compile_constraint, or a callable
# raising the masker error (what a form cannot reach: run-time limits, keyword arguments the lab
# does not pass, the compiler's inner parts)
CASES: dict[str, list] = {
    "budget.too_small": [lambda: compile_regex("ab").matcher(_BYTES).mask(budget=1)],
    "choice.empty": [lambda: compile_choice([])],
    "gbnf.bad_hex_escape": [("gbnf", 'root ::= "\\x4"')],
    "gbnf.bad_range": [("gbnf", "root ::= [z-a]")],
    "gbnf.bad_repeat": [("gbnf", 'root ::= "a"{3,1}')],
    "gbnf.bad_repetition": [("gbnf", 'root ::= "a"{x}')],
    "gbnf.beyond_unicode": [("gbnf", 'root ::= "\\U00110000"')],
    "gbnf.defined_twice": [("gbnf", 'root ::= "a"\nroot ::= "b"')],
    "gbnf.expected_define": [("gbnf", 'root "a"')],
    "gbnf.expected_name": [("gbnf", '::= "a"')],
    "gbnf.multiple_repeat": [("gbnf", 'root ::= "a"*+')],
    "gbnf.never_finishes": [("gbnf", 'root ::= "a" root')],
    "gbnf.no_root": [("gbnf", 'raiz ::= "a"')],
    "gbnf.nothing_to_repeat": [("gbnf", "root ::= *")],
    "gbnf.recursive_no_dfa": [lambda: compile_cfg('root ::= "a" root | "b"', engine="dfa")],
    "gbnf.repeat_too_large": [("gbnf", 'root ::= "a"{9999999}')],
    "gbnf.token_reference": [("gbnf", "root ::= <[123]>")],
    "gbnf.unclosed_class": [("gbnf", "root ::= [ab")],
    "gbnf.unclosed_group": [("gbnf", 'root ::= ("a"')],
    "gbnf.unclosed_string": [("gbnf", 'root ::= "abc')],
    "gbnf.undefined_rule": [("gbnf", "root ::= foo")],
    "gbnf.unexpected_char": [("gbnf", 'root ::= "a" §')],
    "gbnf.unknown_escape": [("gbnf", 'root ::= "\\q"')],
    "limit.budget_states": [_budget_states],
    "limit.budget_steps": [_budget_steps],
    "limit.choice_states": [lambda: compile_choice(["abc", "abd"], max_states=2)],
    "limit.dfa_states": [lambda: compile_regex("(a|b)*c(a|b){3}", max_states=2)],
    "limit.earley_items": [lambda: _consume(compile_cfg('root ::= x\nx ::= x x | "a"', max_items=5), b"a" * 8)],
    "limit.mask_steps": [
        lambda: compile_cfg('root ::= "a" root | "b"').matcher([bytes([i]) for i in range(256)],
                                                                 max_trie_steps=1).mask(),
    ],
    "limit.nesting": [_deep_regex],
    "limit.nfa_states": [lambda: compile_regex("(a|bc)*[a-z]x", max_nfa_states=3)],
    "limit.productions": [lambda: compile_cfg('root ::= x x x\nx ::= "a" | "b" x', max_productions=2)],
    "limit.schema_nesting": [_deep_schema],
    "limit.schema_regex": [lambda: to_regex(Translator({"type": "string"}, "compact").translate(), max_chars=3)],
    "regex.anchor_inside": [("regex", "a^b")],
    "regex.backreference": [("regex", "(a)\\1")],
    "regex.bad_escape": [("regex", "\\q")],
    "regex.bad_group_name": [("regex", "(?P<a")],
    "regex.bad_hex_escape": [("regex", "\\x4")],
    "regex.bad_named_escape": [("regex", "\\N")],
    "regex.bad_range": [("regex", "[z-a]")],
    "regex.bad_repeat": [("regex", "a{3,1}")],
    "regex.beyond_unicode": [("regex", "\\U00110000")],
    "regex.boundary": [("regex", "a\\bb")],
    "regex.group_feature": [("regex", p) for p in FEATURES],
    "regex.multiple_repeat": [("regex", "a**")],
    "regex.nothing_to_repeat": [("regex", "*a"), ("regex", "{3}a")],
    "regex.possessive": [("regex", "a*+")],
    "regex.range_ends_in_class": [("regex", "[a-\\d]")],
    "regex.trailing_backslash": [("regex", "a\\")],
    "regex.unbalanced_paren": [("regex", "a)")],
    "regex.unclosed_class": [("regex", "[ab")],
    "regex.unclosed_comment": [("regex", "(?#abc")],
    "regex.unclosed_group": [("regex", "(ab")],
    "regex.unicode_property": [("regex", "\\p{L}")],
    "regex.unknown_name": [("regex", "\\N{NO SUCH NAME}")],
    "schema.allof_conflict": [
        ("json_schema", '{"allOf": [{"prefixItems": [{"type": "string"}]}, {"prefixItems": [{"type": "integer"}]}]}'),
        ("json_schema", '{"allOf": [{"contains": {"type": "string"}}, {"contains": {"type": "integer"}}]}'),
    ],
    "schema.allof_too_large": [("json_schema", json.dumps({"allOf": [_any_of(9), _any_of(9)]}))],
    "schema.bad_pattern": [("json_schema", '{"type": "string", "pattern": "(abc"}')],
    "schema.bad_value": [
        ("json_schema", '{"enum": 5}'),
        ("json_schema", '{"maxLength": "x"}'),
        lambda: __import__(
            "masker.json_schema.pattern", fromlist=["pattern_units"]).pattern_units(5, "#"),
        ("json_schema", '{"dependencies": 5}'),
        lambda: compile_json_schema({"allOf": 5}),
    ],
    "schema.bool_container": [
        ("json_schema", '{"type": "object", "not": {"additionalProperties": {"type": "integer"}}}'),
    ],
    "schema.bool_recursive": [
        ("json_schema", '{"$defs": {"t": {"type": "string", "not": {"$ref": "#/$defs/t"}}}, "$ref": "#/$defs/t"}'),
    ],
    "schema.bool_states": [
        ("json_schema", '{"type": "string", "not": {"pattern": "a.{12}$"}}'),
        ("json_schema", '{"type": "object", "patternProperties": {"^(?:a{61})*$": {}, "^(?:a{67})*$": {}}}'),
        ("json_schema", '{"type": "object", "properties": {"a": {}}, "propertyNames": {"pattern": "^[a-z]{5000}$"}}'),
    ],
    "schema.contains_counts": [("json_schema", '{"type": "array", "contains": {"type": "integer"}, "maxItems": 3}')],
    "schema.contains_prefix": [
        ("json_schema", '{"type": "array", "prefixItems": [{}], "contains": {"type": "integer"}}'),
    ],
    "schema.dependent_many": [("json_schema", json.dumps({"dependentRequired": {k: ["z"] for k in "abcde"}}))],
    "schema.enum_cycle": [
        ("json_schema", '{"$defs": {"a": {"anyOf": [{"$ref": "#/$defs/a"}]}}, "enum": [[1]], '
                                     '"items": {"$ref": "#/$defs/a"}}'),
    ],
    "schema.format_regex": [("json_schema", '{"type": "string", "format": "regex"}')],
    "schema.fractional_bounds": [("json_schema", '{"type": "number", "minimum": 0.25, "maximum": 0.75}')],
    "schema.intersection_states": [("json_schema", '{"type": "string", "pattern": "^a+b$", "maxLength": 5000}')],
    "schema.max_contains": [("json_schema", '{"type": "array", "contains": {"type": "integer"}, "maxContains": 2}')],
    "schema.min_properties_extra": [("json_schema", '{"type": "object", "minProperties": 2}')],
    "schema.multiple_of": [("json_schema", '{"type": "number", "multipleOf": 12345.678}')],
    "schema.not_a_schema": [("json_schema", "5")],
    "schema.not_json": [lambda: compile_json_schema("{")],
    "schema.object_difference": [("json_schema", '{"type": "object", "not": {"maxProperties": 1}}')],
    "schema.pattern_anchor": [("json_schema", '{"type": "string", "pattern": "a^b"}')],
    "schema.pattern_construct": [
        ("json_schema", '{"type": "string", "pattern": "a(?=b)"}'),
        lambda: _reader().category("CATEGORY_LINEBREAK", False),
        ("json_schema", '{"type": "string", "pattern": "(a)\\\\1"}'),
        lambda: _reader().set_of([("BOGUS", 0)]),
    ],
    "schema.pattern_flags": [
        ("json_schema", '{"type": "string", "pattern": "(?i)a"}'),
        ("json_schema", '{"type": "string", "pattern": "(?i:a)"}'),
    ],
    "schema.pattern_property_escape": [("json_schema", '{"type": "string", "pattern": "^\\\\p{Letter}+$"}')],
    "schema.ref_cycle": [
        ("json_schema", '{"$defs": {"n": {"type": "object", "properties": {"a": {"$ref": "#/$defs/n"}}, '
                            '"required": ["a"]}}, "$ref": "#/$defs/n"}'),
    ],
    "schema.ref_external": [("json_schema", '{"$ref": "otro.json#/a"}')],
    "schema.ref_false": [
        ("json_schema", '{"$defs": {"nada": false}, "type": "object", "properties": {"a": {"$ref": '
                            '"#/$defs/nada"}}, "required": ["a"]}'),
    ],
    "schema.ref_recursion": [
        lambda: Translator({"$defs": {"a": {"$ref": "#/$defs/a"}}}, "compact").expand({"$ref": "#/$defs/a"}, "#"),
    ],
    "schema.ref_unresolved": [("json_schema", '{"$ref": "#/$defs/nada"}')],
    "schema.ref_variants": [
        ("json_schema", '{"$defs": {"n": {"$ref": "#/$defs/m"}, "m": {"allOf": [{"$ref": "#/$defs/n"}], '
                            '"type": "integer"}}, "$ref": "#/$defs/n"}'),
    ],
    "schema.unique_items_orders": [
        ("json_schema", '{"type": "array", "items": {"enum": [1, 2, 3, 4, 5, 6, 7]}, '
                            '"uniqueItems": true}'),
    ],
    "schema.unique_items_set": [("json_schema", '{"type": "array", "uniqueItems": true}')],
    "schema.unique_items_with": [("json_schema", '{"type": "array", "prefixItems": [{}], "uniqueItems": true}')],
    "schema.unknown_type": [("json_schema", '{"type": "texto"}')],
    "schema.unsatisfiable": [("json_schema", '{"type": "integer", "minimum": 10, "maximum": 5}')],
    "schema.unsupported": [("json_schema", '{"type": "object",\n "unevaluatedProperties": false}')],
    "schema.unsupported_format": [
        ("json_schema", '{"type": "string", "format": "color"}'),
        lambda: __import__("masker.json_schema.values", fromlist=["value_allowed"]).value_allowed(
                "x", {"format": "color"}, "#"),
    ],
    "syntax.matches_nothing": [("regex", "a[^\\x00-\\U0010FFFF]")],
    "token.not_allowed": [lambda: compile_regex("ab").matcher(_BYTES).consume(ord("b"))],
}


def spanish_of(case) -> ConstraintError:
    """The error the lab shows for a case."""
    if callable(case):
        exc = _raised(case)
        return spanish_error(exc, "", "")
    kind, text = case
    with pytest.raises(ConstraintError) as info:
        compile_constraint(kind, text)
    return info.value


def code_of(case) -> str:
    """The code of the masker error a case raises."""
    if callable(case):
        return _raised(case).code
    kind, text = case
    return _raised(lambda: {"regex": compile_regex, "gbnf": compile_cfg,
                            "json_schema": lambda t: compile_json_schema(json.loads(t))}[kind](text)).code


def english_left(error: ConstraintError) -> list[str]:
    """English words in the message and fix, the caret lines (the reader's own text) left out."""
    lines = [line for line in error.message.split("\n") if not line.startswith("  ")]
    return ENGLISH.findall(re.sub(r"«[^«»]*»", "", " ".join(lines) + " " + error.hint))  # «names» are quoted


def test_every_code_is_raised_in_one_place():
    codes = masker_codes()
    assert len(codes) > 80  # the scan finds the masker's codes
    twice = {code: where for code, where in codes.items() if len(where) > 1}
    assert not twice, twice


def test_every_code_has_a_case():
    codes = masker_codes()
    missing = {code: where for code, where in codes.items() if code not in CASES}
    assert not missing, missing
    assert not set(CASES) - set(codes), set(CASES) - set(codes)  # a case for a code that is gone


def test_every_catalog_entry_is_a_code_the_masker_raises():
    codes = masker_codes()
    assert set(MESSAGES) == set(codes), (set(MESSAGES) ^ set(codes))
    named = {key[1] if isinstance(key, tuple) else key for key in FIELDS}
    per_code = {key[0] for key in FIELDS if isinstance(key, tuple)}
    assert per_code <= set(MESSAGES), per_code - set(MESSAGES)
    assert named  # the field writers name fields


@pytest.mark.parametrize("code, i", [(code, i) for code in sorted(CASES) for i in range(len(CASES[code]))])
def test_each_case_reaches_its_code(code, i):
    assert code_of(CASES[code][i]) == code


@pytest.mark.parametrize("code, i", [(code, i) for code in sorted(CASES) for i in range(len(CASES[code]))])
def test_each_code_gets_a_spanish_message(code, i):
    error = spanish_of(CASES[code][i])
    assert error.kind == code, (error.kind, error.message)
    assert DETAIL not in error.message and "fix:" not in error.message
    assert not english_left(error), (error.message, error.hint, english_left(error))
    assert error.hint, code  # a fix too
    words = " ".join(line for line in error.message.split("\n") if not line.startswith("  ")) + " " + error.hint
    assert not re.search(r"\{[a-z][a-z_]+\}", words), words  # every field filled


def test_rewording_the_masker_changes_nothing_in_the_lab():
    """The catalog reads codes and fields, never the English words: an error whose message says
    anything gets the same Spanish text as the masker's own."""
    exc = _raised(lambda: compile_regex("[z-a]"))
    same = spanish_error(exc, "regex", "[z-a]")
    exc.reason = "something else entirely"
    exc.args = ("reworded",)
    again = spanish_error(exc, "regex", "[z-a]")
    assert (again.message, again.hint, again.kind, again.span) == (same.message, same.hint, same.kind, same.span)


@pytest.mark.parametrize("pattern", FEATURES)
def test_the_regex_features_the_masker_refuses_are_named_in_spanish(pattern):
    error = spanish_of(("regex", pattern))
    assert error.kind == "regex.group_feature" and re.search("no están? soportad", error.message)
    assert not english_left(error)


def test_each_regex_feature_has_its_own_words():
    messages = {spanish_of(("regex", p)).message for p in FEATURES}
    assert len(messages) == len(FEATURES)


def where(text: str, pos: int) -> str:
    """The place of character ``pos`` (0-based) as the reader counts, from 1: the character in a
    one-line text, the line and column in a text of several lines (computed here on its own)."""
    if "\n" not in text:
        return f"en el carácter {pos + 1}"
    lines = text[:pos].split("\n")
    return f"en la línea {len(lines)}, columna {len(lines[-1]) + 1}"


@pytest.mark.parametrize("kind, text, words, span, heading", [
    ("regex", "[z-a]", "el rango «z-a» está al revés", "-", "error de sintaxis"),
    ("gbnf", "root ::= foo", "la regla «foo» se usa aquí pero no está definida", "f", "error en la gramática"),
    ("gbnf", 'root ::= "a" root', "«root» nunca termina", "r", "gramática imposible"),
    ("json_schema", '{"type": "string", "pattern": "(abc"}', "«pattern» no es una expresión regular válida: falta «)»",
     "(", "esquema no válido"),
    # re points at character 3 of the pattern, the "(" after an escaped backslash and a \u escape
    ("json_schema", '{"type": "string",\n "pattern": "\\\\d\\u00f1(abc"}', "falta «)»", "(", "esquema no válido"),
    ("json_schema", '{"type": "object", "patternProperties": {"a[b": {}}}', "«patternProperties» no es una",
     "[", "esquema no válido"),
    # errors whose pointer names the schema: the caret goes to the keyword at fault
    ("json_schema", '{"type": "strin"}', "el tipo «strin» no existe", '"type"', "esquema no válido"),
    ("json_schema", '{"a": 1,\n "$ref": "#/nope"}', "«#/nope» no lleva a ninguna parte", '"$ref"', "esquema no válido"),
    ("json_schema", '{"allOf": []}', "«allOf» tiene que ser una lista no vacía", '"allOf"', "esquema no válido"),
    ("json_schema", '{"type": "array", "minItems": 5, "maxItems": 2}', "ninguna lista cumple las dos", '"maxItems"',
     "esquema imposible"),
])
def test_the_newcomers_errors_get_the_right_diagnosis_and_place(kind, text, words, span, heading):
    with pytest.raises(ConstraintError) as info:
        compile_constraint(kind, text)
    error = info.value
    assert words in error.message and error.message.startswith(f"{heading} {where(text, error.span[0])}: "), \
        error.message
    assert "error de sintaxis" not in error.message or heading == "error de sintaxis"
    assert text[error.span[0]:error.span[1]] == span, (error.span, error.message)
    assert not english_left(error), error.message
    # the caret sits under the span's first character
    caret_line = error.message.split("\n")[-1]
    text_line = error.message.split("\n")[-2]
    line_start = text.rfind("\n", 0, error.span[0]) + 1
    prefix = len(text_line) - len(text[line_start:].split("\n")[0])
    assert caret_line.index("^") - prefix == error.span[0] - line_start


@pytest.mark.parametrize("text", ['{"a": "x', '{"a" 1}', '{"a": 1 "b": 2}', '{a: 1}', '{"a": }', '{"a": 1} x',
                                  '{"a": "\\q"}', '{"a": "\\u12"}', '{"a": "x\ny"}', '[1, 2,]', '{"a": 1,}', ""])
def test_the_json_decoders_messages_are_in_spanish(text):
    with pytest.raises(json.JSONDecodeError) as decoding:
        json.loads(text)
    msg = decoding.value.msg
    spanish = json_message(msg)
    assert "detalle" not in spanish and not ENGLISH.findall(spanish), (msg, spanish)
    if text:
        with pytest.raises(ConstraintError) as info:
            compile_constraint("json_schema", text)
        error = info.value
        assert msg not in error.message
        assert error.message.startswith(f"JSON no válido {where(text, error.span[0])}: "), error.message
        assert text[error.span[0]:error.span[1]] == text[decoding.value.pos:decoding.value.pos + 1]


def test_every_json_decoder_message_is_known():
    """Python's json messages, from its own source (the C scanner's are the same texts)."""
    import json.decoder as decoder
    source = pathlib.Path(decoder.__file__).read_text()
    messages = set(re.findall(r'JSONDecodeError\(\s*"([^"{]+)"', source))
    messages |= {m.replace("\\\\", "\\") for m in re.findall(r'\n\s*msg = "([^"{%]+)', source)}
    assert len(messages) >= 6
    for msg in messages:
        assert "detalle" not in json_message(msg.removesuffix(" ")), msg
    assert set(JSON_MESSAGES) >= {m.removesuffix(": ") for m in messages} - {"Invalid control character "}


@pytest.mark.parametrize("pattern", ["(abc", "[abc", "*a", "a**", "a)", "[z-a]", "a\\", "\\q", "a{3,1}",
                                     "(?P<", "(?P<a>x)(?P<a>y)", "(?P=zz)", "(?<", "(?x", "\\8", "(?#abc",
                                     "(?P<1a>x)", "\\N{NO SUCH}", "\\x4", "(?", "(?i", "a{99999999999}"])
def test_pythons_regex_messages_are_in_spanish(pattern):
    try:
        re.compile(pattern)
        pytest.fail(f"{pattern!r} compiled")
    except (re.error, OverflowError) as exc:
        spanish = re_message(str(exc))
    assert "detalle" not in spanish and not ENGLISH.findall(spanish), (str(exc), spanish)
    assert RE_MESSAGES  # the table exists


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12), st.booleans(), st.data())
def test_a_strings_character_is_found_through_its_escapes(value, ascii_only, data):
    """string_offset against json itself: the text up to the offset decodes to the string's prefix."""
    index = data.draw(st.integers(0, len(value)))
    text = "x: " + json.dumps(value, ensure_ascii=ascii_only)
    offset = string_offset(text, 3, index)
    assert json.loads(text[3:offset] + '"') == value[:index]


@pytest.mark.parametrize("settings_, words", [
    # numbers the Spanish way: grouped as es_int groups them (U+202F), minus U+2212, 10³⁰ for 1e30
    ({"seed": 1e30}, "la semilla tiene que ser un entero de 0 a 4\u202f294\u202f967\u202f295; ahora vale 10³⁰"),
    ({"seed": -1}, "la semilla tiene que ser un entero de 0 a 4\u202f294\u202f967\u202f295; ahora vale \u22121"),
    ({"seed": 2.5}, "ahora vale 2,5"),
    ({"seed": None}, "ahora está vacío"),
    ({"seed": "tres"}, "ahora vale «tres»"),
    ({"seed": [1]}, "ahora vale «[1]»"),
    ({"top_k": 0}, "top-k tiene que ser un entero de 1 o más (o vacío); ahora vale 0"),
    ({"top_k": 2.5}, "top-k tiene que ser un entero de 1 o más"),
    ({"top_p": 5}, "top-p tiene que ser un número mayor que 0 y de 1 como mucho (o vacío); ahora vale 5"),
    ({"top_p": -1e-7}, "ahora vale \u221210⁻⁷"),
    ({"top_p": 0}, "top-p tiene que ser"),
    ({"temperature": 0}, "la temperatura tiene que ser un número mayor que 0; ahora vale 0"),
    ({"temperature": float("nan")}, "la temperatura tiene que ser"),
    ({"max_tokens": 0}, "«tokens como máximo» tiene que ser un entero de 1 o más"),
    ({"max_tokens": 2000}, f"«tokens como máximo» tiene que ser un entero de 1 a {MAX_TOKENS} (o vacío); "
                           "ahora vale 2000"),
])
def test_settings_from_a_link_are_refused_in_spanish(settings_, words):
    limit = MAX_TOKENS if (settings_.get("max_tokens") or 0) > MAX_TOKENS else None
    with pytest.raises(ConstraintError) as info:
        check_settings(**settings_, max_tokens_limit=limit)
    assert words in info.value.message and info.value.kind.startswith("settings.")
    assert not ENGLISH.findall(info.value.message + " " + info.value.hint)
    assert check_settings(seed=SEED_MAX, top_k=3.0, top_p=1, max_tokens=MAX_TOKENS)["top_k"] == 3


STATE = {"kind": "regex", "constraint": "[a-z]{3}", "prompt": "La señora ", "seed": 0, "temperature": 1.0,
         "top_k": None, "top_p": None, "max_tokens": 20}


@pytest.mark.parametrize("change, words", [
    ({"seed": 1e30}, "la semilla tiene que ser un entero"),
    ({"max_tokens": 2000}, "«tokens como máximo» tiene que ser un entero de 1 a 200"),
    ({"top_p": 5}, "top-p tiene que ser un número mayor que 0"),
    ({"top_k": 0}, "top-k tiene que ser un entero de 1 o más"),
    ({"prompt": ""}, "el prompt está vacío"),
    ({"kind": "sql"}, "el tipo de restricción «sql» no existe: tiene que ser uno de estos: ninguna, lista de "
                      "opciones, expresión regular, JSON Schema, gramática GBNF"),
    ({"constraint": "[z-a]"}, "el rango «z-a» está al revés"),
])
def test_act_shows_every_reader_mistake_as_a_spanish_error_view(model, tok, change, words):
    html = act("generate", {**STATE, **change})._repr_html_()
    assert 'data-testid="lab-error"' in html and "Traceback" not in html, html
    shown = html[html.index('data-testid="lab-error"'):].replace("&quot;", '"').replace("&#x27;", "'")
    assert words in shown, shown
    assert not re.search(r"\b(must|found|the|is not|expected)\b", re.sub(r"«[^«»]*»", "", shown)), shown


def test_a_link_with_a_position_its_branch_lacks_is_refused_in_spanish(model, tok):
    lab = Lab(model, tok, kind="regex", constraint="[a-z]{3}", prompt="La señora ", max_tokens=20)
    with pytest.raises(ValueError) as info:
        lab.restore("r_0.40.5")
    message = str(info.value)
    assert "el enlace no describe un árbol" in message and "posición 40" in message
    assert not re.search(r"\b(position|must|found)\b", message), message
    with pytest.raises(ValueError) as info:
        lab.restore("r_0.1.99999")  # a token the settings do not offer there
    assert "no está entre los que los ajustes permiten" in str(info.value)
    state = {**STATE, "constraint": "[a-z]{3}", "tree": "r_0.40.5", "branch": "x", "open": "y"}
    html = act("restore", state)._repr_html_()
    assert 'data-testid="lab-error"' in html and "posición 40" in html and "Traceback" not in html


def test_an_unknown_code_keeps_its_english_only_as_a_labelled_detail():
    """A code the catalog lacks (raised by code outside the masker, with a masker class)."""
    exc = UnsupportedKeyword("frobnicate", "#", "is frobbed", code="elsewhere.frobbed")
    error = spanish_error(exc, "json_schema", '{"frobnicate": 1}')
    assert error.kind == "masker.other" and "«frobnicate»" in error.message
    assert f"({DETAIL}: JSON Schema keyword 'frobnicate' is frobbed)" in error.message
    assert spanish_of(("json_schema", '{"if": {"type": "string"}, "unevaluatedItems": false}')).kind \
        == "schema.unsupported"


# --- the wording a reviewer found wrong: places from 1, Spanish numbers, no programmer words,
# a heading that fits the error, said once

def test_a_place_in_one_line_counts_characters_from_one_and_lines_and_columns_from_one():
    for kind, text, place in [("regex", "*a", "en el carácter 1"), ("regex", "ab(", "en el carácter 3"),
                              ("gbnf", 'root ::= "a"\nroot ::= "b"', "en la línea 2, columna 1"),
                              ("json_schema", '{"a" 1}', "en el carácter 6"),
                              ("json_schema", '{"a": 1,\n"b" 2}', "en la línea 2, columna 5")]:
        with pytest.raises(ConstraintError) as info:
            compile_constraint(kind, text)
        message = info.value.message
        assert place + ": " in message and "posición" not in message, message
        assert where(text, info.value.span[0]) == place  # the span stays 0-based, for the editor


@pytest.mark.parametrize("x, shown", [(5.5, "5,5"), (-1, "\u22121"), (1e30, "10³⁰"), (-1e30, "\u221210³⁰"),
                                      (1.5e-7, "1,5·10⁻⁷"), (20000, "20\u202f000"), (5.0, "5"), (0.25, "0,25"),
                                      (1234.5, "1234,5"), (123456.75, "123\u202f456,75"), (2.5e20, "2,5·10²⁰"),
                                      (0.0001, "0,0001"), (float("inf"), "∞")])
def test_numbers_are_written_the_spanish_way(x, shown):
    assert es_number(x) == shown


def _read_back(shown: str) -> float:
    """es_number's text read back as a float (an independent parse of its notation)."""
    text = shown.replace("\u202f", "").replace("\u2212", "-").replace(",", ".")
    match = re.fullmatch(r"(-?)(?:([\d.]+)·)?10([⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)", text)
    if match:
        exponent = int(match[3].translate(str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")))
        return float(f"{match[1]}{match[2] or '1'}e{exponent}")
    return float(text)


@settings(max_examples=400, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False) | st.integers(-10**20, 10**20))
def test_a_number_written_the_spanish_way_reads_back_as_itself(x):
    shown = es_number(x)
    assert _read_back(shown) == float(x), shown
    assert "." not in shown and "e" not in shown and "-" not in shown


def test_the_page_writes_numbers_as_python_does():
    """numbers.js's formatNumber (the field check's «ahora vale» in lab.js) against es_number, run in
    Node (tests/site/test_numbers_js.py)."""
    from tests.site.test_numbers_js import NODE, in_js
    if NODE is None:
        pytest.skip("no Node here")
    values = [5.5, -1, 1e30, -2.5e-9, 20000, 4294967295, 0.0001, 1e-5, 123456.789, 1e16, 1e15 + 0.5, 2**53 + 2.0,
              1.7976931348623157e308, 5e-324, 0.1, 99999.5, 1e21, 12345678.9]
    assert in_js([("number", v, "es") for v in values]) == [es_number(v) for v in values]


def test_a_contradiction_names_its_bounds_the_spanish_way():
    with pytest.raises(ConstraintError) as info:
        compile_constraint("json_schema", '{"type": "number", "minimum": 5.5, "maximum": 1.5}')
    assert "«minimum» vale 5,5 y «maximum» vale 1,5" in info.value.message
    with pytest.raises(ConstraintError) as info:
        compile_constraint("json_schema", '{"type": "number", "minimum": -1, "maximum": -1e30}')
    assert "«minimum» vale \u22121 y «maximum» vale \u221210³⁰" in info.value.message


def test_a_limit_says_what_it_counts_with_its_number_grouped():
    error = spanish_error(LimitExceeded("the automaton needs too many DFA states", "max_states", 20000, "x",
                                        code="limit.dfa_states"), "", "")
    assert error.message.endswith("(límite: 20\u202f000 estados)") and "max_states" not in error.message
    error = spanish_of(lambda: compile_choice(["abc", "abd"], max_states=2))
    assert "(límite: 2 estados)" in error.message and "=" not in error.message
    error = spanish_of(CASES["limit.productions"][0])
    assert "(límite: 2 producciones)" in error.message
    error = spanish_of(_deep_regex)
    assert re.search(r"\(límite: [\d\u202f]+ niveles\)", error.message), error.message
    assert "_" not in error.message


def test_no_programmer_words_are_left_in_the_lab_messages(model, tok):
    other = unknown(LimitExceeded("x", "max_states", 1, "y", code="elsewhere.x"))[1]
    assert "masker" not in DETAIL and "masker" not in other
    assert "el compilador de la máscara" in other
    with pytest.raises(ValueError) as info:
        decode_tree("zz")
    assert "no se entiende: «zz»" in str(info.value) and "'" not in str(info.value)
    act("generate", STATE)
    html = act("zzz", STATE)._repr_html_()
    assert "acción desconocida «zzz»" in html and "&#x27;" not in html


def test_an_empty_regex_says_what_it_would_accept_in_parentheses():
    with pytest.raises(ConstraintError) as info:
        compile_constraint("regex", "")
    assert info.value.message == "la expresión regular está vacía: solo aceptaría el texto vacío (0 tokens)"


def _heading(html: str) -> str:
    return re.search(r"<strong>(.*?)</strong>", html[html.index('data-testid="lab-error"'):])[1]


def test_the_error_view_has_a_heading_that_fits_what_is_at_fault(model, tok):
    assert _heading(act("generate", {**STATE, "constraint": "[z-a]"})._repr_html_()) == \
        "No se puede usar esta restricción."
    assert _heading(act("generate", {**STATE, "top_k": 0})._repr_html_()) == "No se pueden usar estos ajustes."
    assert _heading(act("generate", {**STATE, "prompt": ""})._repr_html_()) == \
        "No se puede usar este prompt con estos ajustes."
    html = act("restore", {**STATE, "tree": "r_0.40.5"})._repr_html_()
    assert _heading(html) == "El enlace no se puede abrir." and 'data-kind="link"' in html
    assert "el enlace no describe un árbol" in html
    act("generate", STATE)
    html = act("open", STATE, position=99)._repr_html_()
    assert _heading(html) == "No se puede hacer esto." and 'data-kind="run"' in html
    assert "la posición 99 no existe en esta rama" in html
    assert "o estos ajustes" not in html


@pytest.mark.parametrize("code, i", [(code, i) for code in sorted(CASES) for i in range(len(CASES[code]))])
def test_the_heading_and_the_message_say_it_once(code, i):
    """«no soportado en el carácter 2: … no está soportada» says it twice; so would «lista vacía:
    la lista de opciones está vacía»."""
    error = spanish_of(CASES[code][i])
    heading, message = error.message.split("\n")[0].split(": ", 1)
    heading = re.split(r" en (?:el|la) ", heading)[0]
    for word in ("soportad", "vací"):
        assert not (word in heading and word in message), (heading, message)


def test_a_position_a_branch_lacks_says_its_tokens_with_the_right_plural(model, tok):
    lab = Lab(model, tok, kind="regex", constraint="[a-z]", prompt="La señora ", max_tokens=5)
    lab.generate()
    n = len(lab.decoder.generation.token_ids)
    assert n == 1  # one letter: one token
    with pytest.raises(ValueError) as info:
        lab.open(3)
    assert str(info.value) == "la posición 3 no existe en esta rama (tiene 1 token)"
    with pytest.raises(ValueError) as info:
        lab.select(4)
    assert str(info.value) == "no hay rama 5: el árbol tiene 1 rama"


# --- what the fresh reader of issue 41's change found

@pytest.mark.parametrize("text, missing, span", [('{"type": "string"', "«}»", '"'), ('{"a": [1, 2', "«]}»", "2"),
                                                 ('{"a": {"b": 1}\n', "«}»", "}")])
def test_a_schema_that_ends_with_brackets_open_says_which_are_missing(text, missing, span):
    with pytest.raises(ConstraintError) as info:
        compile_constraint("json_schema", text)
    error = info.value
    assert f"falta {missing} al final" in error.message and missing in error.hint, error.message
    assert "coma" not in error.message and text[error.span[0]:error.span[1]] == span


@pytest.mark.parametrize("text, words, at", [
    ("false", "el esquema es false", "f"),  # the whole schema: its first character
    ('{"allOf": [{"type": "string"}, {"type": "integer"}]}', "no comparte ningún tipo", '"type"'),
    ('{"const": 1, "enum": [2]}', "«const» no está en la lista de «enum»", '"enum"'),
    ('{"type": "number", "minimum": 12345.5, "exclusiveMaximum": 12345.5}', "ningún número cumple las dos",
     '"exclusiveMaximum"'),
])
def test_an_impossible_schema_names_the_keywords_that_clash(text, words, at):
    with pytest.raises(ConstraintError) as info:
        compile_constraint("json_schema", text)
    error = info.value
    assert error.kind == "schema.unsatisfiable" and words in error.message, error.message
    assert text[error.span[0]:error.span[1]] == at


def test_the_fixes_fit_what_was_typed():
    gbnf = spanish_of(("gbnf", 'root ::= ("a" | "b"'))
    assert '«"("»' in gbnf.hint and "\\(" not in gbnf.hint  # GBNF writes a literal parenthesis as a string
    assert "(?:x*)+" not in spanish_of(("regex", "a**")).hint
    unevaluated = spanish_of(("json_schema", '{"type": "object", "unevaluatedProperties": false}'))
    assert "«additionalProperties»" in unevaluated.hint
    empty_class = spanish_of(("regex", "[]"))
    assert "un «]» justo después de «[» es un carácter de la clase" in empty_class.message
    assert "draft 3" not in spanish_of(("json_schema", '{"required": "a"}')).message


def test_a_trailing_backslash_is_placed_on_the_backslash():
    error = spanish_of(("regex", "ab\\"))
    assert "en el carácter 3" in error.message and error.span == (2, 3)


@pytest.mark.parametrize("line, pos", [('root ::=\t"a"\t[z-a]', 15), ("😀(ab", 1), ("e\u0301(ab", 2)])
def test_the_caret_stands_under_its_character_after_tabs_wide_and_combining_characters(line, pos):
    from masker.errors import caret_display
    shown, caret = caret_display(line, pos).split("\n")
    before = caret[2:caret.index("^")]  # the two spaces of the prefix left out
    width = lambda text: sum(0 if __import__("unicodedata").combining(c) else  # noqa: E731
                             2 if __import__("unicodedata").east_asian_width(c) in "WF" else 1 for c in text)
    assert "\t" not in line[:pos] or before.count("\t") == line[:pos].count("\t")
    assert width(before.replace("\t", " ")) == width(line[:pos].replace("\t", " "))
