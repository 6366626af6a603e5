"""Per-type translation (number, string, array, object) for ``Translator``.

Each builder takes the expanded, normalised schema ``s`` (``Translator.expand``) and the JSON
pointer ``path`` of the schema (for error messages), and returns the intermediate-form node
of the JSON texts of that type that ``s`` accepts. Sub-schemas are translated with
``Translator.value``; a sub-schema no value satisfies becomes the empty language (NOTHING),
an error only if the whole schema is empty.

Objects: the properties listed in ``properties`` come first, in schema order; a property not
in ``required`` may be skipped. Extra keys (when ``additionalProperties`` is absent, true or a
schema) come after the listed ones; they are written with raw characters only and never equal
a listed name, so each key is checked by exactly one schema. A name in ``required`` that
``properties`` does not list is emitted after the listed ones, with the
``additionalProperties`` schema.

Section numbers refer to JSON Schema 2020-12 ("core", "validation"), and to RFC 8259 for the
JSON texts themselves.
"""

from __future__ import annotations

import re
from typing import Any

from .errors import UnsupportedKeyword
from .formats import format_units
from .ir import EMPTY, NOTHING, Lit, Node, alt, opt, repeat, seq
from .keywords import Schema
from .numeric import INTEGER, NUMBER, integer_bounds, number_bounds
from .pattern import check_pattern, pattern_units, single_char_repeat
from .strings import QUOTE, encoded_chars, json_string, key_not_in, literal_string

BOUNDS = ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum")


