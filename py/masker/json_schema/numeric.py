"""JSON numbers (RFC 8259 section 6) and the numeric bounds of JSON Schema (2020-12
validation, section 6.2: minimum, maximum, exclusiveMinimum, exclusiveMaximum).

Unbounded: ``-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][+-]?[0-9]+)?`` for ``number``,
``-?(0|[1-9][0-9]*)`` for ``integer`` (so ``1.0`` and ``1e2`` are not produced for integers,
and ``-0`` is). Bounds are written as digit regexes:
- ``integer``: any integer ``minimum``/``maximum``/``exclusiveMinimum``/``exclusiveMaximum``
  (a fractional bound is rounded inward, exactly);
- ``number``: decimal bounds, and then no exponent form. The value is split as sign, integer
  part I and fraction digits F: the bound's integer part limits I, and at I equal to it, F is
  compared digit by digit with the bound's fraction (e.g. for >= 2.5 at I = 2: F starts with
  5..9). Both bounds inside one unit interval with a fraction ([0.25, 0.75]) are refused.
"""

from __future__ import annotations

import math
from decimal import Decimal

from .ir import EMPTY, NOTHING, Lit, Node, alt, chars, opt, repeat, seq

DIGIT = chars([(48, 57)])
NONZERO = chars([(49, 57)])
FRACTION = seq(Lit("."), repeat(DIGIT, 1))
EXPONENT = seq(chars([(69, 69), (101, 101)]), opt(chars([(43, 43), (45, 45)])),
               repeat(DIGIT, 1))
NATURAL = alt(Lit("0"), seq(NONZERO, repeat(DIGIT, 0)))
INTEGER = seq(opt(Lit("-")), NATURAL)
NUMBER = seq(INTEGER, opt(FRACTION), opt(EXPONENT))
F_ANY, F_ZERO, F_NONZERO = (opt(FRACTION), opt(seq(Lit("."), repeat(Lit("0"), 1))),
                            seq(Lit("."), repeat(DIGIT, 0), NONZERO, repeat(DIGIT, 0)))


def _same_length(lo: str, hi: str) -> Node:
    """Digit strings of equal length with lo <= hi: every string between."""
    if not lo:
        return EMPTY
    if lo[0] == hi[0]:
        return seq(Lit(lo[0]), _same_length(lo[1:], hi[1:]))
    n = len(lo) - 1
    if lo[1:] == "0" * n and hi[1:] == "9" * n:
        return seq(chars([(ord(lo[0]), ord(hi[0]))]), repeat(DIGIT, n, n))
    parts = [seq(Lit(lo[0]), _same_length(lo[1:], "9" * n))]
    if ord(hi[0]) - ord(lo[0]) > 1:
        parts.append(seq(chars([(ord(lo[0]) + 1, ord(hi[0]) - 1)]), repeat(DIGIT, n, n)))
    parts.append(seq(Lit(hi[0]), _same_length("0" * n, hi[1:])))
    return alt(*parts)


def naturals(lo: int, hi: int | None) -> Node:
    """Decimal naturals (no leading zeros) in [lo, hi]; hi None = unbounded."""
    lo = max(lo, 0)
    if hi is not None and hi < lo:
        return NOTHING
    parts = []
    if lo == 0:
        parts.append(Lit("0"))
        lo = 1
    if hi is not None and hi < lo:
        return alt(*parts)
    length = len(str(lo))
    while hi is None or length <= len(str(hi)):
        top = 10 ** length - 1
        if hi is None and lo == 10 ** (length - 1):
            parts.append(seq(NONZERO, repeat(DIGIT, length - 1)))
            break
        end = top if hi is None else min(top, hi)
        parts.append(_same_length(str(lo), str(end)))
        lo, length = end + 1, length + 1
    return alt(*parts)


