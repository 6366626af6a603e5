"""Parser for the GBNF subset of llama.cpp (grammars/README.md in ggml-org/llama.cpp).

Syntax accepted:
- rules ``name ::= expression``; names are letters, digits, ``-`` and ``_``; the start rule is
  ``root``; a rule may span several lines (it ends where the next ``name ::=`` begins);
- string literals ``"..."`` and character classes ``[...]`` (ranges ``a-z``, ``^`` negation), both
  with the escapes ``\\n \\t \\r \\" \\\\ \\[ \\] \\- \\xHH \\uHHHH \\UHHHHHHHH`` (values are code points,
  as in llama.cpp: ``"\\xe9"`` is é);
- ``.`` = any code point (newline included, as in llama.cpp);
- grouping ``( ... )``, alternation ``|``, postfix ``* + ?`` and ``{m} {m,} {m,n}``;
- comments from ``#`` to the end of the line.

Refused: token references ``<[id]>`` and ``<name>``, negated tokens ``!``. An empty body
(``a ::= ""`` or nothing) is the empty string.
Output: ``(rules, positions)`` where ``rules`` maps name -> ``grammar_ast`` tree (``Ref`` for rule
references) and ``positions`` maps name -> offset of its definition.
"""

from __future__ import annotations

from .errors import GrammarSyntaxError, UnsupportedFeature
from .grammar_ast import EMPTY, Chars, Ref, Repeat, alt, char, seq
from .utf8 import MAX_CODE_POINT, negate, normalize

ESCAPES = {"n": 10, "t": 9, "r": 13, '"': 34, "\\": 92, "[": 91, "]": 93, "-": 45, "/": 47,
           "'": 39, "0": 0}
HEX = {"x": 2, "u": 4, "U": 8}
NAME_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")
MAX_REPEAT = 1_000_000  # repetitions are lowered with O(log n) helpers (cfg_lowering.py)


def parse_gbnf(text: str) -> tuple[dict, dict]:
    """Parse GBNF text. Raises GrammarSyntaxError / UnsupportedFeature with position and caret."""
    if not isinstance(text, str):
        raise TypeError(f"grammar must be str, got {type(text).__name__}")
    return _GbnfParser(text).parse()


