"""Whether one constant JSON value is valid under a schema: the enum values that the sibling
keywords allow, when those keywords go beyond the scalar checks of ``values.value_allowed``
(``properties`` next to an ``enum`` of objects, say: a difference over objects writes such
schemas, ``Translator.object_violations``).

A mixin of ``Translator``: each sub-schema is read through ``Translator.expand``, so
references, ``allOf``, ``not`` (as ``EXCLUDE``), ``if`` and the dependency keywords mean what
they mean everywhere else. The keywords checked are those the translator implements
(2020-12 core section 10, validation section 6), on a finite value; ``format`` as the regexes
of ``formats.py``, so a value the grammar would never write is never kept.
"""

from __future__ import annotations

import re
from typing import Any

from .errors import UnsupportedKeyword
from .keywords import EXCLUDE, INTERSECT, OBJECT_PART, OBJECTS, Schema, same_value
from .values import has_type, kind_of, value_allowed

MAX_DEPTH = 200  # sub-schemas entered for one value before giving up (a $ref cycle)


class ValueCheck:
    """``accepts_value`` for ``Translator`` (which provides ``expand``)."""

    def accepts_value(self, v: Any, schema: Schema, path: str, depth: int = 0) -> bool:
        """True when the JSON value ``v`` (Python form: dict, list, str, int/float, bool,
        None) is valid under ``schema`` (at JSON pointer ``path``).

        Raises UnsupportedKeyword("enum") past MAX_DEPTH nested sub-schemas (a reference that
        reaches itself without reading into the value), and whatever ``expand`` raises."""
        if depth > MAX_DEPTH:
            raise UnsupportedKeyword("enum", path, "checked against sub-schemas that refer to "
                                     "each other without end is not supported", code="schema.enum_cycle")
        s = self.expand(schema, path)
        deeper = depth + 1
        for target, pointer, _ in s.get(EXCLUDE, []):
            if self.accepts_value(v, target, pointer, deeper):
                return False
        for target, pointer, _ in s.get(INTERSECT, []):
            if not self.accepts_value(v, target, pointer, deeper):
                return False
        if "anyOf" in s and not any(self.accepts_value(v, b, f"{path}/anyOf/{i}", deeper)
                                    for i, b in enumerate(s["anyOf"])):
            return False
        if "oneOf" in s and sum(self.accepts_value(v, b, f"{path}/oneOf/{i}", deeper)
                                for i, b in enumerate(s["oneOf"])) != 1:
            return False
        if "enum" in s and not any(same_value(v, w) for w in s["enum"]):
            return False
        if "type" in s and not any(has_type(v, t) for t in s["type"]):
            return False
        kind = kind_of(v)
        if kind == "array":
            return self._array_ok(v, s, path, deeper)
        if kind == "object":
            return self._object_ok(v, s, path, deeper)
        scalar = {k: s[k] for k in s if k in ("minLength", "maxLength", "pattern", "format",
                                               "minimum", "maximum", "exclusiveMinimum",
                                               "exclusiveMaximum", "multipleOf")}
        return value_allowed(v, scalar, path)

    def _array_ok(self, v: list, s: dict[str, Any], path: str, depth: int) -> bool:
        if not s.get("minItems", 0) <= len(v) <= s.get("maxItems", len(v)):
            return False
        prefix = s.get("prefixItems", [])
        for i, item in enumerate(v):
            sub = prefix[i] if i < len(prefix) else s.get("items", True)
            if not self.accepts_value(item, sub, f"{path}/items", depth):
                return False
        if s.get("uniqueItems") and any(same_value(a, b) for i, a in enumerate(v)
                                        for b in v[i + 1:]):
            return False
        if "contains" in s:
            found = sum(self.accepts_value(item, s["contains"], f"{path}/contains", depth)
                        for item in v)
            if not s.get("minContains", 1) <= found <= s.get("maxContains", found):
                return False
        return True

    def _object_ok(self, v: dict, s: dict[str, Any], path: str, depth: int) -> bool:
        if not s.get("minProperties", 0) <= len(v) <= s.get("maxProperties", len(v)):
            return False
        if any(name not in v for name in s.get("required", [])):
            return False
        parts = s.get(OBJECTS) or [{k: s[k] for k in OBJECT_PART if k in s}]
        for part in parts:
            names = part.get("propertyNames", True)
            for key, value in v.items():
                if names is not True and not self.accepts_value(
                        key, names, f"{path}/propertyNames", depth):
                    return False
                listed = part.get("properties", {})
                matched = [sub for pattern, sub in part.get("patternProperties", {}).items()
                           if re.search(pattern, key)]
                subs = ([listed[key]] if key in listed else []) + matched
                if not subs:
                    subs = [part.get("additionalProperties", True)]
                if not all(self.accepts_value(value, sub, f"{path}/properties/{key}", depth)
                           for sub in subs):
                    return False
        return True
