"""MaskBench helpers shared by tests/masker/test_maskbench.py and bench/bench_masker.py
(no tests here).

MaskBench files are read from ../shared/jsonschemabench/maskbench (never copied into the
repository). `serialize(instance, schema, whitespace)` writes an instance the way the masker
writes objects: properties in the schema's order (the order of `properties`, then of the
first `anyOf`/`oneOf` branch the instance matches), other keys after them in their own order.
"""
from __future__ import annotations

import glob
import json
import os

import jsonschema

from masker.json_schema.translate import Translator

MASKBENCH = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared",
                         "jsonschemabench", "maskbench")


def maskbench_files():
    """Sorted paths of the MaskBench sample (empty when the folder is missing)."""
    return sorted(p for p in glob.glob(os.path.join(MASKBENCH, "*.json"))
                  if not os.path.basename(p).startswith("_"))


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


class Serializer:
    """Orders object keys as the compiled grammar does, for one root schema."""

    def __init__(self, schema, whitespace="compact"):
        self.tr = Translator(schema, whitespace)
        self.sep = (",", ":") if whitespace == "compact" else (", ", ": ")
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        self.check = cls(schema)

    def _matches(self, value, branch):
        try:
            return self.check.evolve(schema=branch).is_valid(value)
        except Exception:  # a branch the validator cannot handle: not chosen
            return False

    def _schemas(self, schema, value, path="#", depth=0):
        """The expanded schema, then the first anyOf/oneOf branch the value matches."""
        try:
            s = self.tr.expand(schema, path)
        except Exception:  # refused parts: keep the instance order there
            return []
        out = [s]
        if depth < 3:
            for key in ("anyOf", "oneOf"):
                branches = s.get(key) if isinstance(s.get(key), list) else []
                chosen = [b for b in branches if self._matches(value, b)][:1] or branches
                for b in chosen:
                    out += self._schemas(b, value, path, depth + 1)
        return out

    def order(self, value, schema):
        if isinstance(value, dict):
            ranks, subs, extras = {}, {}, {}
            for s in self._schemas(schema, value):
                props = s.get("properties", {})
                for name, sub in props.items() if isinstance(props, dict) else ():
                    ranks.setdefault(name, len(ranks))
                    subs.setdefault(name, sub)
                extra = s.get("additionalProperties", True)
                for name in value:
                    if name not in props:
                        extras.setdefault(name, extra)
            # a name listed by a later schema (a branch) takes that schema, not an earlier
            # schema's additionalProperties
            subs = {**extras, **subs}
            keys = sorted(value, key=lambda k: (ranks.get(k, len(ranks)), list(value).index(k)))
            return {k: self.order(value[k], subs.get(k, True)) for k in keys}
        if isinstance(value, list):
            items = []
            for s in self._schemas(schema, value)[:1]:
                prefix = s.get("prefixItems", [])
                rest = s.get("items", True)
                items = [self.order(v, prefix[i] if i < len(prefix) else rest)
                         for i, v in enumerate(value)]
            return items or value
        return value

    def dumps(self, value):
        return json.dumps(self.order(value, self.tr.root), ensure_ascii=False,
                          separators=self.sep)
