"""The «Laboratorio»'s errors: every reason the masker can raise is in the Spanish catalog, each
error names its place in the reader's text, and the settings a link can hold are checked in Python.

The catalog is checked against the masker's own source: every raise site with a literal reason
(``self.error(...)``, ``GrammarSyntaxError(...)``, ``UnsupportedKeyword(...)``, ``InvalidSchema(...)``,
``LimitExceeded(...)``...) is found by reading the source (``ast``), and must have a case below,
one bad input that reaches it; a new site without a case fails ``test_every_raise_site_has_a_case``,
and a case whose Spanish message is missing or keeps English words fails
``test_each_raise_site_gets_a_spanish_message``.
"""
from __future__ import annotations

import ast
import json
import pathlib
import re

import pytest
from hypothesis import given, settings, strategies as st

from lesson.laboratorio.errors_es import (CATALOG, DETAIL, JSON_MESSAGES, RE_MESSAGES, es_number, json_message,
                                          re_message, translate, unknown)
from lesson.laboratorio.text_places import string_offset
from lesson.laboratorio.lab import (MAX_TOKENS, SEED_MAX, ConstraintError, Lab, check_settings, compile_constraint,
                                    spanish_error)
from lesson.laboratorio.protocol import act
from lesson.laboratorio.tree import decode_tree
from masker import MaskerError, compile_cfg, compile_choice, compile_json_schema, compile_regex
from masker.errors import LimitExceeded
from masker.json_schema.errors import InvalidSchema, UnsupportedKeyword

MASKER = pathlib.Path(__file__).resolve().parents[3] / "py" / "masker"
REASON_ARG = {"error": 0, "unsupported": 0, "refuse": 0, "GrammarSyntaxError": 2, "UnsupportedFeature": 2,
              "UnsupportedKeyword": 2, "InvalidSchema": 0, "LimitExceeded": 0}
ENGLISH = re.compile(r"\b(the|is|not|expected|found|missing|must|supported|only|after|before|never|defined|"
                     r"bad|unknown|unexpected|matches|needs|too|many|cannot|and|of|or|with|at|an|in|for|this|that|to|be|"
                     r"are|expecting|line|column|char|invalid|delimiter|value)\b", re.IGNORECASE)


def _text(node) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
    return None


