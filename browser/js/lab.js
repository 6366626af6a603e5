/* The «Laboratorio» page: a form whose every action runs one call of the Python function
 * lesson.laboratorio.act in the page's kernel, and shows the view it returns. The form's state lives in
 * the URL fragment, so a link reopens the same experiment (nothing leaves the page). */
import { EditorView, keymap, drawSelection, Decoration } from "@codemirror/view";
import { EditorState, StateField, StateEffect } from "@codemirror/state";
import { defaultKeymap, history, historyKeymap } from "@codemirror/commands";

const KINDS = ["none", "choice", "regex", "json_schema", "gbnf"];
const COMPILERS = {
  choice: (text) => `compile_choice(${py(text.split("\n").filter((line) => line.trim()))})`,
  regex: (text) => `compile_regex(${py(text)})`,
  json_schema: (text) => `compile_json_schema(json.loads(${text.includes('"""') || text.endsWith("\\") ? py(text) : `r"""${text}"""`}))`,
  gbnf: (text) => `compile_cfg(${py(text)})`,
};

/* The span of the constraint that an error points at, underlined in the editor until the next edit. */
const setErrorSpan = StateEffect.define();
const errorSpan = StateField.define({
  create: () => Decoration.none,
  update(marks, tr) {
    let out = tr.docChanged ? Decoration.none : marks;
    for (const effect of tr.effects) {
      if (!effect.is(setErrorSpan)) continue;
      out = effect.value ? Decoration.set([Decoration.mark({
        class: "lab-error-span", attributes: { "data-testid": "lab-error-span" },
      }).range(effect.value.from, effect.value.to)]) : Decoration.none;
    }
    return out;
  },
  provide: (field) => EditorView.decorations.from(field),
});

/* A Python string offset (code points) as an editor offset (UTF-16 units). */
function utf16(text, codePoints) {
  return [...text].slice(0, codePoints).join("").length;
}

/** A JSON value written as a Python literal (JSON strings, numbers, lists are valid Python). */
function py(value) {
  if (value === null || value === undefined) return "None";
  if (value === true) return "True";
  if (value === false) return "False";
  return JSON.stringify(value);
}

function numberOrNull(input) {
  return input.value.trim() === "" ? null : Number(input.value);
}

/* One action as a queued "cell" of the kernel (the KernelClient's cell interface). */
class LabRun {
  constructor(lab, code, trigger, action = "") {
    this.action = action;
    this.lab = lab;
    this.trigger = trigger; // what the reader pressed: gets the focus back when the run ends
    this.root = lab.result;
    this.id = `lab-${++LabRun.count}`;
    this.source = code;
  }

  code() { return this.source; }
  markQueued() { this.lab.setRunning(true); }
  start() { this.lab.setRunning(true); }
  cancel() { this.lab.setRunning(false); }
  reset() { this.lab.setRunning(false); }

  finish(ok, count, message) {
    // The kernel's own message speaks of cells; this page has none.
    if (message) this.lab.showText(STOPPED, "out-error");
    if (!ok) this.lab.markError();
    if (ok && !message && this.lab.goOn(this)) return; // a long run: its next piece is queued
    this.lab.setRunning(false);
    this.lab.done(this.trigger);
  }

  output(message) {
    if (message.type === "display" && message.html !== undefined) this.lab.showHtml(message.html);
    else if (message.type === "error") this.lab.showText(message.traceback, "out-error");
    else if (message.type === "stream") this.lab.showText(message.text, `out-${message.name}`, true);
    else if (message.type === "display") this.lab.showText(message.text, "out-text");
  }
}
LabRun.count = 0;
const PIECE = 20; // tokens per run of a long generation: progress shows, and Esc stops, between pieces
const STOPPED = "Detenida: Python se reinició para pararla y el experimento se perdió. " +
  "Pulsa «Generar» o «Paso» para empezar otro.";

