"""JSON Schema (2020-12 subset) compiled into a grammar for token masks.

    grammar = compile_json_schema({"type": "object", ...})
    grammar.syntax    # "regex" (no recursion) or "gbnf" (recursive rules)
    grammar.source    # the regex or GBNF text that was compiled
    m = grammar.matcher(vocab)   # mask() / consume() / is_accepting(), see docs/masker.md

Modules, in pipeline order:
- ``translate`` (with ``types``, ``keywords``, ``values``, ``oneof``): schema -> intermediate
  rules (``ir``), with strings, numbers, ``pattern`` and ``format`` in ``strings``,
  ``numbers``, ``pattern`` and ``formats``;
- ``emit``: rules -> regex text or GBNF text;
- ``compiler``: ``compile_json_schema`` and ``schema_to_source``, which drive the two steps
  and hand the text to ``compile_regex`` or ``compile_cfg``;
- ``errors``: ``UnsupportedKeyword`` and ``InvalidSchema`` (both compile time).

Supported and refused keywords, whitespace and property order: docs/json-schema.md.
"""

from .compiler import JsonSchemaGrammar, compile_json_schema, schema_to_source
from .errors import InvalidSchema, UnsupportedKeyword

__all__ = ["compile_json_schema", "schema_to_source", "JsonSchemaGrammar",
           "UnsupportedKeyword", "InvalidSchema"]
