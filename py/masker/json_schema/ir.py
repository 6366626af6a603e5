"""Intermediate form of a compiled JSON Schema: a small grammar over Unicode characters.

A schema is first translated (``translate.py``) into nodes ``Lit``, ``Chars``, ``Seq``,
``Alt``, ``Repeat`` and ``Ref``, kept as named rules (``Rules``: name -> node, "root" is the
whole document). ``emit.py`` then writes the rules as one regular expression when no rule
refers to itself, directly or through others, and as GBNF rules otherwise.

``Chars``, ``Seq``, ``Alt`` and ``Repeat`` are the masker's own tree nodes
(``grammar_ast.py``; ``Repeat.hi`` None = unbounded); ``Lit`` and ``Ref`` are defined here.
Build nodes with ``seq``, ``alt``, ``opt``, ``repeat`` and ``chars``, which simplify as they go
(``NOTHING``, the empty language, absorbs a sequence; ``EMPTY`` is the empty string).

Code points are ints; a character set is a tuple of closed ranges ``((lo, hi), ...)``, sorted
and disjoint. Surrogates (U+D800..U+DFFF) never appear in a set: they cannot be encoded in UTF-8.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Union

from ..grammar_ast import Alt, Chars, Repeat, Seq
from ..utf8 import MAX_CODE_POINT as MAX_CP
from ..utf8 import SURROGATES, Ranges, negate, normalize, remove_surrogates

__all__ = ["Lit", "Ref", "Chars", "Seq", "Alt", "Repeat", "Node", "Rules", "Ranges", "EMPTY",
           "NOTHING", "MAX_CP", "SURROGATES", "seq", "alt", "opt", "repeat", "chars",
           "char_set", "set_complement", "set_intersect", "set_minus", "refs_in",
           "is_recursive", "productive_rules"]


@dataclass(frozen=True)
class Lit:
    """The exact string ``text`` ("" is the empty string)."""

    text: str


@dataclass(frozen=True)
class Ref:
    """A reference to the named rule ``name``."""

    name: str


Node = Union[Lit, Ref, Chars, Seq, Alt, Repeat]
Rules = dict[str, Node]

EMPTY = Lit("")
NOTHING = Alt(())  # matches no string at all


def seq(*items: Node) -> Node:
    """Concatenation, flattening nested Seq and merging adjacent literals."""
    out: list[Node] = []
    for it in items:
        parts = it.items if isinstance(it, Seq) else (it,)
        for p in parts:
            if _is_nothing(p):
                return NOTHING
            if isinstance(p, Lit) and out and isinstance(out[-1], Lit):
                out[-1] = Lit(out[-1].text + p.text)
            elif not (isinstance(p, Lit) and not p.text):
                out.append(p)
    if not out:
        return EMPTY
    return out[0] if len(out) == 1 else Seq(tuple(out))


def alt(*items: Node) -> Node:
    """Alternation, flattening nested Alt and dropping duplicates: equal leaves (``Lit``,
    ``Chars``) by hash, other nodes by identity. Linear in the number of items."""
    out: list[Node] = []
    seen: set = set()
    for it in items:
        for p in (it.items if isinstance(it, Alt) else (it,)):
            key = (0, p) if isinstance(p, (Lit, Chars)) else (1, id(p))
            if key not in seen:
                seen.add(key)
                out.append(p)
    if not out:
        return NOTHING
    return out[0] if len(out) == 1 else Alt(tuple(out))


def _is_nothing(node: Node) -> bool:
    return isinstance(node, Alt) and not node.items


def opt(item: Node) -> Node:
    """``item`` or the empty string."""
    return EMPTY if _is_nothing(item) else alt(item, EMPTY)


def repeat(item: Node, lo: int, hi: int | None = None) -> Node:
    """``item`` repeated ``lo`` to ``hi`` times (``hi`` None: no upper bound)."""
    if hi is not None and hi < lo:
        return NOTHING
    if hi == 0 or (isinstance(item, Lit) and not item.text):
        return EMPTY
    if lo == hi == 1:
        return item
    if _is_nothing(item):
        return EMPTY if lo == 0 else NOTHING
    return Repeat(item, lo, hi)


# ---- character sets -------------------------------------------------------

def char_set(ranges: Iterable[tuple[int, int]]) -> Ranges:
    """Normalise ranges: clip to Unicode, sort, merge, remove surrogates."""
    return remove_surrogates(normalize((max(0, lo), min(MAX_CP, hi)) for lo, hi in ranges))


def set_complement(ranges: Iterable[tuple[int, int]]) -> Ranges:
    """Every encodable code point not in ``ranges``."""
    return remove_surrogates(negate(char_set(ranges)))


def set_intersect(a: Ranges, b: Ranges) -> Ranges:
    """The code points in both ``a`` and ``b``."""
    return set_complement(char_set(set_complement(a) + set_complement(b)))


def set_minus(a: Ranges, b: Ranges) -> Ranges:
    """The code points of ``a`` that are not in ``b``."""
    return set_intersect(a, set_complement(b))


def chars(ranges: Iterable[tuple[int, int]]) -> Node:
    """One character of the set ``ranges``: ``NOTHING`` if it is empty, a ``Lit`` if it holds
    one code point, else ``Chars``."""
    rs = char_set(ranges)
    if not rs:
        return NOTHING
    if len(rs) == 1 and rs[0][0] == rs[0][1]:
        return Lit(chr(rs[0][0]))
    return Chars(rs)


# ---- rule graph -----------------------------------------------------------

def refs_in(node: Node) -> set[str]:
    """Names referenced by ``node``; shared sub-expressions are visited once."""
    acc: set[str] = set()
    seen: set[int] = set()
    todo = [node]
    while todo:
        n = todo.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        if isinstance(n, Ref):
            acc.add(n.name)
        elif isinstance(n, (Seq, Alt)):
            todo.extend(n.items)
        elif isinstance(n, Repeat):
            todo.append(n.item)
    return acc


def is_recursive(rules: Rules, start: str = "root") -> bool:
    """True if some rule reachable from ``start`` can reach itself."""
    state: dict[str, int] = {}  # name -> 1 visiting, 2 done

    def visit(name: str) -> bool:
        if state.get(name) == 1:
            return True
        if state.get(name) == 2:
            return False
        state[name] = 1
        if any(visit(n) for n in refs_in(rules[name])):
            return True
        state[name] = 2
        return False

    return visit(start)


def productive_rules(rules: Rules) -> set[str]:
    """Names of the rules that derive at least one finite string (the least fixpoint of
    "a literal or set is productive; a sequence if all its items are, an alternation if one
    is, a repetition if ``lo`` is 0 or its item is, a reference if its rule is"). A rule
    outside the set is a cycle with no base case. Work: at most one pass over every rule per
    rule that joins the set."""
    done: set[str] = set()

    def ok(node: Node) -> bool:
        if isinstance(node, (Lit, Chars)):
            return True
        if isinstance(node, Ref):
            return node.name in done
        if isinstance(node, Seq):
            return all(ok(it) for it in node.items)
        if isinstance(node, Alt):
            return any(ok(it) for it in node.items)
        return node.lo == 0 or ok(node.item)

    changed = True
    while changed:
        changed = False
        for name, node in rules.items():
            if name not in done and ok(node):
                done.add(name)
                changed = True
    return done