export class Lab {
  constructor(root, kernel) {
    this.kernel = kernel;
    this.form = root.querySelector("[data-testid=lab-form]");
    this.result = root.querySelector("[data-testid=lab-view]");
    this.status = root.querySelector("[data-testid=lab-status]");
    this.pythonCode = root.querySelector("[data-testid=lab-python]");
    this.presets = JSON.parse(root.querySelector("#lab-presets").textContent);
    const $ = (id) => root.querySelector(`#${id}`);
    this.fields = {
      kind: $("lab-kind"), prompt: $("lab-prompt"), seed: $("lab-seed"),
      temperature: $("lab-temperature"), top_k: $("lab-top-k"), top_p: $("lab-top-p"),
      max_tokens: $("lab-max-tokens"), stop_at_accept: $("lab-stop"), compare: $("lab-compare"),
    };
    this.temperatureValue = $("lab-temperature-value");
    this.undoButton = root.querySelector("[data-testid=lab-preset-undo]");
    this.undoButton.addEventListener("click", () => this.undo());
    this.editor = new EditorView({
      parent: root.querySelector("[data-testid=lab-constraint]"),
      state: EditorState.create({
        doc: "",
        extensions: [
          history(), drawSelection(), EditorView.lineWrapping, errorSpan,
          // No Tab binding: Tab moves to the next control, as everywhere else in the form.
          keymap.of([...defaultKeymap, ...historyKeymap]),
          EditorView.contentAttributes.of({ "aria-labelledby": "lab-constraint-label" }),
          EditorView.updateListener.of((update) => { if (update.docChanged) this.changed(); }),
        ],
      }),
    });
    $("lab-preset").addEventListener("change", (event) => {
      const preset = this.presets[event.target.value];
      if (preset) {
        this.keepUndo(); // the reader's edits can come back with one click
        // every setting a preset depends on, so the same preset always gives the same result
        this.apply({ kind: preset.kind, constraint: preset.constraint, prompt: preset.prompt,
                     seed: 0, max_tokens: 120, temperature: 1, top_k: null, top_p: null,
                     stop_at_accept: false, compare: false, ...(preset.settings || {}) });
      }
    });
    this.form.addEventListener("input", () => this.changed());
    this.form.addEventListener("change", () => this.changed());
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.run("generate");
    });
    root.querySelector("[data-testid=lab-step]").addEventListener("click", () => this.run("step"));
    root.querySelector("[data-testid=lab-next]").addEventListener("click", () => this.run("next"));
    root.querySelector("[data-testid=lab-continue]").addEventListener("click", () => this.run("continue"));
    this.result.addEventListener("click", (event) => this.clicked(event));
    this.result.addEventListener("change", (event) => {
      const entry = event.target.closest("[data-testid=lab-position]");
      if (entry && event.target.checked) this.run("open", { position: Number(entry.dataset.position) });
    });
    this.result.addEventListener("input", (event) => {
      if (event.target.matches("[data-testid=lab-token-search]")) this.search(event.target);
    });
    document.addEventListener("keydown", (event) => {
      if (event.key === "Escape" && this.running) this.stopSoon();
    });
    this.tree = { tree: "", branch: "", open: "" };
    window.addEventListener("hashchange", () => { if (this.restore()) this.runRestore(); });
    if (this.restore()) {
      this.runRestore(); // a shared link shows its result (it waits for Python to start)
    } else {
      const name = this.presets.nombres ? "nombres" : Object.keys(this.presets)[0];
      const first = this.presets[name];
      $("lab-preset").value = name;
      this.apply({ kind: first.kind, constraint: first.constraint, prompt: first.prompt });
    }
  }

  /* Before a preset replaces the form: keep the form as it was, and offer to bring it back. */
  keepUndo() {
    this.undoState = this.state();
    this.undoButton.hidden = false;
  }

  undo() {
    if (!this.undoState) return;
    this.apply(this.undoState);
    this.undoState = null;
    this.undoButton.hidden = true;
    this.form.querySelector("#lab-preset").value = "";
    this.fields.kind.focus();
  }

  state() {
    const f = this.fields;
    return {
      kind: f.kind.value, constraint: this.editor.state.doc.toString(), prompt: f.prompt.value,
      seed: Number(f.seed.value || 0), temperature: Number(f.temperature.value),
      top_k: numberOrNull(f.top_k), top_p: numberOrNull(f.top_p),
      max_tokens: numberOrNull(f.max_tokens), stop_at_accept: f.stop_at_accept.checked,
      compare: f.compare.checked,
    };
  }

  apply(state) {
    const f = this.fields;
    if (KINDS.includes(state.kind)) f.kind.value = state.kind;
    if (state.constraint !== undefined) {
      this.editor.dispatch({ changes: { from: 0, to: this.editor.state.doc.length, insert: state.constraint } });
    }
    for (const key of ["prompt", "seed", "temperature", "top_k", "top_p", "max_tokens"]) {
      if (state[key] !== undefined && state[key] !== null) f[key].value = state[key];
      else if (state[key] === null) f[key].value = "";
    }
    for (const key of ["stop_at_accept", "compare"]) {
      if (state[key] !== undefined) f[key].checked = Boolean(state[key]);
    }
    this.changed();
  }

  /* The fragment holds the state and the tree of branches; returns whether it held one. */
  restore() {
    const hash = window.location.hash.slice(1);
    if (!hash || hash === this.written) return false;
    const params = new URLSearchParams(hash);
    const state = {};
    this.tree = { tree: params.get("tree") || "", branch: params.get("branch") || "", open: params.get("open") || "" };
    for (const [key, value] of params) {
      if (key in this.tree) continue;
      if (["seed", "temperature", "top_k", "top_p", "max_tokens"].includes(key)) {
        state[key] = value === "" ? null : Number(value);
      } else if (["stop_at_accept", "compare"].includes(key)) state[key] = value === "1";
      else state[key] = value;
    }
    this.restoring = true;
    this.apply(state);
    this.restoring = false;
    return true;
  }

  changed() {
    if (!this.restoring && this.tree) this.tree = { tree: "", branch: "", open: "" }; // a new experiment
    this.writeHash();
  }

  /* The form's state, and the tree of the result on show, into the fragment (no history entry). */
  writeHash() {
    const state = this.state();
    this.temperatureValue.textContent = state.temperature.toFixed(1).replace(".", ",");
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(state)) {
      params.set(key, typeof value === "boolean" ? (value ? "1" : "0") : (value ?? ""));
    }
    for (const [key, value] of Object.entries(this.tree || {})) if (value !== "") params.set(key, value);
    this.written = String(params);
    if (!this.restoring) window.history.replaceState(null, "", `#${params}`);
    this.pythonCode.textContent = this.python(state);
  }

  /* The same experiment as code a reader can paste into a cell. */
  python(state) {
    const lines = [
      "import json",
      "from minigpt.bpe import load_tokenizer",
      "from minigpt.gpt import load_model",
      "from lesson import generate",
      "from masker import compile_cfg, compile_choice, compile_json_schema, compile_regex",
      "",
      "tok = load_tokenizer()",
      "model = load_model()",
      `gramatica = ${state.kind === "none" ? "None" : COMPILERS[state.kind](state.constraint)}`,
      `g = generate(model, tok, ${py(state.prompt)}, gramatica, seed=${state.seed}, ` +
        `temperature=${state.temperature}, top_k=${py(state.top_k)}, top_p=${py(state.top_p)}, ` +
        `max_tokens=${py(state.max_tokens)}, stop_at_accept=${py(state.stop_at_accept)})`,
      "g.positions_view()",
    ];
    const ids = this.branchIds || [];
    if (this.tree?.tree && this.tree.tree !== "r" && ids.length) {
      const branch = Number(this.tree.branch || 0) + 1;
      lines.push(
        "",
        `# La rama ${branch} que muestra la página: sus tokens, dados uno a uno (no gastan números aleatorios)`,
        "from lesson.sampling import Decoder",
        `rama = Decoder(model, tok, ${py(state.prompt)}, gramatica, seed=${state.seed}, ` +
          `temperature=${state.temperature}, top_k=${py(state.top_k)}, top_p=${py(state.top_p)}, ` +
          `max_tokens=${py(state.max_tokens)}, stop_at_accept=${py(state.stop_at_accept)})`,
        `for t in ${JSON.stringify(ids)}:`,
        "    rama.step(token_id=t)",
        "rama.generation.positions_view()",
      );
    }
    return lines.join("\n");
  }

  /* Clicks in the result: a token (choose it at its position) or a branch (show it). */
  clicked(event) {
    const token = event.target.closest("[data-testid=lab-allowed-token]");
    if (token) {
      this.run("choose", { token_id: Number(token.dataset.tokenId), position: Number(token.dataset.position) });
      return;
    }
    const branch = event.target.closest(".lab-branch-open");
    if (branch) this.run("branch", { branch: Number(branch.dataset.branch) });
  }

  /* The open position's token list, filtered by what the reader types. */
  search(input) {
    const query = input.value.toLowerCase();
    const items = [...input.closest("[data-testid=lab-choices]").querySelectorAll(".lab-choices li")];
    let shown = 0;
    for (const item of items) {
      const label = item.querySelector("button").dataset.label.toLowerCase();
      item.hidden = query !== "" && !label.includes(query);
      if (!item.hidden) shown += 1;
    }
    const count = input.closest("[data-testid=lab-choices]").querySelector(".lab-search-count");
    count.textContent = query ? `${shown} de ${items.length} tokens permitidos contienen «${input.value}»` : "";
  }

  runRestore() {
    this.run("restore", { ...this.tree });
  }

  /* The form's fields checked here, so the message is in Spanish, from the field and a link alike. */
  invalid() {
    const f = this.fields;
    for (const [key, name] of [["seed", "la semilla"], ["top_k", "top-k"], ["top_p", "top-p"], ["max_tokens", "tokens como máximo"]]) {
      const input = f[key];
      if (input.value.trim() === "") continue;
      const value = Number(input.value);
      const min = Number(input.min), max = input.max === "" ? Infinity : Number(input.max);
      if (!Number.isFinite(value) || value < min || value > max || (input.step === "1" && !Number.isInteger(value))) {
        return `«${name}» debe ser ${input.step === "1" ? "un entero" : "un número"} entre ${String(min).replace(".", ",")}` +
          `${max === Infinity ? " o más" : ` y ${String(max).replace(".", ",")}`}; ahora vale ${input.value}.`;
      }
    }
    return "";
  }

  run(action, extra = {}) {
    if (this.running) return; // one action at a time; Esc stops the one running
    const problem = this.invalid();
    if (problem) {
      this.showError(problem);
      return;
    }
    const state = { ...this.state(), ...(action === "restore" ? extra : this.tree) };
    const args = { token_id: null, position: null, branch: null, limit: null, ...extra };
    if (["generate", "continue", "restore"].includes(action) && !(action === "restore" && state.tree)) args.limit = PIECE;
    this.stopping = false;
    this.enqueue(action === "restore" && !state.tree ? "generate" : action, state, args);
  }

  enqueue(action, state, args) {
    const code = `from lesson.laboratorio import act\nact(${py(action)}, ${py(JSON.stringify(state))}, ` +
      `${py(args.token_id)}, ${py(args.position)}, ${py(args.branch)}, ${py(args.limit)})`;
    const trigger = ["generate", "continue"].includes(action) ? "generate" : action === "open" ? "open" : "step";
    const labRun = new LabRun(this, code, trigger, action);
    labRun.args = args;
    this.kernel.enqueue(labRun);
  }

  /* After a piece of a long run: queue the next one (true), or stop there, keeping the text. */
  goOn(labRun) {
    const output = this.result.querySelector("[data-testid=lab-output]");
    this.readTree();
    if (!output || labRun.args?.limit == null || output.dataset.state !== "idle") return false;
    if (this.stopping) {
      this.stopping = false;
      this.enqueue("stop", { ...this.state(), ...this.tree }, {});
      return true;
    }
    const tokens = this.result.querySelectorAll("[data-testid=lab-position]").length;
    this.status.textContent = `Generando: ${tokens} tokens hasta ahora (Esc para detener).`;
    this.progress(tokens);
    this.enqueue("continue", { ...this.state(), ...this.tree }, { limit: PIECE });
    return true;
  }

  progress(tokens) {
    const note = this.form.parentElement.querySelector("[data-testid=lab-progress]");
    if (note) note.textContent = tokens === null ? "" : `Generando… ${tokens} tokens hasta ahora. Esc o «Detener aquí» la para y guarda el texto.`;
  }

  /* Esc: the run stops after its current piece; the branch keeps its text, «detenida». */
  stopSoon() {
    this.stopping = true;
    this.progress(null);
    this.status.textContent = "Deteniendo…";
  }

  readTree() {
    const output = this.result.querySelector("[data-testid=lab-output]");
    if (!output) return;
    this.branchIds = [...this.result.querySelectorAll("[data-testid=lab-position] .tok")]
      .map((tok) => Number(tok.title.split(" ").pop()));
    this.tree = { tree: output.dataset.tree || "", branch: output.dataset.branch || "", open: output.dataset.open || "" };
    this.writeHash();
  }

  showError(text) {
    const box = document.createElement("div");
    box.className = "lab-error";
    box.dataset.testid = "lab-error";
    box.setAttribute("role", "alert");
    box.textContent = text;
    this.result.replaceChildren(box);
    this.result.dataset.state = "done";
    this.status.textContent = text;
  }

  /* After a run: a short status for screen readers, and the focus where the reader goes on. */
  /* Underline in the editor the span a compile error names (or clear the underline). */
  markErrorSpan() {
    const error = this.result.querySelector("[data-testid=lab-error][data-from]");
    const text = this.editor.state.doc.toString();
    let value = null;
    if (error) {
      const from = Math.min(utf16(text, Number(error.dataset.from)), text.length);
      const to = Math.min(utf16(text, Number(error.dataset.to)), text.length);
      if (to > from) value = { from, to };
    }
    this.editor.dispatch({ effects: setErrorSpan.of(value) });
  }

  done(trigger) {
    this.markErrorSpan();
    this.readTree();
    this.progress(null);
    const output = this.result.querySelector("[data-testid=lab-output]");
    const summary = output?.querySelector(".lab-summary")?.textContent;
    const error = this.result.querySelector("[data-testid=lab-error], .out-error");
    this.status.textContent = error ? "Error: mira el resultado." : (summary || "");
    const open = output?.dataset.open;
    const entry = open && this.result.querySelector(`[data-testid=lab-position][data-position="${open}"] input`);
    const next = this.result.querySelector("[data-testid=lab-allowed-token]");
    if (trigger === "open" && entry) entry.focus();
    else if (trigger === "step" && next) next.focus();
    else this.form.querySelector(trigger === "step" ? "[data-testid=lab-step]" : "[data-testid=lab-generate]").focus();
  }

  setRunning(running) {
    this.running = running;
    // data-state of the view: running while an action runs, then done (its output is in)
    this.result.dataset.state = running ? "running" : "done";
    const output = this.result.querySelector("[data-testid=lab-output]");
    if (running && output) output.dataset.state = "running";
    // aria-disabled, not disabled: the focus stays on the button pressed while it runs
    this.form.querySelectorAll("[data-testid=lab-generate], [data-testid=lab-step], [data-testid=lab-next], [data-testid=lab-continue]")
      .forEach((button) => { button.setAttribute("aria-disabled", String(running)); });
  }

  markError() {
    const output = this.result.querySelector("[data-testid=lab-output]");
    if (output) output.dataset.state = "error";
  }

  showHtml(html) {
    this.result.innerHTML = html; // produced by lesson.laboratorio from the reader's own input
  }

  showText(text, className, append = false) {
    const node = document.createElement("pre");
    node.className = className;
    node.textContent = text;
    if (append) this.result.append(node);
    else this.result.replaceChildren(node);
  }
}

export function setupLab(kernel, root = document.querySelector("[data-lab]")) {
  return root ? new Lab(root, kernel) : null;
}
