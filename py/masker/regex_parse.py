"""Parser for the subset of Python ``re`` syntax that structured-output users write.

Supported (full-match semantics: the whole text must match):
- literals, including any non-ASCII character; escaped metacharacters (``\\.``, ``\\{``...);
- escapes ``\\n \\t \\r \\f \\v \\a \\0``, octal ``\\ooo``, ``\\xHH``, ``\\uHHHH``, ``\\UHHHHHHHH``,
  ``\\N{NAME}``;
- ``\\d \\w \\s`` and ``\\D \\W \\S`` as ASCII (Python's ``re.ASCII``); ``.`` = any code point but ``\\n``;
- classes ``[...]`` with ranges, ``^`` negation, escapes and ``\\d``-style classes inside;
- groups ``(...)``, ``(?:...)``, ``(?P<name>...)``, ``(?<name>...)``; comments ``(?#...)``;
- alternation ``|`` (empty alternatives allowed); quantifiers ``* + ? {m} {m,} {m,n} {,n}``;
  lazy forms (``*?``...) describe the same language, so they are accepted as greedy;
- ``^`` / ``\\A`` as the very first and ``$`` / ``\\Z`` as the very last item are accepted as no-ops.

Refused with ``UnsupportedFeature``: backreferences, lookaround, atomic groups, possessive
quantifiers, conditionals, inline flags, ``\\b \\B``, anchors anywhere else, ``\\p{...}``.
A ``{`` that does not start a valid quantifier is a literal, as in Python (``[0-9]{3`` matches
``5{3``); :func:`literal_braces` lists where, since llguidance, Rust ``regex`` and ECMAScript's
``u`` mode refuse such a pattern and a reader may not expect it.
"""

from __future__ import annotations

import unicodedata

from .errors import GrammarSyntaxError, UnsupportedFeature
from .grammar_ast import (ANY_BUT_NEWLINE, DIGIT, EMPTY, SPACE, WORD, Chars, Repeat,
                          alt, char, seq)
from .utf8 import negate, normalize

SIMPLE_ESCAPES = {"n": 10, "t": 9, "r": 13, "f": 12, "v": 11, "a": 7}
CLASS_ESCAPES = {"d": DIGIT, "w": WORD, "s": SPACE}
HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}


def parse_regex(pattern: str):
    """Parse ``pattern`` into a ``grammar_ast`` tree. Raises GrammarSyntaxError/UnsupportedFeature."""
    if not isinstance(pattern, str):
        raise TypeError(f"pattern must be str, got {type(pattern).__name__}")
    return _RegexParser(pattern).parse()


def literal_braces(pattern: str) -> list[int]:
    """The 0-based offsets of every ``{`` of ``pattern`` read as a literal character because no
    valid quantifier (``{m}``, ``{m,}``, ``{m,n}``, ``{,n}``) starts there, outside classes and
    escapes. Raises as :func:`parse_regex` for a pattern that does not parse."""
    parser = _RegexParser(pattern)
    parser.parse()
    return parser.literal_braces


