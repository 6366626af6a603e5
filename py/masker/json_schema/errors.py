"""Errors raised while compiling a JSON Schema (all at compile time).

Both derive from the masker's root exception ``MaskerError``, through ``GrammarSyntaxError``,
with the schema location (a JSON pointer) shown as the source line:
- ``UnsupportedKeyword`` (an ``UnsupportedFeature``): a keyword, format or keyword value this
  compiler does not implement faithfully. ``.keyword`` names it and ``.path`` is the JSON
  pointer of the schema that uses it.
- ``InvalidSchema``: the schema is malformed or unsatisfiable (wrong value type for a keyword,
  unresolvable ``$ref``, empty enum after filtering, a ``pattern`` that is not a valid regex:
  then raised from the ``re.error``, ``__cause__``, whose ``pos`` is the pattern's offending
  character).
``LimitExceeded`` is re-exported from ``masker.errors``. Every error has its ``code`` and
``fields`` (``masker.errors.MaskerError``); the two failures met at several places of the compiler
are raised through one function each: :func:`bad_value` and :func:`too_many_states`.
"""

from __future__ import annotations

from ..errors import GrammarSyntaxError, LimitExceeded, MaskerError, UnsupportedFeature

__all__ = ["UnsupportedKeyword", "InvalidSchema", "LimitExceeded", "MaskerError", "bad_value", "too_many_states",
           "EXPECTED"]


class UnsupportedKeyword(UnsupportedFeature):
    """A JSON Schema keyword (or format, or keyword value) is not supported.

    ``keyword``: its name; ``path``: the JSON pointer of the schema that uses it ("#" for the
    root); ``reason`` completes the message "JSON Schema keyword 'k' ..."; ``code`` and
    ``fields`` as for every masker error (``fields`` always holds ``keyword``).
    """

    def __init__(self, keyword: str, path: str, reason: str = "is not supported", *, code: str, **fields):
        self.keyword, self.path = keyword, path or "#"
        where = f"{self.path}/{keyword}"
        super().__init__(where, len(self.path) + 1,
                         f"JSON Schema keyword {keyword!r} {reason}",
                         f"remove {keyword!r} from the schema or rewrite the schema without it",
                         code=code, keyword=keyword, **fields)


class InvalidSchema(GrammarSyntaxError):
    """The schema is malformed or cannot be satisfied; ``path`` is the JSON pointer of the
    schema at fault ("#" for the root); ``code`` and ``fields`` as for every masker error."""

    kind = "invalid schema"

    def __init__(self, message: str, path: str, *, code: str, **fields):
        self.path = path or "#"
        super().__init__(self.path, 0, message, f"correct the schema at {self.path}", code=code, **fields)


# what a keyword's value must be (``schema.bad_value``'s ``expected`` field) -> the English words
EXPECTED = {
    "count": "a non-negative integer", "number": "a number", "positive_number": "a number greater than 0",
    "object": "an object", "string_lists": "an object whose values are lists of strings",
    "property_names": "a list of property names (draft 3's boolean required is not supported: list the "
                      "name in the parent object's required)",
    "schemas": "a non-empty list of schemas", "boolean": "true or false", "string": "a string",
    "list": "a list", "non_empty_list": "a non-empty list",
}
_NO_VALUE = object()


def json_text(value, most: int = 60) -> str:
    """``value`` as JSON text (Python's repr for what JSON cannot write), cut at ``most`` characters."""
    import json
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= most else text[:most - 1] + "…"


def bad_value(keyword: str, expected: str, path: str, value=_NO_VALUE) -> InvalidSchema:
    """The error for a keyword whose value has the wrong JSON type (to raise): code
    ``"schema.bad_value"``, fields ``keyword``, ``expected`` (a key of :data:`EXPECTED`) and
    ``found`` (the value as JSON text, :func:`json_text`, or None when not given). ``path``: the
    JSON pointer the error names."""
    found = None if value is _NO_VALUE else json_text(value)
    tail = "" if found is None else f", found {found}"
    return InvalidSchema(f"{keyword} must be {EXPECTED[expected]}{tail}", path, code="schema.bad_value",
                         keyword=keyword, expected=expected, found=found)


def too_many_states(keyword: str, path: str, over: str, limit: int, states: int) -> UnsupportedKeyword:
    """The error for a keyword over strings, numbers, arrays, objects or keys (``over``) whose
    automaton grows past ``limit`` states (to raise): code ``"schema.bool_states"``, fields
    ``keyword``, ``over``, ``most`` (the limit) and ``reached`` (the states when it stopped)."""
    return UnsupportedKeyword(keyword, path, f"over {over}s needs an automaton of more than {limit} states (it "
                              f"reached {states}); this is not supported", code="schema.bool_states",
                              over=over, most=limit, reached=states)