def integer_range(lo: int | None, hi: int | None) -> Node:
    """Integers in [lo, hi] (either may be None). `-0` is written when 0 is in range."""
    parts = []
    if lo is None or lo < 0:
        neg_hi = None if lo is None else -lo
        neg_lo = 1 if hi is None or hi >= 0 else -hi
        parts.append(seq(Lit("-"), naturals(neg_lo, neg_hi)))
    if (lo is None or lo <= 0) and (hi is None or hi >= 0):
        parts.append(Lit("-0"))
    if hi is None or hi >= 0:
        parts.append(naturals(0 if lo is None else lo, hi))
    return alt(*parts)


def integer_bounds(lo: float | None, lo_excl: bool, hi: float | None, hi_excl: bool) -> Node:
    """Integers within ``lo`` and ``hi`` (None = unbounded; fractional bounds are rounded
    inward; ``*_excl``: the bound itself is excluded)."""
    ilo = None if lo is None else (math.floor(lo) + 1 if lo_excl else math.ceil(lo))
    ihi = None if hi is None else (math.ceil(hi) - 1 if hi_excl else math.floor(hi))
    return integer_range(ilo, ihi)


def _split(d: Decimal) -> tuple[int, str]:
    """Decimal d >= 0 -> (integer part, fraction digits without trailing zeros)."""
    i = int(d)
    frac = f"{d - i:f}"
    return i, frac[2:].rstrip("0") if "." in frac else ""


def _frac(digits: str, op: str) -> Node:
    """The optional fraction part `.F` of I.F whose value 0.F compares with 0.digits
    by `op` (one of > = <); digits has no trailing zeros."""
    dot = Lit(".")
    if op == "=":
        return opt(seq(dot, repeat(Lit("0"), 1))) if not digits else seq(
            dot, Lit(digits), repeat(Lit("0"), 0))
    parts = []
    for k, d in enumerate(digits):
        head = Lit(digits[:k])
        if op == ">" and d < "9":
            parts.append(seq(dot, head, chars([(ord(d) + 1, 57)]), repeat(DIGIT, 0)))
        if op == "<":
            parts.append(seq(dot, head) if k else EMPTY)  # F ends here, below digits
            if d > "0":
                parts.append(seq(dot, head, chars([(48, ord(d) - 1)]), repeat(DIGIT, 0)))
    if op == ">":
        parts.append(seq(dot, Lit(digits), repeat(Lit("0"), 0), NONZERO, repeat(DIGIT, 0)))
    return alt(*parts)


def _magnitudes(lo: Decimal | None, lo_excl: bool, hi: Decimal | None,
                hi_excl: bool) -> Node:
    """Non-negative decimals m = I.F (no exponent) with lo (<) m (<) hi; bounds are
    Decimal or None. Raises ValueError when both bounds fall in one unit interval
    with a fractional part (not expressible here)."""
    if lo is not None and lo < 0:
        lo, lo_excl = None, False
    if hi is not None and (hi < 0 or (hi == 0 and hi_excl)):
        return NOTHING
    if lo is not None and hi is not None and lo > hi:
        return NOTHING
    li, lf = (0, None) if lo is None else _split(lo)
    low_any = lf is None or (lf == "" and not lo_excl)
    low = F_ANY if low_any else alt(_frac(lf, ">"), NOTHING if lo_excl else _frac(lf, "="))
    if hi is None:
        return alt(seq(naturals(li, li), low), seq(naturals(li + 1, None), F_ANY))
    hi_i, hf = _split(hi)
    high = alt(_frac(hf, "<"), NOTHING if hi_excl else _frac(hf, "="))
    if li == hi_i:
        if low_any:
            return seq(naturals(li, li), high)
        if lf == "" and hf == "":  # I.F > I and I.F <= I: nothing
            return NOTHING
        raise ValueError("both bounds inside one unit interval")
    return alt(seq(naturals(li, li), low), seq(naturals(li + 1, hi_i - 1), F_ANY),
               seq(naturals(hi_i, hi_i), high))


