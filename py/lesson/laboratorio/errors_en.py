"""The masker's errors for the English edition: the twin of :mod:`lesson.laboratorio.errors_es`.

The masker writes its messages for programmers: positions counted from 0, a fix line that is
sometimes only a reason ("a backreference is not regular") or a pointer ("correct the schema at
#"). The English page gets curated messages as the Spanish one does: :data:`CATALOG` has, for each
key of the Spanish catalog (:data:`lesson.laboratorio.errors_es.CATALOG`, whose English patterns
recognise the masker's reasons), the English message and fix (``str.format`` templates over the
same groups, some of them first rewritten by :data:`GROUPS`). The keys, so the kinds and spans,
are the Spanish edition's; the test ``tests/lesson/laboratorio/test_laboratorio_errors_en.py``
checks that every key has its English twin and that every raise site gets one.

Python's own messages (``re``'s for a schema's invalid ``pattern``, ``json``'s for a schema that is
not JSON) are already English: they keep their words, without ``re``'s " at position N" (the caret
shows the place).
"""

from __future__ import annotations

import re

from ..numbers import en_int
from .errors_es import CATALOG as ES_CATALOG
from ..numbers import en_number

CATALOG: dict[str, tuple[str, str]] = {
    # --- regular expressions, and the same words in GBNF
    "regex.unclosed_group": ("missing “)”: the group opened here is not closed",
                             "add “)”, or write “\\(” if you meant a literal parenthesis"),
    "regex.unbalanced_paren": ("this “)” is extra: there is no open group to close",
                               "remove it, or write “\\)” if you meant a literal parenthesis"),
    "syntax.nothing_to_repeat": ("nothing to repeat before “{0}”: a quantifier goes after something",
                                 "put “{0}” after a character, a class or a group (in a regular expression, "
                                 "“\\{0}” is a literal “{0}”)"),
    "regex.anchor_inside": ("the anchor “{0}” in the middle of the expression is not supported: the expression "
                            "always has to match the whole text",
                            "remove it: “^” only works at the start and “$” at the end, and neither is needed"),
    "regex.bad_group_name": ("badly written group name: “(?P<name>...)” is expected",
                             "close the name with “>”"),
    "regex.unclosed_comment": ("missing “)”: the comment “(?#...” opened here is not closed",
                               "close the comment with “)”"),
    "syntax.bad_repeat": ("the repetition {{{0},{1}}} is impossible: the minimum is greater than the maximum",
                          "write {{{1},{0}}}"),
    "regex.multiple_repeat": ("two quantifiers in a row: a quantifier follows another one here",
                              "group the first one: “(?:x*)+”"),
    "regex.possessive": ("the possessive quantifier (“*+”, “++”, “?+”, “{{m,n}}+”) is not supported",
                         "remove the “+” after the quantifier"),
    "syntax.unclosed_class": ("missing “]”: the character class opened here (“[”) is not closed",
                              "add “]” at the end of the class"),
    "regex.range_ends_in_class": ("badly formed character range: a class like “\\d” cannot end a range",
                                  "put “-” at the start or the end of the class if you meant a literal hyphen"),
    "syntax.bad_range": ("the range “{0}-{1}” is backwards: “{0}” comes after “{1}”",
                         "write “{1}-{0}”"),
    "regex.trailing_backslash": ("the expression ends in a lone backslash “\\”",
                                 "write “\\\\” for a literal backslash"),
    "regex.boundary": ("“\\{0}” (a word boundary or an anchor) is not supported: it is not a character",
                       "remove it: the expression always matches the whole text"),
    "regex.backreference": ("the backreference “\\{0}” is not supported: it does not describe a regular language",
                            "write the group's text out again, explicitly"),
    "regex.unicode_property": ("the Unicode property “\\{0}{{...}}” is not supported",
                               "write the class with ranges, for example “[a-zñáéíóú]”"),
    "syntax.bad_hex_escape": ("badly formed escape “\\{0}”: {1} hex digits were expected and there are {2}",
                              "write “\\{0}” followed by exactly {1} hex digits (0-9, a-f)"),
    "syntax.beyond_unicode": ("the escape “\\{0}{1}” is beyond Unicode's last character, U+10FFFF",
                              "use the code of a character that exists"),
    "regex.bad_named_escape": ("badly formed escape “\\N”: “\\N{{NAME}}” is expected",
                               "write, for example, “\\N{{LATIN SMALL LETTER N WITH TILDE}}”"),
    "regex.unknown_name": ("no Unicode character is named {0}",
                           "check the name (such as “LATIN SMALL LETTER N WITH TILDE”)"),
    "regex.bad_escape": ("the escape “\\{0}” does not exist",
                         "write “{0}” without the backslash"),
    # --- GBNF
    "gbnf.expected_name": ("a rule name is expected here, and there is {0}",
                           "start each rule with “name ::= ...”"),
    "gbnf.expected_define": ("“::=” is missing after the rule name {0}",
                             "write “name ::= ...”"),
    "gbnf.defined_twice": ("the rule {0} is defined twice",
                           "join the two definitions into one, with “|” between the alternatives"),
    "gbnf.token_reference": ("token references and negation (“{0}...”) are not supported",
                             "write the text as a quoted string"),
    "gbnf.unexpected_char": ("the character {0} cannot go here",
                             "a string \"...\", a class [...], a rule name, “.” or “(” is expected here"),
    "gbnf.multiple_repeat": ("two quantifiers in a row: a quantifier follows another one here",
                             "put the element in parentheses: “(x*)+”"),
    "gbnf.bad_repetition": ("badly written repetition: {{m}}, {{m,}} or {{m,n}} is expected",
                            "write, for example, {{2,5}}"),
    "gbnf.bad_repeat": ("the repetition {{{0},{1}}} is impossible: the minimum is greater than the maximum",
                        "write {{{1},{0}}}"),
    "gbnf.repeat_too_large": ("a repetition bound above {0} is not supported",
                              "use “*” or “+” instead"),
    "gbnf.unclosed_string": ("missing “\"”: the string opened here is not closed",
                             "add “\"” at the end of the string"),
    "gbnf.unknown_escape": ("the escape “\\{0}” does not exist in GBNF",
                            "use \\n, \\t, \\r, \\\", \\\\, \\xHH or \\uHHHH"),
    "gbnf.no_root": ("there is no rule “root”, the rule the grammar starts from",
                     "add a line “root ::= ...”"),
    "gbnf.undefined_rule": ("the rule {0} is used here but defined nowhere",
                            "add a line that defines it, “name ::= ...”, or correct the name"),
    "gbnf.recursive_no_dfa": ("the rule {0} is recursive: the grammar has no finite automaton",
                              "compile it with engine='auto' or engine='earley'"),
    "gbnf.never_finishes": ("no text satisfies it: “root” never finishes, because each of its alternatives "
                            "asks again for a rule that does not end",
                            "give each recursive rule a base case, for example root ::= \"a\" root | \"a\""),
    "syntax.matches_nothing": ("{0} accepts no text at all",
                               "look for empty character classes and rules that never finish"),
    # --- a list of options
    "choice.empty": ("the list of options is empty", "write one option per line"),
    # --- size and work limits
    "limit.choice_states": ("the list of options needs {0} automaton states, more than allowed",
                            "shorten the list of options"),
    "limit.nfa_states": ("the regular expression expands into too many automaton states",
                         "lower the bounds of the repetitions {{m,n}}, or split the expression"),
    "limit.dfa_states": ("the automaton needs too many states",
                         "simplify the constraint: bounded repetitions of alternatives multiply the states"),
    "limit.nesting": ("{0} nests too many levels of groups",
                      "flatten the nested groups: use repetitions instead of nesting"),
    "limit.productions": ("the grammar turns into too many productions",
                          "lower the bounds of the repetitions {{m,n}}, or simplify the rules"),
    "limit.schema_nesting": ("the schema nests too many levels",
                             "flatten it: fewer allOf, anyOf or $ref inside one another"),
    "limit.schema_regex": ("the regular expression of this schema grows too long",
                           "simplify the schema"),
    "limit.earley_items": ("one step of the (Earley) parser needed more than {0} items",
                           "make the grammar less ambiguous: avoid, for example, x* x* or nested optional "
                           "repetitions"),
    "limit.mask_steps": ("computing one mask needed too many automaton steps",
                         "use a smaller grammar"),
    "limit.budget_steps": ("going through the tokens of one state needed too many automaton steps",
                           "use a smaller grammar"),
    "limit.budget_states": ("the mask that counts the budget had to visit too many states",
                            "use a smaller budget or a narrower grammar"),
    # --- JSON Schema: unsupported keywords
    "schema.unique_items_with": ("“uniqueItems” together with “prefixItems” or “contains” is not supported",
                                 "remove “uniqueItems”, or “prefixItems” and “contains”"),
    "schema.unique_items_set": ("“uniqueItems” is only supported when the items come from a finite set of "
                                "values (“enum”, “const”, booleans or null)",
                                "give “items” an “enum” with the possible values, or remove “uniqueItems”"),
    "schema.unique_items_orders": ("“uniqueItems” over {0} values is not supported: {1} different orders of "
                                   "them would have to be written (the limit is {2})",
                                   "leave fewer values in the “enum” of “items”, or set a smaller “maxItems”"),
    "schema.unsupported": ("the JSON Schema keyword “{0}” is not supported",
                           "remove “{0}” from the schema, or express it without it (for example with anyOf "
                           "or enum)"),
    "schema.unsupported_value": ("the value “{1}” of “{0}” is not supported (supported: {2})",
                                 "use one of those values, or remove “{0}” from the schema"),
    "schema.format_regex": ("the format “regex” is not supported: valid regular expressions nest their groups "
                            "to any depth, which no finite automaton can check",
                            "remove “format”, or describe the texts with a “pattern”"),
    "schema.unsupported_format": ("the format {0} is not supported",
                                  "remove “format”, or use one of the formats that are supported"),
    "schema.enum_cycle": ("the values of “enum” cannot be checked: the sub-schemas beside it refer to each other "
                          "without end",
                          "remove the circular reference from the sub-schemas next to “enum”"),
    "schema.allof_too_large": ("“{0}” in both parts of an allOf gives too many combinations (more than 64)",
                               "reduce the alternatives, or take one of the two lists out of the allOf"),
    "schema.allof_conflict": ("“{0}” with two different values in an allOf is not supported",
                              "keep a single value of “{0}”"),
    "schema.pattern_flags": ("“pattern” uses inline flags such as “(?i)”, which are not supported",
                             "remove the flag and write out the variants, for example “[Aa]” instead of "
                             "“(?i)a”"),
    "schema.pattern_anchor": ("“pattern” has an anchor (“^”, “$”) or a “\\b” in the middle, which is not "
                              "supported",
                              "keep “^” only at the start and “$” only at the end, and remove “\\b”"),
    "schema.pattern_construct": ("“pattern” uses {0}: that construct is not supported",
                                 "rewrite the pattern without that construct"),
    "schema.multiple_of": ("“multipleOf” {0} needs an automaton of more than {1} states (it reached {2}), which "
                           "is not supported",
                           "use a “multipleOf” with fewer digits"),
    "schema.fractional_bounds": ("“minimum” and “maximum” with decimals between two consecutive integers "
                                 "({0} and {1}) are not supported",
                                 "widen the interval until it holds an integer, or remove one of the bounds"),
    "schema.format_with_length": ("“format” together with “minLength”, “maxLength” or “pattern” is not "
                                  "supported",
                                  "remove “format”, or the string's other conditions"),
    "schema.pattern_with_length": ("“pattern” together with “minLength” or “maxLength” is only supported for "
                                   "patterns like ^[a-z]{{m,n}}$",
                                   "put the length inside the pattern, with {{m,n}}, and remove “minLength” and "
                                   "“maxLength”"),
    "schema.max_contains": ("“maxContains” is not supported: it would need the items that do not satisfy "
                            "“contains”",
                            "remove “maxContains”"),
    "schema.contains_prefix": ("“contains” together with “prefixItems” is not supported",
                               "remove one of the two"),
    "schema.contains_counts": ("“contains” together with “maxItems”, or with a “minItems” above “minContains”, "
                               "is not supported",
                               "remove “maxItems”, or raise “minContains” to “minItems”"),
    "schema.bool_container": ("“{0}” over objects is not supported here: the objects it must leave out cannot "
                              "be written in positive form (an “enum” of objects, “patternProperties”, "
                              "“propertyNames”, or “additionalProperties” on an object that takes any key); an "
                              "object has many spellings (key order), so it is never subtracted as text",
                              "write the condition without excluding objects: for example, with “required” and "
                              "“properties”, or a different “const” in each alternative"),
    "schema.object_difference": ("“{0}” over objects is not supported here: written as the ways an object breaks "
                                 "it, it needs “{1}”, which is refused there",
                                 "simplify the part that “{0}” excludes"),
    "schema.min_properties_extra": ("“minProperties” is not supported when two or more keys outside “properties” "
                                    "are needed to reach it: a grammar cannot stop the same key from being "
                                    "written twice",
                                    "declare the keys you count in “properties”"),
    "schema.bool_recursive": ("“{0}” through a recursive “$ref” is not supported: only regular "
                              "(non-recursive) parts are combined by automata",
                              "remove the recursion from the part that “{0}” combines"),
    "schema.bool_states": ("“{0}” needs an automaton of more than {1} states (it reached {2}), which is not "
                           "supported",
                           "simplify the condition: shorter patterns or fewer repetitions"),
    "schema.intersection_states": ("“{0}” together with “{1}” needs an automaton of more than {2} states (it "
                                   "reached {3}), which is not supported",
                                   "lower “maxLength” or simplify the pattern"),
    "schema.ref_external": ("“$ref” to {0} is not supported: only pointers inside the same schema, such as "
                            "“#/$defs/name”, are",
                            "copy the definition into “$defs” and point to it"),
    "schema.ref_variants": ("“$ref” to {0} is met inside itself with {1} different sets of keywords beside it "
                            "(they change at each level of the recursion), which is not supported",
                            "remove the keywords next to the recursive $ref"),
    "schema.ref_recursion": ("recursion of “$ref” through allOf or through keywords beside it is not supported",
                             "leave the recursive $ref alone, without other keywords"),
    "schema.dependent_many": ("“dependentRequired” needs more than {0} combinations of present and absent "
                              "properties (each property that requires others on its own doubles them), "
                              "which is not supported",
                              "leave fewer independent dependencies (a chain, “a” requires “b” and “b” "
                              "requires “c”, costs little)"),
    "schema.pattern_property_escape": ("“{0}” with a Unicode property escape (\\p{{...}}) is not supported",
                                       "write the character class by hand, for example [A-Za-z]"),
    "schema.bad_pattern": ("{0} is not a valid regular expression: {1}",
                           "correct the regular expression inside the string"),
    "schema.bad_value": ("“{0}” must be {1}{2}",
                         "correct the value of “{0}”"),
    "schema.unknown_type": ("the type {0} does not exist in JSON Schema",
                            "use one of these: object, array, string, integer, number, boolean, null"),
    "schema.not_json": ("the schema is not valid JSON: {0}", "check quotes, commas and braces"),
    "schema.ref_cycle": ("no JSON value satisfies this schema: the “$ref” to “{0}” is a cycle without a base "
                         "case (each alternative asks for itself again, and no finite value ends it)",
                         "give it a way out: an alternative without $ref, or make the recursive property "
                         "optional"),
    "schema.ref_false": ("no JSON value satisfies this schema: the “$ref” to “{0}” leads to a schema that no "
                         "value satisfies",
                         "change the schema it points to (“false” admits no value) or make the property "
                         "that uses it optional"),
    "schema.unsatisfiable": ("no JSON value satisfies this schema",
                             "correct the conditions that contradict each other"),
    "schema.ref_unresolved": ("the “$ref” {0} leads nowhere in this schema",
                              "check the pointer: it has to name something that exists, such as "
                              "“#/$defs/name”"),
    "schema.not_a_schema": ("a schema must be an object or a boolean (true, false), not “{0}”",
                            "write an object {{...}}, true or false here"),
}

