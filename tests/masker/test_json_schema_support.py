"""Shared helpers for the JSON Schema tests (no tests here).

- `IRSampler`: random strings of the language of intermediate-form rules,
  an independent way to check the translation before any automaton exists.
- `validator(schema)`: the `jsonschema` library's validator for the draft the
  schema declares (2020-12 by default), with format checking on.
- `SCHEMAS`: hand-written schemas used across the tests.
"""
from __future__ import annotations

import random

import jsonschema

from masker.json_schema.ir import Alt, Chars, Lit, Ref, Repeat, Seq

INF = float("inf")


def _minlens(rules):
    """Shortest string length of every rule (fixpoint)."""
    size = {name: INF for name in rules}

    def m(node):
        if isinstance(node, Lit):
            return len(node.text)
        if isinstance(node, Chars):
            return 1
        if isinstance(node, Seq):
            return sum(m(i) for i in node.items)
        if isinstance(node, Alt):
            return min((m(i) for i in node.items), default=INF)
        if isinstance(node, Repeat):
            return node.lo * m(node.item) if node.lo else 0
        return size[node.name]

    changed = True
    while changed:
        changed = False
        for name, body in rules.items():
            v = m(body)
            if v < size[name]:
                size[name], changed = v, True
    return m


class IRSampler:
    def __init__(self, rules, seed=0, ascii_bias=0.8):
        self.rules, self.rng, self.bias = rules, random.Random(seed), ascii_bias
        self.minlen = _minlens(rules)

    def sample(self, max_depth=6):
        out = []
        self._gen(Ref("root"), 0, max_depth, out)
        return "".join(out)

    def _char(self, ranges):
        ascii_ranges = [(lo, min(hi, 126)) for lo, hi in ranges if lo <= 126]
        if ascii_ranges and self.rng.random() < self.bias:
            ranges = ascii_ranges
        lo, hi = self.rng.choice(ranges)
        return chr(self.rng.randint(lo, hi))

    def _gen(self, node, depth, max_depth, out):
        rng = self.rng
        if isinstance(node, Lit):
            out.append(node.text)
        elif isinstance(node, Chars):
            out.append(self._char(node.ranges))
        elif isinstance(node, Seq):
            for it in node.items:
                self._gen(it, depth, max_depth, out)
        elif isinstance(node, Alt):
            items = [i for i in node.items if self.minlen(i) < INF]
            if depth >= max_depth:
                best = min(self.minlen(i) for i in items)
                items = [i for i in items if self.minlen(i) == best]
            self._gen(rng.choice(items), depth, max_depth, out)
        elif isinstance(node, Repeat):
            hi = node.lo + 3 if node.hi is None else min(node.hi, node.lo + 3)
            n = node.lo if depth >= max_depth else rng.randint(node.lo, hi)
            for _ in range(n):
                self._gen(node.item, depth, max_depth, out)
        else:
            self._gen(self.rules[node.name], depth + 1, max_depth, out)


def validator(schema):
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


LESSON_B = {"type": "object",
            "properties": {"personaje": {"enum": ["Benina", "Almudena", "Frasquito",
                                                  "Obdulia", "Juliana"]}},
            "required": ["personaje"], "additionalProperties": False}

TREE = {"$defs": {"node": {"type": "object",
                           "properties": {"name": {"type": "string", "maxLength": 8},
                                          "children": {"type": "array",
                                                       "items": {"$ref": "#/$defs/node"}}},
                           "required": ["name"], "additionalProperties": False}},
        "$ref": "#/$defs/node"}