def number_bounds(lo: float | None, lo_excl: bool, hi: float | None, hi_excl: bool) -> Node:
    """Numbers within decimal bounds (None = unbounded; ``*_excl``: the bound itself is
    excluded), written without exponent. Raises ValueError when both bounds fall inside one
    unit interval with a fractional part (the caller refuses the schema)."""
    lo = None if lo is None else Decimal(str(lo))
    hi = None if hi is None else Decimal(str(hi))
    pos = _magnitudes(lo, lo_excl, hi, hi_excl)
    neg = _magnitudes(None if hi is None else -hi, hi_excl,
                      None if lo is None else -lo, lo_excl)
    return alt(pos, seq(Lit("-"), neg))


def _fraction(step: float | int) -> tuple[int, int]:
    """(p, e) with ``step`` = p / 10^e, read from its decimal spelling (``repr``)."""
    _sign, digits, exponent = Decimal(repr(step)).normalize().as_tuple()
    p = int("".join(map(str, digits)))
    if exponent > 0:
        p *= 10 ** exponent
    return p, max(0, -exponent)


def _multiple_ends(key: tuple, p: int, e: int) -> bool:
    """Whether a number may end in state ``key`` = (phase, residue, fraction digits read): what
    it spells, times 10^e, is a multiple of p."""
    phase, r, f = key
    if phase in ("int", "zero"):
        return r * 10 ** e % p == 0
    if phase == "frac":
        return f > 0 and r * 10 ** (e - f) % p == 0
    return phase == "tail"  # "start", "minus", or "tail" (zeros past e digits, r == 0)


def _digit_moves(key: tuple, p: int, e: int, integer: bool) -> list[tuple[int, int, tuple]]:
    """The moves (byte, byte, next key) out of state ``key`` = (phase, residue mod p, fraction
    digits read) of :func:`multiples_dfa`."""
    phase, r, f = key
    row: list[tuple[int, int, tuple]] = []
    if phase in ("start", "minus"):
        if phase == "start":
            row.append((45, 45, ("minus", 0, 0)))  # "-"
        row.append((48, 48, ("zero", 0, 0)))  # "0"
        row += [(d, d, ("int", (d - 48) % p, 0)) for d in range(49, 58)]
    elif phase in ("int", "zero"):
        if phase == "int":
            row += [(d, d, ("int", (10 * r + d - 48) % p, 0)) for d in range(48, 58)]
        if not integer:
            row.append((46, 46, ("frac", r, 0)))  # "."
    elif phase == "frac":
        if f < e:
            row += [(d, d, ("frac", (10 * r + d - 48) % p, f + 1)) for d in range(48, 58)]
        elif r % p == 0:  # e digits read and a multiple: only zeros may follow
            row.append((48, 48, ("tail", 0, 0)))
    elif phase == "tail":
        row.append((48, 48, ("tail", 0, 0)))
    return row


def multiples_dfa(step: float | int, integer: bool, max_states: int):
    """A character DFA (``boolean.CharDfa``) of the JSON numbers without exponent that are
    multiples of ``step`` (validation 6.2.1): with ``step`` = p / 10^e (p, e integers, read
    from its decimal spelling), v is a multiple when v * 10^e is an integer divisible by p. The
    states follow the digits read: the residue mod p of the number they spell and how many
    fraction digits (up to e) were read; past e fraction digits only zeros may follow.
    ``integer``: integers only (no fraction). Returns None when it needs more than
    ``max_states`` states (about p * (e + 2))."""
    from .boolean import CharDfa, minimize, trim  # (boolean.py imports ir; no cycle)

    p, e = _fraction(step)
    if p * (e + 2) + 4 > max_states:
        return None
    index: dict[tuple, int] = {}
    moves: list[list[tuple[int, int, int]]] = []
    accepting: list[bool] = []

    def state(key: tuple) -> int:
        if key not in index:
            index[key] = len(moves)
            moves.append([])
            accepting.append(_multiple_ends(key, p, e))
        return index[key]

    todo = [("start", 0, 0)]
    state(todo[0])
    seen = set(todo)
    while todo:
        key = todo.pop()
        out = []
        for lo, hi, nxt in _digit_moves(key, p, e, integer):
            out.append((lo, hi, state(nxt)))
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
        moves[index[key]] = sorted(out)
    return minimize(trim(CharDfa(moves, accepting)))
