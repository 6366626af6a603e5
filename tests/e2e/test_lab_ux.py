"""The «Laboratorio»'s form in Chromium, as a newcomer uses it: an edit marks the result on show as
the previous experiment's (its tree leaves the address, a button or undoing the edit by hand puts
both back, and its tokens run nothing meanwhile); «Generar» and «Paso» give the same Spanish
message for an invalid field; the «Detener» button stops a long run and the branch stays,
«detenida»; Home and End in the strip; passing over presets keeps the reader's edits for
«Deshacer»; the search counts agree in number."""
from __future__ import annotations

import re

import pytest

from tests.e2e.helpers import open_lesson
from tests.e2e.lab_page import PAGE, TIMEOUT_MS, act, type_constraint, lab  # noqa: F401 (lab: a fixture)

pytestmark = pytest.mark.e2e


def fragment(page) -> str:
    return page.url.split("#", 1)[1]


def branches(page) -> int:
    return page.locator("[data-testid=lab-branch]").count()


def test_an_edit_marks_the_result_as_the_previous_experiments_and_it_comes_back(lab):
    lab.locator("[data-testid=lab-preset]").select_option("etiquetas")
    act(lab, lambda: lab.locator("[data-testid=lab-generate]").click())
    # another token at the open position (the first real choice): a second branch
    act(lab, lambda: lab.locator("[data-testid=lab-allowed-token]:not([aria-current])").first.click())
    assert branches(lab) == 2
    before, summary = fragment(lab), lab.locator(".lab-summary").text_content()
    assert "tree=" in before and "rama 2 de 2" in summary
    prompt = lab.locator("[data-testid=lab-prompt]").input_value()
    stale = lab.locator("[data-testid=lab-stale]")
    assert stale.count() == 0

    lab.locator("[data-testid=lab-prompt]").fill(prompt + "x")
    assert "Cambiaste los ajustes: este árbol es del experimento anterior y el enlace ya no lo guarda" in stale.inner_text()
    assert "tree=" not in fragment(lab) and "branch=" not in fragment(lab)
    assert lab.locator("[data-testid=lab-view]").get_attribute("data-stale") == "true"
    # the mark sits above the result, which is still all there
    assert lab.evaluate("() => document.querySelector('[data-testid=lab-view]').firstElementChild.dataset.testid") == "lab-stale"
    assert branches(lab) == 2 and lab.locator(".lab-summary").text_content() == summary

    # its tokens and branches run nothing with settings that are not its own, and say why
    lab.locator("[data-testid=lab-view]").evaluate("v => { v.dataset.state = 'untouched'; }")
    token = lab.locator("[data-testid=lab-allowed-token]").first
    assert token.get_attribute("aria-disabled") == "true"
    token.click(force=True)  # aria-disabled: Playwright would wait for it to be enabled
    lab.locator(".lab-branch-open").first.click(force=True)
    lab.locator("[data-testid=lab-continue]").click()
    assert lab.locator("[data-testid=lab-view]").get_attribute("data-state") == "untouched"  # nothing ran
    assert "Volver a los ajustes de este árbol" in lab.locator("[data-testid=lab-stale-why]").inner_text()
    assert lab.locator("[data-testid=lab-error]").count() == 0 and branches(lab) == 2
    lab.locator("[data-testid=lab-view]").evaluate("v => { v.dataset.state = 'done'; }")

    # the button puts the settings back, and the tree in the address
    lab.locator("[data-testid=lab-stale-restore]").click()
    assert lab.locator("[data-testid=lab-prompt]").input_value() == prompt
    assert stale.count() == 0 and fragment(lab) == before
    assert lab.locator("[data-testid=lab-allowed-token]").first.get_attribute("aria-disabled") is None
    assert lab.locator("[data-testid=lab-preset]").input_value() == "etiquetas"

    # undoing an edit by hand does the same
    seed = lab.locator("[data-testid=lab-seed]")
    seed.fill("5")
    assert stale.count() == 1 and "tree=" not in fragment(lab)
    seed.fill("0")
    assert stale.count() == 0 and fragment(lab) == before

    # and the tree still works: a choice on it runs with its own settings
    act(lab, lambda: lab.locator(".lab-branch-open").first.click())
    assert "rama 1 de 2" in lab.locator(".lab-summary").text_content()

    # «Generar» after an edit is the new experiment
    lab.locator("[data-testid=lab-prompt]").fill(prompt + "x")
    act(lab, lambda: lab.locator("[data-testid=lab-generate]").click())
    assert stale.count() == 0 and branches(lab) == 1 and "tree=" in fragment(lab)
    assert lab.locator("[data-testid=lab-prompt]").input_value() == prompt + "x"


