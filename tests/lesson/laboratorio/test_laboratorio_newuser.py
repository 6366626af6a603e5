"""What the new user of ../shared/reviews/2026-12/laboratorio.md asked of the «Laboratorio», in
CPython: a misspelt JSON Schema keyword is said beside the result (with the keyword meant), any
two branches can be compared (their rows from the first position where their tokens differ,
checked against the tokens themselves), and a constraint that fails to compile leaves the
session's tree as it was."""
from __future__ import annotations

import html
import json
import re

import pytest
from hypothesis import given, settings, strategies as st

from lesson.laboratorio import protocol as lab_module
from lesson.laboratorio.lab import PRESETS, Lab
from lesson.laboratorio.protocol import act
from lesson.laboratorio.lab_views import compared_branch, ignored_keywords
from masker import compile_json_schema
from tests.lesson.laboratorio.test_laboratorio_tree import hooks, preset_lab

MISSPELT = {"type": "object", "properties": {"nombre": {"type": "string", "maxLenght": 6}},
            "required": ["nombre"], "additionalProperties": False}


def test_a_misspelt_keyword_is_said_with_the_keyword_meant(model, tok):
    grammar = compile_json_schema(MISSPELT)
    assert ignored_keywords(grammar) == [("maxLenght", "#/properties/nombre/maxLenght", "maxLength")]
    lab = Lab(model, tok, kind="json_schema", constraint=json.dumps(MISSPELT), prompt="Su nombre: ",
              max_tokens=8).generate()
    (warning,) = hooks(lab.view(), "lab-warning")
    assert "maxLenght" in lab.view() and "¿querías escribir «maxLength»?" in lab.view()
    # a keyword with no near twin is said without a guess; a schema without one says nothing
    odd = {"type": "string", "zzz/~": 1}
    assert ignored_keywords(compile_json_schema(odd)) == [("zzz/~", "#/zzz~1~0", None)]
    clean = Lab(model, tok, kind="json_schema", constraint=json.dumps({"enum": ["sí", "no"]}), prompt="¿Sí? ")
    assert hooks(clean.generate().view(), "lab-warning") == []


def tokens_differ_from(a: list[int], b: list[int]) -> int:
    for j, (x, y) in enumerate(zip(a, b), start=1):
        if x != y:
            return j
    return min(len(a), len(b)) + 1


def test_any_two_branches_compare_from_where_their_tokens_differ(model, tok):
    lab = preset_lab(model, tok, "etiquetas").generate()
    first = lab.decoder.generation
    # two children of branch 1, at its first two positions with a real choice
    for position in (1, 2):
        pos = first.positions[position - 1]
        other = next(t for t, _, q in pos.allowed if q > 0 and t != pos.chosen)
        lab.select(0)
        lab.choose(position, other)
        lab.generate()
    assert len(lab.branches) == 3
    lab.select(2)
    assert compared_branch(lab) == 0  # by default, its parent
    lab.compare_to(1)  # now its sibling
    assert compared_branch(lab) == 1
    view = lab.view()
    (table,) = hooks(view, "lab-branch-compare")
    assert table["data-with"] == "1" and "open" in table
    rows = [int(j) for j in re.findall(r'<tr data-position="(\d+)">', view)]
    a, b = lab.branches[2].decoder.generation, lab.branches[1].decoder.generation
    assert rows[0] == tokens_differ_from(a.token_ids, b.token_ids)
    assert rows[-1] == max(len(a.positions), len(b.positions))
    options = re.findall(r'<option value="(\d+)"( selected)?>', view)
    assert [int(v) for v, _ in options] == [0, 1] and options[1][1]
    # the first branch compares with the second by default; a branch that does not exist is refused
    lab.select(0)
    assert compared_branch(lab) == 1
    with pytest.raises(ValueError):
        lab.compare_to(7)


def test_a_constraint_that_fails_to_compile_keeps_the_sessions_tree(model, tok):
    lab_module._SESSION.update(lab=None, key=None, model=model, tok=tok)
    preset = PRESETS["etiquetas"]
    state = {"kind": preset["kind"], "constraint": preset["constraint"], "prompt": preset["prompt"],
             "seed": 0, "max_tokens": 120}
    kept = act("generate", state)
    assert isinstance(kept, Lab) and lab_module._SESSION["lab"] is kept
    broken = act("generate", {**state, "kind": "regex", "constraint": "(roto"})
    assert 'data-testid="lab-error"' in broken._repr_html_()
    assert lab_module._SESSION["lab"] is kept  # the tree on the page goes on with its own settings
    assert act("branch", {**state, "tree": kept.tree()}, branch=0) is kept


def test_every_text_of_g_is_listed_with_its_two_probabilities(model, tok):
    lab = preset_lab(model, tok, "nombres").generate()
    view = lab.view()
    (table,) = hooks(view, "lab-exact-table")
    rows = re.findall(r'<tr data-text="([^"]*)" data-exact="([^"]+)" data-masked="([^"]+)">', view)
    exact = [float(p) for _, p, _ in rows]
    masked = [float(q) for _, _, q in rows]
    assert len(rows) == 5 and exact == sorted(exact, reverse=True)  # «Los nombres»: 5 texts
    assert abs(sum(exact) - 1) < 1e-9 and abs(sum(masked) - 1) < 1e-6
    # the branch on show is one of them, with the same two values its own line gives
    (branch,) = [b for b in hooks(view, "lab-branch") if b.get("data-exact")]
    (mine,) = [r for r in rows if html.unescape(r[0]) == branch["data-text"]]
    assert float(mine[1]) == float(branch["data-exact"]) and float(mine[2]) == float(branch["data-masked"])


