"""The «Laboratorio» in Chromium: every preset and constraints typed in by the test give texts
that CPython accepts again (re.fullmatch, jsonschema, the masker's own accepts); picking an
allowed token continues from it; a bad regex shows its error in place; a URL fragment restores
the experiment; axe finds no serious violation."""
from __future__ import annotations

import json
import re
from urllib.parse import quote

import jsonschema
import pytest

from lesson.laboratorio.lab import PRESETS, compile_constraint
from tests.e2e.helpers import open_lesson
from tests.e2e.lab_page import PAGE, TIMEOUT_MS, type_constraint, lab  # noqa: F401 (lab: a fixture)
from tests.e2e.test_offline import describe, run_axe

pytestmark = pytest.mark.e2e


def generate(page) -> dict:
    run(page, "lab-generate")
    output = page.locator("[data-testid=lab-output]")
    assert page.locator("[data-testid=lab-error]").count() == 0, page.locator("[data-testid=lab-error]").inner_text()
    return {"text": output.get_attribute("data-text"), "accepted": output.get_attribute("data-accepted"),
            "positions": page.locator("[data-testid=lab-position]").count()}


def run(page, button: str) -> None:
    """Click a form button and wait until the view holds that action's output."""
    view = page.locator("[data-testid=lab-view]")
    view.evaluate("v => { v.dataset.state = 'clicked'; }")
    page.locator(f"[data-testid={button}]").click()
    page.locator('[data-testid=lab-view][data-state=done]').wait_for(timeout=TIMEOUT_MS)


def check_in_cpython(kind: str, constraint: str, text: str) -> None:
    assert compile_constraint(kind, constraint).accepts(text)
    if kind == "regex":
        assert re.fullmatch(constraint, text)
    if kind == "json_schema":
        jsonschema.validate(json.loads(text), json.loads(constraint))
    if kind == "choice":
        assert text in constraint.split("\n")


@pytest.mark.parametrize("name", list(PRESETS))
def test_every_preset_gives_an_accepted_text(lab, name):
    lab.locator("[data-testid=lab-preset]").select_option(name)
    settings = PRESETS[name].get("settings", {})
    assert lab.locator("[data-testid=lab-seed]").input_value() == str(settings.get("seed", 0))
    result = generate(lab)
    assert result["accepted"] == "true" and result["positions"] >= 1
    check_in_cpython(PRESETS[name]["kind"], PRESETS[name]["constraint"], result["text"])


@pytest.mark.parametrize("kind, constraint", [
    ("regex", r"(Benina|Obdulia) vive en [A-Z][a-z]{2,8}\."),
    ("json_schema", json.dumps({"type": "object", "properties": {"edad": {"type": "integer", "minimum": 1,
                                                                         "maximum": 99}},
                                "required": ["edad"], "additionalProperties": False})),
    ("gbnf", 'root ::= "sí" | "no" | "quizá " [a-z]{2,5}'),
])
def test_typed_constraints_give_texts_cpython_accepts(lab, kind, constraint):
    type_constraint(lab, kind, constraint)
    result = generate(lab)
    assert result["accepted"] == "true"
    check_in_cpython(kind, constraint, result["text"])


def test_choosing_an_allowed_token_continues_from_it(lab):
    lab.locator("[data-testid=lab-preset]").select_option("etiquetas")
    run(lab, "lab-step")
    buttons = lab.locator("[data-testid=lab-allowed-token]")
    assert buttons.count() >= 1
    before = lab.locator("[data-testid=lab-output]").get_attribute("data-text")
    token = buttons.last.get_attribute("data-token-id")
    buttons.last.click()
    lab.wait_for_function("() => document.querySelectorAll('[data-testid=lab-position]').length === 2",
                          timeout=TIMEOUT_MS)
    after = lab.locator("[data-testid=lab-output]").get_attribute("data-text")
    assert after.startswith(before) and len(after) > len(before)
    chosen = lab.locator('[data-testid=lab-position][data-position="2"] .tok').get_attribute("title")
    assert chosen == f"token {token}"


def test_a_bad_regex_shows_its_error_and_the_page_goes_on(lab):
    type_constraint(lab, "regex", "(Benina")
    run(lab, "lab-generate")
    error = lab.locator("[data-testid=lab-error]")
    assert "en el carácter 1:" in error.inner_text() and "^" in error.inner_text()  # counted from 1
    assert "Traceback" not in error.inner_text()
    type_constraint(lab, "regex", "Benina")
    assert generate(lab)["text"] == "Benina"