SCHEMAS = {
    "lesson_b": LESSON_B,
    "tree": TREE,
    "person": {"type": "object", "properties": {
        "nombre": {"type": "string", "minLength": 1, "maxLength": 12},
        "edad": {"type": "integer", "minimum": 0, "maximum": 130},
        "email": {"type": "string", "format": "email"},
        "ciudad": {"enum": ["Madrid", "Cádiz", "A Coruña"]}},
        "required": ["nombre", "edad"], "additionalProperties": False},
    "numbers": {"type": "object", "properties": {
        "n": {"type": "number"}, "i": {"type": "integer"},
        "r": {"type": "number", "minimum": -5, "exclusiveMaximum": 10},
        "k": {"type": "integer", "exclusiveMinimum": -3, "maximum": 250}},
        "required": ["n", "i", "r", "k"], "additionalProperties": False},
    "dates": {"type": "array", "items": {"anyOf": [
        {"type": "string", "format": "date"}, {"type": "string", "format": "time"},
        {"type": "string", "format": "date-time"}, {"type": "string", "format": "uuid"}]},
        "maxItems": 3},
    "tuple": {"type": "array", "prefixItems": [{"type": "boolean"}, {"type": "null"},
                                               {"const": "ñandú"}],
              "items": {"type": "integer"}, "minItems": 2, "maxItems": 5},
    "pattern": {"type": "object", "properties": {
        "code": {"type": "string", "pattern": "^[A-Z]{2}-\\d{3}$"},
        "free": {"type": "string", "pattern": "a[^b]c"},
        "neg": {"type": "string", "pattern": "^\\D\\W?$"}},
        "required": ["code", "free", "neg"], "additionalProperties": False},
    "extra_keys": {"type": "object", "properties": {"id": {"type": "integer"}},
                   "additionalProperties": {"type": "string", "maxLength": 3}},
    "free_object": {"type": "object", "properties": {"id": {"const": 1}}, "required": ["id"]},
    "any_value": {},
    "nullable": {"type": ["string", "null"], "maxLength": 4},
    "all_of": {"allOf": [{"type": "object", "properties": {"a": {"type": "integer"}},
                          "required": ["a"]},
                         {"properties": {"a": {"maximum": 99}, "b": {"type": "boolean"}},
                          "required": ["b"],
                          "additionalProperties": False}]},
    "one_of": {"oneOf": [{"type": "object", "properties": {"kind": {"const": "circle"},
                                                           "r": {"type": "number"}},
                          "required": ["kind", "r"], "additionalProperties": False},
                         {"type": "object", "properties": {"kind": {"const": "square"},
                                                           "side": {"type": "integer"}},
                          "required": ["kind", "side"], "additionalProperties": False},
                         {"type": "string"}]},
    "definitions_draft7": {"$schema": "http://json-schema.org/draft-07/schema#",
                           "definitions": {"pos": {"type": "integer", "minimum": 1}},
                           "type": "array", "items": {"$ref": "#/definitions/pos"},
                           "maxItems": 4},
    "expr": {"$defs": {"e": {"anyOf": [{"type": "integer", "minimum": 0, "maximum": 9},
                                       {"type": "array", "prefixItems": [
                                           {"enum": ["+", "*"]}, {"$ref": "#/$defs/e"},
                                           {"$ref": "#/$defs/e"}], "items": False,
                                        "minItems": 3}]}},
             "$ref": "#/$defs/e"},
    "pattern_properties": {"type": "object", "properties": {"id": {"type": "integer"}},
                           "patternProperties": {"^x-[a-z]": {"type": "string", "maxLength": 2}},
                           "required": ["id"], "additionalProperties": False},
    "not_forms": {"type": "object", "properties": {
        "a": {"not": {"type": ["string", "object", "array"]}}, "b": {"not": {}},
        "d": {"type": "integer"}, "e": {"type": "boolean"}},
        "not": {"anyOf": [{"required": ["c"]}, {"required": ["d", "e"]}]}, "required": ["a"]},
    "dependencies": {"type": "object", "properties": {
        "a": {"type": "integer"}, "b": {"type": "integer"}, "c": {"type": "boolean"}},
        "dependentRequired": {"a": ["b"]},
        "dependentSchemas": {"c": {"properties": {"b": {"minimum": 5}}}},
        "additionalProperties": False},
    "dependencies_draft4": {"$schema": "http://json-schema.org/draft-04/schema#",
                            "type": "object", "properties": {
                                "x": {"type": "string", "maxLength": 2}, "y": {"type": "null"}},
                            "dependencies": {"x": ["y"], "y": {"required": ["x"]}},
                            "additionalProperties": False},
    "unicode": {"type": "object", "properties": {
        "s": {"enum": ["canción", "«hola»", "—", "😀", "a\"b\\c\n"]},
        "t": {"type": "string", "minLength": 2, "maxLength": 2}},
        "required": ["s", "t"], "additionalProperties": False},
}
