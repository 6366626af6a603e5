"""The ``pattern`` keyword (2020-12 validation, section 6.3.3): a regex searched in the
decoded string value (not anchored, as the spec says).

The pattern is parsed with the standard library's own ``re`` parser (the dialect the
``jsonschema`` validator applies; the spec names ECMA-262, core section 6.4), then rebuilt in
the intermediate form, where every character matcher becomes the set of JSON encodings of the
characters it matches (``encoded_chars``). Anchors: a leading ``^`` and a trailing ``$`` (or
``\\A``, ``\\Z``) pin the match; a side without an anchor gets any units there
(``.*(?:pat).*`` on the value).

Soundness choices (never accept a value the ``re`` search would reject):
- ``\\d \\w \\s`` are read as their ASCII subsets; ``\\D \\W \\S`` and negated classes use
  the exact Unicode complement that ``re`` uses;
- ``$`` is read as end of string (Python's ``$`` also matches before a final newline; such
  values are not produced);
- flags (``(?i)`` ...), lookarounds, backreferences, ``\\b``, possessive and anchors in other
  positions raise UnsupportedKeyword("pattern").
A pattern that is not a valid regex at all (``"(abc"``) is a malformed schema, not an unsupported
feature: InvalidSchema (``check_pattern``).
Escaped forms ``\\uXXXX`` are not produced for pattern characters.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, NoReturn

try:
    from re import _constants as C
    from re import _parser as sre_parse
except ImportError:  # pragma: no cover - Python < 3.11
    import sre_constants as C
    import sre_parse

from .errors import InvalidSchema, UnsupportedKeyword, bad_value
from .ir import MAX_CP, SURROGATES, Node, Ranges, alt, char_set, repeat, seq, set_complement
from .strings import UNIT, encoded_chars

ASCII_CATEGORY = {
    C.CATEGORY_DIGIT: ((48, 57),),
    C.CATEGORY_WORD: ((48, 57), (65, 90), (95, 95), (97, 122)),
    C.CATEGORY_SPACE: ((9, 13), (32, 32)),
}
NEGATED_CATEGORY = {C.CATEGORY_NOT_DIGIT: r"\d", C.CATEGORY_NOT_WORD: r"\w",
                    C.CATEGORY_NOT_SPACE: r"\s"}
POSITIVE_OF = {C.CATEGORY_DIGIT: r"\d", C.CATEGORY_WORD: r"\w",
               C.CATEGORY_SPACE: r"\s"}


@lru_cache(maxsize=None)
def unicode_category(rx: str) -> Ranges:
    """Exact ranges of ``re``'s Unicode class ``rx`` (e.g. r"\\d")."""
    s0, s1 = SURROGATES
    text = "".join(map(chr, range(0, s0))) + "".join(map(chr, range(s1 + 1, MAX_CP + 1)))
    ranges = []
    for m in re.finditer(rx + "+", text):
        ranges.append((ord(text[m.start()]), ord(text[m.end() - 1])))
    return char_set(ranges)


class _PatternReader:
    """Rebuilds ``sre_parse`` items of ``pattern`` in the intermediate form."""

    def __init__(self, pattern: str, path: str):
        self.pattern, self.path = pattern, path

    def refuse(self, what: str) -> NoReturn:
        """Refuse a construct of the pattern (``what``: ``sre_parse``'s name of its opcode or
        category): code ``"schema.pattern_construct"``, fields ``keyword``, ``construct``."""
        raise UnsupportedKeyword("pattern", self.path, f"with the construct {what} is not supported "
                                 f"(pattern {self.pattern!r})", code="schema.pattern_construct", construct=what)

    def refuse_flags(self) -> NoReturn:
        """Refuse inline flags (``(?i)``, ``(?i:...)``): code ``"schema.pattern_flags"``."""
        raise UnsupportedKeyword("pattern", self.path, f"with inline flags is not supported "
                                 f"(pattern {self.pattern!r})", code="schema.pattern_flags")

    def set_of(self, items: list) -> Ranges:
        """The code points a class ``[...]`` (its parsed ``items``) matches."""
        negate = bool(items) and items[0][0] == C.NEGATE
        ranges = []
        for op, av in items[1:] if negate else items:
            if op == C.LITERAL:
                ranges.append((av, av))
            elif op == C.RANGE:
                ranges.append(av)
            elif op == C.CATEGORY:
                ranges.extend(self.category(av, exact=negate))
            else:
                self.refuse(str(op))
        rs = char_set(ranges)
        return set_complement(rs) if negate else rs

    def category(self, cat: Any, exact: bool) -> Ranges:
        """``\\d``-style class ``cat``: ASCII unless ``exact`` (inside a negated class), where
        the exact Unicode set keeps the complement sound."""
        if cat in NEGATED_CATEGORY:
            return set_complement(unicode_category(NEGATED_CATEGORY[cat]))
        if cat in ASCII_CATEGORY:
            return unicode_category(POSITIVE_OF[cat]) if exact else ASCII_CATEGORY[cat]
        return self.refuse(str(cat))

    def node(self, items: list) -> Node:
        return seq(*[self.item(op, av) for op, av in items])

    def item(self, op: Any, av: Any) -> Node:
        if op == C.LITERAL:
            return encoded_chars(((av, av),))
        if op == C.NOT_LITERAL:
            return encoded_chars(set_complement(((av, av),)))
        if op == C.ANY:
            return encoded_chars(set_complement(((10, 10),)))
        if op == C.IN:
            return encoded_chars(self.set_of(av))
        if op == C.BRANCH:
            return alt(*[self.node(b) for b in av[1]])
        if op == C.SUBPATTERN:
            if av[1] or av[2]:
                self.refuse_flags()
            return self.node(av[3])
        if op in (C.MAX_REPEAT, C.MIN_REPEAT):
            lo, hi, sub = av
            return repeat(self.node(sub), lo, None if hi == C.MAXREPEAT else hi)
        if op == C.AT:
            raise UnsupportedKeyword("pattern", self.path, "with an anchor or \\b inside the pattern is not "
                                     f"supported (pattern {self.pattern!r})", code="schema.pattern_anchor")
        return self.refuse(str(op))


