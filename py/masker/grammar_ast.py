"""The syntax tree shared by regular expressions, choices and GBNF grammars.

Every terminal is a set of Unicode code points (``Chars``); the byte level appears only when a tree
is compiled (``nfa.py`` for a DFA, ``cfg.py`` for Earley), through ``utf8.utf8_sequences``.

Nodes: ``Chars(ranges)`` one code point from a set; ``Seq(items)`` concatenation (``Seq(())`` is
the empty string); ``Alt(items)`` alternation; ``Repeat(item, lo, hi)`` with ``hi=None`` for no
upper bound; ``Ref(name, pos)`` a GBNF rule reference (``pos`` = offset in the grammar text).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from .utf8 import normalize


@dataclass(frozen=True)
class Chars:
    ranges: tuple  # ((lo, hi), ...) code points, normalized


@dataclass(frozen=True)
class Seq:
    items: tuple


@dataclass(frozen=True)
class Alt:
    items: tuple


@dataclass(frozen=True)
class Repeat:
    item: object
    lo: int
    hi: int | None


@dataclass(frozen=True)
class Ref:
    name: str
    pos: int


EMPTY = Seq(())

# ASCII classes, as Python's ``re`` with the ASCII flag (\s: space, \t \n \v \f \r).
DIGIT = ((0x30, 0x39),)
WORD = normalize([(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)])
SPACE = normalize([(0x09, 0x0D), (0x20, 0x20)])
ANY_BUT_NEWLINE = ((0, 0x09), (0x0B, 0x10FFFF))


@lru_cache(maxsize=4096)
def char(cp: int) -> Chars:
    """The set of the one code point ``cp`` (immutable, so shared between uses)."""
    return Chars(((cp, cp),))


def literal(text: str) -> Seq:
    """The exact string ``text`` as a sequence of one-code-point sets."""
    return Seq(tuple(char(ord(c)) for c in text))


def nullable(node) -> bool:
    """True when ``node`` matches the empty string (``Ref`` counts as not nullable)."""
    if isinstance(node, Seq):
        return all(nullable(it) for it in node.items)
    if isinstance(node, Alt):
        return any(nullable(it) for it in node.items)
    if isinstance(node, Repeat):
        return node.lo == 0 or nullable(node.item)
    return False


def literal_text(node) -> bytes | None:
    """The UTF-8 bytes of ``node`` when it is one literal text (a single-code-point ``Chars``
    or a ``Seq`` of them; ``Seq(())`` is b""), else None."""
    items = node.items if isinstance(node, Seq) else (node,)
    out = []
    for it in items:
        if not (isinstance(it, Chars) and len(it.ranges) == 1
                and it.ranges[0][0] == it.ranges[0][1]):
            return None
        out.append(chr(it.ranges[0][0]))
    return "".join(out).encode("utf-8", "surrogatepass")


def alt(items) -> object:
    """Alternation that flattens the one-item case."""
    items = tuple(items)
    return items[0] if len(items) == 1 else Alt(items)


def seq(items) -> object:
    """Concatenation that flattens the one-item case."""
    items = tuple(items)
    return items[0] if len(items) == 1 else Seq(items)


def node_size(node, limit: int = 1 << 62) -> int:
    """Number of code-point sets after repetitions are expanded (stops counting past ``limit``)."""
    if isinstance(node, Chars):
        return 1
    if isinstance(node, Ref):
        return 1
    if isinstance(node, Repeat):
        copies = node.hi if node.hi is not None else max(node.lo, 1)
        return min(limit, copies * node_size(node.item, limit))
    total = 0
    for item in node.items:
        total += node_size(item, limit)
        if total >= limit:
            return limit
    return total


def measure(node, stats: dict, memo: dict | None = None) -> tuple[int, int]:
    """(size, depth) of ``node`` with its rule references inlined: code-point sets after
    expanding repetitions (as ``node_size``, uncapped), and syntax-tree depth. ``stats`` holds
    the (size, depth) of every rule ``node`` refers to (KeyError for another), so Python
    recursion stays within ``node``. ``memo``: id(node) -> result, for a caller that measures
    nodes inside nodes it measured (it must keep the nodes alive)."""
    if isinstance(node, Chars):
        return 1, 1
    if isinstance(node, Ref):
        return stats[node.name]
    if memo is not None and id(node) in memo:
        return memo[id(node)]
    if isinstance(node, Repeat):
        n, d = measure(node.item, stats, memo)
        out = n * (node.hi if node.hi is not None else max(node.lo, 1)), d + 1
    else:
        parts = [measure(item, stats, memo) for item in node.items]
        out = sum(n for n, _ in parts), 1 + max((d for _, d in parts), default=0)
    if memo is not None:
        memo[id(node)] = out
    return out
