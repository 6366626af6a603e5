"""Translate a JSON Schema (2020-12 subset) into intermediate-form rules.

`Translator(root, whitespace).translate()` returns the rules dict; rule
"root" is the whole document. Each local `$ref` without constraining
siblings becomes its own rule, so recursive schemas stay recursive (a
context-free grammar, never unrolled). `allOf` and `$ref` with siblings are
merged into one schema first (`json_schema_keywords.merge`).
"""
from __future__ import annotations

import re
from urllib.parse import unquote

from .json_schema_errors import InvalidSchema, UnsupportedKeyword
from .json_schema_ir import EMPTY, NOTHING, Lit, Ref, alt, chars, repeat, seq
from .json_schema_keywords import (ANNOTATIONS, IMPLEMENTED, KIND_KEYWORDS, KINDS, check_keywords,
                                   merge, normalise)
from .json_schema_types import TypeBuilder
from .json_schema_oneof import check_one_of
from .json_schema_values import const_ir, value_allowed

FLEXIBLE_WS = repeat(chars([(9, 10), (13, 13), (32, 32)]), 0, None)
FALSE_SCHEMA = {"type": []}


class Translator(TypeBuilder):
    def __init__(self, root, whitespace="compact"):
        if whitespace not in ("compact", "flexible"):
            raise ValueError("whitespace must be 'compact' or 'flexible', not %r" % (whitespace,))
        self.root = root
        self.ws = EMPTY if whitespace == "compact" else FLEXIBLE_WS
        self.rules, self.ref_names, self.ignored = {}, {}, []
        self.expanding = []

    def translate(self):
        self.rules["root"] = self.value(self.root, "#")
        return self.rules

    # ---- $ref -------------------------------------------------------------
    def resolve(self, ref, path):
        """The schema a local `$ref` points to, and its pointer."""
        if not isinstance(ref, str) or not ref.startswith("#") or (len(ref) > 1 and ref[1] != "/"):
            raise UnsupportedKeyword("$ref", path, "to %r is not supported (only local JSON "
                                     "pointers such as '#/$defs/name')" % (ref,))
        node = self.root
        for part in ref[2:].split("/") if len(ref) > 1 else []:
            part = unquote(part).replace("~1", "/").replace("~0", "~")
            if isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            elif isinstance(node, dict) and part in node:
                node = node[part]
            else:
                raise InvalidSchema("$ref %r does not resolve" % ref, path)
        return node, ref

    def ref_rule(self, ref, path):
        target, pointer = self.resolve(ref, path)
        if pointer not in self.ref_names:
            tail = re.sub(r"[^A-Za-z0-9]+", "-", pointer.rsplit("/", 1)[-1]).strip("-")
            name = "ref%d-%s" % (len(self.ref_names), tail[-32:].strip("-") or "root")
            self.ref_names[pointer] = name
            self.rules[name] = NOTHING  # placeholder while translating (recursion)
            self.rules[name] = self.value(target, pointer)
        return Ref(self.ref_names[pointer])

    # ---- schema -> IR -----------------------------------------------------
    def expand(self, schema, path):
        """Normalised dict with top-level `$ref` and `allOf` merged away."""
        if schema is True:
            return {}
        if schema is False:
            return dict(FALSE_SCHEMA)
        if not isinstance(schema, dict):
            raise InvalidSchema("a schema must be an object or a boolean, not %r" % (schema,), path)
        check_keywords(schema, path, self.ignored)
        s = normalise(schema, path)
        if "$ref" in s:
            target, pointer = self.resolve(s.pop("$ref"), path)
            if pointer in self.expanding:
                raise UnsupportedKeyword("$ref", path, "recursion through allOf or sibling "
                                         "keywords is not supported")
            self.expanding.append(pointer)
            s = merge(self.expand(target, pointer), s, path)
            self.expanding.pop()
        for i, part in enumerate(s.pop("allOf", [])):
            s = merge(s, self.expand(part, "%s/allOf/%d" % (path, i)), path)
        if "not" in s:
            s = merge(s, self.expand(self.negate(s.pop("not"), path + "/not"), path), path)
        variants = self.dependency_variants(s, path)
        if variants:
            s = merge(s, {"anyOf": variants}, path)
        for key in ("allOf", "$ref", "not"):
            if key in s:  # merge() must never leave these for value() to ignore
                raise RuntimeError("internal error: %r left after expansion at %s" % (key, path))
        return s

    def dependency_variants(self, s, path):
        """dependentRequired / dependentSchemas / draft-4 dependencies, as the exact
        equivalent: for each trigger name, either it is absent, or it is present
        together with the names (or the schema) it requires. Pops the keywords;
        returns anyOf branches (None if there are none)."""
        deps = {}
        for key in ("dependencies", "dependentRequired", "dependentSchemas"):
            value = s.pop(key, {})
            if not isinstance(value, dict):
                raise InvalidSchema("%s must be an object" % key, path)
            deps.update(value)
        if not deps:
            return None
        if len(deps) > 4:
            raise UnsupportedKeyword("dependentRequired", path, "with more than 4 trigger "
                                     "properties is not supported")
        variants = [{}]
        for name, need in deps.items():
            present = ({"required": [name] + list(need)} if isinstance(need, list)
                       else {"allOf": [{"required": [name]}, need]})
            absent = {"properties": {name: False}}
            variants = [{"allOf": [v, c]} if v else c for v in variants for c in (absent, present)]
        return variants

    def negate(self, schema, path, depth=0):
        """`not` in the forms that have an exact positive equivalent:
        not {} / not true (nothing), not false (anything), not {"type": ...}
        (the other types), not {"required": [names]} (one of them absent),
        not {"anyOf"/"oneOf"-free "allOf": [...]}, not {"anyOf": [...]} (De Morgan),
        and not {"$ref": ...} to a schema of these forms."""
        if schema is False:
            return {}
        if schema is True or schema == {}:
            return dict(FALSE_SCHEMA)
        keys = set(schema) - ANNOTATIONS if isinstance(schema, dict) else None
        if depth < 8 and keys == {"$ref"}:
            target, pointer = self.resolve(schema["$ref"], path)
            return self.negate(target, pointer, depth + 1)
        if keys == {"type"}:
            types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
            if "integer" in types and "number" not in types:
                raise UnsupportedKeyword("not", path, "of type integer is not supported")
            return {"type": [t for t in KINDS if t not in types and not (
                t == "integer" and "number" in types)]}
        if keys == {"required"} and schema["required"]:
            return {"anyOf": [{"properties": {n: False}} for n in schema["required"]]}
        if keys == {"anyOf"} and depth < 8:
            return {"allOf": [self.negate(x, path, depth + 1) for x in schema["anyOf"]]}
        if keys == {"allOf"} and depth < 8:
            return {"anyOf": [self.negate(x, path, depth + 1) for x in schema["allOf"]]}
        raise UnsupportedKeyword("not", path, "is supported only for {}, type, required, "
                                 "anyOf/allOf of those, or a $ref to one of them")

    def value(self, schema, path):
        if isinstance(schema, dict) and "$ref" in schema and not any(
                k in IMPLEMENTED for k in schema if k != "$ref"):
            check_keywords(schema, path, self.ignored)
            return self.ref_rule(schema["$ref"], path)
        s = self.expand(schema, path)
        for key in ("anyOf", "oneOf"):
            if key in s:
                return self.branches(s, key, path)
        if "enum" in s:
            values = [v for v in s["enum"] if value_allowed(v, s, path)]
            return alt(*[const_ir(v, self.ws) for v in values])
        if "type" in s:
            types = s["type"]
        else:
            types = [k for k, kws in KIND_KEYWORDS.items() if any(kw in s for kw in kws)]
            if not types:
                return self.any_value()
        if "integer" in types and "number" in types:
            types = [t for t in types if t != "integer"]
        return alt(*[self.typed(t, s, path) for t in KINDS if t in types])

    def branches(self, s, key, path):
        options = s.pop(key)
        if not isinstance(options, list) or not options:
            raise InvalidSchema("%s must be a non-empty list" % key, path)
        merged = [{"allOf": [s, option]} for option in options]
        if key == "oneOf":
            check_one_of([self.expand(m, path) for m in merged], path, self)
        return alt(*[self.value(m, "%s/%s/%d" % (path, key, i)) for i, m in enumerate(merged)])

    def typed(self, t, s, path):
        if t == "null":
            return Lit("null")
        if t == "boolean":
            return alt(Lit("true"), Lit("false"))
        if t in ("integer", "number"):
            return self.number(t, s, path)
        if t == "string":
            return self.string(s, path)
        if t == "array":
            return self.array(s, path)
        return self.object(s, path)

    def any_value(self):
        """Rule "value": any JSON value (the rules are added once)."""
        if "value" not in self.rules:
            self.rules["value"] = NOTHING
            self.rules["value"] = alt(*[self.typed(t, {}, "#") for t in KINDS if t != "integer"])
        return Ref("value")

