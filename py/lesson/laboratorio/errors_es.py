"""The masker's compile errors in Spanish, placed in the text the reader typed.

The masker (``masker.errors``) writes its messages in English, for programmers. The «Laboratorio»
shows them through :data:`CATALOG`, keyed by error kind ("regex.unclosed", "schema.unsupported",
...): for each, the English reason it recognises (a regular expression) and the Spanish message
and fix (``str.format`` templates over the match's groups), so another edition of the page can
reuse the keys with its own texts. A reason the catalog does not know keeps its English words
under a Spanish heading (kind "masker.other").

A JSON Schema error names a place as a JSON pointer (``#/properties/edad/if``);
:func:`pointer_span` finds that keyword in the schema's text, so the caret and the editor's
underline fall on it, with its line and column.
"""

from __future__ import annotations

import json
import re
from json.decoder import scanstring

# kind: (English reason, Spanish message, Spanish fix); the templates see the match's groups {0}, {1}...
CATALOG: dict[str, tuple[str, str, str]] = {
    "regex.unclosed_group": (r"missing '\)': the group opened here is not closed",
                             "falta «)»: el grupo que se abre aquí no se cierra",
                             "añade «)», o escribe «\\(» si querías un paréntesis literal"),
    "syntax.unclosed_class": (r"missing '\]': the class opened here is not closed",
                              "falta «]»: la clase de caracteres que se abre aquí («[») no se cierra",
                              "añade «]» al final de la clase"),
    "syntax.bad_repeat": (r"bad repeat interval \{(\d+),(\d+)\}: min is greater than max",
                          "la repetición {{{0},{1}}} es imposible: el mínimo es mayor que el máximo",
                          "escribe {{{1},{0}}}"),
    "gbnf.no_root": (r"no rule named 'root' \(the start rule\)",
                     "no hay ninguna regla «root», la regla por la que empieza la gramática",
                     "añade una línea «root ::= ...»"),
    "schema.bad_pattern": (r"JSON Schema keyword 'pattern' is not a valid regex \((.*)\)",
                           "el valor de «pattern» no es una expresión regular válida: {0}",
                           "corrige la expresión regular dentro de la cadena de «pattern»"),
    "schema.unsupported_value": (r"JSON Schema keyword '([^']+)' value '([^']*)' is not supported \(supported: (.*)\)",
                                 "el valor «{1}» de «{0}» no está soportado (se admiten: {2})",
                                 "usa uno de esos valores, o quita «{0}» del esquema"),
    "schema.unsupported": (r"JSON Schema keyword '([^']+)' is not supported",
                           "la palabra clave «{0}» de JSON Schema no está soportada",
                           "quita «{0}» del esquema, o exprésalo sin ella (por ejemplo con anyOf o enum)"),
    "schema.unsatisfiable": (r"no JSON value satisfies this schema",
                             "ningún valor JSON cumple este esquema",
                             "corrige las condiciones que se contradicen"),
}
WORDS_BY_KEY = {"schema.bad_pattern": "error en el esquema"}  # the masker calls it unsupported; it is invalid
KIND_WORDS = {"syntax error": "error de sintaxis", "unsupported feature": "no soportado",
              "invalid schema": "esquema imposible"}


# Python's ``re`` messages, quoted by the masker for a schema's invalid ``pattern``
RE_MESSAGES = [(r"missing \), unterminated subpattern at position (\d+)",
                "falta «)»: el grupo que empieza en su carácter {0} no se cierra"),
               (r"unterminated character set at position (\d+)",
                "falta «]»: la clase que empieza en su carácter {0} no se cierra"),
               (r"nothing to repeat at position (\d+)", "en su carácter {0} no hay nada que repetir"),
               (r"unbalanced parenthesis at position (\d+)", "sobra un «)» en su carácter {0}")]


def _re_message(text: str) -> str:
    for pattern, spanish in RE_MESSAGES:
        match = re.search(pattern, text)
        if match:
            return spanish.format(*match.groups())
    return f"el analizador de Python dice «{text}»"


def translate(reason: str) -> tuple[str, str, str] | None:
    """(kind, Spanish message, Spanish fix) for an English reason the catalog knows, else None."""
    for kind, (pattern, message, fix) in CATALOG.items():
        match = re.search(pattern, reason)
        if match:
            groups = match.groups()
            if kind == "schema.bad_pattern":
                groups = (_re_message(groups[0]),)
            return kind, message.format(*groups), fix.format(*groups)
    return None


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


_BOUNDS = [("minimum", "maximum", "número"), ("exclusiveMinimum", "maximum", "número"),
           ("minimum", "exclusiveMaximum", "número"), ("minLength", "maxLength", "cadena"),
           ("minItems", "maxItems", "lista"), ("minProperties", "maxProperties", "objeto")]


def why_unsatisfiable(schema, pointer: str = "#") -> tuple[str, str] | None:
    """Where and why a schema admits no value, for the contradictions a reader types most: a lower
    bound above its upper bound, an empty ``enum``, a required property set to ``false``. Returns
    (JSON pointer of the keyword, Spanish reason), or None when none of them is found."""
    if not isinstance(schema, dict):
        return None
    for low, high, what in _BOUNDS:
        a, b = schema.get(low), schema.get(high)
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and (a > b or (a == b and "exclusive" in low + high)):
            return (f"{pointer}/{high}", f"«{low}» vale {a} y «{high}» vale {b}: ningún {what} cumple las dos")
    if schema.get("enum") == []:
        return f"{pointer}/enum", "«enum» es una lista vacía: no deja ningún valor"
    for key in ("properties", "$defs", "definitions", "patternProperties"):
        for name, sub in (schema.get(key) or {}).items() if isinstance(schema.get(key), dict) else ():
            if sub is False and name in (schema.get("required") or []):
                return f"{pointer}/{key}/{name}", f"la propiedad «{name}» es obligatoria pero su esquema es false"
            found = why_unsatisfiable(sub, f"{pointer}/{key}/{name}")
            if found:
                return found
    for key in ("items", "additionalProperties"):
        found = why_unsatisfiable(schema.get(key), f"{pointer}/{key}")
        if found:
            return found
    for i, sub in enumerate(schema.get("allOf") or []):
        found = why_unsatisfiable(sub, f"{pointer}/allOf/{i}")
        if found:
            return found
    return None
