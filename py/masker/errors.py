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
"""

from __future__ import annotations

import sys
from contextlib import contextmanager


class MaskerError(Exception):
    """Root of every error the masker raises on purpose."""


def caret_display(source: str, pos: int) -> str:
    """The source line holding character ``pos`` and a caret under it (two lines of text)."""
    pos = max(0, min(pos, len(source)))
    start = source.rfind("\n", 0, pos) + 1
    end = source.find("\n", pos)
    end = len(source) if end == -1 else end
    line_no = source.count("\n", 0, pos) + 1
    prefix = f"  line {line_no}: " if "\n" in source else "  "
    line = source[start:end]
    caret_col = len(line[: pos - start].expandtabs(1))
    return f"{prefix}{line}\n{' ' * (len(prefix) + caret_col)}^"


class GrammarSyntaxError(MaskerError):
    """The grammar text (regex, GBNF) does not parse.

    Attributes: ``source`` (the whole text), ``pos`` (0-based character offset of the problem),
    ``reason`` (one sentence: what was expected, what was found), ``hint`` (how to fix it).
    """

    kind = "syntax error"

    def __init__(self, source: str, pos: int, reason: str, hint: str = ""):
        self.source, self.pos, self.reason, self.hint = source, pos, reason, hint
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

    Attributes: ``limit`` (name of the keyword argument that sets it), ``value`` (its value).
    """

    def __init__(self, what: str, limit: str, value: int, hint: str):
        self.what, self.limit, self.value, self.hint = what, limit, value, hint
        super().__init__(f"{what} (limit {limit}={value}). fix: {hint}")

    def at_prefix(self, prefix: bytes) -> "LimitExceeded":
        """The same error, saying after which prefix it happened (run-time limits)."""
        where = f"{self.what}, after {len(prefix)} bytes of text (...{prefix[-30:]!r})"
        return LimitExceeded(where, self.limit, self.value, self.hint)


class TokenNotAllowed(MaskerError):
    """``consume`` got a token (or bytes) that the grammar does not allow after the prefix.

    Attributes: ``token_id`` (or None for ``consume_bytes``), ``token_bytes``, ``prefix_bytes``.
    """

    def __init__(self, token_id: int | None, token_bytes: bytes, prefix_bytes: bytes,
                 allowed_hint: str = ""):
        self.token_id, self.token_bytes, self.prefix_bytes = token_id, token_bytes, prefix_bytes
        what = f"token {token_id} {token_bytes!r}" if token_id is not None else f"bytes {token_bytes!r}"
        tail = prefix_bytes[-40:]
        message = (f"{what} is not allowed after the prefix ...{tail!r} "
                   f"(expected a token whose mask entry is True{allowed_hint}). "
                   "fix: sample only from mask(), or copy() the matcher before trying a token")
        super().__init__(message)


@contextmanager
def nesting_guard(what: str):
    """Turn Python's RecursionError (a pattern or grammar nested hundreds of levels deep) into
    LimitExceeded. The parsers and builders recurse once per nesting level of the syntax tree."""
    try:
        yield
    except RecursionError:
        raise LimitExceeded(f"the {what} nests too deeply", "nesting depth",
                            sys.getrecursionlimit(), "flatten deeply nested groups, e.g. use "
                            "repetition instead of nesting") from None


class BudgetTooSmall(MaskerError, ValueError):
    """A token budget is smaller than the shortest completion of the text from its prefix
    (``Matcher.set_budget``, ``Matcher.mask(budget=k)``), so no generation within the budget can
    end on a complete text.

    Attributes: ``budget`` (tokens given), ``needed`` (tokens the shortest completion needs, or
    None when it is longer than ``searched`` tokens, or no completion exists), ``prefix_bytes``.
    """

    def __init__(self, budget: int, needed: int | None, prefix_bytes: bytes, searched: int):
        self.budget, self.needed, self.prefix_bytes = budget, needed, prefix_bytes
        need = (f"the shortest completion needs {needed} tokens" if needed is not None
                else f"no completion fits in {searched} tokens")
        super().__init__(f"token budget too small after the prefix ...{prefix_bytes[-40:]!r} "
                         f"({len(prefix_bytes)} bytes): {need}, the budget is {budget}. "
                         "fix: raise max_tokens, or shorten what the grammar requires")
