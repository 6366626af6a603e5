"""Sets of Unicode code points and their UTF-8 byte-level form.

A code-point set is a sorted tuple of disjoint, non-adjacent closed intervals ``((lo, hi), ...)``.
``utf8_sequences`` turns one into byte-range sequences, so an automaton over bytes accepts exactly
the UTF-8 encodings of the set's code points (the same splitting as Rust's ``utf8-ranges`` and
RE2; the UTF-8 bit layout is RFC 3629 section 3). Surrogates U+D800..U+DFFF are never encoded:
they are not valid in UTF-8.
"""

from __future__ import annotations

from functools import lru_cache

MAX_CODE_POINT = 0x10FFFF
SURROGATES = (0xD800, 0xDFFF)
Ranges = tuple  # tuple[tuple[int, int], ...]


def normalize(intervals) -> Ranges:
    """Sort and merge overlapping or adjacent intervals; drop empty ones."""
    out: list[list[int]] = []
    for lo, hi in sorted(iv for iv in intervals if iv[0] <= iv[1]):
        if out and lo <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return tuple((lo, hi) for lo, hi in out)


def negate(ranges: Ranges) -> Ranges:
    """Every code point 0..U+10FFFF not in ``ranges``."""
    out, nxt = [], 0
    for lo, hi in ranges:
        if lo > nxt:
            out.append((nxt, lo - 1))
        nxt = hi + 1
    if nxt <= MAX_CODE_POINT:
        out.append((nxt, MAX_CODE_POINT))
    return tuple(out)


def remove_surrogates(ranges: Ranges) -> Ranges:
    """``ranges`` minus U+D800..U+DFFF, which have no UTF-8 encoding."""
    s_lo, s_hi = SURROGATES
    out = []
    for lo, hi in ranges:
        if hi < s_lo or lo > s_hi:
            out.append((lo, hi))
            continue
        if lo < s_lo:
            out.append((lo, s_lo - 1))
        if hi > s_hi:
            out.append((s_hi + 1, hi))
    return tuple(out)


_LENGTH_LIMITS = (0x7F, 0x7FF, 0xFFFF, MAX_CODE_POINT)


@lru_cache(maxsize=8192)
def utf8_sequences(ranges: Ranges) -> tuple[tuple[tuple[int, int], ...], ...]:
    """Byte-range sequences whose concatenations are exactly the UTF-8 encodings of ``ranges``.

    Memoized (grammars repeat the same classes). Returns a tuple of sequences; a sequence is a tuple of ``(lo_byte, hi_byte)`` pairs, one per
    byte position. Example: U+00E0..U+00FF -> ``[((0xC3, 0xC3), (0xA0, 0xBF))]``.
    """
    out: list[tuple[tuple[int, int], ...]] = []
    for lo, hi in remove_surrogates(ranges):
        start = lo
        for limit in _LENGTH_LIMITS:          # split where the encoded length changes
            if start > hi:
                break
            if start <= limit:
                _split_same_length(start, min(hi, limit), out)
                start = limit + 1
    return tuple(out)


def _split_same_length(lo: int, hi: int, out: list) -> None:
    """Split [lo, hi] (same encoded length) until each piece is a product of byte ranges."""
    n = len(chr(lo).encode("utf-8"))
    for i in range(1, n):
        mask = (1 << (6 * i)) - 1
        if lo & ~mask != hi & ~mask:
            if lo & mask != 0:
                _split_same_length(lo, lo | mask, out)
                _split_same_length((lo | mask) + 1, hi, out)
                return
            if hi & mask != mask:
                _split_same_length(lo, (hi & ~mask) - 1, out)
                _split_same_length(hi & ~mask, hi, out)
                return
    a, b = chr(lo).encode("utf-8"), chr(hi).encode("utf-8")
    out.append(tuple(zip(a, b)))

