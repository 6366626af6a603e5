"""Errors of the grammar masker: one root class, four kinds.

When each is raised:
- compile time (``compile_regex``, ``compile_choice``, ``compile_cfg``, ``compile_json_schema``):
  ``GrammarSyntaxError`` (the text does not parse), ``UnsupportedFeature`` (it parses, but uses
  syntax the masker refuses, such as a backreference) and ``LimitExceeded`` (too many automaton
  states or grammar rules);
- run time (``Matcher.mask``, ``Matcher.consume``...): ``TokenNotAllowed`` (the caller fed a token
  outside the mask) and ``LimitExceeded`` (an Earley step or a mask walk needed more work than the
  configured limit, which keeps a browser tab from freezing).

Every message says what was expected, what was found, where, and how to fix it.

Every error also carries a stable ``code`` (``"regex.unclosed_group"``, ``"limit.dfa_states"``,
``"schema.unsupported"``...) and ``fields``, a dict of the values its message is made of (a
character, a rule name, a bound, a keyword), so a program can tell failures apart, or write them
in another language, without reading the English message. Each code is raised in one place of the
masker; ``str(error)`` is the English message for Python users, and rewording it changes neither
the code nor the fields. The course's «Laboratorio» writes them in Spanish and in English from
catalogs keyed by code (``lesson/laboratorio/error_catalog.py``); its test
``tests/lesson/laboratorio/test_laboratorio_errors.py`` finds every code in this package's source
and reaches each from a bad input. (outlines-core's one error variant per failure, and lark's
exceptions that carry their context, are the models.)
"""

from __future__ import annotations

import sys
import unicodedata
from contextlib import contextmanager


class MaskerError(Exception):
    """Root of every error the masker raises on purpose.

    Attributes: ``code`` (str, stable: the failure, as ``"<area>.<what>"``), ``fields`` (dict
    from a name to the str, int, float or None values the message is made of; which names, by
    code, is said where the code is raised)."""

    code: str = "masker.error"
    fields: dict = {}


def caret_display(source: str, pos: int) -> str:
    """The source line holding character ``pos`` and a caret under it (two lines of text; the
    caret line keeps the tabs of the source line and counts wide characters twice, see
    :func:`_under`)."""
    pos = max(0, min(pos, len(source)))
    start = source.rfind("\n", 0, pos) + 1
    end = source.find("\n", pos)
    end = len(source) if end == -1 else end
    line_no = source.count("\n", 0, pos) + 1
    prefix = f"  line {line_no}: " if "\n" in source else "  "
    line = source[start:end]
    return f"{prefix}{line}\n{' ' * len(prefix)}{_under(line[: pos - start])}^"


def _under(text: str) -> str:
    """Blanks as wide as ``text`` on a terminal or in a ``pre``: a tab stays a tab, a wide
    character (East Asian wide or full-width, most emoji) takes two spaces, a combining mark none;
    so the caret after them stands under the character it points at."""
    out = []
    for ch in text:
        if ch == "\t":
            out.append("\t")
        elif unicodedata.combining(ch):
            continue
        else:
            out.append("  " if unicodedata.east_asian_width(ch) in ("W", "F") else " ")
    return "".join(out)


class GrammarSyntaxError(MaskerError):
    """The grammar text (regex, GBNF) does not parse.

    Attributes: ``source`` (the whole text), ``pos`` (0-based character offset of the problem),
    ``reason`` (one sentence: what was expected, what was found), ``hint`` (how to fix it),
    ``code`` and ``fields`` (keyword arguments: see :class:`MaskerError`).
    """

    kind = "syntax error"

    def __init__(self, source: str, pos: int, reason: str, hint: str = "", *, code: str, **fields):
        self.source, self.pos, self.reason, self.hint = source, pos, reason, hint
        self.code, self.fields = code, fields
        message = f"{self.kind} at position {pos}: {reason}\n{caret_display(source, pos)}"
        if hint:
            message += f"\n  fix: {hint}"
        super().__init__(message)


class UnsupportedFeature(GrammarSyntaxError):
    """Valid syntax (for Python ``re`` or llama.cpp GBNF) that the masker refuses on purpose.

    Examples: backreferences, lookaround, anchors in the middle of a pattern, inline flags.
    """

    kind = "unsupported feature"


