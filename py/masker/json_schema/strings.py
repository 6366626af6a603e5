"""JSON strings (RFC 8259 section 7) in the intermediate form.

A string is ``"`` characters ``"``. One character of the decoded value is one *unit* of the
JSON text:
- a raw code point other than ``"``, ``\\`` and U+0000..U+001F (U+007F is allowed raw, as
  RFC 8259 allows it);
- a two-character escape ``\\" \\\\ \\/ \\b \\f \\n \\r \\t``;
- ``\\uXXXX`` for a code point outside the surrogate range, or a surrogate pair
  ``\\uD8xx\\uDCxx`` (high then low). Lone surrogates are refused: they are not Unicode scalar
  values, and counting them would make ``minLength``/``maxLength`` (which count code points,
  2020-12 validation, sections 6.3.1 and 6.3.2) ambiguous.
So ``minLength``/``maxLength`` become a repetition count of units.
"""

from __future__ import annotations

from collections.abc import Iterable

from .ir import EMPTY, MAX_CP, Lit, Node, Ranges, alt, char_set, chars, repeat, seq, set_intersect

RAW = char_set([(0x20, 0x21), (0x23, 0x5B), (0x5D, MAX_CP)])
SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "/": "\\/", "\b": "\\b",
                 "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
HEX = char_set([(48, 57), (65, 70), (97, 102)])
QUOTE = Lit('"')


def _hex(*ranges: str) -> Node:
    """One hex digit from the ranges given as two-character strings ("09", "af")."""
    return chars([(ord(a), ord(b)) for a, b in ranges])


def _unit() -> Node:
    """One unit: a raw character, a short escape, ``\\uXXXX`` or a surrogate pair."""
    any_hex = chars(HEX)
    non_d = _hex("09", "ac", "AC", "ef", "EF")
    d = _hex("dd", "DD")
    bmp = alt(seq(non_d, repeat(any_hex, 3, 3)),
              seq(d, _hex("07"), any_hex, any_hex))
    high = seq(d, _hex("89", "ab", "AB"), any_hex, any_hex)
    low = seq(d, _hex("cf", "CF"), any_hex, any_hex)
    return alt(chars(RAW),
               seq(Lit("\\"), chars([(ord(c), ord(c)) for c in '"\\/bfnrt'])),
               seq(Lit("\\u"), bmp),
               seq(Lit("\\u"), high, Lit("\\u"), low))


UNIT = _unit()


def json_string(min_len: int = 0, max_len: int | None = None) -> Node:
    """``"`` + units + ``"``, with a code-point count in [min_len, max_len] (None: no upper
    bound)."""
    return seq(QUOTE, repeat(UNIT, min_len, max_len), QUOTE)


def encoded_chars(ranges: Ranges) -> Node:
    """The JSON encodings of any one character of the set ``ranges``.

    Raw form where allowed, plus the short escapes; the ``\\uXXXX`` forms are not produced
    here (a documented limit of ``pattern`` and ``format``).
    """
    items = [chars(set_intersect(ranges, RAW))]
    for c, esc in SHORT_ESCAPES.items():
        cp = ord(c)
        if any(lo <= cp <= hi for lo, hi in ranges):
            items.append(Lit(esc))
    return alt(*items)


def literal_string(text: str) -> str:
    """The canonical JSON encoding of ``text`` (as ``json.dumps`` with ensure_ascii=False
    writes it)."""
    out = []
    for c in text:
        if c in SHORT_ESCAPES and c != "/":
            out.append(SHORT_ESCAPES[c])
        elif ord(c) < 0x20:
            out.append(f"\\u{ord(c):04x}")
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


def _raw_except(cps: Iterable[int]) -> Ranges:
    """RAW without the sorted code points ``cps`` (fast path of ``set_minus``)."""
    out, holes = [], iter(cps)
    hole = next(holes, None)
    for lo, hi in RAW:
        while hole is not None and hole <= hi:
            if hole >= lo:
                if hole > lo:
                    out.append((lo, hole - 1))
                lo = hole + 1
            hole = next(holes, None)
        if lo <= hi:
            out.append((lo, hi))
    return tuple(out)


def key_not_in(names: list[str]) -> Node:
    """A JSON string key whose value is none of ``names``.

    Keys are written with raw characters only (no escapes), so the text
    between the quotes is the key itself and excluding a name is exact.
    Built from the trie of names: leave the trie by a character no name
    continues with, or stop at a node that ends no name.
    """
    trie: dict = {}
    for name in names:
        node = trie
        for c in name:
            node = node.setdefault(c, {})
        node[None] = {}
    anything = repeat(chars(RAW), 0, None)

    def build(node: dict) -> Node:
        branches = [] if None in node else [EMPTY]
        kids = [c for c in node if c is not None]
        others = _raw_except(sorted(ord(c) for c in kids))
        branches.append(seq(chars(others), anything))
        for c in kids:
            if ord(c) in range(0x20, MAX_CP + 1) and c not in '"\\':
                branches.append(seq(Lit(c), build(node[c])))
        return alt(*branches)

    return seq(QUOTE, build(trie), QUOTE)