_FEATURE_FIX = "rewrite the expression without that construct ((...), (?:...), (?P<name>...) and (?#...) are supported)"
for _key, (_pattern, _es, _fix) in ES_CATALOG.items():
    if _key.startswith("regex.group_feature."):
        _name, _, _code = _pattern.replace("\\", "").rpartition(" ")  # "lookahead (?=...)"
        CATALOG[_key] = (f"inline flags “{_code}” are not supported" if _name == "inline flags" else
                         f"the {_name} “{_code}” is not supported", _FEATURE_FIX)

_VALUE_PHRASES = {  # keywords.VALUE_RULES's phrases where the masker's words need a reader's
    "a list of property names (draft 3's boolean required is not supported: list the name in the "
    "parent object's required)": "a list of property names (draft 3's \"required\": true is not supported: put "
                                 "the name in the outer object's “required”)",
}
_SRE_OPS = {"ASSERT": "a lookaround “(?=...)” or “(?<=...)”",
            "ASSERT_NOT": "a negative lookaround “(?!...)” or “(?<!...)”",
            "GROUPREF": "a backreference “\\1”", "GROUPREF_IGNORE": "a backreference",
            "GROUPREF_EXISTS": "a conditional group “(?(1)...)”", "ATOMIC_GROUP": "an atomic group “(?>...)”",
            "POSSESSIVE_REPEAT": "a possessive quantifier", "CATEGORY_LINEBREAK": "a class of line breaks"}