def test_an_ambiguous_grammars_earley_items_grow_with_the_text(model, tok):
    """What the progress line of a long run quotes for «why is it slow»: the items of the branch's
    Earley set, which an ambiguous grammar (s ::= s s) grows with the text, and a DFA has none."""
    from lesson.laboratorio.lab_views import earley_items
    ambiguous = Lab(model, tok, kind="gbnf", constraint='root ::= s\ns ::= s s | [a-z ]', prompt="Benina ",
                    max_tokens=40)
    counts = []
    for _ in range(3):
        ambiguous.generate(10)
        counts.append(earley_items(ambiguous.decoder))
    assert counts == sorted(counts) and counts[-1] > counts[0]
    regular = Lab(model, tok, kind="regex", constraint="[a-z]{3}", prompt="Benina ").generate()
    assert earley_items(regular.decoder) is None


def test_the_strip_is_underlined_by_each_positions_kept_mass(model, tok):
    """The new user's other wish: the Lab's position strip shaded by the kept mass p(A_j), in the
    bands of ``KEPT_BANDS``, with its key; the lessons' views are not shaded."""
    from lesson.views import KEPT_BANDS, PositionsView, kept_band
    lab = preset_lab(model, tok, "fecha").generate()
    view = lab.view()
    bands = [int(b) for b in re.findall(r'data-testid="lab-position" data-position="\d+" data-forced="[^"]*" '
                                        r'data-kept-band="(\d)"', view)]
    positions = lab.decoder.generation.positions
    assert len(bands) == len(positions)
    for band, pos in zip(bands, positions):
        low = KEPT_BANDS[band] if band < len(KEPT_BANDS) else 0.0
        high = KEPT_BANDS[band - 1] if band > 0 else 1.0 + 1e-12
        assert low <= pos.kept_mass < high or (band == 0 and pos.kept_mass >= KEPT_BANDS[0])
    assert len(set(bands)) > 1  # the date's free digits keep less of the model's mass than its fixed words
    assert hooks(view, "kept-key") and kept_band(1.0) == 0 and kept_band(1e-9) == len(KEPT_BANDS)
    assert not re.search(r"<label[^>]*data-kept-band=", PositionsView(lab.decoder.generation)._repr_html_())


# POLISH 7: an unclosed «{n» in a regular expression is read as text, as Python's re reads it; the
# Lab says so, since other engines refuse the pattern

@pytest.mark.parametrize("pattern, shown", [("[0-9]{3", "{3"), ("a{3,1x}b", "{3,1x}"), ("x{", "{")])
def test_a_brace_read_as_text_is_said_in_both_editions(pattern, shown):
    from lesson.i18n import each_language
    from lesson.laboratorio.lab_views import warnings_html
    from masker import compile_regex
    both = each_language(warnings_html, compile_regex(pattern))
    at = pattern.index("{")
    assert f'data-brace="{at}"' in both["es"] and f"«{html.escape(shown)}» (en el carácter {at + 1}) se lee como texto" \
        in both["es"], both["es"]
    assert f"“{html.escape(shown)}” (at character {at + 1}) is read as text" in both["en"], both["en"]


@pytest.mark.parametrize("pattern", ["a{3}", "a{,2}", "a{2,}", "\\{3", "[{]3", "ab"])
def test_no_brace_warning_where_every_brace_is_a_repetition_or_escaped(pattern):
    from lesson.laboratorio.lab_views import warnings_html
    from masker import compile_regex
    assert warnings_html(compile_regex(pattern)) == ""


def _sre_literal_braces(pattern: str) -> int:
    """The «{» characters Python's own parser reads as literals outside classes (an independent
    reference): LITERAL 123 items, at any depth of groups and repeats (no alternations: Python
    folds «a|{» into a class, like «[a{]»)."""
    import re._parser as sre_parse
    from re._constants import BRANCH, LITERAL, MAX_REPEAT, MIN_REPEAT, SUBPATTERN

    def count(items) -> int:
        total = 0
        for op, av in items:
            if op is LITERAL and av == ord("{"):
                total += 1
            elif op is SUBPATTERN:
                total += count(av[3])
            elif op is BRANCH:
                total += sum(count(b) for b in av[1])
            elif op in (MAX_REPEAT, MIN_REPEAT):
                total += count(av[2])
        return total
    return count(sre_parse.parse(pattern))



@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["a", "{", "}", "3", ",", "\\{", "(", ")", "[{a]"]), max_size=10).map("".join))
def test_literal_braces_agree_with_pythons_parser(pattern):
    import re
    from masker import MaskerError
    from masker.regex_parse import literal_braces
    try:
        re.compile(pattern)
        found = literal_braces(pattern)
    except (re.error, MaskerError):
        return
    assert all(pattern[i] == "{" and (i == 0 or pattern[i - 1] != "\\") for i in found)
    assert len(found) + pattern.count("\\{") == _sre_literal_braces(pattern), (pattern, found)