def test_a_url_fragment_restores_the_experiment(browser, servers):
    state = {"kind": "regex", "constraint": "[0-9]{3}", "prompt": "El número ", "seed": "7",
             "temperature": "0.5", "max_tokens": "10", "top_k": "", "top_p": "", "stop_at_accept": "0",
             "compare": "1"}
    fragment = "&".join(f"{k}={quote(v)}" for k, v in state.items())
    context = browser.new_context(service_workers="block")
    try:
        page = open_lesson(context, servers["plain"], f"{PAGE}#{fragment}")
        assert page.locator("[data-testid=lab-kind]").input_value() == "regex"
        assert page.locator("[data-testid=lab-constraint] .cm-content").inner_text() == "[0-9]{3}"
        assert page.locator("[data-testid=lab-prompt]").input_value() == "El número "
        assert page.locator("[data-testid=lab-seed]").input_value() == "7"
        assert page.locator("[data-testid=lab-compare]").is_checked()
        # a shared link generates by itself once Python is up
        page.locator("[data-testid=lab-output][data-state=done]").wait_for(timeout=TIMEOUT_MS)
        assert re.fullmatch("[0-9]{3}", page.locator("[data-testid=lab-output]").get_attribute("data-text"))
        result = generate(page)
        assert re.fullmatch("[0-9]{3}", result["text"])
        assert page.locator("[data-testid=lab-unconstrained]").count() == 1
        assert "compile_regex(\"[0-9]{3}\")" in page.locator("[data-testid=lab-python]").text_content()
    finally:
        context.close()


def test_the_lab_has_no_serious_accessibility_violations(lab):
    lab.locator("[data-testid=lab-preset]").select_option("nombres")
    generate(lab)
    violations = run_axe(lab)
    assert not violations, describe(violations)


def test_stop_interrupts_a_long_generation_and_the_lab_goes_on(lab):
    type_constraint(lab, "regex", "[a-zñ ]{1,400}")
    lab.locator("[data-testid=lab-max-tokens]").fill("200")
    lab.locator("[data-testid=lab-view]").evaluate("v => { v.dataset.state = 'clicked'; }")
    lab.locator("[data-testid=lab-generate]").click()
    lab.locator("[data-testid=lab-view][data-state=running]").wait_for(timeout=TIMEOUT_MS)
    lab.locator("[data-testid=stop]").click()
    lab.locator("[data-testid=lab-view][data-state=done]").wait_for(timeout=TIMEOUT_MS)
    # a long run stops after its piece, as with the lab's own «Detener»: the text stays
    assert "detenida" in lab.locator("[data-testid=lab-branch]").inner_text()
    assert "celda" not in lab.locator("[data-testid=lab-view]").inner_text()  # this page has no cells
    assert lab.locator("#kernel-notice").is_hidden()
    assert lab.evaluate("() => document.documentElement.scrollWidth") <= 1100
    lab.locator("[data-testid=kernel-status][data-state=ready]").wait_for(timeout=TIMEOUT_MS)
    lab.locator("[data-testid=lab-max-tokens]").fill("5")
    assert len(generate(lab)["text"]) >= 1


def test_stepping_keeps_the_focus_on_the_choices_and_compare_works_step_by_step(lab):
    lab.locator("[data-testid=lab-preset]").select_option("etiquetas")
    lab.locator("[data-testid=lab-compare]").check()
    run(lab, "lab-step")
    assert lab.evaluate("() => document.activeElement.dataset.testid") == "lab-allowed-token"
    for _ in range(20):
        if lab.locator("[data-testid=lab-output]").get_attribute("data-state") == "done":
            break
        lab.locator("[data-testid=lab-view]").evaluate("v => { v.dataset.state = 'clicked'; }")
        lab.keyboard.press("Enter")  # the focused choice: the keyboard alone goes on
        lab.locator("[data-testid=lab-view][data-state=done]").wait_for(timeout=TIMEOUT_MS)
    assert lab.locator("[data-testid=lab-output]").get_attribute("data-state") == "done"
    assert lab.locator("[data-testid=lab-unconstrained]").count() == 1
    status = lab.locator("[data-testid=lab-status]")
    assert status.text_content()  # read out after each action...
    assert status.evaluate("e => e.getBoundingClientRect().width") <= 1  # ...but not shown twice
    lab.locator("[data-testid=lab-compare]").uncheck()