def check_pattern(pattern: str, pointer: str, keyword: str = "pattern"):
    """``pattern`` parsed by ``re``'s parser (its item tree); ``pointer``: the JSON pointer of
    the schema text that holds it (the ``pattern`` keyword, or a ``patternProperties`` key),
    ``keyword``: the keyword the message names.

    Raises UnsupportedKeyword(``keyword``) for a Unicode property escape (``\\p{Letter}``, valid
    ECMA-262 that ``re`` lacks), InvalidSchema (at ``pointer``) when ``pattern`` is not a string
    or not a valid regex;
    for an invalid regex it is raised from the ``re.error`` (its ``__cause__``), whose ``pos`` is
    the 0-based offending character of the pattern (or from the OverflowError of a repeat count
    too large for ``re``, without a position).
    """
    if not isinstance(pattern, str):
        raise bad_value(keyword, "string", pointer, pattern)
    try:
        return sre_parse.parse(pattern)
    except (re.error, OverflowError) as exc:  # OverflowError: a repeat count above re's limit
        if isinstance(exc, re.error) and re.search(r"\\[pP]\{", pattern):
            # valid ECMA-262 (Unicode mode), which JSON Schema patterns are written in
            raise UnsupportedKeyword(keyword, pointer, "with a Unicode property escape "
                                     "(\\p{...}) is not supported", code="schema.pattern_property_escape") from exc
        raise InvalidSchema(f"{keyword} {pattern!r:.60} is not a valid regex ({exc})", pointer, code="schema.bad_pattern",
                            keyword=keyword, pattern=pattern, detail=getattr(exc, "msg", str(exc))) from exc


def pattern_units(pattern: str, path: str) -> Node:
    """IR for the string content (between the quotes) of values in which
    ``re.search(pattern, value)`` succeeds.

    Raises InvalidSchema when ``pattern`` is not a string or not a valid regex
    (``check_pattern``), UnsupportedKeyword("pattern") when it uses a construct listed above.
    """
    tree = check_pattern(pattern, f"{path or '#'}/pattern")
    reader = _PatternReader(pattern, path)
    if tree.state.flags & ~C.SRE_FLAG_UNICODE:
        reader.refuse_flags()
    return _anchored(list(tree), reader)


STARTS = (C.AT_BEGINNING, C.AT_BEGINNING_STRING)
ENDS = (C.AT_END, C.AT_END_STRING)


def _strip_anchors(parsed: list, start: bool, end: bool) -> tuple[list, bool, bool]:
    if parsed and parsed[0][0] == C.AT and parsed[0][1] in STARTS:
        start, parsed = True, parsed[1:]
    if parsed and parsed[-1][0] == C.AT and parsed[-1][1] in ENDS:
        end, parsed = True, parsed[:-1]
    return parsed, start, end


def _anchored(parsed: list, reader: _PatternReader, start: bool = False,
              end: bool = False) -> Node:
    """A top-level sequence: strip ``^``/``$`` at its ends, pad unanchored sides. A top-level
    alternation or group is handled branch by branch (``^a$|^b$``, ``^(a|b)$``)."""
    parsed, start, end = _strip_anchors(parsed, start, end)
    if parsed and parsed[-1][0] == C.BRANCH:  # `^0(1$|7$)`: re factors common prefixes
        branches = parsed[-1][1][1]
        if len(parsed) == 1 or any(b and b[-1][0] == C.AT for b in branches):
            return alt(*[_anchored(parsed[:-1] + list(b), reader, start, end) for b in branches])
    if len(parsed) == 1 and parsed[0][0] == C.SUBPATTERN and not (parsed[0][1][1] or parsed[0][1][2]):
        return _anchored(list(parsed[0][1][3]), reader, start, end)
    body = reader.node(parsed)
    free = repeat(UNIT, 0, None)
    return seq(*([] if start else [free]), body, *([] if end else [free]))


def single_char_repeat(pattern: str, path: str) -> tuple[Ranges, int, int | None] | None:
    """For ``^X{m,n}$``-like patterns (X one character matcher): (set, m, n); else None.
    Lets ``pattern`` combine with minLength/maxLength exactly. Raises InvalidSchema when
    ``pattern`` is not a valid regex (``check_pattern``)."""
    tree = check_pattern(pattern, f"{path or '#'}/pattern")
    parsed, start, end = _strip_anchors(list(tree), False, False)
    if not (start and end and len(parsed) == 1) or tree.state.flags & ~C.SRE_FLAG_UNICODE:
        return None
    op, av = parsed[0]
    lo = hi = 1
    if op in (C.MAX_REPEAT, C.MIN_REPEAT) and len(av[2]) == 1:
        lo, hi = av[0], None if av[1] == C.MAXREPEAT else av[1]
        op, av = av[2][0]
    reader = _PatternReader(pattern, path)
    sets = {C.LITERAL: lambda: ((av, av),), C.NOT_LITERAL: lambda: set_complement(((av, av),)),
            C.ANY: lambda: set_complement(((10, 10),)), C.IN: lambda: reader.set_of(av)}
    return (sets[op](), lo, hi) if op in sets else None
