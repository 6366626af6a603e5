"""tiktoken's pre-tokenizer pattern in Python's ``re``.

tiktoken splits a text into pieces with a regular expression before it merges bytes, and its
patterns use Unicode properties (``\\p{L}``, ``\\p{Lu}``, ``\\p{N}``, ``\\p{M}``...) that ``re``
does not know. ``compile_pattern`` rewrites each property as the code-point ranges of its general
categories, read from ``unicodedata``, and ``\\s``/``\\S`` as the Unicode White_Space property,
which is what tiktoken's Rust regex means by them (``re``'s ``\\s`` also matches U+001C..U+001F).
The rest of the syntax the patterns use (alternation, ``?``, ``+``, ``{1,3}``, ``(?!...)``, classes
and their negation) means the same in both engines.

Source of the patterns: the ``pat_str`` of each encoding, as ``js-tiktoken`` ships it.
Limit: ``unicodedata`` follows the Python's Unicode version (3.11: 14.0; 3.12: 15.0), so a
character assigned in a later version counts as unassigned here.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from functools import lru_cache

# The White_Space property (Unicode's PropList.txt): tiktoken's \s.
WHITE_SPACE = ((0x09, 0x0D), (0x20, 0x20), (0x85, 0x85), (0xA0, 0xA0), (0x1680, 0x1680),
               (0x2000, 0x200A), (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F),
               (0x3000, 0x3000))


SKIP = (0x40000, 0xE0000)


@lru_cache(maxsize=None)
def _category_ranges() -> dict[str, list[tuple[int, int]]]:
    """Every general category (two letters, ``Lu``...) -> its code-point ranges, in order."""
    ranges: dict[str, list[tuple[int, int]]] = {}
    category = unicodedata.category
    last, start = None, 0
    for cp in range(sys.maxunicode + 2):
        if SKIP[0] <= cp < SKIP[1]:
            cat = "Cn"  # planes 4 to 13: nothing assigned (Unicode 16 too); a third of the time
        else:
            cat = category(chr(cp)) if cp <= sys.maxunicode else None
        if cat != last:
            if last is not None:
                ranges.setdefault(last, []).append((start, cp - 1))
            last, start = cat, cp
    return ranges


def property_ranges(name: str) -> list[tuple[int, int]]:
    """Code-point ranges of a general category (``Lu``) or a major class (``L``: every ``L?``).
    Raises ValueError for a name that is neither."""
    cats = _category_ranges()
    if name in cats:
        return cats[name]
    found = sorted(r for cat, rs in cats.items() if cat[0] == name for r in rs)
    if not found or len(name) != 1:
        raise ValueError(f"unknown Unicode property \\p{{{name}}}")
    return found


def _class_body(ranges) -> str:
    return "".join(f"\\U{lo:08x}" if lo == hi else f"\\U{lo:08x}-\\U{hi:08x}"
                   for lo, hi in ranges)


_TOKEN = re.compile(r"\\p\{(\w+)\}|\\[sS]|\\.|\[\^?|\]|.", re.S)


def translate(pat_str: str) -> str:
    """``pat_str`` rewritten for ``re`` (see the module docstring). Raises ValueError for a
    property it does not know, or ``\\S`` inside a class (no pattern has one)."""
    out, in_class = [], False
    for m in _TOKEN.finditer(pat_str):
        tok = m.group()
        if m.group(1):
            body = _class_body(property_ranges(m.group(1)))
            out.append(body if in_class else f"[{body}]")
        elif tok == r"\s":
            body = _class_body(WHITE_SPACE)
            out.append(body if in_class else f"[{body}]")
        elif tok == r"\S":
            if in_class:
                raise ValueError("\\S inside a character class is not supported")
            out.append(f"[^{_class_body(WHITE_SPACE)}]")
        else:
            if tok.startswith("[") and not in_class:
                in_class = True
            elif tok == "]" and in_class:
                in_class = False
            out.append(tok)
    return "".join(out)


@lru_cache(maxsize=8)
def compile_pattern(pat_str: str) -> re.Pattern:
    """The compiled ``translate(pat_str)``; the first call reads the Unicode tables (about
    0.3 s in CPython)."""
    return re.compile(translate(pat_str))