class LimitExceeded(MaskerError):
    """A size or work limit was hit (automaton states, Earley items per byte, trie-walk fuel).

    Attributes: ``what`` (English: what grew too large), ``limit`` (name of the keyword argument
    that sets it), ``value`` (its value), ``hint``, ``code`` and ``fields`` (keyword arguments: see
    :class:`MaskerError`); ``prefix_bytes`` (the text generated when a run-time limit was hit, or
    None at compile time).
    """

    def __init__(self, what: str, limit: str, value: int, hint: str, *, code: str, **fields):
        self.what, self.limit, self.value, self.hint = what, limit, value, hint
        self.code, self.fields, self.prefix_bytes = code, fields, None
        super().__init__(f"{what} (limit {limit}={value}). fix: {hint}")

    def at_prefix(self, prefix: bytes) -> "LimitExceeded":
        """The same error (same code and fields), saying after which prefix it happened (run-time
        limits)."""
        where = f"{self.what}, after {len(prefix)} bytes of text (...{prefix[-30:]!r})"
        error = LimitExceeded(where, self.limit, self.value, self.hint, code=self.code, **self.fields)
        error.prefix_bytes = prefix
        return error


class TokenNotAllowed(MaskerError):
    """``consume`` got a token (or bytes) that the grammar does not allow after the prefix.

    Attributes: ``token_id`` (or None for ``consume_bytes``), ``token_bytes``, ``prefix_bytes``;
    ``code`` ``"token.not_allowed"``, ``fields`` ``{"token_id"}``.
    """

    code = "token.not_allowed"

    def __init__(self, token_id: int | None, token_bytes: bytes, prefix_bytes: bytes,
                 allowed_hint: str = ""):
        self.token_id, self.token_bytes, self.prefix_bytes = token_id, token_bytes, prefix_bytes
        self.fields = {"token_id": token_id}
        what = f"token {token_id} {token_bytes!r}" if token_id is not None else f"bytes {token_bytes!r}"
        tail = prefix_bytes[-40:]
        message = (f"{what} is not allowed after the prefix ...{tail!r} "
                   f"(expected a token whose mask entry is True{allowed_hint}). "
                   "fix: sample only from mask(), or copy() the matcher before trying a token")
        super().__init__(message)


NESTED = {"regex": "regular expression", "grammar": "grammar", "schema_regex": "schema's regular expression"}


@contextmanager
def nesting_guard(syntax: str):
    """Turn Python's RecursionError (a pattern or grammar nested hundreds of levels deep) into
    LimitExceeded, code ``"limit.nesting"``, fields ``{"syntax"}``: one of :data:`NESTED`'s keys
    (what nests). The parsers and builders recurse once per nesting level of the syntax tree."""
    try:
        yield
    except RecursionError:
        raise LimitExceeded(f"the {NESTED[syntax]} nests too deeply", "nesting depth",
                            sys.getrecursionlimit(), "flatten deeply nested groups, e.g. use "
                            "repetition instead of nesting", code="limit.nesting", syntax=syntax) from None


class BudgetTooSmall(MaskerError, ValueError):
    """A token budget is smaller than the shortest completion of the text from its prefix
    (``Matcher.set_budget``, ``Matcher.mask(budget=k)``), so no generation within the budget can
    end on a complete text.

    Attributes: ``budget`` (tokens given), ``needed`` (tokens the shortest completion needs, or
    None when it is longer than ``searched`` tokens, or no completion exists), ``prefix_bytes``;
    ``code`` ``"budget.too_small"``, ``fields`` ``{"budget", "needed", "searched"}``.
    """

    code = "budget.too_small"

    def __init__(self, budget: int, needed: int | None, prefix_bytes: bytes, searched: int):
        self.budget, self.needed, self.prefix_bytes = budget, needed, prefix_bytes
        self.fields = {"budget": budget, "needed": needed, "searched": searched}
        need = (f"the shortest completion needs {needed} tokens" if needed is not None
                else f"no completion fits in {searched} tokens")
        super().__init__(f"token budget too small after the prefix ...{prefix_bytes[-40:]!r} "
                         f"({len(prefix_bytes)} bytes): {need}, the budget is {budget}. "
                         "fix: raise max_tokens, or shorten what the grammar requires")
