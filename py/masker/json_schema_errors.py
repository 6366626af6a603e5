"""Errors raised while compiling a JSON Schema (all at compile time).

Both derive from the masker's root exception `MaskerError`, through
`GrammarSyntaxError`, with the schema location shown as the source line:
- `UnsupportedKeyword` (an `UnsupportedFeature`): a keyword, format or
  keyword value this compiler does not implement faithfully. `.keyword`
  names it and `.path` is the JSON pointer of the schema that uses it.
- `InvalidSchema`: the schema is malformed or unsatisfiable (wrong value
  type for a keyword, unresolvable `$ref`, empty enum after filtering).
`LimitExceeded` is re-exported from `masker.errors`.
"""
from __future__ import annotations

from .errors import GrammarSyntaxError, LimitExceeded, MaskerError, UnsupportedFeature

__all__ = ["UnsupportedKeyword", "InvalidSchema", "LimitExceeded", "MaskerError"]


class UnsupportedKeyword(UnsupportedFeature):
    """A JSON Schema keyword (or format, or keyword value) is not supported."""

    def __init__(self, keyword, path, reason="is not supported"):
        self.keyword, self.path = keyword, path or "#"
        where = "%s/%s" % (self.path, keyword)
        super().__init__(where, len(self.path) + 1,
                         "JSON Schema keyword %r %s" % (keyword, reason),
                         "remove %r from the schema or rewrite the schema without it" % keyword)


class InvalidSchema(GrammarSyntaxError):
    """The schema is malformed or cannot be satisfied."""

    kind = "invalid schema"

    def __init__(self, message, path):
        self.path = path or "#"
        super().__init__(self.path, 0, message, "correct the schema at %s" % self.path)