def test_an_edit_while_a_run_goes_on_marks_its_result_when_it_comes(lab):
    lab.locator("[data-testid=lab-preset]").select_option("fecha")
    lab.locator("[data-testid=lab-view]").evaluate("v => { v.dataset.state = 'clicked'; }")
    lab.locator("[data-testid=lab-generate]").click()
    lab.locator("[data-testid=lab-seed]").fill("3")  # while it runs, or just after: either way
    lab.locator("[data-testid=lab-view][data-state=done]").wait_for(timeout=TIMEOUT_MS)
    assert lab.locator("[data-testid=lab-stale]").count() == 1  # the result is the seed-0 one
    lab.locator("[data-testid=lab-seed]").fill("0")
    assert lab.locator("[data-testid=lab-stale]").count() == 0 and "tree=" in fragment(lab)


@pytest.mark.parametrize("field, value, message", [
    # the words of Python's check_settings (a link's message), numbers the Spanish way
    ("lab-top-k", "0", "top-k tiene que ser un entero de 1 o más (o vacío); ahora vale 0"),
    ("lab-top-p", "1.5", "top-p tiene que ser un número mayor que 0 y de 1 como mucho (o vacío); ahora vale 1,5"),
    ("lab-max-tokens", "2000", "«tokens como máximo» tiene que ser un entero de 1 a 200 (o vacío); ahora vale 2000"),
    ("lab-seed", "-1", "la semilla tiene que ser un entero de 0 a 4\u202f294\u202f967\u202f295; ahora vale \u22121"),
])
def test_generar_and_paso_give_the_same_spanish_message(lab, field, value, message):
    assert lab.locator("[data-testid=lab-form]").evaluate("f => f.noValidate")  # no browser bubble
    had_result = lab.locator("[data-testid=lab-output]").count() == 1
    box = lab.locator("[data-testid=lab-form]").locator(f"[data-testid={field}]")
    old = box.input_value()
    box.fill(value)
    said = []
    for button in ("lab-generate", "lab-step"):
        lab.locator(f"[data-testid={button}]").click()
        error = lab.locator("[data-testid=lab-error]")
        error.wait_for()
        said.append(error.inner_text())
        assert box.get_attribute("aria-invalid") == "true"
        box.fill(value + "0")  # an edit clears the message...
        assert lab.locator("[data-testid=lab-error]").count() == 0
        box.fill(value)  # ...and the same value again
    assert said == [message, message]
    # a link with the same value gets the same words from Python
    from lesson.laboratorio.lab import MAX_TOKENS, ConstraintError, check_settings
    name = {"lab-top-k": "top_k", "lab-top-p": "top_p", "lab-max-tokens": "max_tokens", "lab-seed": "seed"}[field]
    with pytest.raises(ConstraintError) as python:
        check_settings(**{name: float(value) if "." in value else int(value)}, max_tokens_limit=MAX_TOKENS)
    assert python.value.message == message
    assert "entre 1 o más" not in said[0]
    if had_result:  # the result on show stays under the message
        assert lab.locator("[data-testid=lab-output]").count() == 1
    box.fill(old)
    assert box.get_attribute("aria-invalid") is None


