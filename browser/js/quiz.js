/* Self-check quiz questions (macros.html: quiz_question, quiz_option, quiz_explanation).
 * Plain DOM, no Python: a question works as soon as the page has loaded. The radios of
 * a question are one group named after its id, so arrows move between them.
 * A wrong answer first gets its option's feedback as a hint and a «Ver la respuesta» button;
 * the explanation and the right option come with a right answer, a second wrong one, or
 * that button. */
import { t } from "./i18n.js";

const VERDICT = { correct: () => t("Correcto"), wrong: () => t("No es correcto") };
const MARK = { correct: () => t("✔ tu respuesta es correcta"), wrong: () => t("✘ tu respuesta no es correcta") };
const RIGHT_MARK = () => t("✔ esta es la respuesta correcta");

function reveal(question, options, explanation, reveal_button) {
  question.dataset.revealed = "true";
  const right = options.find((option) => option.dataset.correct === "true");
  if (!right.dataset.result) right.querySelector(".quiz-mark").textContent = RIGHT_MARK();
  right.dataset.answer = "true";
  if (explanation) explanation.hidden = false;
  reveal_button.hidden = true;
}

function check(question, options, feedback, explanation, reveal_button) {
  const chosen = options.find((option) => option.querySelector("input").checked);
  for (const option of options) {
    delete option.dataset.result;
    if (!option.dataset.answer) option.querySelector(".quiz-mark").textContent = "";
  }
  if (!chosen) {
    delete question.dataset.result;
    feedback.textContent = t("Elige una respuesta antes de comprobar.");
    return;
  }
  const result = chosen.dataset.correct === "true" ? "correct" : "wrong";
  question.dataset.result = result;
  chosen.dataset.result = result;
  chosen.querySelector(".quiz-mark").textContent = MARK[result]();
  const verdict = document.createElement("strong");
  verdict.textContent = `${VERDICT[result]()}. `;
  const said = chosen.querySelector("template.quiz-option-feedback").content.cloneNode(true);
  const wrongs = Number(question.dataset.wrongTries || 0) + (result === "wrong" ? 1 : 0);
  question.dataset.wrongTries = String(wrongs);
  if (result === "wrong" && wrongs === 1 && question.dataset.revealed !== "true") {
    const hint = document.createElement("span");
    hint.textContent = t("Pista:") + " ";
    const again = document.createElement("span");
    again.textContent = " " + t("Inténtalo de nuevo, o pide la respuesta.");
    feedback.replaceChildren(verdict, hint, said, again);
    reveal_button.hidden = false;
    return;
  }
  feedback.replaceChildren(verdict, said);
  reveal(question, options, explanation, reveal_button);
}

/* Wire one question; throws when it does not have 2 to 5 options with one correct. */
export function setupQuestion(question) {
  const options = [...question.querySelectorAll(".quiz-option")];
  const right = options.filter((option) => option.dataset.correct === "true");
  if (options.length < 2 || options.length > 5 || right.length !== 1) {
    throw new Error(`quiz question #${question.id} needs 2 to 5 options and exactly one ` +
      `correct one (has ${options.length} options, ${right.length} correct)`);
  }
  options.forEach((option) => { option.querySelector("input").name = question.id; });
  const feedback = question.querySelector(".quiz-feedback");
  const explanation = question.querySelector(".quiz-explanation");
  if (explanation) feedback.after(explanation); // read after the verdict
  const reveal_button = question.querySelector(".quiz-reveal");
  question.querySelector(".quiz-check").addEventListener(
    "click", () => check(question, options, feedback, explanation, reveal_button));
  reveal_button.addEventListener("click", () => {
    reveal(question, options, explanation, reveal_button);
    const note = document.createElement("strong");
    note.textContent = t("Respuesta:") + " ";
    const text = right[0].querySelector(".quiz-option-text").cloneNode(true);
    feedback.replaceChildren(note, ...text.childNodes);
  });
}

export function setupQuizzes(root = document) {
  root.querySelectorAll(".quiz-question").forEach(setupQuestion);
}
