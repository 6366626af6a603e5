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

import json
import re
from typing import Any

from .errors import UnsupportedKeyword, too_many_states
from .formats import format_units
from .ir import EMPTY, NOTHING, Lit, Node, alt, opt, repeat, seq
from .boolean import TooLarge, to_dfa
from .keywords import ANNOTATIONS, OBJECT_PART, OBJECTS, Schema, pointer_token, same_value
from .numeric import INTEGER, NUMBER, integer_bounds, number_bounds
from .pattern import check_pattern, pattern_units, single_char_repeat
from .strings import QUOTE, encoded_chars, json_string, key_not_in, literal_string
from .values import const_ir

BOUNDS = ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum")
# uniqueItems writes every order of the item values (k!/(k-j)! arrays of length j): 1,957 for
# 6 values, 13,700 for 7.
MAX_UNIQUE_ORDERS = 2_000


def _for_name(part: dict[str, Any], name: str) -> list[Schema]:
    """The schemas one part applies to the value of property ``name``: its ``properties``
    entry and those of the patterns it matches (core 10.3.2.1-2), else its
    ``additionalProperties`` (core 10.3.2.3)."""
    matched = [schema for pattern, schema in part.get("patternProperties", {}).items()
               if re.search(pattern, name)]
    if name in part.get("properties", {}):
        return [part["properties"][name]] + matched
    return matched or [part.get("additionalProperties", True)]


def _names(schema: Schema) -> Schema:
    """A ``propertyNames`` schema read on strings only (names are strings, core 10.3.2.4)."""
    return {"allOf": [schema, {"type": "string"}]}


def _all_of(schemas: list[Schema]) -> Schema:
    """One schema for all of ``schemas``: False if one is false, True if none constrains;
    a schema equal to an earlier one but for annotations is left out (a listed property and
    the pattern that matches its name often carry the same schema)."""
    if any(schema is False for schema in schemas):
        return False
    rest, seen = [], set()
    for schema in schemas:
        if schema is True:
            continue
        key = json.dumps({k: v for k, v in schema.items() if k not in ANNOTATIONS},
                         sort_keys=True, default=str)
        if key != "{}" and key not in seen:
            seen.add(key)
            rest.append(schema)
    if not rest:
        return True
    return rest[0] if len(rest) == 1 else {"allOf": rest}


