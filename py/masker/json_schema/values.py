"""Constant JSON values (``enum`` and ``const``, 2020-12 validation, sections 6.1.2 and
6.1.3) in the intermediate form, and the checks that keep only the enum values the sibling
keywords allow."""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal
from typing import Any

from .errors import UnsupportedKeyword
from .formats import FORMATS, unsupported_format
from .ir import Lit, Node, alt, seq
from .keywords import ANNOTATIONS, IMPLEMENTED
from .strings import literal_string

# Keywords an enum value is checked against here; with any other constraining keyword next to
# `enum`, the values are checked by ``check.ValueCheck.accepts_value``.
CHECKABLE = frozenset("""type enum minLength maxLength pattern format minimum maximum
    exclusiveMinimum exclusiveMaximum multipleOf minItems maxItems required
    minProperties maxProperties""".split())


def checkable(s: dict[str, Any]) -> bool:
    """True when every constraining keyword of the normalised schema ``s`` is in CHECKABLE
    (internal keywords, such as several object parts, are not)."""
    return all(key in CHECKABLE or (key not in IMPLEMENTED and not key.startswith("\x00"))
               or key in ANNOTATIONS for key in s)


def kind_of(v: Any) -> str:
    """The JSON type of the Python value ``v`` (ints and floats are both "number")."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    return {str: "string", list: "array", dict: "object"}[type(v)]


def has_type(v: Any, t: str) -> bool:
    """True when ``v`` is of JSON Schema type ``t`` (an integral float is an "integer")."""
    k = kind_of(v)
    if t == "integer":
        return k == "number" and (isinstance(v, int) or (math.isfinite(v) and v.is_integer()))
    return k == t


def _number_ok(v: float, s: dict[str, Any]) -> bool:
    return ((("minimum" not in s) or v >= s["minimum"])
            and (("maximum" not in s) or v <= s["maximum"])
            and (("exclusiveMinimum" not in s) or v > s["exclusiveMinimum"])
            and (("exclusiveMaximum" not in s) or v < s["exclusiveMaximum"])
            and (("multipleOf" not in s) or (v / s["multipleOf"]).is_integer()))


def _string_ok(v: str, s: dict[str, Any]) -> bool:
    n = len(v)
    if n < s.get("minLength", 0) or n > s.get("maxLength", n):
        return False
    if "pattern" in s and not re.search(s["pattern"], v):
        return False
    return "format" not in s or bool(re.fullmatch(FORMATS[s["format"]], v))


def value_allowed(v: Any, s: dict[str, Any], path: str) -> bool:
    """True if value ``v`` satisfies the keywords of CHECKABLE in the normalised schema ``s``
    (the others are ``check.ValueCheck.accepts_value``'s: the translator calls this directly
    only when ``s`` has no other constraining keyword, ``checkable``).

    Raises UnsupportedKeyword for an unsupported ``format``.
    """
    if "format" in s and s["format"] not in FORMATS:
        raise unsupported_format(s["format"], path)
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


def const_ir(v: Any, ws: Node) -> Node:
    """The JSON text of ``v`` (keys in the value's own order); ``ws`` is the IR allowed inside
    containers around ``,`` and ``:`` (EMPTY when compact). A non-finite float has no JSON
    text: NOTHING."""
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
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        # json.dumps's spelling, and the canonical one (boolean.CANONICAL_NUMBER) when it
        # differs: 1.0 is the number 1 (core 4.2.2), so "1" is valid too
        return alt(Lit(json.dumps(v)), Lit(canonical_number(v)))
    return Lit(json.dumps(v))


def canonical_number(v: int | float) -> str:
    """``v`` spelled without exponent, without a sign on 0 and without trailing zeros in the
    fraction (``1.0`` -> ``1``, ``1e-7`` -> ``0.0000001``, ``-0.0`` -> ``0``)."""
    if isinstance(v, int):
        return str(v)
    d = Decimal(repr(v)).normalize()
    text = format(d, "f")
    return "0" if d == 0 else text
