"""Keyword tables, normalisation and ``allOf`` merging for JSON Schema.

Policy for every keyword of a schema object:
- IMPLEMENTED keywords constrain the output as the spec says;
- ANNOTATIONS (title, description, ...) do not constrain and are ignored;
- REFUSED keywords (spec keywords that would constrain and are not implemented) raise
  UnsupportedKeyword naming the keyword; the ``content*`` keywords are annotations for a
  validator (2020-12 validation, section 8), but a reader who writes
  ``contentEncoding: base64`` expects base64 text, which the grammar cannot promise, so they
  are refused too;
- any other keyword is unknown to every JSON Schema draft; a validator ignores it (2020-12
  core, section 6.5), so it is ignored here too and listed in
  ``JsonSchemaGrammar.ignored_keywords``.

A schema is a dict or a bool (2020-12 core, section 4.3.2: ``true`` accepts everything,
``false`` nothing); a *normalised* schema is a dict in 2020-12 terms (``normalise``).
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any, Callable, Union

from .errors import InvalidSchema, UnsupportedKeyword, bad_value, json_text

Schema = Union[dict[str, Any], bool]

ANNOTATIONS = frozenset("""title description default examples $schema $id id
    $comment deprecated readOnly writeOnly $anchor $dynamicAnchor $recursiveAnchor $vocabulary $defs
    definitions""".split())
IMPLEMENTED = frozenset("""type enum const properties required
    additionalProperties items prefixItems additionalItems minItems maxItems
    minLength maxLength pattern format minimum maximum exclusiveMinimum
    exclusiveMaximum multipleOf anyOf oneOf allOf $ref uniqueItems
    minProperties maxProperties patternProperties not dependencies dependentRequired
    dependentSchemas if then else contains minContains maxContains propertyNames""".split())
REFUSED = frozenset("""unevaluatedProperties unevaluatedItems $dynamicRef
    $recursiveRef extends disallow divisibleBy contentEncoding contentMediaType
    contentSchema""".split())
# Internal keywords (never in a user's schema: their names start with a NUL), left by ``expand``
# for ``value`` to build by automata (``boolean.py``): EXCLUDE holds the sub-schemas an instance
# must not satisfy (a ``not`` with no positive form), INTERSECT those it must also satisfy (a
# second ``pattern`` or ``format``), each as ``[schema, pointer]``. OBJECTS holds the object
# keywords of the parts of an ``allOf`` that cannot be merged into one (``patternProperties``
# beside other object keywords), each a dict of OBJECT_PART keys, all to hold.
EXCLUDE = "\x00not"
INTERSECT = "\x00and"
OBJECTS = "\x00objects"
INTERNAL = frozenset([EXCLUDE, INTERSECT, OBJECTS])
OBJECT_PART = ("properties", "additionalProperties", "patternProperties", "propertyNames")
KINDS = ("object", "array", "string", "integer", "number", "boolean", "null")
KIND_KEYWORDS = {
    "object": ("properties", "required", "additionalProperties", "minProperties",
               "maxProperties", "patternProperties", "dependencies", "dependentRequired",
               "dependentSchemas", "propertyNames", OBJECTS),
    "array": ("items", "prefixItems", "additionalItems", "minItems", "maxItems",
              "uniqueItems", "contains", "minContains", "maxContains"),
    "string": ("minLength", "maxLength", "pattern", "format"),
    "number": ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"),
}


def _is_count(value) -> bool:  # 2.0 is an integer too (2020-12 core, section 4.2.2)
    return _is_number(value) and value >= 0 and float(value).is_integer()


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_string_list(value) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


# What the value of a keyword must be (2020-12 validation, section 6, "The value of this keyword
# MUST be ..."; draft-4 forms the translator also reads, such as a boolean exclusiveMinimum or an
# ``items`` list, are checked where they are read), with the phrase the error quotes.
VALUE_RULES: dict[str, tuple[Callable[[Any], bool], str]] = {
    **{key: (_is_count, "count") for key in (
        "minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties",
        "minContains", "maxContains")},
    **{key: (_is_number, "number") for key in ("minimum", "maximum")},
    "multipleOf": (lambda v: _is_number(v) and v > 0, "positive_number"),
    **{key: (lambda v: isinstance(v, dict), "object") for key in (
        "properties", "patternProperties", "dependentSchemas", "$defs", "definitions")},
    "dependentRequired": (lambda v: isinstance(v, dict) and all(map(_is_string_list, v.values())),
                          "string_lists"),
    "required": (_is_string_list, "property_names"),
    **{key: (lambda v: isinstance(v, list) and len(v) > 0, "schemas") for key in ("anyOf", "oneOf", "allOf")},
    "uniqueItems": (lambda v: isinstance(v, bool), "boolean"),
    **{key: (lambda v: isinstance(v, str), "string") for key in ("pattern", "format", "$ref")},
}


def check_keywords(schema: dict[str, Any], path: str, ignored: list[str]) -> None:
    """Raise UnsupportedKeyword for the first REFUSED keyword of ``schema``, and InvalidSchema for
    the first keyword whose value has the wrong JSON type (``VALUE_RULES``: ``"properties": 5``,
    ``"maxLength": "x"``), naming the keyword's JSON pointer; append the JSON pointer of each
    keyword unknown to every draft to ``ignored`` (mutated)."""
    for key, value in schema.items():
        if key in INTERNAL:
            continue
        if key in REFUSED:
            raise UnsupportedKeyword(key, path, code="schema.unsupported")
        rule = VALUE_RULES.get(key)
        if rule is not None and not rule[0](value):
            raise bad_value(key, rule[1], f"{path or '#'}/{key}", value)
        if key not in IMPLEMENTED and key not in ANNOTATIONS:
            ignored.append(f"{path or '#'}/{pointer_token(key)}")


def _allof_conflict(keyword: str, path: str) -> UnsupportedKeyword:
    """The error for a keyword with two different values in the two parts of an allOf that
    :func:`merge` cannot combine (to raise): code ``"schema.allof_conflict"``, fields ``keyword``."""
    return UnsupportedKeyword(keyword, path, "with two different values in an allOf is not supported",
                              code="schema.allof_conflict")


def pointer_token(name: str) -> str:
    """``name`` as one reference token of a JSON pointer (RFC 6901, section 3): ``~`` written
    ``~0`` and ``/`` written ``~1``."""
    return name.replace("~", "~0").replace("/", "~1")


def normalise(schema: dict[str, Any], path: str) -> dict[str, Any]:
    """A copy with counts written as floats (``"maxLength": 2.0``) made integers, and draft-4 forms
    rewritten in 2020-12 terms: boolean
    exclusiveMinimum/Maximum, ``items`` as a list (tuple validation, with ``additionalItems``),
    ``const`` as a one-value ``enum``, ``type`` as a list.

    Raises InvalidSchema for a ``type`` outside the seven JSON Schema types or an ``enum``
    that is not a list.
    """
    s = dict(schema)
    for key in ("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties",
                "minContains", "maxContains"):
        if isinstance(s.get(key), float):  # 2.0 is the integer 2 (check_keywords refused 2.5)
            s[key] = int(s[key])
    for ex, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        if isinstance(s.get(ex), bool):
            if s.pop(ex) and bound in s:
                s[ex] = s.pop(bound)
    if isinstance(s.get("items"), list):
        s["prefixItems"] = s.pop("items")
        if "additionalItems" in s:
            s["items"] = s.pop("additionalItems")
    else:
        s.pop("additionalItems", None)  # ignored by the spec without tuple items
    if "const" in s:
        values = [s.pop("const")]
        if "enum" in s:
            values = [v for v in values if any(same_value(v, e) for e in s["enum"])]
        s["enum"] = values
    if "type" in s:
        types = s["type"] if isinstance(s["type"], list) else [s["type"]]
        for t in types:
            if t not in KINDS:
                raise InvalidSchema(f"unknown type {t!r} (expected one of {', '.join(KINDS)})",
                                    path, code="schema.unknown_type", type=json_text(t), types=", ".join(KINDS))
        s["type"] = types
    if "enum" in s and not isinstance(s["enum"], list):
        raise bad_value("enum", "list", path, s["enum"])
    return s


def same_value(a: Any, b: Any) -> bool:
    """JSON equality as JSON Schema defines it (1 == 1.0, True != 1; 2020-12 core, section
    4.2.2)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _types_meet(a: list[str], b: list[str]) -> list[str]:
    """The types in both lists (``integer`` is in ``number``)."""
    out = [t for t in a if t in b]
    if "integer" in a and "number" in b and "integer" not in out:
        out.append("integer")
    if "number" in a and "integer" in b and "integer" not in out:
        out.append("integer")
    return out