def test_the_detener_button_stops_a_long_run_and_keeps_the_branch(lab):
    type_constraint(lab, "none", "")
    lab.locator("[data-testid=lab-max-tokens]").fill("200")
    halt = lab.locator("[data-testid=lab-halt]")
    assert halt.is_hidden()
    lab.locator("[data-testid=lab-generate]").focus()
    lab.locator("[data-testid=lab-view]").evaluate("v => { v.dataset.state = 'clicked'; }")
    lab.keyboard.press("Enter")
    lab.locator("[data-testid=lab-view][data-state=running]").wait_for(timeout=TIMEOUT_MS)
    progress = lab.locator("[data-testid=lab-progress]")
    progress.filter(has_text="hasta ahora").wait_for(timeout=TIMEOUT_MS)
    assert re.search(r"\d+ tokens hasta ahora\. «Detener» \(o Esc\) la para al acabar el trozo en curso \(20 tokens como mucho\) y guarda el texto\.", progress.inner_text())
    assert "Detener aquí" not in progress.inner_text()
    # beside the actions, one Tab from «Generar», and Enter presses it: no Esc key needed
    lab.keyboard.press("Tab")
    assert lab.evaluate("() => document.activeElement.dataset.testid") == "lab-halt"
    box = halt.bounding_box()
    assert box["width"] >= 24 and box["height"] >= 24
    lab.keyboard.press("Enter")
    lab.locator("[data-testid=lab-view][data-state=done]").wait_for(timeout=TIMEOUT_MS)
    branch = lab.locator("[data-testid=lab-branch]")
    assert branch.count() == 1 and branch.get_attribute("data-state") == "idle"
    assert "detenida" in branch.inner_text()
    text = branch.get_attribute("data-text")
    assert text and text == lab.locator("[data-testid=lab-output]").get_attribute("data-text")
    assert 1 <= lab.locator("[data-testid=lab-position]").count() < 200
    assert lab.locator("[data-testid=lab-error]").count() == 0
    assert halt.is_hidden() and progress.inner_text() == ""
    assert lab.evaluate("() => document.activeElement.dataset.testid") == "lab-generate"  # not lost


def focused_position(page) -> str | None:
    return page.evaluate("() => document.activeElement.closest('[data-testid=lab-position]')?.dataset.position")


def test_home_and_end_go_to_the_first_and_last_position(lab):
    type_constraint(lab, "regex", "[a-z]{6,9}")
    lab.locator("[data-testid=lab-max-tokens]").fill("120")
    act(lab, lambda: lab.locator("[data-testid=lab-generate]").click())
    assert lab.locator("[data-testid=lab-position]").count() >= 3
    last = str(lab.locator("[data-testid=lab-position]").count())
    lab.locator('[data-testid=lab-position][data-position="2"] input').focus()
    act(lab, lambda: lab.keyboard.press("End"))
    assert focused_position(lab) == last
    assert lab.locator(f'[data-testid=lab-position][data-position="{last}"] input').is_checked()
    assert lab.locator("[data-testid=lab-output]").get_attribute("data-open") == last
    assert lab.locator(f'[data-panel="{last}"]').is_visible()
    act(lab, lambda: lab.keyboard.press("Home"))
    assert focused_position(lab) == "1"
    assert lab.locator("[data-testid=lab-output]").get_attribute("data-open") == "1"
    assert lab.locator('[data-panel="1"]').is_visible()
    act(lab, lambda: lab.keyboard.press("ArrowRight"))  # the arrows as before
    assert focused_position(lab) == "2"


