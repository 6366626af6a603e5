"""``oneOf`` (2020-12 core, section 10.2.1.3) is compiled as ``anyOf``, which is exact only
when no instance can match two branches. The compiler therefore proves the branches pairwise
disjoint, or refuses ``oneOf`` by name. Proofs used (each on the expanded branch schemas):
- their JSON types cannot overlap (integer counts as a number);
- both are ``enum``/``const`` lists with no common value;
- both are objects and some property is required by both, with disjoint ``enum``/``const``
  values (a discriminator such as "kind"), or is required by one and forbidden by the other
  (not listed and additionalProperties false, or listed with schema false).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from .errors import UnsupportedKeyword
from .keywords import KIND_KEYWORDS, same_value
from .values import kind_of

if TYPE_CHECKING:
    from .translate import Translator

ALL_KINDS = frozenset(["object", "array", "string", "number", "boolean", "null"])


def kinds(s: dict[str, Any]) -> set[str]:
    """JSON types an expanded schema can match (a superset; integer counts as number)."""
    if "enum" in s:
        return {kind_of(v) for v in s["enum"]}
    if "type" in s:
        return {"number" if t == "integer" else t for t in s["type"]}
    if "anyOf" in s or "oneOf" in s:
        return set(ALL_KINDS)
    found = {k for k, kws in KIND_KEYWORDS.items() if any(kw in s for kw in kws)}
    return found or set(ALL_KINDS)


def _values(s: Any) -> list | None:
    return s.get("enum") if isinstance(s, dict) else None


def _disjoint_values(a: list | None, b: list | None) -> bool:
    return a is not None and b is not None and not any(
        same_value(x, y) for x in a for y in b)


def _forbids(s: dict[str, Any], name: str) -> bool:
    props = s.get("properties", {})
    if name in props:
        return props[name] is False
    if any(re.search(p, name) for p in s.get("patternProperties", {})):
        return False
    return s.get("additionalProperties", True) is False


def _objects_disjoint(a: dict[str, Any], b: dict[str, Any], translator: Translator,
                      path: str) -> bool:
    for name in a.get("required", []):
        if _forbids(b, name):
            return True
        if name in b.get("required", []):
            pa = a.get("properties", {}).get(name, True)
            pb = b.get("properties", {}).get(name, True)
            va = _values(translator.expand(pa, path))
            vb = _values(translator.expand(pb, path))
            if _disjoint_values(va, vb):
                return True
    return False


def disjoint(a: dict[str, Any], b: dict[str, Any], translator: Translator, path: str) -> bool:
    """True when no instance can match both expanded schemas (by the proofs above; False
    means "not proven", not "overlapping")."""
    ka, kb = kinds(a), kinds(b)
    if not ka & kb:
        return True
    if _disjoint_values(a.get("enum"), b.get("enum")):
        return True
    if ka == kb == {"object"}:
        return _objects_disjoint(a, b, translator, path) or _objects_disjoint(
            b, a, translator, path)
    return False


def check_one_of(branches: list[dict[str, Any]], path: str, translator: Translator) -> None:
    """Raise UnsupportedKeyword("oneOf") unless the expanded ``branches`` are provably
    pairwise disjoint; ``translator`` expands the property schemas the proofs compare."""
    for i, a in enumerate(branches):
        for j in range(i + 1, len(branches)):
            if not disjoint(a, branches[j], translator, path):
                raise UnsupportedKeyword(
                    "oneOf", path, f"with branches {i} and {j} that may both match is not "
                    "supported (oneOf is compiled as anyOf only when its branches are "
                    "provably disjoint)")