class TypeBuilder:
    """The type builders of ``Translator`` (a mixin): ``number``, ``string``, ``array`` and
    ``object``. They use the translator's ``ws`` (the whitespace node allowed between tokens
    inside a value), ``value(schema, path)`` and ``any_value()``."""

    ws: Node

    def sep(self, text: str) -> Node:
        """The separator ``text`` ("," or ":") with the allowed whitespace around it."""
        return seq(self.ws, Lit(text), self.ws)

    # ---- numbers ----------------------------------------------------------
    def number(self, t: str, s: dict[str, Any], path: str) -> Node:
        """JSON numbers (RFC 8259 section 6) of type ``t`` ("integer" or "number") within the
        bounds of ``s`` (validation 6.2.2 to 6.2.5: ``minimum``, ``maximum``,
        ``exclusiveMinimum``, ``exclusiveMaximum``; the tighter of a bound and its exclusive
        twin wins). ``multipleOf`` (validation 6.2.1): 1 makes the type "integer"; any other
        value intersects the numbers with the residue automaton of its multiples
        (``numeric.multiples_dfa``, exact decimal arithmetic: 0.3 is a multiple of 0.1), which
        writes no exponent.

        Integers are written without fraction or exponent; bounded numbers without exponent.
        Raises UnsupportedKeyword("multipleOf") when its automaton needs too many states, and
        UnsupportedKeyword("minimum") for "number" bounds that are both fractional and inside
        one unit interval (e.g. [0.25, 0.75]).
        """
        step = s.get("multipleOf")
        if step == 1:
            t, step = "integer", None
        base = self._bounded(t, s, path)
        if step is None or base == NOTHING:
            return base
        return self.multiples(base, step, t == "integer", path)

    def _bounded(self, t: str, s: dict[str, Any], path: str) -> Node:
        """``number`` without ``multipleOf``: the type and the bounds."""
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
                                     f"inside one unit interval ({lo!r}, {hi!r}) are not "
                                     "supported") from None

    # ---- strings ----------------------------------------------------------
    def string(self, s: dict[str, Any], path: str) -> Node:
        """JSON strings (RFC 8259 section 7) valid under ``s``: ``minLength``/``maxLength``
        (validation 6.3.1, 6.3.2; counted in code points), ``pattern`` (validation 6.3.3,
        searched, not anchored) and ``format`` (validation 7.3; the formats of
        ``formats.FORMATS``).

        ``format``, ``pattern`` and the lengths together are intersected by automata
        (``intersection``), except a pattern that is one repeated character class
        (``^[a-z]{m,n}$``), whose bounds simply meet the lengths. Raises
        UnsupportedKeyword("format") for an unknown format, UnsupportedKeyword("pattern") for
        the regex constructs ``pattern.py`` refuses, UnsupportedKeyword naming the first
        keyword when the intersection needs too many states; InvalidSchema for a ``pattern``
        that is not a valid regex.
        """
        lo, hi = s.get("minLength", 0), s.get("maxLength")
        lengths = lo > 0 or hi is not None
        if "pattern" in s and lengths and "format" not in s:
            simple = single_char_repeat(s["pattern"], path)
            if simple is not None:  # ^[a-z]{m,n}$: one counted repetition, any bounds
                ranges, plo, phi = simple
                top = hi if phi is None else phi if hi is None else min(hi, phi)
                return seq(QUOTE, repeat(encoded_chars(ranges), max(lo, plo), top), QUOTE)
        parts = []  # (keyword, node): intersected by automata when there are several
        if "format" in s:
            parts.append(("format", seq(QUOTE, format_units(s["format"], path), QUOTE)))
        if "pattern" in s:
            parts.append(("pattern", seq(QUOTE, pattern_units(s["pattern"], path), QUOTE)))
        if lengths or not parts:
            parts.append(("maxLength" if hi is not None else "minLength", json_string(lo, hi)))
        if len(parts) == 1:
            return parts[0][1]
        return self.intersection(parts, path)

    # ---- arrays -----------------------------------------------------------
    def array(self, s: dict[str, Any], path: str) -> Node:
        """JSON arrays valid under ``s``: ``prefixItems`` (core 10.3.1.1) for the first
        elements, ``items`` (core 10.3.1.2; absent = any value) for the rest, and
        ``minItems``/``maxItems`` (validation 6.4.1, 6.4.2) as exact counts.

        ``contains``/``minContains`` as ``_containing`` builds them. Raises
        UnsupportedKeyword("uniqueItems") for ``uniqueItems: true`` (validation 6.4.3) unless
        ``maxItems`` is at most 1, what ``_containing`` raises, and the errors of the item
        schemas.
        """
        lo, hi = s.get("minItems", 0), s.get("maxItems")
        if s.get("uniqueItems") and (hi is None or hi > 1):
            raise UnsupportedKeyword("uniqueItems", path)
        prefix = [self.value(p, f"{path}/prefixItems/{i}")
                  for i, p in enumerate(s.get("prefixItems", []))]
        rest = s.get("items", True)
        item = self.any_value() if rest is True else self.value(rest, path + "/items")
        if "maxContains" in s and "contains" in s:
            raise UnsupportedKeyword("maxContains", path, "is not supported (it needs the items "
                                     "that do not match contains)")
        if "contains" in s and s.get("minContains", 1) > 0:
            body = self._containing(s, prefix, item, lo, hi, path)
        else:  # no contains, or minContains 0: any number of matches will do
            body = self._elements(0, prefix, item, lo, hi)
        return seq(Lit("["), self.ws, body, self.ws, Lit("]"))

    def _containing(self, s: dict[str, Any], prefix: list[Node], item: Node, lo: int,
                    hi: int | None, path: str) -> Node:
        """The elements of an array with at least k = ``minContains`` (default 1) items valid
        under ``contains`` (core 10.3.1.3, validation 6.4.4-5): the items, with k of them also
        valid under ``contains`` (``(item ,)* match (, item)* , match ...``): exact, since every
        other item may match or not. Raises UnsupportedKeyword for ``contains`` with
        ``prefixItems`` or ``maxItems``, and for ``minItems`` above k (``array`` refuses
        ``maxContains``: it needs the items that do not match)."""
        k = s.get("minContains", 1)
        if prefix:
            raise UnsupportedKeyword("contains", path, "together with prefixItems is not "
                                     "supported")
        if hi is not None or lo > k:
            raise UnsupportedKeyword("contains", path, "together with maxItems, or minItems "
                                     "above minContains, is not supported")
        rest = s.get("items", True)
        match = self.value({"allOf": [{} if rest is True else rest, s["contains"]]},
                           path + "/contains")
        comma = self.sep(",")
        others = repeat(seq(comma, item), 0, None)
        first = seq(repeat(seq(item, comma), 0, None), match)
        return seq(first, repeat(seq(others, comma, match), k - 1, k - 1), others)

    def _elements(self, i: int, prefix: list[Node], item: Node, lo: int,
                  hi: int | None) -> Node:
        """Elements from position ``i`` on, ``i`` of them already written; between ``lo`` and
        ``hi`` elements in all."""
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
    def object(self, s: dict[str, Any], path: str) -> Node:
        """JSON objects valid under ``s``, keys in the order described in the module
        docstring: ``properties`` (core 10.3.2.1), ``required`` (validation 6.5.3),
        ``additionalProperties`` (core 10.3.2.3), one-pattern ``patternProperties`` (core
        10.3.2.2, see ``_pattern_properties``), and ``minProperties``/``maxProperties``
        (validation 6.5.1, 6.5.2) when the others already imply them.

        Returns NOTHING when a required name is forbidden (``additionalProperties: false`` or
        a ``false`` property schema). Raises UnsupportedKeyword("patternProperties") when the
        pattern matches a required or listed name or there are several patterns,
        UnsupportedKeyword("minProperties"/"maxProperties") when the count is not implied,
        and passes on the errors of the property schemas.
        """
        props = dict(s.get("properties", {}))
        required = list(s.get("required", []))
        extra = s.get("additionalProperties", True)
        pattern, pattern_schema = self._pattern_properties(s, props, path)
        for name in required:
            if name not in props:
                if pattern is not None and re.search(pattern, name):
                    raise UnsupportedKeyword("patternProperties", path, "whose pattern matches "
                                             f"the required name {name!r} is not supported")
                if extra is False:
                    return NOTHING  # required but forbidden: no object matches
                props[name] = extra
        members = []
        for name, sub in props.items():
            if sub is False:
                if name in required:
                    return NOTHING
                continue
            value = self.value(sub, f"{path}/properties/{name}")
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

    def _pattern_properties(self, s: dict[str, Any], props: dict[str, Schema],
                            path: str) -> tuple[str | None, Schema | None]:
        """(pattern, schema) of a single-entry ``patternProperties``, or (None, None).

        Extra keys are then generated from the pattern only (keys matching no pattern are not
        produced, which is narrower than the spec, never wider), so ``additionalProperties``
        does not add keys. Raises UnsupportedKeyword("patternProperties") for several
        patterns, or when a listed property name matches the pattern (its key could then be
        produced twice), and InvalidSchema when the pattern is not a valid regex."""
        pp = s.get("patternProperties")
        if not pp:
            return None, None
        if not isinstance(pp, dict) or len(pp) != 1:
            raise UnsupportedKeyword("patternProperties", path, "with more than one pattern "
                                     "is not supported")
        (pattern, schema), = pp.items()
        check_pattern(pattern, f"{path or '#'}/patternProperties/"
                      + pattern.replace("~", "~0").replace("/", "~1"), "patternProperties")
        clash = [n for n in props if re.search(pattern, n)]
        if clash:
            raise UnsupportedKeyword("patternProperties", path, "whose pattern matches the "
                                     f"listed property {clash[0]!r} is not supported")
        return pattern, schema

    def _members(self, members: list[tuple[Node, bool]], extra: Node) -> Node:
        """The text between the braces: ``members`` (node, required) in order, each optional
        one skippable, then any number of ``extra`` members (NOTHING: none)."""
        comma = self.sep(",")
        after = repeat(seq(comma, extra), 0, None) if extra != NOTHING else EMPTY
        first = opt(seq(extra, after)) if extra != NOTHING else EMPTY
        for member, needed in reversed(members):
            with_it = seq(member, after)
            first = with_it if needed else alt(with_it, first)
            after = seq(comma, with_it) if needed else seq(opt(seq(comma, member)), after)
        return first

    def _check_counts(self, s: dict[str, Any], members: list[tuple[Node, bool]], extra: Node,
                      path: str) -> None:
        """Refuse ``minProperties``/``maxProperties`` (UnsupportedKeyword) unless the grammar
        already keeps the number of members within them."""
        least = sum(1 for _, needed in members if needed)
        most = None if extra != NOTHING else len(members)
        if s.get("minProperties", 0) > least:
            raise UnsupportedKeyword("minProperties", path, "above the number of required "
                                     "properties is not supported")
        if "maxProperties" in s and (most is None or s["maxProperties"] < most):
            raise UnsupportedKeyword("maxProperties", path, "below the number of allowed "
                                     "properties is not supported")