def test_passing_over_presets_keeps_the_readers_edits_for_deshacer(lab):
    type_constraint(lab, "regex", "mi [a-z]{3}")
    lab.locator("[data-testid=lab-top-k]").fill("7")
    lab.locator("[data-testid=lab-prompt]").fill("Mi prompt ")
    select = lab.locator("[data-testid=lab-preset]")
    select.select_option("")
    select.focus()
    seen = []
    for _ in range(3):  # the arrows over a closed select apply every preset passed over
        lab.keyboard.press("ArrowDown")
        seen.append(select.input_value())
    assert len(set(seen)) == 3 and "" not in seen
    assert lab.locator("[data-testid=lab-constraint] .cm-content").inner_text() != "mi [a-z]{3}"
    lab.locator("[data-testid=lab-preset-undo]").click()
    assert lab.locator("[data-testid=lab-constraint] .cm-content").inner_text() == "mi [a-z]{3}"
    assert lab.locator("[data-testid=lab-top-k]").input_value() == "7"
    assert lab.locator("[data-testid=lab-prompt]").input_value() == "Mi prompt "
    assert lab.locator("[data-testid=lab-preset-undo]").is_hidden()
    # an edit of a preset is the reader's own: the next preset keeps that one
    select.select_option("fecha")
    lab.locator("[data-testid=lab-prompt]").fill("Otra fecha: ")
    select.select_option("etiquetas")
    lab.locator("[data-testid=lab-preset-undo]").click()
    assert lab.locator("[data-testid=lab-prompt]").input_value() == "Otra fecha: "
    lab.locator("[data-testid=lab-top-k]").fill("")
    page_text = lab.locator("article").inner_text()
    assert "«Deshacer»" in page_text and "Back" not in page_text


def test_the_search_counts_agree_in_number(lab):
    lab.locator("[data-testid=lab-preset]").select_option("fecha")
    act(lab, lambda: lab.locator("[data-testid=lab-step]").click())
    search = lab.locator("[data-testid=lab-token-search]")
    count = lab.locator(".lab-search-count")
    total = lab.locator("[data-testid=lab-allowed-token]").count()
    assert total >= 2
    search.fill("zzq")
    assert count.inner_text() == f"ninguno de los {total} tokens permitidos contiene «zzq»"
    labels = lab.locator("[data-testid=lab-allowed-token]").evaluate_all("els => els.map(e => e.dataset.label)")
    for needle in {labels[0], "1"}:
        search.fill(needle)
        n = sum(needle.lower() in label.lower() for label in labels)
        words = {1: "contiene", total: "contienen"}.get(n, "contienen")
        expected = (f"los {total} tokens permitidos contienen «{needle}»" if n == total else
                    f"{n} de los {total} tokens permitidos {words} «{needle}»" if n else
                    f"ninguno de los {total} tokens permitidos contiene «{needle}»")
        assert count.inner_text() == expected
    search.fill("")
    assert count.inner_text() == ""

    # the whole vocabulary of the open position (views.js, as in every lesson page)
    panel = lab.locator(".pv-panel:visible")
    panel.locator("[data-testid=pv-all] summary").click()
    vocab_search = panel.locator(".pv-all-search")
    vocab_search.wait_for()  # views.js has written every row
    vocab_count = panel.locator(".pv-all-body > .more")
    rows = panel.locator(".pv-all-list li")
    size, allowed = rows.count(), panel.locator(".pv-all-list li:not(.out)").count()
    assert vocab_count.inner_text() == f"{size} tokens; {allowed} {'permitido' if allowed == 1 else 'permitidos'} por la máscara"
    vocab_search.fill("zzq")
    assert vocab_count.inner_text() == f"ninguno de los {size} tokens contiene «zzq»"
    vocab_search.fill("de")
    shown = panel.locator(".pv-all-list li:visible").count()
    shown_allowed = panel.locator(".pv-all-list li:not(.out):visible").count()
    text = vocab_count.inner_text()
    assert text.startswith(f"{shown} de los {size} tokens {'contiene' if shown == 1 else 'contienen'} «de»; ")
    tail = text.split("; ", 1)[1]
    assert tail == ("ninguno está permitido" if shown_allowed == 0 else "todos están permitidos"
                    if shown_allowed == shown else
                    f"{shown_allowed} de ellos {'está permitido' if shown_allowed == 1 else 'están permitidos'}")