def _as_json(shown: str) -> str:
    """A value as the masker quotes it (Python's repr) written as in the schema's JSON, in “”."""
    if len(shown) >= 2 and shown[0] == shown[-1] and shown[0] in "'\"":
        return f"“\"{shown[1:-1]}\"”"
    return "“" + re.sub(r"\b(True|False|None)\b", lambda m: {"True": "true", "False": "false",
                                                            "None": "null"}[m[1]], shown) + "”"


def _en_shown(text: str) -> str:
    """A number as the masker printed it (Python's repr) written by :func:`en_number`."""
    try:
        return en_number(float(text) if any(c in text for c in ".eEn") else int(text))
    except ValueError:
        return text


def re_message(text: str) -> str:
    """Python ``re``'s message without its position (the caret shows the place)."""
    return re.sub(r" at position \d+( \(line \d+, column \d+\))?$", "", text)


def _quoted(q: str) -> str:
    return "“" + q[1:-1] + "”" if q[1:-1] else "nothing"


GROUPS = {
    "schema.bad_pattern": {0: lambda k: "the value of “pattern”" if k == "pattern" else
                           "the key of “patternProperties”", 1: re_message},
    "schema.bad_value": {1: lambda p: _VALUE_PHRASES.get(p, p),
                         2: lambda found: f", and it is {_as_json(found[len(', found '):])}" if found else ""},
    "schema.fractional_bounds": {0: _en_shown, 1: _en_shown},
    "schema.bool_states": {1: lambda n: en_int(int(n)), 2: lambda n: en_int(int(n))},
    "schema.unique_items_orders": {1: lambda n: en_int(int(n)), 2: lambda n: en_int(int(n))},
    "schema.dependent_many": {0: lambda n: en_int(int(n))},
    "schema.multiple_of": {0: _en_shown, 1: lambda n: en_int(int(n)), 2: lambda n: en_int(int(n))},
    "schema.intersection_states": {1: lambda k: k.replace(", ", "”, “"), 2: lambda n: en_int(int(n)),
                                   3: lambda n: en_int(int(n))},
    "gbnf.repeat_too_large": {0: lambda n: en_int(int(n))},
    "limit.choice_states": {0: lambda n: en_int(int(n))},
    "limit.earley_items": {0: lambda n: en_int(int(n))},
    "schema.pattern_construct": {0: lambda op: _SRE_OPS.get(op, f"the construct {op}")},
    "syntax.matches_nothing": {0: lambda w: f"the {w}"},
    "limit.nesting": {0: lambda w: f"the {w}"},
    "schema.not_json": {0: lambda m: re.sub(r": line \d+ column \d+ \(char \d+\)$", "", m)},
    "syntax.bad_hex_escape": {2: lambda d: "“" + d[1:-1] + "”" if d[1:-1] else "none"},
}
for _key in ("regex.unknown_name", "gbnf.expected_name", "gbnf.expected_define", "gbnf.defined_twice",
             "gbnf.unexpected_char", "gbnf.undefined_rule", "gbnf.recursive_no_dfa", "schema.unsupported_format",
             "schema.pattern_properties_required", "schema.pattern_properties_listed", "schema.ref_external",
             "schema.ref_variants", "schema.ref_unresolved", "schema.unknown_type"):
    GROUPS.setdefault(_key, {})[0] = _quoted

