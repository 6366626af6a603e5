"""Intermediate form of a compiled JSON Schema, and its two text emitters.

A schema is first translated into a small grammar over Unicode characters
(nodes `Lit`, `Chars`, `Seq`, `Alt`, `Repeat`, `Ref`), kept as named rules.
If no rule refers to itself (directly or through others), the rules are
inlined into one regular expression (Python `re` syntax, the subset that
`masker.compile_regex` reads). Otherwise they are written as GBNF rules
(llama.cpp `grammars/README.md` syntax, read by `masker.compile_cfg`).

Code points are ints; a character set is a tuple of closed ranges
`((lo, hi), ...)`, sorted and disjoint. Surrogates (U+D800..U+DFFF) never
appear in a set: they cannot be encoded in UTF-8.
"""
from __future__ import annotations

from dataclasses import dataclass

from .grammar_ast import Alt, Chars, Repeat, Seq  # the masker's own tree nodes; hi=None: unbounded
from .utf8 import MAX_CODE_POINT as MAX_CP
from .utf8 import SURROGATES, negate, normalize, remove_surrogates


@dataclass(frozen=True)
class Lit:
    text: str


@dataclass(frozen=True)
class Ref:
    name: str


EMPTY = Lit("")
NOTHING = Alt(())  # matches no string at all


def seq(*items):
    """Concatenation, flattening nested Seq and merging adjacent literals."""
    out = []
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


def alt(*items):
    """Alternation, flattening nested Alt and dropping duplicates."""
    out = []
    for it in items:
        for p in (it.items if isinstance(it, Alt) else (it,)):
            if not any(_same(p, q) for q in out):
                out.append(p)
    if not out:
        return NOTHING
    return out[0] if len(out) == 1 else Alt(tuple(out))


def _is_nothing(node):
    return isinstance(node, Alt) and not node.items


def _same(a, b):
    """Cheap equality: identity, or equal leaves (no deep comparison)."""
    return a is b or (type(a) is type(b) and isinstance(a, (Lit, Chars)) and a == b)


def opt(item):
    return EMPTY if _is_nothing(item) else alt(item, EMPTY)


def repeat(item, lo, hi=None):
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

def char_set(ranges):
    """Normalise ranges: clip to Unicode, sort, merge, remove surrogates."""
    return remove_surrogates(normalize((max(0, lo), min(MAX_CP, hi)) for lo, hi in ranges))


def set_complement(ranges):
    """Every encodable code point not in ``ranges``."""
    return remove_surrogates(negate(char_set(ranges)))


def set_intersect(a, b):
    return set_complement(char_set(set_complement(a) + set_complement(b)))


def set_minus(a, b):
    return set_intersect(a, set_complement(b))


def chars(ranges):
    rs = char_set(ranges)
    if not rs:
        return NOTHING
    if len(rs) == 1 and rs[0][0] == rs[0][1]:
        return Lit(chr(rs[0][0]))
    return Chars(rs)


# ---- rule graph -----------------------------------------------------------

def refs_in(node):
    """Names referenced by `node` (a set); shared sub-expressions are visited once."""
    acc, seen, todo = set(), set(), [node]
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


def is_recursive(rules, start="root"):
    """True if some rule reachable from `start` can reach itself."""
    state = {}  # name -> 1 visiting, 2 done

    def visit(name):
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
