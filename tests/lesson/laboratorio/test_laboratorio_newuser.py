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