def test_at_390_px_the_stale_mark_and_the_form_message_fit(lab_phone):
    page = lab_phone
    page.locator("[data-testid=lab-preset]").select_option("conjugacion")  # the widest view
    act(page, lambda: page.locator("[data-testid=lab-generate]").click())
    page.locator("[data-testid=lab-prompt]").fill("Otro prompt ")
    page.locator("[data-testid=lab-top-p]").fill("7")
    page.locator("[data-testid=lab-step]").click()
    page.locator("[data-testid=lab-error]").wait_for()
    assert page.locator("[data-testid=lab-stale]").is_visible()
    box = page.locator("[data-testid=lab-stale-restore]").bounding_box()
    assert box["width"] >= 24 and box["height"] >= 24
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390


def test_the_kernel_bars_stop_during_a_long_run_keeps_the_branch(lab):
    """The bar's «■ Detener» (which would restart Python) stops a long run as the lab's own does."""
    type_constraint(lab, "none", "")
    lab.locator("[data-testid=lab-max-tokens]").fill("200")
    lab.locator("[data-testid=lab-view]").evaluate("v => { v.dataset.state = 'clicked'; }")
    lab.locator("[data-testid=lab-generate]").click()
    lab.locator("[data-testid=lab-progress]").filter(has_text="hasta ahora").wait_for(timeout=TIMEOUT_MS)
    lab.locator("[data-testid=stop]").click()
    lab.locator("[data-testid=lab-view][data-state=done]").wait_for(timeout=TIMEOUT_MS)
    branch = lab.locator("[data-testid=lab-branch]")
    assert branch.count() == 1 and "detenida" in branch.inner_text()
    assert lab.locator("[data-testid=lab-error], .lab-stopped").count() == 0
    assert "tree=" in lab.url
    lab.locator("[data-testid=lab-max-tokens]").fill("120")


@pytest.mark.parametrize("bad, words", [
    ("seed=abc", "la semilla tiene que ser un entero de 0 a"),
    ("seed=abc", "; «abc» no es un número"),
    ("seed=1%2C5", "; ahora vale 1,5"),
    ("seed=99999999999999999999999", "; ahora vale «99999999999999999999999»"),
    ("temperature=99", "la temperatura del enlace vale 99, y la temperatura va de 0,1 a 3"),
    ("kind=foo", "el enlace trae un tipo de restricción desconocido, «foo»"),
])
def test_a_links_value_the_form_cannot_hold_is_said_not_replaced(browser, servers, bad, words):
    context = browser.new_context(service_workers="block")
    try:
        page = open_lesson(context, servers["plain"], f"{PAGE}#kind=regex&constraint=%5Ba-z%5D%7B3%7D&{bad}")
        page.locator("[data-testid=lab-error]").wait_for(timeout=TIMEOUT_MS)
        assert words in page.locator("[data-testid=lab-error]").inner_text()
        assert page.locator("[data-testid=lab-output]").count() == 0  # nothing ran with another value
    finally:
        context.close()


def test_ninguna_marks_the_constraint_unused_and_an_edit_unnames_the_preset(lab):
    lab.locator("[data-testid=lab-preset]").select_option("etiquetas")
    assert lab.locator("[data-testid=lab-preset]").input_value() == "etiquetas"
    lab.locator("[data-testid=lab-prompt]").fill("Otro prompt: ")
    assert lab.locator("[data-testid=lab-preset]").input_value() == ""
    lab.locator("[data-testid=lab-kind]").select_option("none")
    assert "no se usa" in lab.locator("[data-testid=lab-constraint-unused]").inner_text()
    lab.locator("[data-testid=lab-kind]").select_option("choice")
    assert lab.locator("[data-testid=lab-constraint-unused]").count() == 0


def test_shift_tab_onto_the_prompt_leaves_it_clear_of_the_sticky_bar(lab):
    lab.locator("[data-testid=lab-seed]").focus()
    for _ in range(12):
        lab.keyboard.press("Shift+Tab")
        if lab.evaluate("() => document.activeElement.id") == "lab-prompt":
            break
    assert lab.evaluate("() => document.activeElement.id") == "lab-prompt"
    top = lab.evaluate("() => document.activeElement.getBoundingClientRect().top")
    bar = lab.evaluate("() => document.querySelector('.kernel-bar').getBoundingClientRect().bottom")
    assert top >= bar - 1