def raise_sites() -> dict[str, str]:
    """"module: reason" ({} for each formatted part) -> "file:line", for every raise site of the
    masker whose reason is written where it is raised."""
    out = {}
    for path in sorted(MASKER.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
            if name not in REASON_ARG:
                continue
            if name == "UnsupportedKeyword":
                keyword = repr(node.args[0].value) if isinstance(node.args[0], ast.Constant) else "{}"
                reason = _text(node.args[2]) if len(node.args) > 2 else "is not supported"
                reason = None if reason is None else f"JSON Schema keyword {keyword} {reason}"
            else:
                reason = _text(node.args[REASON_ARG[name]]) if len(node.args) > REASON_ARG[name] else None
            if reason is not None:
                out.setdefault(f"{path.stem}: {reason}", f"{path.name}:{node.lineno}")
    return out


def _filled(site: str) -> str:
    return site.split(": ", 1)[1].replace("{}", "7")


def _raised(call):
    try:
        call()
    except MaskerError as exc:
        return exc
    raise AssertionError("no error")


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


# "module: reason" -> (kind, text) for the lab's compile_constraint, or a callable raising the masker
# error (sites a form cannot reach: run-time limits, keyword arguments the lab does not pass)
CASES: dict[str, object] = {
    "automaton: computing one mask needed too many automaton steps":
        lambda: compile_cfg('root ::= "a" root | "b"').matcher([bytes([i]) for i in range(256)],
                                                             max_trie_steps=1).mask(),
    "budget: finding the token steps of one state needed too many automaton steps":
        lambda: (_ for _ in ()).throw(LimitExceeded(_filled(
            "budget: finding the token steps of one state needed too many automaton steps"),
            "max_trie_steps", 7, "x")),
    "budget: a budget-aware mask had to visit too many states":
        lambda: (_ for _ in ()).throw(LimitExceeded("a budget-aware mask had to visit too many states",
                                                    "max_budget_states", 7, "x")),
    "cfg: no rule named 'root' (the start rule)": ("gbnf", 'raiz ::= "a"'),
    "cfg: rule {} is recursive, so the grammar has no DFA":
        lambda: compile_cfg('root ::= "a" root | "b"', engine="dfa"),
    "cfg: rule {} is used but never defined": ("gbnf", "root ::= foo"),
    "cfg_lowering: the grammar lowers to too many productions":
        lambda: compile_cfg('root ::= x x x\nx ::= "a" | "b" x', max_productions=2),
    "cfg_lowering: the grammar matches no text at all (root never finishes)": ("gbnf", 'root ::= "a" root'),
    "dfa: the automaton needs too many DFA states": lambda: compile_regex("(a|b)*c(a|b){3}", max_states=2),
    "earley: one Earley step needed more than {} items":
        lambda: (_ for _ in ()).throw(LimitExceeded("one Earley step needed more than 7 items", "max_items",
                                                    7, "x").at_prefix(b"abc")),
    "errors: the {} nests too deeply": _deep_regex,
    "gbnf_parse: unexpected character {}": ("gbnf", 'root ::= "a" §'),
    "gbnf_parse: unknown escape \\{}": ("gbnf", 'root ::= "\\q"'),
    "gbnf_parse: token references and negation ({}...) are not supported": ("gbnf", "root ::= <[123]>"),
    "gbnf_parse: nothing to repeat before {}": ("gbnf", "root ::= *"),
    "gbnf_parse: a quantifier follows another quantifier": ("gbnf", 'root ::= "a"*+'),
    "gbnf_parse: bad repetition: expected {m}, {m,} or {m,n}": ("gbnf", 'root ::= "a"{x}'),
    "gbnf_parse: bad repetition {{},{}}: min is greater than max": ("gbnf", 'root ::= "a"{3,1}'),
    "gbnf_parse: repetition bound above {}": ("gbnf", 'root ::= "a"{9999999}'),
    "gbnf_parse: expected a rule name, found {}": ("gbnf", '::= "a"'),
    "gbnf_parse: expected '::=' after rule name {}": ("gbnf", 'root "a"'),
    "gbnf_parse: rule {} is defined twice": ("gbnf", 'root ::= "a"\nroot ::= "b"'),
    "gbnf_parse: missing ')': the group opened here is not closed": ("gbnf", 'root ::= ("a"'),
    "gbnf_parse: missing '\"': the string opened here is not closed": ("gbnf", 'root ::= "abc'),
    "gbnf_parse: bad escape \\{}: expected {} hex digits, found {}": ("gbnf", 'root ::= "\\x4"'),
    "gbnf_parse: bad escape \\{}{}: beyond U+10FFFF": ("gbnf", 'root ::= "\\U00110000"'),
    "gbnf_parse: missing ']': the class opened here is not closed": ("gbnf", "root ::= [ab"),
    "gbnf_parse: bad range {}-{}: start is after end": ("gbnf", "root ::= [z-a]"),
    "compiler: no JSON value satisfies this schema": ("json_schema", '{"type": "integer", "minimum": 10, "maximum": 5}'),
    "compiler: no JSON value satisfies this schema: $ref {} is a cycle with no base case (every branch refers "
    "back to itself, so no finite value ends it)":
        ("json_schema", '{"$defs": {"n": {"type": "object", "properties": {"a": {"$ref": "#/$defs/n"}}, '
                        '"required": ["a"]}}, "$ref": "#/$defs/n"}'),
    "compiler: no JSON value satisfies this schema: $ref {} points to a schema that no value satisfies":
        ("json_schema", '{"$defs": {"nada": false}, "type": "object", "properties": {"a": {"$ref": '
                        '"#/$defs/nada"}}, "required": ["a"]}'),
    "compiler: the schema nests too deeply for the translator": _deep_schema,
    "compiler: not valid JSON: {}": lambda: compile_json_schema("{"),
    "emit: the regex for this schema grows too long":
        lambda: (_ for _ in ()).throw(LimitExceeded("the regex for this schema grows too long",
                                                    "max_regex_chars", 7, "x")),
    "formats: JSON Schema keyword 'format' value 'regex' is not supported: the valid regular expressions nest "
    "their groups to any depth, which no finite automaton can check":
        ("json_schema", '{"type": "string", "format": "regex"}'),
    "formats: JSON Schema keyword 'format' value {} is not supported (supported: {})":
        ("json_schema", '{"type": "string", "format": "color"}'),
    "keywords: enum must be a list": ("json_schema", '{"enum": 5}'),
    "keywords: JSON Schema keyword {} is not supported": ("json_schema", '{"type": "object",\n "unevaluatedProperties": false}'),
    "keywords: {} must be {}, found {}": ("json_schema", '{"maxLength": "x"}'),
    "keywords: unknown type {} (expected one of {})": ("json_schema", '{"type": "texto"}'),
    "keywords: JSON Schema keyword {} in both parts of an allOf is too large":
        ("json_schema", json.dumps({"allOf": [_any_of(9), _any_of(9)]})),
    "keywords: JSON Schema keyword {} with two different values in an allOf is not supported":
        ("json_schema", '{"allOf": [{"prefixItems": [{"type": "string"}]}, {"prefixItems": [{"type": "integer"}]}]}'),
    "keywords: JSON Schema keyword 'contains' with two different values in an allOf is not supported":
        ("json_schema", '{"allOf": [{"contains": {"type": "string"}}, {"contains": {"type": "integer"}}]}'),
    "translate: JSON Schema keyword {} over {}s through a recursive $ref is not supported: only regular "
    "(non-recursive) parts are combined by automata":
        ("json_schema", '{"$defs": {"t": {"type": "string", "not": {"$ref": "#/$defs/t"}}}, "$ref": "#/$defs/t"}'),
    "translate: JSON Schema keyword {} over {}s needs an automaton of more than {} states (it reached {}); this "
    "is not supported": ("json_schema", '{"type": "string", "not": {"pattern": "a.{12}$"}}'),
    "translate: JSON Schema keyword {} together with {} needs an automaton of more than {} states (it reached "
    "{}); this is not supported": ("json_schema", '{"type": "string", "pattern": "^a+b$", "maxLength": 5000}'),
    "pattern: JSON Schema keyword {} with a Unicode property escape (\\p{...}) is not supported":
        ("json_schema", '{"type": "string", "pattern": "^\\\\p{Letter}+$"}'),
    "pattern: JSON Schema keyword 'pattern' with {} is not supported (pattern {})":
        ("json_schema", '{"type": "string", "pattern": "a(?=b)"}'),
    "pattern: category {}": lambda: _reader().category("CATEGORY_LINEBREAK", False),
    "pattern: the construct {}": ("json_schema", '{"type": "string", "pattern": "(a)\\\\1"}'),
    "pattern: {} must be a string, found {}": lambda: __import__(
        "masker.json_schema.pattern", fromlist=["pattern_units"]).pattern_units(5, "#"),
    "pattern: JSON Schema keyword 'pattern' with inline flags is not supported":
        ("json_schema", '{"type": "string", "pattern": "(?i)a"}'),
    "pattern: an anchor or \\b inside the pattern": ("json_schema", '{"type": "string", "pattern": "a^b"}'),
    "pattern: {} {} is not a valid regex ({})": ("json_schema", '{"type": "string", "pattern": "(abc"}'),
    "pattern: inline flags": ("json_schema", '{"type": "string", "pattern": "(?i:a)"}'),
    "pattern: class item {}": lambda: _reader().set_of([("BOGUS", 0)]),
    "translate: JSON Schema keyword '$ref' to {} is not supported (only local JSON pointers such as "
    "'#/$defs/name')": ("json_schema", '{"$ref": "otro.json#/a"}'),
    "translate: a schema must be an object or a boolean, not {}": ("json_schema", "5"),
    "translate: JSON Schema keyword 'dependentRequired' needs more than {} combinations of present and absent "
    "trigger properties (independent triggers double them), which is not supported":
        ("json_schema", json.dumps({"dependentRequired": {k: ["z"] for k in "abcde"}})),
    "translate: {} must be a non-empty list":
        lambda: (_ for _ in ()).throw(InvalidSchema(_filled("translate: {} must be a non-empty list"), "#")),
    "translate: JSON Schema keyword '$ref' to {} is met inside itself with {} different sets of sibling "
    "keywords (they change at every level of the recursion); this is not supported":
        ("json_schema", '{"$defs": {"n": {"$ref": "#/$defs/m"}, "m": {"allOf": [{"$ref": "#/$defs/n"}], '
                        '"type": "integer"}}, "$ref": "#/$defs/n"}'),
    "translate: JSON Schema keyword '$ref' recursion through allOf or sibling keywords is not supported":
        lambda: (_ for _ in ()).throw(UnsupportedKeyword(
            "$ref", "#", "recursion through allOf or sibling keywords is not supported")),
    "translate: {} must be an object": ("json_schema", '{"dependencies": 5}'),
    "translate: $ref {} does not resolve": ("json_schema", '{"$ref": "#/$defs/nada"}'),
    "type_builders: JSON Schema keyword 'maxContains' is not supported (it needs the items that do not match "
    "contains)": ("json_schema", '{"type": "array", "contains": {"type": "integer"}, "maxContains": 2}'),
    "type_builders: JSON Schema keyword 'contains' together with prefixItems is not supported":
        ("json_schema", '{"type": "array", "prefixItems": [{}], "contains": {"type": "integer"}}'),
    "type_builders: JSON Schema keyword 'contains' together with maxItems, or minItems above minContains, is not "
    "supported": ("json_schema", '{"type": "array", "contains": {"type": "integer"}, "maxItems": 3}'),
    "type_builders: JSON Schema keyword 'uniqueItems' together with prefixItems or contains is not supported":
        ("json_schema", '{"type": "array", "prefixItems": [{}], "uniqueItems": true}'),
    "type_builders: JSON Schema keyword 'uniqueItems' is supported only for items from a finite set of values "
    "(enum, const, boolean, null)": ("json_schema", '{"type": "array", "uniqueItems": true}'),
    "type_builders: JSON Schema keyword 'uniqueItems' over {} item values is not supported: it needs {} orders of "
    "them (limit {})": ("json_schema", '{"type": "array", "items": {"enum": [1, 2, 3, 4, 5, 6, 7]}, '
                        '"uniqueItems": true}'),
    "translate: JSON Schema keyword {} over keys needs an automaton of more than {} states (it reached {}); "
    "this is not supported":
        ("json_schema", '{"type": "object", "patternProperties": {"^(?:a{61})*$": {}, "^(?:a{67})*$": {}}}'),
    "type_builders: JSON Schema keyword 'propertyNames' over keys needs an automaton of more than {} states (it "
    "reached {}); this is not supported":
        ("json_schema", '{"type": "object", "properties": {"a": {}}, "propertyNames": {"pattern": "^[a-z]{5000}$"}}'),
    "type_builders: JSON Schema keyword 'minProperties' that extra keys would have to reach (two or more besides "
    "the listed properties) is not supported: a grammar cannot keep them distinct":
        ("json_schema", '{"type": "object", "minProperties": 2}'),
    "translate: JSON Schema keyword {} over objects is not supported here: written as the ways an object breaks "
    "it, it needs {}, which is refused there": ("json_schema", '{"type": "object", "not": {"maxProperties": 1}}'),
    "translate: JSON Schema keyword {} over objects is not supported where the objects it must leave out have no "
    "positive form (an enum of objects, patternProperties, propertyNames, or additionalProperties on an object "
    "that may hold any key); an object has many spellings (key order), so it is never subtracted as text":
        ("json_schema", '{"type": "object", "not": {"additionalProperties": {"type": "integer"}}}'),
    "translate: JSON Schema keyword 'multipleOf' {} needs an automaton of more than {} states (it reached {}); "
    "this is not supported": ("json_schema", '{"type": "number", "multipleOf": 12345.678}'),
    "type_builders: JSON Schema keyword 'minimum' and maximum with fractional values inside one unit interval "
    "({}, {}) are not supported": ("json_schema", '{"type": "number", "minimum": 0.25, "maximum": 0.75}'),
    "values: JSON Schema keyword 'format' value {} is not supported":
        lambda: __import__("masker.json_schema.values", fromlist=["value_allowed"]).value_allowed(
            "x", {"format": "color"}, "#"),
    "check: JSON Schema keyword 'enum' checked against sub-schemas that refer to each other without end is not "
    "supported": ("json_schema", '{"$defs": {"a": {"anyOf": [{"$ref": "#/$defs/a"}]}}, "enum": [[1]], '
                                 '"items": {"$ref": "#/$defs/a"}}'),
    "matcher: the {} matches no text at all (expected at least one complete text, found none)":
        ("regex", "a[^\\x00-\\U0010FFFF]"),
    "nfa: the regular expression expands to too many NFA states":
        lambda: compile_regex("(a|bc)*[a-z]x", max_nfa_states=3),
    "regex_fsm: compile_choice got no texts (expected at least one)": lambda: compile_choice([]),
    "regex_fsm: the choice needs {} DFA states": lambda: compile_choice(["abc", "abd"], max_states=2),
    "regex_parse: unbalanced ')': no group is open here": ("regex", "a)"),
    "regex_parse: nothing to repeat before '{}'": ("regex", "*a"),
    "regex_parse: nothing to repeat before '{'": ("regex", "{3}a"),
    "regex_parse: anchor '{}' in the middle of the pattern": ("regex", "a^b"),
    "regex_parse: trailing backslash at the end of the pattern": ("regex", "a\\"),
    "regex_parse: \\{} (word boundary or anchor) is not a character": ("regex", "a\\bb"),
    "regex_parse: backreference \\{}": ("regex", "(a)\\1"),
    "regex_parse: Unicode property \\{}{...}": ("regex", "\\p{L}"),
    "regex_parse: bad escape \\{}": ("regex", "\\q"),
    "regex_parse: bad escape \\N: expected \\N{NAME}": ("regex", "\\N"),
    "regex_parse: multiple repeat: a quantifier follows another quantifier": ("regex", "a**"),
    "regex_parse: unknown Unicode character name {}": ("regex", "\\N{NO SUCH NAME}"),
    "regex_parse: bad group name: expected (?P<name>...)": ("regex", "(?P<a"),
    "regex_parse: possessive quantifier": ("regex", "a*+"),
    "regex_parse: bad character range: a class like \\d cannot end a range": ("regex", "[a-\\d]"),
    "regex_parse: bad character range {}-{}: start is after end": ("regex", "[z-a]"),
    "regex_parse: missing ')' after comment group (?#": ("regex", "(?#abc"),
    "regex_parse: bad repeat interval {{},{}}: min is greater than max": ("regex", "a{3,1}"),
    "regex_parse: missing ')': the group opened here is not closed": ("regex", "(ab"),
    "regex_parse: missing ']': the class opened here is not closed": ("regex", "[ab"),
    "regex_parse: bad escape \\{}: expected {} hex digits, found {}": ("regex", "\\x4"),
    "regex_parse: bad escape \\{}{}: beyond U+10FFFF": ("regex", "\\U00110000"),
}
# regex_parse._group_feature's names (the reason is the name itself)
FEATURES = ["(?=a)b", "(?!a)b", "(?<=a)b", "(?<!a)b", "(a)(?P=n)", "(?>a)", "(a)(?(1)b)", "(?i)a"]


def spanish_of(case) -> ConstraintError:
    """The error the lab shows for a case."""
    if callable(case):
        exc = _raised(case)
        return spanish_error(exc, "", "")
    kind, text = case
    with pytest.raises(ConstraintError) as info:
        compile_constraint(kind, text)
    return info.value


def english_left(error: ConstraintError) -> list[str]:
    """English words in the message and fix, the caret lines (the reader's own text) left out."""
    lines = [line for line in error.message.split("\n") if not line.startswith("  ")]
    return ENGLISH.findall(re.sub(r"«[^«»]*»", "", " ".join(lines) + " " + error.hint))  # «names» are quoted


def test_every_raise_site_has_a_case():
    sites = raise_sites()
    assert len(sites) > 80  # the scan finds the masker's raise sites
    missing = {site: where for site, where in sites.items() if site not in CASES}
    assert not missing, missing
    assert not set(CASES) - set(sites), set(CASES) - set(sites)  # a case for a site that is gone


@pytest.mark.parametrize("site", sorted(CASES))
def test_each_raise_site_gets_a_spanish_message(site):
    error = spanish_of(CASES[site])
    assert error.kind not in ("masker.other", ""), (site, error.message)
    assert error.kind in CATALOG or error.kind in ("json",), error.kind
    assert DETAIL not in error.message and "fix:" not in error.message
    assert not english_left(error), (error.message, error.hint, english_left(error))
    assert error.hint, site  # a fix too


@pytest.mark.parametrize("site", sorted(s for s, c in CASES.items() if not callable(c)))
def test_a_case_reaches_its_own_site(site):
    """Each form input reaches the raise site it stands for (its reason has the site's words)."""
    kind, text = CASES[site]
    exc = _raised(lambda: {"regex": compile_regex, "gbnf": compile_cfg,
                           "json_schema": lambda t: compile_json_schema(json.loads(t))}[kind](text))
    reason = getattr(exc, "reason", None) or exc.what
    words = re.escape(site.split(": ", 1)[1]).replace(r"\{\}", ".*")
    refused = f"JSON Schema keyword 'pattern' with {words} is not supported .*"  # _PatternReader.refuse
    assert re.fullmatch(words, reason, re.DOTALL) or re.fullmatch(refused, reason, re.DOTALL), (site, reason)


@pytest.mark.parametrize("pattern", FEATURES)
def test_the_regex_features_the_masker_refuses_are_named_in_spanish(pattern):
    error = spanish_of(("regex", pattern))
    assert error.kind.startswith("regex.group_feature.") and re.search("no están? soportad", error.message)
    assert not english_left(error)


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


def test_an_unknown_reason_keeps_its_english_only_as_a_labelled_detail():
    exc = UnsupportedKeyword("frobnicate", "#", "is frobbed")
    error = spanish_error(exc, "json_schema", '{"frobnicate": 1}')
    assert error.kind == "masker.other" and "«frobnicate»" in error.message
    assert f"({DETAIL}: JSON Schema keyword 'frobnicate' is frobbed)" in error.message
    assert translate("JSON Schema keyword 'if' is not supported")[0] == "schema.unsupported"


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
    error = spanish_error(LimitExceeded("the automaton needs too many DFA states", "max_states", 20000, "x"), "", "")
    assert error.message.endswith("(límite: 20\u202f000 estados)") and "max_states" not in error.message
    error = spanish_of(lambda: compile_choice(["abc", "abd"], max_states=2))
    assert "(límite: 2 estados)" in error.message and "=" not in error.message
    error = spanish_of(CASES["cfg_lowering: the grammar lowers to too many productions"])
    assert "(límite: 2 producciones)" in error.message
    error = spanish_of(_deep_regex)
    assert re.search(r"\(límite: [\d\u202f]+ niveles\)", error.message), error.message
    assert "_" not in error.message


def test_no_programmer_words_are_left_in_the_lab_messages(model, tok):
    assert "masker" not in DETAIL and "masker" not in unknown("x")[1]
    assert "el compilador de la máscara" in unknown("x")[1]
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


@pytest.mark.parametrize("case", sorted(CASES) + [f"feature {p}" for p in FEATURES])
def test_the_heading_and_the_message_say_it_once(case):
    """«no soportado en el carácter 2: … no está soportada» says it twice; so would «lista vacía:
    la lista de opciones está vacía»."""
    error = spanish_of(("regex", case[len("feature "):]) if case.startswith("feature ") else CASES[case])
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
