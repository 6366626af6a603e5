"""Compile a JSON Schema (2020-12 subset) into a grammar for token masks.

Pipeline: schema -> intermediate rules (``translate.Translator``) -> regex text
(``compile_regex``) when no rule refers back to itself, otherwise GBNF text
(``compile_cfg``). Supported and refused keywords, whitespace and property order are
documented in docs/json-schema.md.

Errors (all at compile time): ``UnsupportedKeyword`` names the keyword the compiler does not
implement; ``InvalidSchema`` for malformed or unsatisfiable schemas; ``LimitExceeded`` when the
schema nests deeper than the recursion limit, or from the ``compile_regex``/``compile_cfg``
limits. A regex longer than ``max_regex_chars`` (default 2,000,000 characters) is written as
GBNF instead.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from ..cfg import compile_cfg_rules
from ..errors import nesting_guard
from ..matcher import Grammar, check_nonempty, gc_paused
from ..regex_fsm import ast_to_dfa
from .emit import to_ast, to_ast_rules, to_gbnf, to_regex
from .errors import InvalidSchema, LimitExceeded
from .ir import NOTHING, Rules, is_recursive, productive_rules
from .keywords import Schema
from .translate import Translator

DEFAULT_MAX_REGEX_CHARS = 2_000_000


def schema_to_source(schema: Schema | str | bytes, *, whitespace: str = "compact",
                     max_regex_chars: int = DEFAULT_MAX_REGEX_CHARS
                     ) -> tuple[str, str, list[str]]:
    """Translate ``schema`` to grammar text without compiling it.

    ``schema``: a dict, a bool, or its JSON text. ``whitespace``: "compact" (no whitespace at
    all) or "flexible" (any run of space, tab, CR, LF between the tokens inside the value, never
    before or after it). Returns ``(syntax, source, ignored_keywords)``: syntax is "regex"
    (Python ``re`` syntax, matched in full against the whole output) or "gbnf" (start rule
    ``root``); ignored_keywords lists the JSON pointers of keywords unknown to every draft.

    Raises InvalidSchema (not JSON, malformed, or no value satisfies it), UnsupportedKeyword,
    LimitExceeded (nesting deeper than ``sys.getrecursionlimit()`` allows), and ValueError for
    an unknown ``whitespace``.
    """
    rules, ignored = translate_schema(schema, whitespace)
    syntax, source = _write(rules, max_regex_chars)
    return syntax, source, ignored


def translate_schema(schema: Schema | str | bytes, whitespace: str = "compact"
                     ) -> tuple[Rules, list[str]]:
    """The intermediate rules of ``schema`` (rule "root") and the ignored keywords' pointers,
    translated once. Raises what ``schema_to_source`` raises."""
    if isinstance(schema, (str, bytes)):
        try:
            schema = json.loads(schema)
        except ValueError as exc:
            raise InvalidSchema(f"not valid JSON: {exc}", "#", code="schema.not_json",
                                detail=getattr(exc, "msg", str(exc)))
    translator = Translator(schema, whitespace)
    try:
        rules = translator.translate()
    except RecursionError:
        raise LimitExceeded("the schema nests too deeply for the translator",
                            "sys.getrecursionlimit()", sys.getrecursionlimit(),
                            "flatten the schema (fewer nested allOf/anyOf/$ref levels)",
                            code="limit.schema_nesting") from None
    if rules["root"] == NOTHING:
        raise InvalidSchema("no JSON value satisfies this schema", "#", code="schema.unsatisfiable")
    productive = productive_rules(rules)
    if "root" not in productive:
        pointers = [p for (p, _), name in translator.ref_names.items() if name not in productive]
        empty = [p for (p, _), name in translator.ref_names.items() if rules[name] == NOTHING]
        if empty:
            raise InvalidSchema(f"no JSON value satisfies this schema: $ref {empty[0]} points to "
                                "a schema that no value satisfies", empty[0], code="schema.ref_false", ref=empty[0])
        raise InvalidSchema("no JSON value satisfies this schema: $ref "
                            f"{pointers[0] if pointers else '#'} is a cycle with no base case "
                            "(every branch refers back to itself, so no finite value ends it)",
                            pointers[0] if pointers else "#", code="schema.ref_cycle",
                            ref=pointers[0] if pointers else "#")
    return rules, sorted(set(translator.ignored))


def _write(rules: Rules, max_regex_chars: int) -> tuple[str, str]:
    """("regex", text) when no rule is recursive and the text fits in ``max_regex_chars`` (and
    nests less deeply than Python's recursion limit), else ("gbnf", text)."""
    if not is_recursive(rules):
        try:
            return "regex", to_regex(rules, max_chars=max_regex_chars)
        except (LimitExceeded, RecursionError):
            pass  # shared rules keep the GBNF form small (and a long chain of rules shallow)
    return "gbnf", to_gbnf(rules)


class JsonSchemaGrammar(Grammar):
    """A compiled JSON Schema: a ``Grammar`` of kind "json_schema".

    Extra attributes: ``syntax`` ("regex" | "gbnf", the form of ``source``), ``source`` (str,
    the regex or GBNF text that was compiled), ``schema`` (the input), ``whitespace``,
    ``ignored_keywords`` (JSON pointers of keywords unknown to every JSON Schema draft, which
    validators ignore too).
    """

    def __init__(self, automaton, syntax: str, source: str, schema: Any, whitespace: str,
                 ignored_keywords: list[str]):
        super().__init__(automaton, "json_schema", source)
        self.syntax, self.schema, self.whitespace = syntax, schema, whitespace
        self.ignored_keywords = ignored_keywords


def compile_json_schema(schema: Schema | str | bytes, *, whitespace: str = "compact",
                        max_regex_chars: int = DEFAULT_MAX_REGEX_CHARS,
                        **limits: Any) -> JsonSchemaGrammar:
    """Compile ``schema`` (dict, bool or JSON text) into a ``JsonSchemaGrammar``.

    ``whitespace`` and ``max_regex_chars`` as in ``schema_to_source``. ``limits`` go to
    ``compile_regex`` (max_states, max_nfa_states) and ``compile_cfg`` (engine, max_states,
    max_items, max_productions, lexemes). The schema is translated once: the regex route builds
    its automaton from the rules' tree (``emit.to_ast``, the tree of ``source``), and a regex
    whose DFA would pass max_states is written from the same rules as GBNF and compiled with
    the Earley engine instead; the GBNF route compiles the rules' trees
    (``emit.to_ast_rules``, the trees of ``source``) without parsing the text. Raises what
    ``schema_to_source`` raises, and
    LimitExceeded from ``compile_cfg``'s limits.
    """
    with gc_paused():
        return _compile(schema, whitespace, max_regex_chars, limits)


def _compile(schema, whitespace, max_regex_chars, limits) -> JsonSchemaGrammar:
    rules, ignored = translate_schema(schema, whitespace)
    syntax, source = _write(rules, max_regex_chars)
    regex_limits = {k: v for k, v in limits.items() if k in ("max_states", "max_nfa_states")}
    cfg_limits = {k: v for k, v in limits.items() if k != "max_nfa_states"}
    if syntax == "regex":
        try:
            with nesting_guard("schema_regex"):
                dfa = ast_to_dfa(to_ast(rules), **regex_limits)  # the tree of ``source``
            inner = check_nonempty(Grammar(dfa, "regex", source), source, "regex")
            return JsonSchemaGrammar(inner.automaton, syntax, source, schema, whitespace, ignored)
        except LimitExceeded:  # too many DFA states: Earley has no such blow-up
            syntax, source = "gbnf", to_gbnf(rules)  # the same rules: translated once
            cfg_limits["engine"] = "earley"
    # Recursive, or a regex too long to write: either way Earley, unless the caller says.
    cfg_limits.setdefault("engine", "earley")
    inner = compile_cfg_rules(to_ast_rules(rules), source, **cfg_limits)  # no GBNF parsing
    return JsonSchemaGrammar(inner.automaton, syntax, source, schema, whitespace, ignored)