class _RegexParser:
    def __init__(self, src: str):
        self.src, self.pos, self.end = src, 0, len(src)
        self.literal_braces: list[int] = []

    def error(self, reason, hint="", pos=None, cls=GrammarSyntaxError, *, code, **fields):
        raise cls(self.src, self.pos if pos is None else pos, reason, hint, code=code, **fields)

    def unsupported(self, reason, hint, pos=None, *, code, **fields):
        self.error(reason, hint, pos, UnsupportedFeature, code=code, **fields)

    def peek(self, k: int = 0) -> str:
        i = self.pos + k
        return self.src[i] if i < self.end else ""

    def parse(self):
        node = self.parse_alt()
        if self.pos < self.end:
            self.error("unbalanced ')': no group is open here", "remove it or escape it as \\)",
                       code="regex.unbalanced_paren")
        return node

    def parse_alt(self):
        branches = [self.parse_seq()]
        while self.peek() == "|":
            self.pos += 1
            branches.append(self.parse_seq())
        return alt(branches)

    def parse_seq(self):
        items = []
        while self.pos < self.end and self.peek() not in "|)":
            atom = self.parse_atom()
            if atom is not None:
                items.append(self.parse_quantifiers(atom))
        return seq(items) if items else EMPTY

    def parse_atom(self):
        c, at = self.peek(), self.pos
        if c in "*+?" or (c == "{" and self._quantifier_at(self.pos) is not None):
            self.error(f"nothing to repeat before '{c}'", f"escape it as \\{c} for a literal",
                       code="regex.nothing_to_repeat", char=c)
        if (c == "^" and at == 0) or (c == "$" and at == self.end - 1):
            self.pos += 1
            return None  # anchors at the very ends: full-match semantics already
        if c in "^$":
            self.unsupported(f"anchor '{c}' in the middle of the pattern",
                             "anchors are accepted only at the very start (^) or end ($); "
                             "matching is always full-match", at, code="regex.anchor_inside", char=c)
        self.pos += 1
        if c == "(":
            return self.parse_group(at)
        if c == "[":
            return self.parse_class(at)
        if c == ".":
            return Chars(ANY_BUT_NEWLINE)
        if c == "\\":
            return self.parse_escape(in_class=False)
        if c == "{":
            self.literal_braces.append(at)
        return char(ord(c))

    def parse_group(self, at):
        if self.peek() == "?":
            self.pos += 1
            if self.parse_group_flags(at) == "comment":
                return None
        node = self.parse_alt()
        if self.peek() != ")":
            self.error("missing ')': the group opened here is not closed",
                       "add ')' or escape the '(' as \\(", at, code="regex.unclosed_group")
        self.pos += 1
        return node

    def parse_group_flags(self, at):
        rest = self.src[self.pos:self.end]
        if rest.startswith(":"):
            self.pos += 1
        elif rest.startswith("P<") or (rest.startswith("<") and rest[1:2] not in ("=", "!")):
            close = rest.find(">")
            if close <= 1:
                self.error("bad group name: expected (?P<name>...)", "close the name with '>'",
                           code="regex.bad_group_name")
            self.pos += close + 1
        elif rest.startswith("#"):
            close = self.src.find(")", self.pos)
            if close == -1 or close >= self.end:
                self.error("missing ')' after comment group (?#", "close the comment with ')'", at,
                           code="regex.unclosed_comment")
            self.pos = close + 1
            return "comment"
        else:
            feature, name = _group_feature(rest)
            self.unsupported(name, "rewrite it without this construct "
                             "(only (...), (?:...), (?P<name>...) and (?#...) are supported)", at,
                             code="regex.group_feature", feature=feature)

    def parse_quantifiers(self, atom):
        quantified = False
        while True:
            c, at = self.peek(), self.pos
            if c in ("*", "+", "?") and c:
                self.pos += 1
                lo, hi = {"*": (0, None), "+": (1, None), "?": (0, 1)}[c]
            elif c == "{" and self._quantifier_at(self.pos) is not None:
                lo, hi, self.pos = self._quantifier_at(self.pos)
                if hi is not None and lo > hi:
                    self.error(f"bad repeat interval {{{lo},{hi}}}: min is greater than max",
                               f"write {{{hi},{lo}}}", at, code="regex.bad_repeat", min=lo, max=hi)
            else:
                return atom
            if quantified:
                self.error("multiple repeat: a quantifier follows another quantifier",
                           "wrap the first in a group: (?:x*)+", at, code="regex.multiple_repeat")
            quantified = True
            if self.peek() == "?":
                self.pos += 1  # lazy: same language
            elif self.peek() == "+":
                self.unsupported("possessive quantifier", "drop the '+' after the quantifier",
                                 code="regex.possessive")
            atom = Repeat(atom, lo, hi)

    def _quantifier_at(self, i):
        """``(lo, hi, end)`` if a valid ``{m}``, ``{m,}``, ``{m,n}``, ``{,n}`` or ``{,}`` starts at i
        (Python's ``re`` rule: ASCII digits, no spaces)."""
        close = self.src.find("}", i, self.end)
        if close == -1:
            return None
        body = self.src[i + 1:close]
        lo_s, comma, hi_s = body.partition(",")
        if not (lo_s or comma):  # "{}" is two literal characters
            return None
        if not all(part == "" or (part.isascii() and part.isdigit()) for part in (lo_s, hi_s)):
            return None  # as Python's re: "{,}" is {0,} and "{,n}" is {0,n}
        lo = int(lo_s) if lo_s else 0
        hi = lo if not comma else (int(hi_s) if hi_s else None)
        return lo, hi, close + 1

    def parse_class(self, at):
        negated = self.peek() == "^"
        if negated:
            self.pos += 1
        literal_bracket = self.peek() == "]"  # "[]...]": a "]" first is a member, as in Python
        ranges, first = [], True
        while True:
            c = self.peek()
            if not c:
                self.error("missing ']': the class opened here is not closed",
                           "add ']' or escape the '[' as \\[", at, code="regex.unclosed_class",
                           literal_bracket=literal_bracket)
            if c == "]" and not first:
                self.pos += 1
                break
            first = False
            lo = self.class_item()
            if isinstance(lo, tuple):
                ranges.extend(lo)
                continue
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                dash = self.pos
                self.pos += 1
                hi = self.class_item()
                if isinstance(hi, tuple):
                    self.error("bad character range: a class like \\d cannot end a range",
                               "put '-' first or last to mean a literal dash", dash,
                               code="regex.range_ends_in_class")
                if hi < lo:
                    self.error(f"bad character range {chr(lo)}-{chr(hi)}: start is after end",
                               f"write {chr(hi)}-{chr(lo)}", dash, code="regex.bad_range",
                               start=chr(lo), end=chr(hi))
                ranges.append((lo, hi))
            else:
                ranges.append((lo, lo))
        ranges = normalize(ranges)
        return Chars(negate(ranges) if negated else ranges)

    def class_item(self):
        """One code point (int) or, for ``\\d``-style escapes, a tuple of ranges."""
        c = self.peek()
        self.pos += 1
        if c != "\\":
            return ord(c)
        if self.peek().lower() in CLASS_ESCAPES and self.peek():
            return self.parse_escape(in_class=True).ranges  # \d, \W...: a set, not a point
        return self.parse_escape(in_class=True).ranges[0][0]

    def parse_escape(self, in_class: bool):
        at, c = self.pos - 1, self.peek()
        if not c:
            self.error("trailing backslash at the end of the pattern", "write \\\\ for a backslash", at,
                       code="regex.trailing_backslash")
        self.pos += 1
        if c in SIMPLE_ESCAPES:
            return char(SIMPLE_ESCAPES[c])
        if c.lower() in CLASS_ESCAPES:
            ranges = CLASS_ESCAPES[c.lower()]
            return Chars(negate(ranges) if c.isupper() else ranges)
        if c in HEX_ESCAPES:
            return char(self.hex_escape(c, HEX_ESCAPES[c], at))
        if c == "N":
            return char(self.named_escape(at))
        if c == "b" and in_class:
            return char(8)
        if c in "01234567":
            return char(self.octal_escape(c, at))
        if (c == "A" and at == 0) or (c in "Zz" and self.pos == self.end):
            return None  # \A at the very start, \Z at the very end: no-ops
        if c in "bBAZz":
            self.unsupported(f"\\{c} (word boundary or anchor) is not a character",
                             "remove it; matching is always full-match", at, code="regex.boundary", char=c)
        if c.isdigit():
            self.backreference(c, at)
        if c in "pP":
            self.unsupported(f"Unicode property \\{c}{{...}}", "write the class as ranges", at,
                             code="regex.unicode_property", char=c)
        if c.isascii() and c.isalpha():
            self.error(f"bad escape \\{c}", f"write {c} without the backslash", at, code="regex.bad_escape", char=c)
        return char(ord(c))

    def hex_escape(self, c, width, at):
        digits = self.src[self.pos:self.pos + width]
        if len(digits) != width or any(d not in "0123456789abcdefABCDEF" for d in digits):
            self.error(f"bad escape \\{c}: expected {width} hex digits, found {digits!r}",
                       f"write \\{c}{'0' * (width - 1)}41 style escapes", at,
                       code="regex.bad_hex_escape", char=c, width=width, found=digits)
        self.pos += width
        value = int(digits, 16)
        if value > 0x10FFFF:
            self.error(f"bad escape \\{c}{digits}: beyond U+10FFFF", "use a valid code point", at,
                       code="regex.beyond_unicode", char=c, digits=digits)
        return value

    def octal_escape(self, c, at):
        digits = c
        while len(digits) < 3 and self.peek() in tuple("01234567") and self.peek():
            digits += self.peek()
            self.pos += 1
        if c != "0" and len(digits) < 3:
            self.backreference(digits, at)
        return int(digits, 8)

    def backreference(self, digits, at):
        self.unsupported(f"backreference \\{digits}", "a backreference is not regular; "
                         "repeat the group's text explicitly", at, code="regex.backreference", digits=digits)

    def named_escape(self, at):
        if self.peek() != "{" or "}" not in self.src[self.pos:]:
            self.error("bad escape \\N: expected \\N{NAME}", "write \\N{LATIN SMALL LETTER N WITH TILDE}", at,
                       code="regex.bad_named_escape")
        close = self.src.index("}", self.pos)
        name = self.src[self.pos + 1:close]
        try:
            value = ord(unicodedata.lookup(name))
        except KeyError:
            self.error(f"unknown Unicode character name {name!r}", "check the name", at,
                       code="regex.unknown_name", name=name)
        self.pos = close + 1
        return value


GROUP_FEATURES = (("=", "lookahead", "lookahead (?=...)"), ("!", "negative_lookahead", "negative lookahead (?!...)"),
                  ("<=", "lookbehind", "lookbehind (?<=...)"), ("<!", "negative_lookbehind", "negative lookbehind (?<!...)"),
                  ("P=", "named_backreference", "named backreference (?P=name)"),
                  (">", "atomic_group", "atomic group (?>...)"), ("(", "conditional_group", "conditional group (?(...)...)"),
                  ("", "inline_flags", "inline flags (?...)"))


def _group_feature(rest: str) -> tuple[str, str]:
    """(stable id, English name) of the ``(?...`` construct whose text after ``(?`` is ``rest``:
    one of :data:`GROUP_FEATURES` (the ``regex.group_feature`` error's ``feature`` field)."""
    for prefix, feature, name in GROUP_FEATURES:
        if rest.startswith(prefix):
            return feature, name
    raise AssertionError("unreachable: the last prefix is empty")
