"""Places in the text a reader typed, for an error's caret and underline: neither Spanish nor
English. Offsets are Python string indexes (code points); the page turns them into the editor's.

- :func:`line_column`: the 1-based line and column of an offset;
- :func:`pointer_span`: the characters of a JSON document that a JSON pointer (RFC 6901) names;
- :func:`string_offset`: the offset of a character of a JSON string, escapes counted as the text
  has them;
- :func:`value_start`: where an object member's value starts.
"""

from __future__ import annotations

import json
import re
from json.decoder import scanstring


def string_offset(text: str, start: int, index: int) -> int:
    """The offset in ``text`` of character ``index`` (0-based) of the JSON string whose opening
    quote is at ``start``: escapes (``\\n``, ``\\\\``, ``\\u00f1``...) count as one character of
    the string but several of the text; a surrogate pair ``\\ud83d\\ude00`` as the one character
    it encodes. An index past the string's end gives its closing quote."""
    i, n = start + 1, 0
    while i < len(text) and text[i] != '"':
        if n == index:
            return i
        if text[i] == "\\":
            if text[i + 1:i + 2] == "u":
                code = int(text[i + 2:i + 6] or "0", 16) if re.fullmatch(r"[0-9a-fA-F]{4}", text[i + 2:i + 6]) else 0
                i += 6
                if 0xD800 <= code < 0xDC00 and text[i:i + 2] == "\\u":
                    i += 6
            else:
                i += 2
        else:
            i += 1
        n += 1
    return min(i, len(text))


def value_start(text: str, key_end: int) -> int:
    """Where the value of the object member whose key ends at ``key_end`` starts (after the colon)."""
    return _ws(text, _ws(text, key_end) + 1)


def line_column(text: str, pos: int) -> tuple[int, int]:
    """1-based line and column of character ``pos`` of ``text``."""
    return text.count("\n", 0, pos) + 1, pos - (text.rfind("\n", 0, pos) + 1) + 1


def _ws(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i


def pointer_span(text: str, pointer: str) -> tuple[int, int]:
    """The characters [start, end) of ``text`` (a JSON document) that a JSON pointer names: the
    key of its last object step (``"if"`` for ``#/if``), an array element, or the first character
    of the document for ``#``; as far as it gets when the text and the pointer part ways."""
    steps = [s.replace("~1", "/").replace("~0", "~") for s in pointer.lstrip("#").split("/") if s]
    decoder = json.JSONDecoder()
    pos = _ws(text, 0)
    span = (pos, min(pos + 1, len(text)))
    try:
        for step in steps:
            if text[pos] == "{":
                i, found = _ws(text, pos + 1), None
                while text[i] != "}":
                    key, end = scanstring(text, i + 1)
                    value = _ws(text, _ws(text, end) + 1)  # after the colon
                    if key == step:
                        found = (i, end, value)
                        break
                    _, i = decoder.raw_decode(text, value)
                    i = _ws(text, i)
                    i = _ws(text, i + 1) if text[i] == "," else i
                if found is None:
                    return span
                span, pos = found[:2], found[2]
            elif text[pos] == "[":
                i = _ws(text, pos + 1)
                for _ in range(int(step)):
                    _, i = decoder.raw_decode(text, i)
                    i = _ws(text, _ws(text, i) + 1)
                span, pos = (i, decoder.raw_decode(text, i)[1]), i
            else:
                return span
    except (ValueError, IndexError):
        return span
    return span
