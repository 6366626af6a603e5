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
``LimitExceeded`` is re-exported from ``masker.errors``.
"""

from __future__ import annotations

from ..errors import GrammarSyntaxError, LimitExceeded, MaskerError, UnsupportedFeature

__all__ = ["UnsupportedKeyword", "InvalidSchema", "LimitExceeded", "MaskerError"]


class UnsupportedKeyword(UnsupportedFeature):
    """A JSON Schema keyword (or format, or keyword value) is not supported.

    ``keyword``: its name; ``path``: the JSON pointer of the schema that uses it ("#" for the
    root); ``reason`` completes the message "JSON Schema keyword 'k' ...".
    """

    def __init__(self, keyword: str, path: str, reason: str = "is not supported"):
        self.keyword, self.path = keyword, path or "#"
        where = f"{self.path}/{keyword}"
        super().__init__(where, len(self.path) + 1,
                         f"JSON Schema keyword {keyword!r} {reason}",
                         f"remove {keyword!r} from the schema or rewrite the schema without it")


class InvalidSchema(GrammarSyntaxError):
    """The schema is malformed or cannot be satisfied; ``path`` is the JSON pointer of the
    schema at fault ("#" for the root)."""

    kind = "invalid schema"

    def __init__(self, message: str, path: str):
        self.path = path or "#"
        super().__init__(self.path, 0, message, f"correct the schema at {self.path}")
