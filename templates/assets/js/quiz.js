/* Self-check quiz questions (macros.html: quiz_question, quiz_option, quiz_explanation).
 * Plain DOM, no Python: a question works as soon as the page has loaded. The radios of
 * a question are one group named after its id, so arrows move between them. */
const VERDICT = { correct: "Correcto", wrong: "No es correcto" };
const MARK = { correct: "✔ tu respuesta es correcta", wrong: "✘ tu respuesta no es correcta" };

function check(question, options, feedback, explanation) {
  const chosen = options.find((option) => option.querySelector("input").checked);
  for (const option of options) {
    delete option.dataset.result;
    option.querySelector(".quiz-mark").textContent = "";
  }
  if (!chosen) {
    delete question.dataset.result;
    feedback.textContent = "Elige una respuesta antes de comprobar.";
    return;
  }
  const result = chosen.dataset.correct === "true" ? "correct" : "wrong";
  question.dataset.result = result;
  chosen.dataset.result = result;
  chosen.querySelector(".quiz-mark").textContent = MARK[result];
  const verdict = document.createElement("strong");
  verdict.textContent = `${VERDICT[result]}. `;
  const said = chosen.querySelector("template.quiz-option-feedback").content.cloneNode(true);
  feedback.replaceChildren(verdict, said);
  if (explanation) explanation.hidden = false;
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
  question.querySelector(".quiz-check").addEventListener(
    "click", () => check(question, options, feedback, explanation));
}

export function setupQuizzes(root = document) {
  root.querySelectorAll(".quiz-question").forEach(setupQuestion);
}
