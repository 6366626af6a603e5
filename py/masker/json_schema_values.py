"""Constant JSON values (`enum`, `const`) in the intermediate form, and the
checks that keep only the enum values the sibling keywords allow."""
from __future__ import annotations

import json
import math
import re

from .json_schema_errors import UnsupportedKeyword
from .json_schema_formats import FORMATS
from .json_schema_ir import Lit, alt, seq
from .json_schema_keywords import ANNOTATIONS, IMPLEMENTED
from .json_schema_strings import literal_string

# Keywords an enum value is checked against; with any other constraining
# keyword next to `enum`, the schema is refused.
CHECKABLE = frozenset("""type enum minLength maxLength pattern format minimum maximum
    exclusiveMinimum exclusiveMaximum multipleOf minItems maxItems required
    minProperties maxProperties""".split())


def kind_of(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    return {str: "string", list: "array", dict: "object"}[type(v)]


def has_type(v, t):
    k = kind_of(v)
    if t == "integer":
        return k == "number" and (isinstance(v, int) or (math.isfinite(v) and v.is_integer()))
    return k == t


def _number_ok(v, s):
    return ((("minimum" not in s) or v >= s["minimum"])
            and (("maximum" not in s) or v <= s["maximum"])
            and (("exclusiveMinimum" not in s) or v > s["exclusiveMinimum"])
            and (("exclusiveMaximum" not in s) or v < s["exclusiveMaximum"])
            and (("multipleOf" not in s) or (v / s["multipleOf"]).is_integer()))


def _string_ok(v, s):
    n = len(v)
    if n < s.get("minLength", 0) or n > s.get("maxLength", n):
        return False
    if "pattern" in s and not re.search(s["pattern"], v):
        return False
    return "format" not in s or bool(re.fullmatch(FORMATS[s["format"]], v))


def value_allowed(v, s, path):
    """True if value `v` satisfies the normalised schema `s` (keywords in CHECKABLE)."""
    for key in s:
        if key not in CHECKABLE and key in IMPLEMENTED and key not in ANNOTATIONS:
            raise UnsupportedKeyword(key, path, "next to enum/const is not supported")
    if "format" in s and s["format"] not in FORMATS:
        raise UnsupportedKeyword("format", path, "value %r is not supported" % s["format"])
    if "type" in s and not any(has_type(v, t) for t in s["type"]):
        return False
    k = kind_of(v)
    if k == "number":
        return _number_ok(v, s)
    if k == "string":
        return _string_ok(v, s)
    if k == "array":
        return s.get("minItems", 0) <= len(v) <= s.get("maxItems", len(v))
    if k == "object":
        return (all(r in v for r in s.get("required", ()))
                and s.get("minProperties", 0) <= len(v) <= s.get("maxProperties", len(v)))
    return True


def const_ir(v, ws):
    """The JSON text of `v` (keys in the value's own order); `ws` is the IR
    allowed inside containers around `,` and `:` (EMPTY when compact)."""
    if isinstance(v, str):
        return Lit(literal_string(v))
    if isinstance(v, list):
        items = []
        for i, x in enumerate(v):
            items += ([ws, Lit(","), ws] if i else []) + [const_ir(x, ws)]
        return seq(Lit("["), ws, *items, ws, Lit("]"))
    if isinstance(v, dict):
        items = []
        for i, (key, x) in enumerate(v.items()):
            items += ([ws, Lit(","), ws] if i else [])
            items += [Lit(literal_string(key)), ws, Lit(":"), ws, const_ir(x, ws)]
        return seq(Lit("{"), ws, *items, ws, Lit("}"))
    if isinstance(v, float) and not math.isfinite(v):
        return alt()
    return Lit(json.dumps(v))
