"""Where and why a JSON Schema admits no value, for the contradictions a reader types most
(:func:`why_unsatisfiable`): the masker says only that no value satisfies the schema
(``schema.unsatisfiable``); the «Laboratorio» adds the keyword at fault and the reason, in the
current language.
"""

from __future__ import annotations

from ..i18n import N_, _
from ..numbers import fmt_number

_BOUNDS = [("minimum", "maximum", "number"), ("exclusiveMinimum", "maximum", "number"),
           ("minimum", "exclusiveMaximum", "number"), ("minLength", "maxLength", "string"),
           ("minItems", "maxItems", "list"), ("minProperties", "maxProperties", "object")]
_NONE = {"number": N_("ningún número cumple las dos"), "string": N_("ninguna cadena cumple las dos"),
         "list": N_("ninguna lista cumple las dos"), "object": N_("ningún objeto cumple las dos")}


def _bounds(low: str, a, high: str, b, what: str) -> str:
    return _("«{low}» vale {a} y «{high}» vale {b}: {none}").format(low=low, a=fmt_number(a), high=high,
                                                                  b=fmt_number(b), none=_(_NONE[what]))


def _shut_out() -> str:
    return _("la propiedad «{name}» es obligatoria, pero \"additionalProperties\": false no deja ninguna "
             "propiedad que no esté en «properties»")


def _schema_false() -> str:
    return _("la propiedad «{name}» es obligatoria pero su esquema es false")


def _types(value) -> set[str] | None:
    """The JSON types a ``type`` keyword allows ("integer" standing for itself within "number")."""
    names = [value] if isinstance(value, str) else value if isinstance(value, list) else None
    if names is None:
        return None
    out = set(names)
    if "number" in out:
        out.add("integer")
    return out


def _types_clash(schema: dict, pointer: str) -> tuple[str, str] | None:
    """The ``type`` of one part of an ``allOf`` (or of the schema beside it) that shares no type
    with the parts before it."""
    parts = [(pointer, schema)] + [(f"{pointer}/allOf/{i}", sub) for i, sub in enumerate(schema.get("allOf") or [])
                                   if isinstance(sub, dict)]
    common = None
    for where, part in parts:
        allowed = _types(part.get("type"))
        if allowed is None:
            continue
        common = allowed if common is None else common & allowed
        if not common:
            return f"{where}/type", _("este «type» no comparte ningún tipo con los de las otras partes del allOf: "
                                      "ningún valor es de todos a la vez")
    return None


def why_unsatisfiable(schema, pointer: str = "#") -> tuple[str, str] | None:
    """Where and why a schema admits no value, for the contradictions a reader types most: the
    schema ``false``, types of an ``allOf`` with none in common, a ``const`` outside its ``enum``, a
    lower bound above its upper bound, an empty ``enum``, a required property set to ``false``, or
    one that ``"additionalProperties": false`` shuts out. Returns (JSON pointer of the keyword, reason in
    the current language), or None when none of them is found."""
    if schema is False and pointer == "#":  # (below the root, false may only forbid a part: "items": false)
        return pointer, _("el esquema es false, que no admite ningún valor (true los admite todos)")
    if not isinstance(schema, dict):
        return None
    clash = _types_clash(schema, pointer)
    if clash:
        return clash
    if "const" in schema and isinstance(schema.get("enum"), list) and schema["const"] not in schema["enum"]:
        return f"{pointer}/enum", _("el valor de «const» no está en la lista de «enum»: ninguno cumple los dos")
    for low, high, what in _BOUNDS:
        a, b = schema.get(low), schema.get(high)
        numbers = isinstance(a, (int, float)) and isinstance(b, (int, float))
        if numbers and (a > b or (a == b and "exclusive" in low + high)):
            return f"{pointer}/{high}", _bounds(low, a, high, b, what)
    if schema.get("enum") == []:
        return f"{pointer}/enum", _("«enum» es una lista vacía: no deja ningún valor")
    required = schema.get("required") if isinstance(schema.get("required"), list) else []
    listed = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    if schema.get("additionalProperties") is False and not schema.get("patternProperties"):
        for name in required:
            if isinstance(name, str) and name not in listed:
                return f"{pointer}/required", _shut_out().format(name=name)
    for key in ("properties", "$defs", "definitions", "patternProperties"):
        for name, sub in (schema.get(key) or {}).items() if isinstance(schema.get(key), dict) else ():
            if sub is False and name in required:
                return f"{pointer}/{key}/{name}", _schema_false().format(name=name)
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