def _sub_all(a: Schema, b: Schema) -> Schema:
    """A sub-schema for values that must satisfy both ``a`` and ``b`` (lazy allOf)."""
    if a is True or a == {}:
        return b
    if b is True or b == {}:
        return a
    if a is False or b is False:
        return False
    return {"allOf": [a, b]}


def _merge_properties(a: dict[str, Any], b: dict[str, Any], out: dict[str, Any]) -> None:
    """Set ``properties`` and ``additionalProperties`` of ``out`` (mutated) from both sides: a
    name listed on one side only meets the other side's ``additionalProperties``."""
    pa, pb = a.get("properties", {}), b.get("properties", {})
    props = {}
    for name in list(pa) + [n for n in pb if n not in pa]:
        sa = pa.get(name, a.get("additionalProperties", True))
        sb = pb.get(name, b.get("additionalProperties", True))
        props[name] = _sub_all(sa, sb)
    if props:
        out["properties"] = props
    if "additionalProperties" in a or "additionalProperties" in b:
        out["additionalProperties"] = _sub_all(a.get("additionalProperties", True),
                                               b.get("additionalProperties", True))


def _fold_items(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """If only ``a`` has prefixItems, apply ``b``'s items to them as well."""
    if "prefixItems" in a and "prefixItems" not in b and "items" in b:
        a = dict(a, prefixItems=[_sub_all(p, b["items"]) for p in a["prefixItems"]])
    return a


CONTAINS = ("contains", "minContains", "maxContains")


def _merge_contains(a: dict[str, Any], b: dict[str, Any], path: str) -> dict[str, Any]:
    """``contains`` with its own ``minContains``/``maxContains`` from both sides of an allOf:
    the counts belong to their side's ``contains`` (without it they do nothing, core 10.3.1.3),
    so the same ``contains`` on both sides takes the larger minimum and the smaller maximum.
    Raises UnsupportedKeyword("contains") for two different ``contains``."""
    sides = [x for x in (a, b) if "contains" in x]
    if not sides:
        return {}
    if len(sides) == 2 and a["contains"] != b["contains"]:
        raise _allof_conflict("contains", path)
    out = {"contains": sides[0]["contains"],
           "minContains": max(x.get("minContains", 1) for x in sides)}
    most = [x["maxContains"] for x in sides if "maxContains" in x]
    if most:
        out["maxContains"] = min(most)
    return out


def _common_multiple(a: float, b: float) -> float | int:
    """The least common multiple of two decimal steps (a multiple of both is a multiple of it):
    both written as integers over 10^e, the lcm of the integers over 10^e."""
    da, db = Decimal(repr(a)), Decimal(repr(b))
    e = max(0, -da.as_tuple().exponent, -db.as_tuple().exponent)
    scale = Decimal(10) ** e
    m = math.lcm(int(da * scale), int(db * scale))
    value = Decimal(m) / scale
    return int(value) if value == value.to_integral_value() else float(value)


BOUND_MERGE: dict[str, Callable[[Any, Any], Any]] = {
    "minLength": max, "maxLength": min, "minItems": max, "maxItems": min, "minimum": max,
    "maximum": min, "exclusiveMinimum": max, "exclusiveMaximum": min, "minProperties": max,
    "maxProperties": min}
# (minContains and maxContains count the items that match their own schema's contains: two
# different ones in an allOf cannot be merged into one, and are refused as different values.)


_LEFT_OUT = object()  # _merged's answer for a keyword the merged schema does not hold


def _merged(key: str, x: Any, y: Any, path: str, extra: list) -> Any:
    """The value of ``key`` in :func:`merge`'s result when both schemas hold it (``x``, ``y``), or
    ``_LEFT_OUT``; a second ``pattern`` or ``format`` goes to ``extra``, to be intersected by
    automata. Raises UnsupportedKeyword as :func:`merge` says."""
    if key in ("pattern", "format") and x != y:
        extra.append([{key: y}, path, key])
        return x
    if key in BOUND_MERGE:
        return BOUND_MERGE[key](x, y)
    if key == "type":
        return _types_meet(x, y)
    if key == "required":
        return list(x) + [n for n in y if n not in x]
    if key == "enum":
        return [v for v in x if any(same_value(v, w) for w in y)]
    if key in ("items", "additionalProperties", "propertyNames"):
        return _sub_all(x, y)
    if key in ("anyOf", "oneOf"):
        if len(x) * len(y) > 64:
            raise UnsupportedKeyword(key, path, "in both parts of an allOf is too large",
                                     code="schema.allof_too_large", most=64)
        return [{"allOf": [p, q]} for p in x for q in y]
    if key == "uniqueItems":
        return x or y
    if key == "multipleOf" and x != y:
        return _common_multiple(x, y)
    if key in INTERNAL:
        return list(x) + [part for part in y if part not in x]
    if key in ANNOTATIONS or key == "properties":
        return _LEFT_OUT
    if x != y and key in IMPLEMENTED:
        raise _allof_conflict(key, path)
    return x  # the same value on both sides (a pattern, a format, a multipleOf...): kept


def merge(a: dict[str, Any], b: dict[str, Any], path: str) -> dict[str, Any]:
    """The schema of instances valid under both normalised schemas ``a`` and ``b`` (neither
    holding ``$ref`` or ``allOf`` at the top): ``allOf`` (2020-12 core, section 10.2.1.1) as
    one schema. Sub-schemas that must both hold are combined lazily as {"allOf": [x, y]}.

    Two different ``pattern``s (or ``format``s) keep the first; the second goes to
    ``INTERSECT``, built by automata in ``Translator.combined``; ``patternProperties`` beside
    other object keywords keeps each side's object keywords apart (``OBJECTS``), for the object
    builder to apply both. Raises UnsupportedKeyword when the two cannot be merged exactly:
    ``anyOf``/``oneOf`` on both sides with more than 64 combined branches, or two different
    values of another keyword with no merge rule.
    """
    parts = _object_parts(a, b)
    if parts is not None:
        a = {k: v for k, v in a.items() if k not in OBJECT_PART and k != OBJECTS}
        b = {k: v for k, v in b.items() if k not in OBJECT_PART and k != OBJECTS}
    a, b = _fold_items(a, b), _fold_items(b, a)
    counts = _merge_contains(a, b, path)
    a = {k: v for k, v in a.items() if k not in CONTAINS}
    b = {k: v for k, v in b.items() if k not in CONTAINS}
    out = {k: v for k, v in a.items() if k not in b}
    out.update({k: v for k, v in b.items() if k not in a})
    extra = []  # a second pattern or format: intersected by automata (boolean.py)
    for key in a.keys() & b.keys():
        value = _merged(key, a[key], b[key], path, extra)
        if value is not _LEFT_OUT:
            out[key] = value
    out.update(counts)
    if extra:
        out[INTERSECT] = list(out.get(INTERSECT, [])) + [e for e in extra
                                                         if e not in out.get(INTERSECT, [])]
    if parts is not None:
        out[OBJECTS] = parts
    elif "properties" in a or "properties" in b:
        _merge_properties(a, b, out)
    return out


def _object_parts(a: dict[str, Any], b: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The object keywords of ``a`` and ``b`` as separate parts (``OBJECTS``) when they cannot
    be merged into one schema: ``patternProperties`` on one side and other object keywords on
    the other (which keys a pattern or ``additionalProperties`` covers depends on its own
    side's names), or parts already kept apart. None when they merge as usual."""
    def own(x: dict[str, Any]) -> list[dict[str, Any]]:
        if OBJECTS in x:
            return list(x[OBJECTS])
        part = {k: x[k] for k in OBJECT_PART if k in x}
        return [part] if part else []
    mixed = ("patternProperties" in a and any(k in b for k in OBJECT_PART)) or (
        "patternProperties" in b and any(k in a for k in OBJECT_PART))
    if not mixed and OBJECTS not in a and OBJECTS not in b:
        return None
    return own(a) + own(b)
