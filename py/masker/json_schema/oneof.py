"""``oneOf`` (2020-12 core, section 10.2.1.3): an instance is valid when exactly one branch
matches. The compiler writes it as a union, which is exact only where no instance can match two
branches. It works type by type (integer counts as a number), since most branches constrain one
type and, having no ``type``, accept every other (a keyword constrains only its own type):

- a type that at most one branch accepts: that branch keeps it;
- a type that two or more branches accept whole (no keyword of that type, no ``enum``): every
  value of it matches both, so no branch keeps it (exact: such values are invalid);
- a type that several branches accept in part: kept when the branches are provably pairwise
  disjoint on it (both ``enum``/``const`` lists with no common value; objects with a property
  required by both with disjoint ``enum``/``const`` values, a discriminator such as "kind",
  or required by one and forbidden by the other); otherwise exactly-one needs a difference,
  which ``Translator.combined`` builds by automata (each branch minus the others), where the
  parts are regular.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

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
    return set(ALL_KINDS)


def accepts_whole(s: dict[str, Any], kind: str, translator: Translator | None = None,
                  path: str = "#") -> bool:
    """True when the expanded schema ``s`` accepts every value of JSON type ``kind`` (False
    means "not proven"). With a ``translator``, an ``anyOf`` does when one of its branches
    (with the other keywords) does."""
    if "anyOf" in s and translator is not None and isinstance(s["anyOf"], list):
        rest = {k: v for k, v in s.items() if k != "anyOf"}
        return any(accepts_whole(translator.expand({"allOf": [rest, b]}, path), kind)
                   for b in s["anyOf"])
    if "enum" in s or "anyOf" in s or "oneOf" in s or any(k.startswith("\x00") for k in s):
        return False
    if "type" in s and kind not in s["type"]:
        return False  # ("integer" alone is not every number)
    return not any(kw in s for kw in KIND_KEYWORDS.get(kind, ()))


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


def one_of_kinds(branches: list[dict[str, Any]], path: str,
                 translator: Translator) -> list[list[str] | None] | None:
    """For each expanded branch of a ``oneOf``, the JSON types it keeps (see the module
    docstring), or None when it keeps all of its own; ``translator`` expands the restricted
    schemas the proofs compare. None when two branches may both match a value of a type that
    neither accepts whole: then the caller builds exactly-one by automata."""
    own = [kinds(b) for b in branches]
    dropped: set[str] = set()
    for kind in sorted(ALL_KINDS):
        present = [i for i, k in enumerate(own) if kind in k]
        if len(present) < 2:
            continue
        whole = [i for i in present if accepts_whole(branches[i], kind)]
        if len(whole) >= 2:
            dropped.add(kind)
            continue
        only = [translator.expand({"allOf": [branches[i], {"type": [kind]}]}, path)
                for i in present]
        for x in range(len(present)):
            for y in range(x + 1, len(present)):
                if not disjoint(only[x], only[y], translator, path):
                    return None
    return [None if not (k & dropped) else sorted(k - dropped) for k in own]