def _types(value) -> list:
    """The ``type`` keyword's value as a list (it may be one name)."""
    return [value] if isinstance(value, str) else list(value)


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
        if lo is not None and hi is not None and (lo > hi or (lo == hi and (lo_x or hi_x))):
            return NOTHING  # no number between the bounds: the schema admits none
        try:
            return number_bounds(lo, lo_x, hi, hi_x)
        except ValueError:
            low_keyword = "exclusiveMinimum" if lo_x else "minimum"
            high_keyword = "exclusiveMaximum" if hi_x else "maximum"
            raise UnsupportedKeyword(low_keyword, path, f"and {high_keyword} with fractional values "
                                     f"inside one unit interval ({lo!r}, {hi!r}) are not "
                                     "supported", code="schema.fractional_bounds", low=lo, high=hi,
                                     low_keyword=low_keyword, high_keyword=high_keyword) from None

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

        ``contains``/``minContains`` as ``_containing`` builds them, ``uniqueItems: true``
        (validation 6.4.3) as ``_unique`` does. Raises what those two raise, and the errors of
        the item schemas.
        """
        lo, hi = s.get("minItems", 0), s.get("maxItems")
        if s.get("uniqueItems") and (hi is None or hi > 1):
            return seq(Lit("["), self.ws, self._unique(s, lo, hi, path), self.ws, Lit("]"))
        prefix = [self.value(p, f"{path}/prefixItems/{i}")
                  for i, p in enumerate(s.get("prefixItems", []))]
        rest = s.get("items", True)
        item = self.any_value() if rest is True else self.value(rest, path + "/items")
        if "maxContains" in s and "contains" in s:
            raise UnsupportedKeyword("maxContains", path, "is not supported (it needs the items "
                                     "that do not match contains)", code="schema.max_contains")
        if "contains" in s and s.get("minContains", 1) > 0:
            body = self._containing(s, prefix, item, lo, hi, path)
        else:  # no contains, or minContains 0: any number of matches will do
            body = self._elements(0, prefix, item, lo, hi)
        return seq(Lit("["), self.ws, body, self.ws, Lit("]"))

    def _unique(self, s: dict[str, Any], lo: int, hi: int | None, path: str) -> Node:
        """The elements of an array whose items are pairwise different (``uniqueItems``), when
        the items schema allows a finite set of values: its ``enum``/``const`` values, or
        ``true``, ``false`` and ``null`` for the types boolean and null, each kept when it is
        valid under the whole items schema (``accepts_value``). The elements are written by
        the set of values used so far (one shared node per set, so the automaton's states
        are those sets): every order of every allowed length, exact. Raises
        UnsupportedKeyword("uniqueItems") next to ``prefixItems`` or ``contains``, for items
        that are not such a finite set, and when the orders to write pass
        ``MAX_UNIQUE_ORDERS``."""
        if "prefixItems" in s or "contains" in s:
            raise UnsupportedKeyword("uniqueItems", path, "together with prefixItems or contains "
                                     "is not supported", code="schema.unique_items_with")
        rest, where = s.get("items", True), path + "/items"
        expanded = {} if rest is True else self.expand(rest, where) if rest is not False else None
        if expanded is None:
            candidates = []
        elif "enum" in expanded:
            candidates = expanded["enum"]
        elif "type" in expanded and set(_types(expanded["type"])) <= {"boolean", "null"}:
            candidates = [True, False, None]
        else:
            raise UnsupportedKeyword("uniqueItems", path, "is supported only for items from a "
                                     "finite set of values (enum, const, boolean, null)",
                                     code="schema.unique_items_set")
        values: list = []
        for v in candidates:
            if (rest is not False and not any(same_value(v, w) for w in values)
                    and self.accepts_value(v, rest, where)):
                values.append(v)
        k = len(values)
        top = k if hi is None else min(hi, k)
        orders, run = 0, 1  # arrays to write: k!/(k-j)! of each length j <= top
        for j in range(top + 1):
            orders += run
            run *= k - j
        if orders > MAX_UNIQUE_ORDERS:
            raise UnsupportedKeyword("uniqueItems", path, f"over {k} item values is not supported: "
                                     f"it needs {orders} orders of them (limit "
                                     f"{MAX_UNIQUE_ORDERS})", code="schema.unique_items_orders", values=k,
                                     orders=orders, most=MAX_UNIQUE_ORDERS)
        items, comma, memo = [const_ir(v, self.ws) for v in values], self.sep(","), {}

        def elements(used: frozenset) -> Node:
            if used not in memo:
                n = len(used)
                options = [EMPTY] if n >= lo else []
                if n < top:
                    options += [seq(comma if n else EMPTY, items[i], elements(used | {i}))
                                for i in range(k) if i not in used]
                memo[used] = alt(*options) if options else NOTHING
            return memo[used]

        return elements(frozenset())

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
                                     "supported", code="schema.contains_prefix")
        if hi is not None or lo > k:
            raise UnsupportedKeyword("contains", path, "together with maxItems, or minItems "
                                     "above minContains, is not supported", code="schema.contains_counts")
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
                return EMPTY if lo == 0 else NOTHING
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
        ``additionalProperties`` (core 10.3.2.3), ``patternProperties`` (core 10.3.2.2),
        ``propertyNames`` (core 10.3.2.4) and ``minProperties``/``maxProperties``
        (validation 6.5.1, 6.5.2), each exact.

        The object keywords may come in several parts (``OBJECTS``, left by an ``allOf`` whose
        parts cannot be merged into one: ``patternProperties`` beside other object keywords);
        every part must hold. A listed or required name takes the schemas that apply to it in
        every part (its ``properties`` entry and the patterns it matches, else that part's
        ``additionalProperties``). The other keys are split by automata into classes by the
        patterns they match (``Translator.key_classes``), each with the same conjunction.

        Returns NOTHING when a required name is forbidden (``additionalProperties: false``, a
        ``false`` property schema, a name ``propertyNames`` rejects). Raises
        UnsupportedKeyword("patternProperties"/"propertyNames") past the automata's state
        limit, and passes on the errors of the property schemas.
        """
        parts = s.get(OBJECTS) or [{k: s[k] for k in OBJECT_PART if k in s}]
        required = list(s.get("required", []))
        for part in parts:
            for pattern in part.get("patternProperties", {}):
                check_pattern(pattern, f"{path or '#'}/patternProperties/"
                              + pattern.replace("~", "~0").replace("/", "~1"), "patternProperties")
        if len(parts) == 1 and not parts[0].get("patternProperties") and (
                "propertyNames" not in parts[0]):
            return self._plain_object(s, parts[0], required, path)
        names: list[str] = []
        for part in parts:
            names += [n for n in part.get("properties", {}) if n not in names]
        names += [n for n in required if n not in names]
        allowed = self._name_check(parts, path)
        members = self._listed(
            [(name, _all_of([schema for part in parts for schema in _for_name(part, name)])
              if allowed(name) else False) for name in names], required, path)
        if members is None:
            return NOTHING
        return self._braces(s, members, self._extra_keys(parts, names, path), path)

    def _listed(self, subs: list[tuple[str, Schema]], required: list[str],
                path: str) -> list[tuple[Node, bool]] | None:
        """The members ``(node, required)`` of the listed names, from ``(name, schema)``
        pairs; a name whose schema is ``false`` is left out, and None is returned when that
        name is required (no object matches)."""
        members = []
        for name, sub in subs:
            if sub is False:
                if name in required:
                    return None
                continue
            value = self.value(sub, f"{path}/properties/{pointer_token(name)}")
            members.append((seq(Lit(literal_string(name)), self.sep(":"), value),
                            name in required))
        return members

    def _braces(self, s: dict[str, Any], members: list[tuple[Node, bool]], extra: Node,
                path: str) -> Node:
        """The object: the members within the counts of ``s`` (``_counted``), in braces."""
        return seq(Lit("{"), self.ws, self._counted(s, members, extra, path), self.ws, Lit("}"))

    def _plain_object(self, s: dict[str, Any], part: dict[str, Any], required: list[str],
                      path: str) -> Node:
        """``object`` for one part without ``patternProperties`` or ``propertyNames``."""
        props = dict(part.get("properties", {}))
        extra = part.get("additionalProperties", True)
        for name in required:
            if name not in props:
                if extra is False:
                    return NOTHING  # required but forbidden: no object matches
                props[name] = extra
        members = self._listed(list(props.items()), required, path)
        if members is None:
            return NOTHING
        extra_member = NOTHING
        if extra is not False:
            value = self.any_value() if extra is True else self.value(
                extra, path + "/additionalProperties")
            extra_member = seq(key_not_in(list(props)), self.sep(":"), value)
        return self._braces(s, members, extra_member, path)

    def _name_check(self, parts: list[dict[str, Any]], path: str):
        """A test of a listed or required name against every part's ``propertyNames``."""
        checks = [(part["propertyNames"], f"{path}/propertyNames") for part in parts
                  if "propertyNames" in part and part["propertyNames"] is not True]
        if not checks:
            return lambda name: True
        dfas = []
        for schema, where in checks:
            try:
                dfas.append(to_dfa(self.value(_names(schema), where), self.rules,
                                   frozenset(self.open_rules), known=self.known))
            except TooLarge as error:  # (names are strings: never recursive)
                raise too_many_states("propertyNames", where, "key", error.limit, error.states) from None
        return lambda name: all(dfa.accepts(literal_string(name)) for dfa in dfas)

    def _extra_keys(self, parts: list[dict[str, Any]], names: list[str], path: str) -> Node:
        """The members whose key is none of ``names``: one alternative per class of keys
        (``Translator.key_classes``), whose value meets the schemas that apply to that class
        in every part. NOTHING when no key may be added."""
        base = key_not_in(names)
        for part in parts:
            if "propertyNames" in part and part["propertyNames"] is not True:
                where = f"{path}/propertyNames"
                names_node = self.value(_names(part["propertyNames"]), where)
                base = self.intersection([("propertyNames", base), ("propertyNames", names_node)],
                                         where)
        patterns = [(i, pattern, schema) for i, part in enumerate(parts)
                    for pattern, schema in part.get("patternProperties", {}).items()]
        nodes = [seq(QUOTE, pattern_units(p, path + "/patternProperties"), QUOTE)
                 for _, p, _ in patterns]
        keyword = "patternProperties" if patterns else "propertyNames"
        members = []
        for keys, matched in self.key_classes(base, nodes, keyword, path):
            schemas = []
            for i, part in enumerate(parts):
                own = [patterns[j][2] for j in sorted(matched) if patterns[j][0] == i]
                schemas += own or [part.get("additionalProperties", True)]
            sub = _all_of(schemas)
            if sub is False:
                continue
            value = self.any_value() if sub is True else self.value(sub, path + "/" + keyword)
            members.append(seq(keys, self.sep(":"), value))
        return alt(*members)

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

    def _counted(self, s: dict[str, Any], members: list[tuple[Node, bool]],
                 extra: Node, path: str) -> Node:
        """``_members`` within ``minProperties``/``maxProperties`` (validation 6.5.1-2). When
        the members already keep the count within them, ``_members`` itself; otherwise the
        members are written with the number of those written so far (capped at
        ``minProperties`` when there is no maximum, at ``maxProperties`` + 1 when there is),
        one shared node per (member, count, first or not), and the extra members that follow
        are counted by a bounded repetition. Raises UnsupportedKeyword("minProperties") when
        reaching it may take two or more extra keys, since two extra keys may be one key written
        twice (one extra key is always a key more)."""
        lo, hi = s.get("minProperties", 0), s.get("maxProperties")
        least = sum(1 for _, needed in members if needed)
        most = None if extra != NOTHING else len(members)
        if lo <= least and (hi is None or (most is not None and most <= hi)):
            return self._members(members, extra)
        comma = self.sep(",")
        cap = lo if hi is None else hi + 1
        memo: dict[tuple[int, int, bool], Node] = {}

        def tail(count: int, first: bool) -> Node:  # the extra members
            need, room = max(0, lo - count), None if hi is None else hi - count
            if room is not None and room < need:
                return NOTHING
            if extra == NOTHING:
                return EMPTY if need == 0 else NOTHING
            if need >= 2:  # two extra keys could be the same key written twice
                raise UnsupportedKeyword("minProperties", path, "that extra keys would have to "
                                         "reach (two or more besides the listed properties) is "
                                         "not supported: a grammar cannot keep them distinct",
                                         code="schema.min_properties_extra")
            if not first:
                return repeat(seq(comma, extra), need, room)
            if room == 0:
                return EMPTY
            some = seq(extra, repeat(seq(comma, extra), max(0, need - 1),
                                     None if room is None else room - 1))
            return opt(some) if need == 0 else some

        def rest(i: int, count: int, first: bool) -> Node:
            key = (i, count, first)
            if key not in memo:
                if hi is not None and count > hi:
                    memo[key] = NOTHING
                elif i == len(members):
                    memo[key] = tail(count, first)
                else:
                    member, needed = members[i]
                    with_it = seq(EMPTY if first else comma, member,
                                  rest(i + 1, min(count + 1, cap), False))
                    memo[key] = with_it if needed else alt(with_it, rest(i + 1, count, first))
            return memo[key]

        return rest(0, 0, True)
