"""Translate a JSON Schema (2020-12 subset) into intermediate-form rules.

``Translator(root, whitespace).translate()`` returns the rules dict; rule "root" is the whole
document. Each local ``$ref`` without constraining siblings becomes its own rule, so recursive
schemas stay recursive (a context-free grammar, never unrolled). ``allOf``, ``not``, the
dependency keywords and ``$ref`` with siblings are first rewritten into one schema
(``expand``); the per-type grammars (number, string, array, object) are built by the
``TypeBuilder`` methods in ``type_builders.py``.

Section numbers below refer to JSON Schema 2020-12: "core" is draft-bhutton-json-schema-00,
"validation" is draft-bhutton-json-schema-validation-00.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable
from urllib.parse import unquote, urldefrag, urljoin

from .errors import InvalidSchema, UnsupportedKeyword, bad_value, json_text, too_many_states
from .ir import EMPTY, NOTHING, Lit, Node, Ref, Rules, alt, chars, repeat, seq
from .boolean import (CANONICAL_NUMBER, CANONICAL_STRING, MAX_STATES, NotRegular, TooLarge, product,
                      to_dfa, to_ir)
from .numeric import multiples_dfa
from .keywords import (ANNOTATIONS, EXCLUDE, IMPLEMENTED, INTERSECT, KIND_KEYWORDS, KINDS,
                       OBJECTS, Schema, check_keywords, merge, normalise, pointer_token)
from .oneof import accepts_whole, kinds, one_of_kinds
from .check import ValueCheck
from .type_builders import TypeBuilder
from .values import checkable, const_ir, value_allowed

FLEXIBLE_WS = repeat(chars([(9, 10), (13, 13), (32, 32)]), 0, None)
FALSE_SCHEMA = {"type": []}
MAX_REF_VARIANTS = 64  # nested rules of one $ref pointer with different sibling keywords


DATA_KEYWORDS = ("enum", "const", "default", "examples")  # their values are data, not schemas
# dependencies become the combinations of present and absent triggers (``dependency_variants``)
MAX_DEPENDENCY_VARIANTS = 16


def join(base: str, ref: str) -> str:
    """``ref`` resolved against ``base`` (RFC 3986; a bare fragment also against a URN, which
    ``urljoin`` leaves alone), without its fragment when ``ref`` has none."""
    if ref.startswith("#"):
        return urldefrag(base)[0] + ref if base else ref
    joined = urljoin(base, ref)
    return joined if "#" in ref else urldefrag(joined)[0]


def uses_ids(document: Schema) -> bool:
    """False for a document that declares draft 4 or 3, where ``$id`` is no keyword (its
    ``id`` is left alone too: references then stay JSON pointers from the root)."""
    declared = document.get("$schema") if isinstance(document, dict) else None
    return not (isinstance(declared, str) and ("draft-04" in declared or "draft-03" in declared))


def absolute_refs(document: Schema) -> Schema:
    """``document`` with every ``$ref`` resolved against the base URI where it is written (the
    ``$id``s on the way from the root, core 8.2.1), so that a target merged into the place of
    its ``$ref`` keeps meaning what it meant; the document itself when no sub-schema has an
    ``$id`` (then every base is the root's, and "#..." references need nothing)."""
    def has_ids(document: Any) -> bool:  # iterative: a schema may nest thousands deep
        todo = [(document, True)]
        while todo:
            node, top = todo.pop()
            if isinstance(node, dict):
                own = node.get("$id")
                if not top and isinstance(own, str) and not own.startswith("#"):
                    return True
                todo += [(v, False) for k, v in node.items() if k not in DATA_KEYWORDS]
            elif isinstance(node, list):
                todo += [(v, False) for v in node]
        return False

    def copy(node: Any, base: str) -> Any:
        if isinstance(node, dict):
            own = node.get("$id")
            if isinstance(own, str) and not own.startswith("#"):
                base = join(base, own)
            out = {k: (v if k in DATA_KEYWORDS else copy(v, base)) for k, v in node.items()}
            if isinstance(node.get("$ref"), str):
                out["$ref"] = join(base, node["$ref"])
            return out
        if isinstance(node, list):
            return [copy(v, base) for v in node]
        return node

    return copy(document, "") if uses_ids(document) and has_ids(document) else document


def _in_order(way: Schema, order: list[str]) -> Schema:
    """``way`` (an ``object_violations`` schema) with the names of ``order`` listed first in
    its ``properties`` (as ``true``, which constrains nothing), so that merging it keeps the
    property order of the object it is merged into."""
    if not isinstance(way, dict):
        return way
    out = dict(way)
    for key in ("allOf", "anyOf"):
        if key in out:
            out[key] = [_in_order(part, order) for part in out[key]]
    if "properties" in out:
        props = out["properties"]
        out["properties"] = {**{n: True for n in order if n not in props}, **{
            n: props[n] for n in order if n in props}, **{
            n: v for n, v in props.items() if n not in order}}
    return out


class Translator(TypeBuilder, ValueCheck):
    """Schema -> rules, for one root schema.

    ``root``: the whole schema document (a dict or a bool), against which local ``$ref``
    pointers resolve. ``whitespace``: "compact" (no whitespace) or "flexible" (any run of
    space, tab, CR and LF around ``,`` ``:`` and inside brackets).

    State, filled by ``translate``: ``rules`` (name -> node; "root", one "refK-name" rule per
    referenced pointer, "value" for any JSON value), ``ignored`` (JSON pointers of keywords
    unknown to every draft, in the order met).

    Every method raises UnsupportedKeyword (a keyword or form it does not implement exactly,
    named with the JSON pointer of its schema) or InvalidSchema (a malformed schema); a schema
    nested deeper than the Python recursion limit raises RecursionError, which
    ``schema_to_source`` turns into LimitExceeded.
    """

    def __init__(self, root: Schema, whitespace: str = "compact"):
        """Raises ValueError when ``whitespace`` is neither "compact" nor "flexible"."""
        if whitespace not in ("compact", "flexible"):
            raise ValueError(f"whitespace must be 'compact' or 'flexible', not {whitespace!r}")
        self.root = root  # translate() makes its $refs absolute
        self.ws = EMPTY if whitespace == "compact" else FLEXIBLE_WS
        self.rules: Rules = {}
        self.ref_names: dict[tuple[str, str], str] = {}
        self.ref_stack: list[str] = []  # pointers whose rules are being translated
        self.ignored: list[str] = []
        self.expanding: list[str] = []
        self.open_rules: set[str] = set()  # rules being translated (placeholders meanwhile)
        self._identifiers: tuple[dict, dict] | None = None  # see ``identifiers``
        self.automata = 0  # rules written for automata (boolean.py): "bool{K}-{state}"
        self.known: dict = {}  # start rule of those rules -> its DFA (reused, not re-read)
        self.negating: list[str] = []  # pointers whose objects are being negated

    def translate(self) -> Rules:
        """The rules of the whole document (rule "root"). A sub-schema no value satisfies
        becomes NOTHING; the caller refuses a root that is NOTHING."""
        self.root = absolute_refs(self.root)
        self._identifiers = None
        self.rules["root"] = self.value(self.root, "#")
        return self.rules

    # ---- $ref -------------------------------------------------------------
    def resolve(self, ref: Any, path: str) -> tuple[Any, str]:
        """The schema a ``$ref`` (core 8.2.3.1) inside this document points to, and its JSON
        pointer from the document's root.

        ``ref`` was made absolute against the base URI where it was written (the ``$id``s on the
        way from the root, core 8.2.1; ``absolute_refs``): "#/a/b" is a JSON pointer in that
        resource (RFC
        6901: ``~1`` is "/", ``~0`` is "~", percent-escapes are decoded), "#name" an
        ``$anchor`` (or ``$dynamicAnchor``, or a draft-7 ``"$id": "#name"``) in it, and any
        other URI one of the document's own resources (a sub-schema's ``$id``, relative or
        absolute), with an optional fragment. Raises UnsupportedKeyword("$ref") for a URI this
        document does not hold (another document) and InvalidSchema when the pointer or the
        anchor does not resolve.
        """
        resources, anchors = self.identifiers()
        uri, fragment = urldefrag(ref) if isinstance(ref, str) else (None, "")
        if uri == "":  # the document itself, whatever its $id
            uri = self.root_base()
        if uri not in resources:
            raise UnsupportedKeyword("$ref", path, f"to {ref!r} is not supported (only local "
                                     "JSON pointers such as '#/$defs/name')", code="schema.ref_external", ref=ref)
        found = self._follow(resources[uri], anchors, uri, fragment)
        if found is None:
            raise InvalidSchema(f"$ref {ref!r} does not resolve", path, code="schema.ref_unresolved", ref=ref)
        return found

    @staticmethod
    def _follow(resource: tuple[Any, str], anchors: dict, uri: str,
                fragment: str) -> tuple[Any, str] | None:
        """``(schema, pointer)`` at ``fragment`` (a JSON pointer, or an anchor name) of the
        resource ``(schema, pointer)`` at ``uri``; None when it leads nowhere."""
        node, pointer = resource
        if fragment and not fragment.startswith("/"):
            return anchors.get((uri, fragment))
        for part in fragment[1:].split("/") if fragment else []:
            part = unquote(part).replace("~1", "/").replace("~0", "~")
            if isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            elif isinstance(node, dict) and part in node:
                node = node[part]
            else:
                return None
            pointer += "/" + part.replace("~", "~0").replace("/", "~1")
        return node, pointer

    def root_base(self) -> str:
        """The root's base URI: its ``$id``, or "" when it has none."""
        own = self.root.get("$id") if isinstance(self.root, dict) and uses_ids(self.root) else None
        return join("", own) if isinstance(own, str) and not own.startswith("#") else ""

    def identifiers(self) -> tuple[dict, dict]:
        """``(resources, anchors)`` of the document, built once: absolute URI (no fragment) ->
        ``(schema, pointer)`` for the root and every sub-schema with an ``$id``, and ``(URI,
        name)`` -> ``(schema, pointer)`` for every ``$anchor``/``$dynamicAnchor`` (and draft-7
        ``"$id": "#name"``). Values of ``enum``, ``const``, ``default`` and ``examples`` are
        data, not schemas, and are not searched."""
        if self._identifiers is None:
            resources: dict = {}
            anchors: dict = {}

            def walk(node: Any, pointer: str, base: str) -> None:
                if isinstance(node, dict):
                    own = node.get("$id")
                    if isinstance(own, str):
                        if own.startswith("#"):
                            anchors.setdefault((base, own[1:]), (node, pointer))
                        else:
                            base = join(base, own)
                            resources.setdefault(base, (node, pointer))
                    for key in ("$anchor", "$dynamicAnchor"):
                        if isinstance(node.get(key), str):
                            anchors.setdefault((base, node[key]), (node, pointer))
                    for key, value in node.items():
                        if key not in DATA_KEYWORDS:
                            walk(value, pointer + "/" + pointer_token(key), base)
                elif isinstance(node, list):
                    for i, value in enumerate(node):
                        walk(value, f"{pointer}/{i}", base)

            resources[self.root_base()] = (self.root, "#")
            if uses_ids(self.root):
                walk(self.root, "#", "")
            self._identifiers = (resources, anchors)
        return self._identifiers

    def ref_rule(self, ref: Any, path: str, rest: Schema | None = None,
                 build: Callable[[Schema], Schema] | None = None) -> Ref:
        """A reference to the rule for "``ref``'s target, together with the sibling keywords
        ``rest``" (None or ``{}``: no siblings), translating it the first time (its rule holds
        NOTHING meanwhile, so a recursive reference finds the name). ``build(target)`` is the
        schema with the target in the place of the ``$ref`` (``split_ref``), so the keywords
        merge in the order written (property order follows it).

        The rule is named per (pointer, canonical JSON of the schema around the ``$ref``);
        siblings that constrain nothing (annotations only) share the plain pointer's rule. So
        a recursive type met again with the same siblings (through ``anyOf``, ``oneOf``,
        ``allOf``, ``items`` or ``properties``) reuses its rule: recursion is never unrolled.
        Raises what ``resolve``, ``expand`` and ``value`` raise, and
        UnsupportedKeyword("$ref") when a new variant of a pointer is needed while
        ``MAX_REF_VARIANTS`` variants of it are already being translated one inside the other
        (siblings that change at every level of a recursion would never end). Variants side
        by side (many schemas extending one base through ``allOf``) are not limited.
        """
        target, pointer = self.resolve(ref, path)
        siblings = self.expand(rest, path) if rest else {}
        plain = not any(k not in ANNOTATIONS for k in siblings) or build is None
        canon = "" if plain else json.dumps(build({"$ref": pointer}), sort_keys=True,
                                            default=repr)
        key = (pointer, canon)
        if key not in self.ref_names:
            if self.ref_stack.count(pointer) >= MAX_REF_VARIANTS:
                raise UnsupportedKeyword("$ref", path, f"to {pointer!r} is met inside itself "
                                         f"with {MAX_REF_VARIANTS} different sets of sibling "
                                         "keywords (they change at every level of the "
                                         "recursion); this is not supported", code="schema.ref_variants",
                                         ref=pointer, variants=MAX_REF_VARIANTS)
            tail = re.sub(r"[^A-Za-z0-9]+", "-", pointer.rsplit("/", 1)[-1]).strip("-")
            name = f"ref{len(self.ref_names)}-{tail[-32:].strip('-') or 'root'}"
            self.ref_names[key] = name
            self.rules[name] = NOTHING  # placeholder while translating (recursion)
            self.ref_stack.append(pointer)
            self.open_rules.add(name)
            try:
                self.rules[name] = (self.value(target, pointer) if plain
                                    else self.value(build(target), path))
            finally:
                self.ref_stack.pop()
                self.open_rules.discard(name)
        return Ref(self.ref_names[key])

    def split_ref(self, schema: Schema
                  ) -> tuple[Any, dict[str, Any], Callable[[Schema], Schema]] | None:
        """``(ref, rest, build)`` when ``schema`` holds a ``$ref`` at its top or in a top-level
        ``allOf`` part (nested ``allOf`` parts included): ``rest`` is the schema without that
        ``$ref``; ``build(target)`` is the schema with the target in its place (at the top:
        the target first, then the siblings, as ``expand`` merges them). None otherwise."""
        if not isinstance(schema, dict):
            return None
        if "$ref" in schema:
            rest = {k: v for k, v in schema.items() if k != "$ref"}
            return schema["$ref"], rest, lambda target: {"allOf": [target, rest]}
        parts = schema.get("allOf")
        if not isinstance(parts, list):
            return None
        for i, part in enumerate(parts):
            found = self.split_ref(part)
            if found is not None:
                ref, part_rest, inner = found
                rest = dict(schema, allOf=parts[:i] + [part_rest] + parts[i + 1:])
                return ref, rest, lambda target: dict(
                    schema, allOf=parts[:i] + [inner(target)] + parts[i + 1:])
        return None

    # ---- schema -> IR -----------------------------------------------------
    def expand(self, schema: Schema, path: str) -> dict[str, Any]:
        """``schema`` as one normalised dict with no top-level ``$ref``, ``allOf``, ``not`` or
        ``if``.

        Boolean schemas (core 4.3.2) become ``{}`` and ``{"type": []}``; a ``$ref`` with
        siblings is merged with its target, ``allOf`` (core 10.2.1.1) part by part (``merge``),
        ``if``/``then``/``else`` (core 10.2.2.1-3) as the ``anyOf`` of (if and then) and (else
        and not if), ``not`` (core 10.2.1.4) through ``negate`` or, when it has no positive
        form, as an ``EXCLUDE`` entry that ``value`` builds by automata (``combined``), and
        the dependency keywords (``dependency_variants``) as an ``anyOf``. Raises InvalidSchema when ``schema`` is not
        a dict or a bool, UnsupportedKeyword for a refused keyword, for recursion through
        ``allOf`` or ``$ref`` siblings, and for what ``merge`` and ``negate`` refuse.
        """
        if schema is True:
            return {}
        if schema is False:
            return dict(FALSE_SCHEMA)
        if not isinstance(schema, dict):
            raise InvalidSchema(f"a schema must be an object or a boolean, not {schema!r}", path,
                                code="schema.not_a_schema", found=json_text(schema))
        check_keywords(schema, path, self.ignored)
        s = normalise(schema, path)
        if "$ref" in s:
            target, pointer = self.resolve(s.pop("$ref"), path)
            if pointer in self.expanding:
                raise UnsupportedKeyword("$ref", path, "recursion through allOf or sibling "
                                         "keywords is not supported", code="schema.ref_recursion")
            self.expanding.append(pointer)
            s = merge(self.expand(target, pointer), s, path)
            self.expanding.pop()
        for i, part in enumerate(s.pop("allOf", [])):
            s = merge(s, self.expand(part, f"{path}/allOf/{i}"), path)
        if "if" in s:  # core 10.2.2.1-3: (if and then) or (not if and else)
            cond, then, other = s.pop("if"), s.pop("then", True), s.pop("else", True)
            negated = self.negate(cond, path + "/if")
            unless = ({"allOf": [other], EXCLUDE: [[cond, path + "/if", "if"]]}
                      if negated is None else {"allOf": [other, negated]})  # else and not if
            s = merge(s, {"anyOf": [{"allOf": [cond, then]}, unless]}, path)
        else:  # without "if", "then" and "else" do nothing
            s.pop("then", None)
            s.pop("else", None)
        if "not" in s:
            target = s.pop("not")
            positive = self.negate(target, path + "/not")
            if positive is None:  # no positive form: by automata (``combined``)
                s = merge(s, {EXCLUDE: [[target, path + "/not", "not"]]}, path)
            else:
                s = merge(s, self.expand(positive, path), path)
        variants = self.dependency_variants(s, path)
        if variants:
            s = merge(s, {"anyOf": variants}, path)
        for key in ("allOf", "$ref", "not"):
            if key in s:  # merge() must never leave these for value() to ignore
                raise RuntimeError(f"internal error: {key!r} left after expansion at {path}")
        return s

    def dependency_variants(self, s: dict[str, Any], path: str) -> list[Schema] | None:
        """``dependentRequired`` (validation 6.5.4), ``dependentSchemas`` (core 10.2.2.4) and
        draft-4 ``dependencies``, as the exact equivalent: for each trigger name, either it is
        absent, or it is present together with the names (or the schema) it requires.

        The combinations are built one trigger at a time, each as (names absent, names
        required, schemas required); a combination that needs a name both absent and present
        is dropped, and equal ones are kept once, so a chain of dependencies (a needs b, b needs
        c, ...) makes k + 1 combinations, not 2^k. Pops the keywords from ``s`` (mutated);
        returns the ``anyOf`` branches, or None when there are none. Raises InvalidSchema when
        a keyword's value is not an object, UnsupportedKeyword("dependentRequired") when more
        than ``MAX_DEPENDENCY_VARIANTS`` combinations remain (each is an object schema of its
        own: independent triggers double them).
        """
        deps: dict[str, Any] = {}
        for key in ("dependencies", "dependentRequired", "dependentSchemas"):
            value = s.pop(key, {})
            if not isinstance(value, dict):
                raise bad_value(key, "object", path, value)
            deps.update(value)
        if not deps:
            return None
        variants = {(frozenset(), frozenset(), ())}
        for name, need in deps.items():
            grown = set()
            for absent, required, schemas in variants:
                if name not in required:
                    grown.add((absent | {name}, required, schemas))
                names = {name} | (set(need) if isinstance(need, list) else set())
                if not names & absent:
                    grown.add((absent, required | names,  # schemas: the triggers whose schema holds
                               schemas if isinstance(need, list) else schemas + (name,)))
            variants = grown
            if len(variants) > MAX_DEPENDENCY_VARIANTS:
                raise UnsupportedKeyword(
                    "dependentRequired", path, f"needs more than {MAX_DEPENDENCY_VARIANTS} "
                    "combinations of present and absent trigger properties (independent "
                    "triggers double them), which is not supported", code="schema.dependent_many",
                    most=MAX_DEPENDENCY_VARIANTS)
        out: list[Schema] = []
        ordered = sorted(variants, key=lambda v: (sorted(v[0]), sorted(v[1]), v[2]))
        for absent, required, schemas in ordered:
            parts: list[Schema] = []
            if absent:
                parts.append({"properties": {n: False for n in sorted(absent)}})
            if required:
                parts.append({"required": sorted(required)})
            parts.extend(deps[name] for name in schemas)
            out.append(parts[0] if len(parts) == 1 else {"allOf": parts} if parts else {})
        return out

    def negate(self, schema: Schema, path: str, depth: int = 0) -> Schema | None:
        """A positive schema for ``not schema`` (core 10.2.1.4), in the forms that have a short
        exact one: not {} / not true (nothing), not false (anything), not {"type": ...} (the
        other types; not integer has none), not {"required": [names]} (an object with one of
        them absent), not {"anyOf": [...]} and not {"allOf": [...]} of these (De Morgan), and
        not {"$ref": ...} to a schema of these forms; ``depth`` bounds the nesting at 8.

        Returns None for any other form: ``expand`` then leaves it to automata (``combined``).
        """
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
                return None  # the non-integral numbers: by automata
            return {"type": [t for t in KINDS if t not in types and not (
                t == "integer" and "number" in types)]}
        if keys == {"required"} and schema["required"]:  # every non-object has them all
            return {"type": ["object"],
                    "anyOf": [{"properties": {n: False}} for n in schema["required"]]}
        if keys in ({"anyOf"}, {"allOf"}) and depth < 8:
            parts = [self.negate(x, path, depth + 1) for x in schema[keys.pop()]]
            if any(p is None for p in parts):
                return None
            return {"allOf": parts} if "anyOf" in schema else {"anyOf": parts}
        return None

    def value(self, schema: Schema, path: str) -> Node:
        """The grammar of the JSON texts valid under ``schema`` (at JSON pointer ``path``).

        A local ``$ref``, at the top or in an ``allOf`` part, becomes a reference to the rule
        of its target merged with the other keywords (``ref_rule``); otherwise the schema is
        expanded, then: ``anyOf``/``oneOf`` -> ``branches``; ``enum`` (validation 6.1.2, with
        ``const`` folded in by ``normalise``) -> the values that the sibling keywords allow;
        else the union of its types (validation 6.1.1; without ``type``, every type, since a
        keyword constrains only the instances of its own type: ``{"maxLength": 2}`` accepts
        any number, and strings of at most 2 code points), each built by ``typed``. Returns NOTHING when no
        value is valid. Raises UnsupportedKeyword or InvalidSchema (see the class).
        """
        hoisted = self.split_ref(schema)
        if hoisted is not None:
            if isinstance(schema, dict):
                check_keywords(schema, path, self.ignored)
            return self.ref_rule(hoisted[0], path, hoisted[1], hoisted[2])
        s = self.expand(schema, path)
        if EXCLUDE in s or INTERSECT in s:
            return self.combined(s, path)
        for key in ("anyOf", "oneOf"):
            if key in s:
                return self.branches(s, key, path)
        if "enum" in s:
            if checkable(s):
                values = [v for v in s["enum"] if value_allowed(v, s, path)]
            else:  # object or array keywords beside the enum: each value checked whole
                rest = {k: w for k, w in s.items() if k != "enum"}
                values = [v for v in s["enum"] if self.accepts_value(v, rest, path)]
            return alt(*[const_ir(v, self.ws) for v in values])
        if "type" in s:
            types = s["type"]
        elif not any(kw in s for kws in KIND_KEYWORDS.values() for kw in kws):
            return self.any_value()
        else:  # each keyword constrains only its own type (core 7.6.1): every type is valid
            types = [k for k in KINDS if k != "integer"]
        if "integer" in types and "number" in types:
            types = [t for t in types if t != "integer"]
        return alt(*[self.typed(t, s, path) for t in KINDS if t in types])

    def branches(self, s: dict[str, Any], key: str, path: str) -> Node:
        """``anyOf`` (core 10.2.1.2) or ``oneOf`` (core 10.2.1.3) of the expanded schema ``s``
        (``key`` is popped from it): the union of the branches, each merged with the sibling
        keywords; a ``oneOf`` branch keeps only the types on which it can be the one branch
        that matches (``one_of_kinds``). Raises InvalidSchema when the value is not a non-empty
        list, and UnsupportedKeyword("oneOf") when exactly-one cannot be written as a union.
        """
        options = s.pop(key)
        if not isinstance(options, list) or not options:
            raise bad_value(key, "non_empty_list", path, options)
        merged = [{"allOf": [s, option]} for option in options]
        if key == "oneOf":
            kept = one_of_kinds([self.expand(m, path) for m in merged], path, self)
            if kept is None:  # exactly one, by automata: this branch and none of the others
                merged = [{"allOf": [m], EXCLUDE: [[{"anyOf": options[:i] + options[i + 1:]},
                                                    f"{path}/oneOf", "oneOf"]]}
                          for i, m in enumerate(merged)]
                kept = [None] * len(merged)
            merged = [m if k is None else {"allOf": [m, {"type": k}]} if k else False
                      for m, k in zip(merged, kept)]
        return alt(*[self.value(m, f"{path}/{key}/{i}") for i, m in enumerate(merged)
                     if m is not False])

    def combined(self, s: dict[str, Any], path: str) -> Node:
        """The expanded schema ``s`` with ``EXCLUDE`` (sub-schemas no instance may satisfy) or
        ``INTERSECT`` (sub-schemas every instance must also satisfy) entries, exactly, type by
        type: a type that an excluded sub-schema accepts whole, or an intersected one rejects
        whole, is dropped; a type they leave alone is built as usual; otherwise the type's
        values are built by automata (``boolean.py``: the DFA of the values of ``s`` of that
        type, intersected with or minus the DFAs of the sub-schemas restricted to it), so the
        sub-schemas need only be regular on the types where they matter.

        Raises UnsupportedKeyword naming the keyword that asked for it (``not``, ``oneOf``,
        ``if``, ``pattern``, ``format``) when the values of one type are recursive (any array
        or object inside, for instance) or the automaton passes ``boolean.MAX_STATES`` states
        (the message says how many it reached)."""
        s = dict(s)
        exclude, intersect = s.pop(EXCLUDE, []), s.pop(INTERSECT, [])
        parts = []
        for kind in ("null", "boolean", "number", "string", "array", "object"):
            only = {"type": [kind]}
            minus, both, empty = [], [], False
            for sub, pointer, keyword in exclude:
                e = self.expand({"allOf": [sub, only]}, pointer)
                if accepts_whole(e, kind, self, pointer):
                    empty = True  # every value of this type is excluded
                elif e.get("type") != [] and kind in kinds(e):
                    minus.append((sub, pointer, keyword))
            for sub, pointer, keyword in intersect:
                e = self.expand({"allOf": [sub, only]}, pointer)
                if e.get("type") == [] or kind not in kinds(e):
                    empty = True  # no value of this type satisfies it
                elif not accepts_whole(e, kind, self, pointer):
                    both.append((sub, pointer, keyword))
            if empty:
                continue
            if kind == "object" and minus:  # a difference over objects: by keywords
                node = self.object_difference(s, minus, path)
                if node is not None:
                    parts.append(node if not both else self.by_automata(node, kind, only, both, []))
                    continue
            node = self.value({"allOf": [s, only]}, path)
            if node == NOTHING or not (minus or both):
                parts.append(node)
                continue
            parts.append(self.by_automata(node, kind, only, both, minus))
        return alt(*parts)

    def object_difference(self, s: dict[str, Any], minus: list, path: str) -> Node | None:
        """The objects of ``s`` that no sub-schema of ``minus`` accepts (``without_objects``),
        or None when that has no positive form. The objects of ``s`` alone are built first, so
        an error of the reader's own keywords is named as such; an UnsupportedKeyword met only
        in the written form (a ``minProperties`` that stands for ``not maxProperties``, say)
        is raised again naming the keyword that asked for the difference."""
        only = {"type": ["object"]}
        if self.value({"allOf": [s, only]}, path) == NOTHING:
            return NOTHING
        s_kind = self.without_objects(s, minus, path)
        if s_kind is None:
            return None
        try:
            return self.value({"allOf": [s_kind, only]}, path)
        except UnsupportedKeyword as error:
            _, pointer, keyword = minus[0]
            owner = pointer[:-len(keyword) - 1] if pointer.endswith("/" + keyword) else pointer
            raise UnsupportedKeyword(keyword, owner, "over objects is not supported here: written "
                                     "as the ways an object breaks it, it needs "
                                     f"{error.keyword!r}, which is refused there", code="schema.object_difference",
                                     needs=error.keyword) from None

    def without_objects(self, s: dict[str, Any], minus: list, path: str) -> dict | None:
        """``s`` on objects, with the objects valid under a sub-schema of ``minus`` left out,
        written as positive keywords (``object_violations``): each excluded sub-schema becomes
        the ``anyOf`` of the ways an object can break it. None when one of them has no such
        form (the caller refuses it by name)."""
        context = self.expand({"allOf": [s, {"type": ["object"]}]}, path)
        closed = (context.get("additionalProperties", True) is False and not any(
            k in context for k in ("patternProperties", OBJECTS, "anyOf", "oneOf")))
        names = list(context.get("properties", {})) + [
            n for n in context.get("required", []) if n not in context.get("properties", {})]
        order = list(context.get("properties", {}))
        parts: list[Schema] = [s]
        for sub, pointer, _ in minus:
            ways = self.object_violations(sub, pointer, names if closed else None)
            if ways is None:
                return None
            parts.append({"anyOf": [_in_order(way, order) for way in ways]} if ways else False)
        return {"allOf": parts}

    def object_violations(self, sub: Schema, pointer: str,
                          names: list[str] | None) -> list[Schema] | None:
        """The ways an object can be invalid under ``sub``, as positive schemas whose union is
        exactly the objects ``sub`` rejects (De Morgan over its keywords): a required name
        absent; a listed property present with a value its schema rejects (``not``, built as
        usual: by automata on scalars, by this method on objects); fewer than
        ``minProperties`` or more than ``maxProperties`` members; an ``anyOf`` whose every
        branch is broken; a sub-schema of ``not`` that holds; a name outside ``properties``
        whose value ``additionalProperties`` rejects, when the object being built can only
        hold the names ``names`` (None: it may hold others, and that case has no such form).

        Returns [] when no object breaks ``sub``, None when ``sub`` has a keyword with no such
        form here (``enum``, ``oneOf``, ``patternProperties``, ``propertyNames``,
        ``additionalProperties`` on an open object) or negates itself through a ``$ref``."""
        if pointer in self.negating:
            return None
        self.negating.append(pointer)
        try:
            e = self.expand({"allOf": [sub, {"type": ["object"]}]}, pointer)
            if e.get("type") == []:
                return [{}]  # no object is valid: every one breaks it
            if any(k in e for k in ("enum", "oneOf", "patternProperties", "propertyNames",
                                    OBJECTS, INTERSECT)):
                return None
            ways: list[Schema] = []
            for target, _, _ in e.get(EXCLUDE, []):
                ways.append({"allOf": [target, {"type": ["object"]}]})
            if "anyOf" in e:
                broken = []
                for i, branch in enumerate(e["anyOf"]):
                    each = self.object_violations(branch, f"{pointer}/anyOf/{i}", names)
                    if each is None:
                        return None
                    if not each:
                        broken = None  # a branch no object breaks: the anyOf always holds
                        break
                    broken.append({"anyOf": each})
                if broken is not None:
                    ways.append({"allOf": broken})
            props = e.get("properties", {})
            ways += [{"properties": {name: False}} for name in e.get("required", [])]
            ways += [{"required": [name], "properties": {name: {"not": schema}}}
                     for name, schema in props.items() if schema is not True and schema != {}]
            if e.get("minProperties", 0) > 0:
                ways.append({"maxProperties": e["minProperties"] - 1})
            if "maxProperties" in e:
                ways.append({"minProperties": e["maxProperties"] + 1})
            extra = e.get("additionalProperties", True)
            if extra is not True and extra != {}:
                if names is None:
                    return None
                ways += [{"required": [name], "properties": {name: {"not": extra}}}
                         for name in names if name not in props]
            return ways
        finally:
            self.negating.pop()

    def by_automata(self, node: Node, kind: str, only: dict[str, Any],
                    both: list, minus: list) -> Node:
        """``node`` (values of JSON type ``kind``) intersected with the sub-schemas of ``both``
        and minus those of ``minus`` (each ``(schema, pointer, keyword)``, restricted to
        ``only``), as a new expression or new rules. Raises UnsupportedKeyword (see
        ``combined``)."""
        sub, pointer, keyword = (both + minus)[0]
        unfinished = frozenset(self.open_rules)

        def owner(pointer: str, keyword: str) -> str:  # the schema that holds the keyword
            return pointer[:-len(keyword) - 1] if pointer.endswith("/" + keyword) else pointer

        if minus and kind == "object":
            sub, pointer, keyword = minus[0]
            raise UnsupportedKeyword(keyword, owner(pointer, keyword), "over objects is not "
                                     "supported where the objects it must leave out have no "
                                     "positive form (an enum of objects, patternProperties, "
                                     "propertyNames, or additionalProperties on an object that "
                                     "may hold any key); an object has many spellings (key "
                                     "order), so it is never subtracted as text", code="schema.bool_container")
        known = self.known
        if minus and kind in ("string", "number", "array"):  # one spelling per value
            both = both + [({"__canonical__": kind}, pointer, keyword)]
        if minus and kind == "array":
            # the canonical arrays hold scalars only: "any value" inside may be read as "any
            # canonical scalar" on both sides, which keeps every text the difference can keep
            known = dict(self.known, value=to_dfa(self.canonical("scalar"), {}))

        try:
            dfa = to_dfa(node, self.rules, unfinished, known=known)
            for ops, op in ((both, "and"), (minus, "minus")):
                for sub, pointer, keyword in ops:
                    canonical = sub.get("__canonical__") if isinstance(sub, dict) else None
                    part = (self.canonical(canonical) if canonical
                            else self.value({"allOf": [sub, only]}, pointer))
                    dfa = product(dfa, to_dfa(part, self.rules, unfinished, known=known), op)
        except NotRegular:
            raise UnsupportedKeyword(keyword, owner(pointer, keyword), f"over {kind}s through "
                                     "a recursive $ref is not supported: only regular "
                                     "(non-recursive) parts are combined by automata",
                                     code="schema.bool_recursive", over=kind) from None
        except TooLarge as error:
            raise too_many_states(keyword, owner(pointer, keyword), kind, error.limit, error.states) from None
        self.automata += 1
        return to_ir(dfa, f"bool{self.automata}", self.rules, known=self.known)

    def canonical(self, kind: str) -> Node:
        """The canonical spellings a difference works on (``boolean.py``): strings and numbers
        as there; arrays of canonical scalars (strings, numbers, booleans, null), with this
        translator's whitespace, since a nested array or object could be spelled in several
        ways (an array inside is left out: narrower, never wider)."""
        if kind == "string":
            return CANONICAL_STRING
        if kind == "number":
            return CANONICAL_NUMBER
        scalar = alt(CANONICAL_STRING, CANONICAL_NUMBER, Lit("true"), Lit("false"), Lit("null"))
        if kind == "scalar":
            return scalar
        items = seq(scalar, repeat(seq(self.sep(","), scalar), 0, None))
        return seq(Lit("["), self.ws, alt(items, EMPTY), self.ws, Lit("]"))

    def intersection(self, parts: list[tuple[str, Node]], path: str) -> Node:
        """The texts every node of ``parts`` (``(keyword, node)``, regular) accepts, by
        automata. Raises UnsupportedKeyword naming the first keyword past
        ``boolean.MAX_STATES`` states (a ``maxLength`` of thousands, say)."""
        keyword = parts[0][0]
        try:
            dfa = to_dfa(parts[0][1], self.rules, known=self.known)
            for _, node in parts[1:]:
                dfa = product(dfa, to_dfa(node, self.rules, known=self.known), "and")
        except TooLarge as error:
            together = ", ".join(k for k, _ in parts)
            raise UnsupportedKeyword(keyword, path, f"together with {together.split(', ', 1)[1]} "
                                     f"needs an automaton of more than {error.limit} states (it "
                                     f"reached {error.states}); this is not supported",
                                     code="schema.intersection_states", others=together.split(", ", 1)[1],
                                     most=error.limit, reached=error.states) from None
        self.automata += 1
        return to_ir(dfa, f"bool{self.automata}", self.rules, known=self.known)

    def key_classes(self, base: Node, patterns: list[Node], keyword: str,
                    path: str) -> list[tuple[Node, frozenset[int]]]:
        """The keys of ``base`` (a regular node of quoted keys) split by which of ``patterns``
        (regular nodes of quoted keys) they match: ``(node, indices matched)`` for each class
        that holds at least one key, exactly, by automata (``boolean.py``). Raises
        UnsupportedKeyword(``keyword``) past ``boolean.MAX_STATES`` states, with the size
        reached."""
        try:
            classes = [(to_dfa(base, self.rules, known=self.known), frozenset())]
            for j, node in enumerate(patterns):
                dfa = to_dfa(node, self.rules, known=self.known)
                split = []
                for keys, matched in classes:
                    for part, now in ((product(keys, dfa, "and"), matched | {j}),
                                      (product(keys, dfa, "minus"), matched)):
                        if any(part.accepting):
                            split.append((part, now))
                classes = split
        except TooLarge as error:  # (the keys are regular: propertyNames is checked before)
            raise too_many_states(keyword, path, "key", error.limit, error.states) from None
        out = []
        for dfa, matched in classes:
            self.automata += 1
            out.append((to_ir(dfa, f"bool{self.automata}", self.rules, known=self.known), matched))
        return out

    def multiples(self, base: Node, step: float, integer: bool, path: str) -> Node:
        """The numbers of ``base`` that are multiples of ``step`` (``numeric.multiples_dfa``),
        by automata. Raises UnsupportedKeyword("multipleOf") past ``boolean.MAX_STATES``."""
        multiples = multiples_dfa(step, integer, MAX_STATES)
        try:
            if multiples is None:
                raise TooLarge(MAX_STATES + 1, MAX_STATES)
            dfa = product(to_dfa(base, self.rules, known=self.known), multiples, "and")
        except TooLarge as error:
            raise UnsupportedKeyword("multipleOf", path, f"{step!r} needs an automaton of more "
                                     f"than {error.limit} states (it reached {error.states}); "
                                     "this is not supported", code="schema.multiple_of", value=step,
                                     most=error.limit, reached=error.states) from None
        self.automata += 1
        return to_ir(dfa, f"bool{self.automata}", self.rules, known=self.known)

    def typed(self, t: str, s: dict[str, Any], path: str) -> Node:
        """The grammar of the values of JSON type ``t`` valid under the expanded schema ``s``:
        ``null``, ``true``/``false``, or the ``number``, ``string``, ``array`` and ``object``
        builders (whose errors it passes on)."""
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

    def any_value(self) -> Ref:
        """A reference to rule "value": any JSON value (its rules are added once)."""
        if "value" not in self.rules:
            self.rules["value"] = NOTHING
            self.rules["value"] = alt(*[self.typed(t, {}, "#") for t in KINDS if t != "integer"])
        return Ref("value")