class _GbnfParser:
    def __init__(self, src: str):
        self.src, self.pos = src, 0

    def error(self, reason, hint, pos=None, cls=GrammarSyntaxError, *, code, **fields):
        raise cls(self.src, self.pos if pos is None else pos, reason, hint, code=code, **fields)

    def skip(self) -> None:
        """Skip spaces, newlines and # comments."""
        src, n = self.src, len(self.src)
        while self.pos < n:
            c = src[self.pos]
            if c in " \t\r\n":
                self.pos += 1
            elif c == "#":
                end = src.find("\n", self.pos)
                self.pos = n if end == -1 else end + 1
            else:
                break

    def peek(self) -> str:
        return self.src[self.pos] if self.pos < len(self.src) else ""

    def name_at(self, i: int) -> int:
        """End offset of the rule name starting at ``i`` (``i`` itself when there is none)."""
        while i < len(self.src) and self.src[i] in NAME_CHARS:
            i += 1
        return i

    def rule_starts_here(self) -> bool:
        end = self.name_at(self.pos)
        if end == self.pos:
            return False
        rest = self.src[end:].lstrip(" \t")
        return rest.startswith("::=")

    def parse(self):
        rules, positions = {}, {}
        self.skip()
        while self.pos < len(self.src):
            start, end = self.pos, self.name_at(self.pos)
            if end == start:
                self.error(f"expected a rule name, found {self.peek()!r}",
                           "start each rule with `name ::= ...`", code="gbnf.expected_name", found=self.peek())
            name = self.src[start:end]
            self.pos = end
            while self.peek() in (" ", "\t"):
                self.pos += 1
            if not self.src.startswith("::=", self.pos):
                self.error(f"expected '::=' after rule name {name!r}", "write `name ::= ...`",
                           code="gbnf.expected_define", name=name)
            if name in rules:
                self.error(f"rule {name!r} is defined twice", "merge the two definitions with |",
                           start, code="gbnf.defined_twice", name=name)
            self.pos += 3
            self.skip()
            rules[name] = self.parse_alternation()
            positions[name] = start
        return rules, positions

    def parse_alternation(self):
        branches = [self.parse_sequence()]
        while self.peek() == "|":
            self.pos += 1
            self.skip()
            branches.append(self.parse_sequence())
        return alt(branches)

    def parse_sequence(self):
        items = []
        while True:
            self.skip()
            c = self.peek()
            if c in ("", "|", ")") or self.rule_starts_here():
                return seq(items) if items else EMPTY
            items.append(self.parse_postfix(self.parse_primary()))

    def parse_primary(self):
        c, at = self.peek(), self.pos
        if c == '"':
            self.pos += 1
            return self.parse_string(at)
        if c == "[":
            self.pos += 1
            return self.parse_class(at)
        if c == ".":
            self.pos += 1
            return Chars(((0, MAX_CODE_POINT),))
        if c == "(":
            self.pos += 1
            self.skip()
            node = self.parse_alternation()
            if self.peek() != ")":
                self.error("missing ')': the group opened here is not closed", "add ')'", at,
                           code="gbnf.unclosed_group")
            self.pos += 1
            return node
        if c in NAME_CHARS:
            end = self.name_at(self.pos)
            name, self.pos = self.src[self.pos:end], end
            return Ref(name, at)
        if c in "<!":
            self.error(f"token references and negation ({c}...) are not supported",
                       "spell the text as a string literal", at, UnsupportedFeature,
                       code="gbnf.token_reference", char=c)
        if c in "*+?{":
            self.error(f"nothing to repeat before {c!r}", "put the quantifier after an item", at,
                       code="gbnf.nothing_to_repeat", char=c)
        self.error(f"unexpected character {c!r}", "expected a string, [class], rule name, "
                   "'.', or '(' here", at, code="gbnf.unexpected_char", found=c)

    def parse_postfix(self, node):
        self.skip_inline()
        c, at = self.peek(), self.pos
        if c in ("*", "+", "?"):
            self.pos += 1
            node = Repeat(node, *{"*": (0, None), "+": (1, None), "?": (0, 1)}[c])
        elif c == "{":
            node = Repeat(node, *self.parse_braces(at))
        else:
            return node
        self.skip_inline()
        if self.peek() in ("*", "+", "?", "{") and self.peek():
            self.error("a quantifier follows another quantifier", "wrap the item in ( )",
                       self.pos, code="gbnf.multiple_repeat")
        return node

    def skip_inline(self) -> None:
        while self.peek() in (" ", "\t") and self.peek():
            self.pos += 1

    def parse_braces(self, at):
        close = self.src.find("}", at)
        body = self.src[at + 1:close] if close != -1 else ""
        lo_s, comma, hi_s = (part.strip() for part in body.partition(","))
        if close == -1 or not lo_s.isdigit() or (hi_s and not hi_s.isdigit()):
            self.error("bad repetition: expected {m}, {m,} or {m,n}", "write e.g. {2,5}", at,
                       code="gbnf.bad_repetition")
        lo = int(lo_s)
        hi = lo if not comma else (int(hi_s) if hi_s else None)
        if hi is not None and hi < lo:
            self.error(f"bad repetition {{{lo},{hi}}}: min is greater than max",
                       f"write {{{hi},{lo}}}", at, code="gbnf.bad_repeat", min=lo, max=hi)
        if max(lo, hi or 0) > MAX_REPEAT:
            self.error(f"repetition bound above {MAX_REPEAT}", "use * or + instead", at,
                       UnsupportedFeature, code="gbnf.repeat_too_large", most=MAX_REPEAT)
        self.pos = close + 1
        return lo, hi

    def parse_string(self, at):
        items = []
        while True:
            c = self.peek()
            if c == "":
                self.error("missing '\"': the string opened here is not closed", "add '\"'", at,
                           code="gbnf.unclosed_string")
            if c == '"':
                self.pos += 1
                return seq(items) if items else EMPTY
            items.append(char(self.parse_char()))

    def parse_char(self) -> int:
        c, at = self.peek(), self.pos
        self.pos += 1
        if c != "\\":
            return ord(c)
        e = self.peek()
        self.pos += 1
        if e in ESCAPES:
            return ESCAPES[e]
        if e in HEX:
            digits = self.src[self.pos:self.pos + HEX[e]]
            if len(digits) != HEX[e] or any(d not in "0123456789abcdefABCDEF" for d in digits):
                self.error(f"bad escape \\{e}: expected {HEX[e]} hex digits, found {digits!r}",
                           f"write \\{e} with exactly {HEX[e]} hex digits", at,
                           code="gbnf.bad_hex_escape", char=e, width=HEX[e], found=digits)
            self.pos += HEX[e]
            if int(digits, 16) > MAX_CODE_POINT:
                self.error(f"bad escape \\{e}{digits}: beyond U+10FFFF", "use a valid code point", at,
                           code="gbnf.beyond_unicode", char=e, digits=digits)
            return int(digits, 16)
        self.error(f"unknown escape \\{e}", "use \\n \\t \\r \\\" \\\\ \\xHH \\uHHHH", at,
                   code="gbnf.unknown_escape", char=e)

    def parse_class(self, at):
        negated = self.peek() == "^"
        if negated:
            self.pos += 1
        ranges = []
        while self.peek() != "]":
            if self.peek() == "":
                self.error("missing ']': the class opened here is not closed", "add ']'", at,
                           code="gbnf.unclosed_class")
            lo = self.parse_char()
            if self.peek() == "-" and self.src[self.pos + 1:self.pos + 2] not in ("]", ""):
                dash = self.pos
                self.pos += 1
                hi = self.parse_char()
                if hi < lo:
                    self.error(f"bad range {chr(lo)}-{chr(hi)}: start is after end",
                               f"write {chr(hi)}-{chr(lo)}", dash, code="gbnf.bad_range",
                               start=chr(lo), end=chr(hi))
                ranges.append((lo, hi))
            else:
                ranges.append((lo, lo))
        self.pos += 1
        ranges = normalize(ranges)
        return Chars(negate(ranges) if negated else ranges)