HEADINGS = {"gbnf.never_finishes": "impossible grammar", "syntax.matches_nothing": "impossible constraint",
            "gbnf.undefined_rule": "error in the grammar", "gbnf.defined_twice": "error in the grammar",
            "gbnf.no_root": "error in the grammar", "gbnf.recursive_no_dfa": "not supported",
            "schema.unsatisfiable": "impossible schema", "schema.ref_cycle": "impossible schema",
            "schema.ref_false": "impossible schema",
            "choice.empty": "error"}
KIND_WORDS = {"syntax error": "syntax error", "unsupported feature": "error", "invalid schema": "invalid schema",
              "limit": "too large"}
DETAIL = "the constraint compiler's own words"


def translate(reason: str) -> tuple[str, str, str] | None:
    """(kind, English message, English fix) for a reason the catalog knows, else None: the
    Spanish catalog's patterns, the English templates."""
    for kind, (pattern, _es, _fix) in ES_CATALOG.items():
        match = re.fullmatch(pattern, reason, re.DOTALL)
        if match:
            put = GROUPS.get(kind, {})
            groups = tuple(put[i](g) if i in put else ("" if g is None else g)
                           for i, g in enumerate(match.groups()))
            message, fix = CATALOG[kind]
            return kind, message.format(*groups), fix.format(*groups)
    return None


def unknown(reason: str, keyword: str | None = None) -> tuple[str, str, str]:
    """(kind "masker.other", English message, "") for a reason the catalog does not know."""
    what = (f"the keyword “{keyword}” cannot be used this way" if keyword
            else "the constraint compiler does not accept this constraint")
    return "masker.other", f"{what} ({DETAIL}: {reason})", ""
