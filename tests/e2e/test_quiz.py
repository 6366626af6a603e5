"""Quiz questions: wrong then right answers, feedback, explanation, keyboard, axe.

The page comes from tests/e2e/pages/quiz.html, built into a private site of its own (the
real site has no test pages). The quiz needs no Python, so no kernel starts here."""
from __future__ import annotations

import shutil

import pytest

import build
from sitebuild import files
from tests.e2e.conftest import NetworkGuard, _serve
from tests.e2e.test_offline import describe, run_axe

pytestmark = pytest.mark.e2e
PAGES_DIR = build.ROOT / "tests" / "e2e" / "pages"


@pytest.fixture(scope="module")
def quiz_url(tmp_path_factory):
    """A site built from the real sources plus the test page ``quiz.html``."""
    root = tmp_path_factory.mktemp("quiz-root")
    for name in ("node_modules", "py", "weights", ".cache", "browser"):
        (root / name).symlink_to(build.ROOT / name)
    shutil.copytree(files.TEMPLATES, root / "templates")
    shutil.copy(PAGES_DIR / "quiz.html", root / "templates" / "quiz.html")
    page = {"template": "quiz.html", "out": "quiz.html", "title": "Preguntas", "summary": ""}
    pages = build.PAGES
    build.PAGES = (page,)
    try:
        build.build(root, root / "site")
    finally:
        build.PAGES = pages
    server = _serve(root / "site", isolated=False)
    yield f"http://127.0.0.1:{server.server_address[1]}/quiz.html"
    server.shutdown()
    server.server_close()


@pytest.fixture
def guard(quiz_url) -> NetworkGuard:
    return NetworkGuard(allowed=(quiz_url.rsplit("/", 1)[0] + "/",))


@pytest.fixture
def quiz(context, quiz_url):
    page = context.new_page()
    page.goto(quiz_url)
    return page


def test_wrong_then_right_answer_gives_feedback_and_the_explanation(quiz):
    question = quiz.locator("[data-testid=quiz-question]").first
    options = question.locator("[data-testid=quiz-option]")
    feedback = question.locator("[data-testid=quiz-feedback]")
    explanation = question.locator("[data-testid=quiz-explanation]")
    assert question.locator("legend math").count() == 2  # math in the prompt
    assert options.nth(1).locator("math").count() == 1  # and in an option
    assert explanation.is_hidden() and feedback.inner_text() == ""
    assert question.get_attribute("data-result") is None

    options.nth(0).get_by_role("radio").check()
    question.get_by_role("button", name="Comprobar").click()
    assert question.get_attribute("data-result") == "wrong"
    assert options.nth(0).get_attribute("data-result") == "wrong"
    assert feedback.inner_text().startswith("No es correcto.")
    assert "antes de renormalizar" in feedback.inner_text()
    assert "no es correcta" in options.nth(0).locator(".quiz-mark").inner_text()  # not colour alone
    assert "Pista:" in feedback.inner_text()
    assert explanation.is_hidden()  # a hint first: the explanation gives the answer away
    assert question.get_by_role("button", name="Ver la respuesta").is_visible()

    options.nth(1).get_by_role("radio").check()  # try again
    question.get_by_role("button", name="Comprobar").click()
    assert question.get_attribute("data-result") == "correct"
    assert options.nth(0).get_attribute("data-result") is None
    assert options.nth(1).get_attribute("data-result") == "correct"
    assert feedback.inner_text().startswith("Correcto.")
    assert "masa conservada" in feedback.inner_text()
    assert feedback.get_attribute("aria-live") == "polite"
    assert explanation.is_visible()
    assert explanation.locator("math[display=block]").count() == 1
    assert question.get_by_role("button", name="Ver la respuesta").is_hidden()


def test_a_second_wrong_answer_or_the_button_shows_the_answer(quiz):
    questions = quiz.locator("[data-testid=quiz-question]")
    first = questions.first
    options = first.locator("[data-testid=quiz-option]")
    wrong = [i for i in range(options.count()) if options.nth(i).get_attribute("data-correct") != "true"]
    for _ in range(2):  # the same wrong answer twice
        options.nth(wrong[0]).get_by_role("radio").check()
        first.get_by_role("button", name="Comprobar").click()
    assert first.locator("[data-testid=quiz-explanation]").is_visible()
    right = first.locator('[data-testid=quiz-option][data-correct="true"]')
    assert "respuesta correcta" in right.locator(".quiz-mark").inner_text()

    second = questions.nth(1)
    options = second.locator("[data-testid=quiz-option]")
    wrong = [i for i in range(options.count()) if options.nth(i).get_attribute("data-correct") != "true"]
    options.nth(wrong[0]).get_by_role("radio").check()
    second.get_by_role("button", name="Comprobar").click()
    second.get_by_role("button", name="Ver la respuesta").click()  # this question has no explanation
    assert second.get_attribute("data-revealed") == "true"
    assert second.locator("[data-testid=quiz-feedback]").inner_text().startswith("Respuesta:")
    right = second.locator('[data-testid=quiz-option][data-correct="true"]')
    assert "respuesta correcta" in right.locator(".quiz-mark").inner_text()


def test_a_question_works_with_the_keyboard_alone(quiz):
    question = quiz.locator("[data-testid=quiz-question]").nth(1)
    radios = question.get_by_role("radio")
    radios.first.focus()
    quiz.keyboard.press("Space")
    quiz.keyboard.press("ArrowDown")  # one radio group: arrows move and select
    assert radios.nth(1).is_checked() and not radios.first.is_checked()
    quiz.keyboard.press("Tab")
    assert question.get_by_role("button", name="Comprobar").evaluate(
        "b => b === document.activeElement")
    quiz.keyboard.press("Enter")
    assert question.get_attribute("data-result") == "wrong"
    quiz.keyboard.press("Shift+Tab")
    quiz.keyboard.press("ArrowUp")
    quiz.keyboard.press("Tab")
    quiz.keyboard.press("Space")
    assert question.get_attribute("data-result") == "correct"
    assert question.locator("[data-testid=quiz-feedback]").inner_text() == "Correcto. Eso es."


def test_checking_without_an_answer_asks_for_one(quiz):
    question = quiz.locator("[data-testid=quiz-question]").first
    question.get_by_role("button", name="Comprobar").click()
    assert "Elige una respuesta" in question.locator("[data-testid=quiz-feedback]").inner_text()
    assert question.get_attribute("data-result") is None
    assert question.locator("[data-testid=quiz-explanation]").is_hidden()


def math_label_false_positives(page, violations: list[dict]) -> list[dict]:
    """axe 4.14 computes no name for a label whose text is MathML only, though Chromium
    does (its tree reads `radio "1 / 3"`); drop those nodes, other violations stay."""
    kept = []
    for violation in violations:
        nodes = [n for n in violation["nodes"] if not (
            violation["id"] == "label" and page.locator(n["target"][0]).evaluate(
                "input => !!input.closest('label')?.querySelector('math')"))]
        if nodes:
            kept.append({**violation, "nodes": nodes})
    return kept


def test_quiz_page_has_no_serious_accessibility_violations(quiz):
    names = quiz.locator("[data-testid=quiz-question]").first.aria_snapshot()
    assert 'radio "1 / 3"' in names  # the browser names math-only options from their MathML
    violations = math_label_false_positives(quiz, run_axe(quiz))
    assert not violations, describe(violations)
    question = quiz.locator("[data-testid=quiz-question]").first
    question.get_by_role("radio").first.check()
    question.get_by_role("button", name="Comprobar").click()
    violations = math_label_false_positives(quiz, run_axe(quiz))
    assert not violations, describe(violations)
