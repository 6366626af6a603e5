"""Per-type translation (number, string, array, object) for `Translator`.

Objects: the properties listed in `properties` come first, in schema order;
a property not in `required` may be skipped. Extra keys (when
`additionalProperties` is absent, true or a schema) come after the listed
ones; they are written with raw characters only and never equal a listed
name, so each key is checked by exactly one schema. A name in `required`
that `properties` does not list is emitted after the listed ones, with the
`additionalProperties` schema. A sub-schema no value satisfies becomes the
empty language (an error only if the whole schema is empty).
"""
from __future__ import annotations

import re

from .json_schema_errors import UnsupportedKeyword
from .json_schema_formats import format_units
from .json_schema_ir import EMPTY, NOTHING, Lit, alt, opt, repeat, seq
from .json_schema_numbers import INTEGER, NUMBER, integer_bounds, number_bounds
from .json_schema_pattern import pattern_units, single_char_repeat
from .json_schema_strings import (QUOTE, encoded_chars, json_string, key_not_in,
                                  literal_string)

BOUNDS = ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum")


class TypeBuilder:
    def sep(self, text):
        return seq(self.ws, Lit(text), self.ws)

    # ---- numbers ----------------------------------------------------------
    def number(self, t, s, path):
        step = s.get("multipleOf")
        if step is not None:
            if step != 1:
                raise UnsupportedKeyword("multipleOf", path, "is supported only with value 1")
            t = "integer"
        lo, hi = s.get("minimum"), s.get("maximum")
        xlo, xhi = s.get("exclusiveMinimum"), s.get("exclusiveMaximum")
        if xlo is not None and (lo is None or xlo >= lo):
            lo, lo_x = xlo, True
        else:
            lo_x = False
        if xhi is not None and (hi is None or xhi <= hi):
            hi, hi_x = xhi, True
        else:
            hi_x = False
        if t == "integer":
            return INTEGER if lo is None and hi is None else integer_bounds(lo, lo_x, hi, hi_x)
        if lo is None and hi is None:
            return NUMBER
        try:
            return number_bounds(lo, lo_x, hi, hi_x)
        except ValueError:
            raise UnsupportedKeyword("minimum", path, "and maximum with fractional values "
                                     "inside one unit interval (%r, %r) are not supported"
                                     % (lo, hi)) from None

    # ---- strings ----------------------------------------------------------
    def string(self, s, path):
        lo, hi = s.get("minLength", 0), s.get("maxLength")
        lengths = lo > 0 or hi is not None
        if "format" in s:
            if lengths or "pattern" in s:
                raise UnsupportedKeyword("format", path, "together with minLength, maxLength "
                                         "or pattern is not supported")
            return seq(QUOTE, format_units(s["format"], path), QUOTE)
        if "pattern" in s:
            if not lengths:
                return seq(QUOTE, pattern_units(s["pattern"], path), QUOTE)
            simple = single_char_repeat(s["pattern"], path)
            if simple is None:
                raise UnsupportedKeyword("pattern", path, "together with minLength/maxLength "
                                         "is supported only for patterns like ^[a-z]{m,n}$")
            ranges, plo, phi = simple
            top = hi if phi is None else phi if hi is None else min(hi, phi)
            return seq(QUOTE, repeat(encoded_chars(ranges), max(lo, plo), top), QUOTE)
        return json_string(lo, hi)

    # ---- arrays -----------------------------------------------------------
    def array(self, s, path):
        lo, hi = s.get("minItems", 0), s.get("maxItems")
        if s.get("uniqueItems") and (hi is None or hi > 1):
            raise UnsupportedKeyword("uniqueItems", path)
        prefix = [self.value(p, "%s/prefixItems/%d" % (path, i))
                  for i, p in enumerate(s.get("prefixItems", []))]
        rest = s.get("items", True)
        item = self.any_value() if rest is True else self.value(rest, path + "/items")
        return seq(Lit("["), self.ws, self._elements(0, prefix, item, lo, hi), self.ws, Lit("]"))

    def _elements(self, i, prefix, item, lo, hi):
        """Elements from position i on, i of them already written."""
        comma = self.sep(",")
        if i >= len(prefix):
            more = seq(comma, item)
            if i > 0:
                return repeat(more, max(0, lo - i), None if hi is None else hi - i)
            if hi == 0:
                return EMPTY
            rest = repeat(more, max(0, lo - 1), None if hi is None else hi - 1)
            return alt(seq(item, rest), EMPTY if lo == 0 else NOTHING)
        if hi is not None and i >= hi:
            return EMPTY if i >= lo else NOTHING
        piece = seq(comma if i else EMPTY, prefix[i],
                    self._elements(i + 1, prefix, item, lo, hi))
        return alt(piece, EMPTY) if i >= lo else piece

    # ---- objects ----------------------------------------------------------
    def object(self, s, path):
        props = dict(s.get("properties", {}))
        required = list(s.get("required", []))
        extra = s.get("additionalProperties", True)
        pattern, pattern_schema = self._pattern_properties(s, props, path)
        for name in required:
            if name not in props:
                if pattern is not None and re.search(pattern, name):
                    raise UnsupportedKeyword("patternProperties", path, "whose pattern matches "
                                             "the required name %r is not supported" % name)
                if extra is False:
                    return NOTHING  # required but forbidden: no object matches
                props[name] = extra
        members = []
        for name, sub in props.items():
            if sub is False:
                if name in required:
                    return NOTHING
                continue
            value = self.value(sub, "%s/properties/%s" % (path, name))
            members.append((seq(Lit(literal_string(name)), self.sep(":"), value),
                            name in required))
        extra_member = NOTHING
        if pattern is not None:
            key = seq(QUOTE, pattern_units(pattern, path + "/patternProperties"), QUOTE)
            value = self.value(pattern_schema, path + "/patternProperties")
            extra_member = seq(key, self.sep(":"), value)
        elif extra is not False:
            value = self.any_value() if extra is True else self.value(
                extra, path + "/additionalProperties")
            extra_member = seq(key_not_in(list(props)), self.sep(":"), value)
        self._check_counts(s, members, extra_member, path)
        return seq(Lit("{"), self.ws, self._members(members, extra_member), self.ws, Lit("}"))

    def _pattern_properties(self, s, props, path):
        """(pattern, schema) of a single-entry patternProperties, or (None, None).

        Extra keys are then generated from the pattern only (keys matching no
        pattern are not produced, which is narrower than the spec, never wider),
        so additionalProperties does not add keys. Refused when a listed property
        name matches the pattern (its key could then be produced twice)."""
        pp = s.get("patternProperties")
        if not pp:
            return None, None
        if not isinstance(pp, dict) or len(pp) != 1:
            raise UnsupportedKeyword("patternProperties", path, "with more than one pattern "
                                     "is not supported")
        (pattern, schema), = pp.items()
        clash = [n for n in props if re.search(pattern, n)]
        if clash:
            raise UnsupportedKeyword("patternProperties", path, "whose pattern matches the "
                                     "listed property %r is not supported" % clash[0])
        return pattern, schema

    def _members(self, members, extra):
        comma = self.sep(",")
        after = repeat(seq(comma, extra), 0, None) if extra != NOTHING else EMPTY
        first = opt(seq(extra, after)) if extra != NOTHING else EMPTY
        for member, needed in reversed(members):
            with_it = seq(member, after)
            first = with_it if needed else alt(with_it, first)
            after = seq(comma, with_it) if needed else seq(opt(seq(comma, member)), after)
        return first

    def _check_counts(self, s, members, extra, path):
        least = sum(1 for _, needed in members if needed)
        most = None if extra != NOTHING else len(members)
        if s.get("minProperties", 0) > least:
            raise UnsupportedKeyword("minProperties", path, "above the number of required "
                                     "properties is not supported")
        if "maxProperties" in s and (most is None or s["maxProperties"] < most):
            raise UnsupportedKeyword("maxProperties", path, "below the number of allowed "
                                     "properties is not supported")
