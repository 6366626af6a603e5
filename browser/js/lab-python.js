/* The «Laboratorio»'s experiment as Python a reader can paste into a cell: the same constraint,
 * prompt and settings, and the branch on show given token by token; or, with a real vocabulary,
 * the same masks over the same text. */
import { pageLanguage, t } from "./i18n.js";

/** A JSON value written as a Python literal (JSON strings, numbers, lists are valid Python). */
export function py(value) {
  if (value === null || value === undefined) return "None";
  if (value === true) return "True";
  if (value === false) return "False";
  return JSON.stringify(value);
}

const COMPILERS = {
  choice: (text) => `compile_choice(${py(text.split("\n").filter((line) => line.trim()))})`,
  regex: (text) => `compile_regex(${py(text)})`,
  json_schema: (text) => `compile_json_schema(json.loads(${text.includes('"""') || text.endsWith("\\") ? py(text) : `r"""${text}"""`}))`,
  gbnf: (text) => `compile_cfg(${py(text)})`,
};


/** The experiment ``state`` (the form's fields) as code; ``tree`` and ``ids``: the tree on show and
 * its branch's token ids, given one by one after the generation (none: the generation alone). */
export function experimentPython(state, { tree = { tree: "" }, ids = [] } = {}) {
  const en = pageLanguage() === "en";
  if (state.vocab) return vocabPython(state, en);
  const grammar = en ? "grammar" : "gramatica", branchName = en ? "branch" : "rama";
  const lines = [
    "import json",
    "from minigpt.bpe import load_tokenizer",
    "from minigpt.gpt import load_model",
    "from lesson import generate",
    "from masker import compile_cfg, compile_choice, compile_json_schema, compile_regex",
    "",
    "tok = load_tokenizer()",
    "model = load_model()",
    `${grammar} = ${state.kind === "none" ? "None" : COMPILERS[state.kind](state.constraint)}`,
    `g = generate(model, tok, ${py(state.prompt)}, ${grammar}, seed=${state.seed}, ` +
      `temperature=${state.temperature}, top_k=${py(state.top_k)}, top_p=${py(state.top_p)}, ` +
      `max_tokens=${py(state.max_tokens)}, stop_at_accept=${py(state.stop_at_accept)})`,
    "g.positions_view()",
  ];
  if (tree.tree && tree.tree !== "r" && ids.length) {
    const branch = Number(tree.branch || 0) + 1;
    const comment = t("La rama {branch} que muestra la página: sus tokens, dados uno a uno (no gastan números aleatorios)",
      { branch });
    lines.push(
      "",
      "# " + comment,
      "from lesson.sampling import Decoder",
      `${branchName} = Decoder(model, tok, ${py(state.prompt)}, ${grammar}, seed=${state.seed}, ` +
        `temperature=${state.temperature}, top_k=${py(state.top_k)}, top_p=${py(state.top_p)}, ` +
        `max_tokens=${py(state.max_tokens)}, stop_at_accept=${py(state.stop_at_accept)})`,
      `for t in ${JSON.stringify(ids)}:`,
      `    ${branchName}.step(token_id=t)`,
      `${branchName}.generation.positions_view()`,
    );
  }
  return lines.join("\n");
}

/* The «vocabulario» mode as code: the same masks over the same text. */
function vocabPython(state, en) {
  const grammar = en ? "grammar" : "gramatica";
  const compiler = { choice: "compile_choice", regex: "compile_regex", json_schema: "compile_json_schema",
    gbnf: "compile_cfg" }[state.kind];
  return [
    ...(state.kind === "json_schema" ? ["import json"] : []),
    ...(compiler ? [`from masker import ${compiler}`] : []),
    "from lesson.laboratorio.vocab import VocabMasks",
    "",
    `${grammar} = ${state.kind === "none" ? "None" : COMPILERS[state.kind](state.constraint)}`,
    `VocabMasks(${py(state.vocab)}, ${grammar}, ${py(state.text)})`,
  ].join("\n");
}
