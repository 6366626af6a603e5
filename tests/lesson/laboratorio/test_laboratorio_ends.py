"""The «Laboratorio»'s count of the texts of G against the texts a branch can end on (the model
has no end-of-text token), and the words of its panels, in both languages."""

from __future__ import annotations

import math
import re

import pytest

from lesson.i18n import get_language, set_language
from lesson.laboratorio.exact import exact_for, grammar_texts
from lesson.laboratorio.lab import Lab, preset_titles
from lesson.laboratorio.lab_views import kept_text, ordinal, texts_words
from masker import compile_choice, compile_regex

OPTIONS = ["sí", "sí, señora", "no"]


@pytest.fixture
def english():
    saved = get_language()
    set_language("en")
    yield
    set_language(saved)


def exact_line(lab) -> str:
    html = lab.view()
    m = re.search(r'data-testid="lab-exact"[^>]*>(.*?)</p>', html, re.S)
    return re.sub(r"<[^>]+>", "", m.group(1))


def test_grammar_texts_counts_every_accepted_prefix(tok):
    assert grammar_texts(compile_choice(OPTIONS), tok.vocab) == 3
    assert grammar_texts(compile_choice(["aprobado", "rechazado"]), tok.vocab) == 2
    assert grammar_texts(compile_regex("a+"), tok.vocab) == math.inf
    assert grammar_texts(compile_regex("[0-9]{5}"), tok.vocab, most=100) is None


@pytest.mark.parametrize("stop", [False, True])
def test_a_prefix_option_is_one_text_no_branch_can_end_on_in_one_of_the_end_rules(model, tok, english, stop):
    """«sí» is a prefix of «sí, señora»: without the stop box no branch ends on «sí»; with it, none
    reaches «sí, señora». The line says G has 3 texts and how many can end a branch (computed)."""
    lab = Lab(model, tok, kind="choice", constraint="\n".join(OPTIONS), prompt="¿Vendrá usted? ",
              stop_at_accept=stop)
    lab.generate()
    exact = exact_for(lab)
    ends = {row.text.decode() for row in exact.enumeration.rows}
    assert exact.texts == 3
    assert ends == ({"sí", "no"} if stop else {"sí, señora", "no"})
    assert "G has 3 texts; 2 of them can end a branch with these settings" in exact_line(lab)


def test_the_line_keeps_its_short_form_when_every_text_can_end(model, tok, english):
    lab = Lab(model, tok, kind="choice", constraint="aprobado\nrechazado", prompt="Quedó ")
    lab.generate()
    assert "G has 2 texts (" in exact_line(lab)


def test_texts_words(english):
    assert texts_words(3, 3) == "3 texts"
    assert texts_words(math.inf, 1) == "infinitely many texts; 1 of them can end a branch with these settings"
    set_language("es")
    assert texts_words(3, 2) == "3 textos, de los que 2 pueden terminar una rama con estos ajustes"


def test_kept_mass_is_written_as_each_position_writes_it(english):
    assert kept_text(math.log(0.013)) == "0.013"
    assert kept_text(math.log(7.86e-3)) == "7.86×10⁻³"
    assert "10" in kept_text(-2000.0)


def test_ordinals(english):
    assert [ordinal(i) for i in (1, 2, 3, 4, 11, 12, 13, 21, 22)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd"]
    set_language("es")
    assert ordinal(2) == "2.º"


def test_the_parentheses_preset_names_what_cannot_express_it(english):
    assert preset_titles()["parentesis"] == "Balanced parentheses (no regular expression, so no “pattern”, can express it)"


def test_step_on_a_finished_branch_says_so_on_its_own_line(model, tok, english):
    lab = Lab(model, tok, kind="choice", constraint="aprobado\nrechazado", prompt="Quedó ").generate()
    html = lab.step().view()
    notice = re.search(r'<p class="kernel-notice lab-notice" data-testid="lab-notice">(.*?)</p>', html).group(1)
    summary = re.search(r'<p class="lab-summary">(.*?)</p>', html, re.S).group(1)
    assert notice.startswith("this branch has finished"), notice
    assert notice not in summary


def test_a_required_property_additional_properties_shuts_out_is_named_in_both_languages():
    from lesson.i18n import each_language
    from lesson.laboratorio.unsatisfiable import why_unsatisfiable
    schema = {"type": "object", "required": ["b"], "additionalProperties": False}
    both = each_language(why_unsatisfiable, schema)
    assert both["es"] == ("#/required", "la propiedad «b» es obligatoria, pero \"additionalProperties\": "
                                        "false no deja ninguna propiedad que no esté en «properties»")
    assert both["en"][0] == "#/required" and both["en"][1].startswith("the property “b” is required")
    assert why_unsatisfiable({**schema, "properties": {"b": {}}}) is None
