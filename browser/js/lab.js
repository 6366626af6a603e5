/* The «Laboratorio» page: a form whose every action runs one call of the Python function
 * lesson.laboratorio.act in the page's kernel, and shows the view it returns. The form's state lives in
 * the URL fragment, so a link reopens the same experiment (nothing leaves the page). */
import { EditorView, keymap, drawSelection } from "@codemirror/view";
import { EditorState } from "@codemirror/state";
import { defaultKeymap, history, historyKeymap } from "@codemirror/commands";

const KINDS = ["none", "choice", "regex", "json_schema", "gbnf"];
const COMPILERS = {
  choice: (text) => `compile_choice(${py(text.split("\n").filter((line) => line.trim()))})`,
  regex: (text) => `compile_regex(${py(text)})`,
  json_schema: (text) => `compile_json_schema(json.loads(${text.includes('"""') || text.endsWith("\\") ? py(text) : `r"""${text}"""`}))`,
  gbnf: (text) => `compile_cfg(${py(text)})`,
};

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
  constructor(lab, code, trigger) {
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
    this.editor = new EditorView({
      parent: root.querySelector("[data-testid=lab-constraint]"),
      state: EditorState.create({
        doc: "",
        extensions: [
          history(), drawSelection(), EditorView.lineWrapping,
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
        this.apply({ kind: preset.kind, constraint: preset.constraint, prompt: preset.prompt,
                     seed: 0, max_tokens: 120, ...(preset.settings || {}) });
      }
    });
    this.form.addEventListener("input", () => this.changed());
    this.form.addEventListener("change", () => this.changed());
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.run("generate");
    });
    root.querySelector("[data-testid=lab-step]").addEventListener("click", () => this.run("step"));
    this.result.addEventListener("click", (event) => {
      const button = event.target.closest("[data-testid=lab-allowed-token]");
      if (button) this.run("pick", Number(button.dataset.tokenId));
    });
    window.addEventListener("hashchange", () => this.restore());
    if (this.restore()) {
      this.run("generate"); // a shared link shows its result (it waits for Python to start)
    } else {
      const name = this.presets.nombres ? "nombres" : Object.keys(this.presets)[0];
      const first = this.presets[name];
      $("lab-preset").value = name;
      this.apply({ kind: first.kind, constraint: first.constraint, prompt: first.prompt });
    }
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

  /* The fragment holds the state; returns whether it held one. */
  restore() {
    const hash = window.location.hash.slice(1);
    if (!hash) return false;
    const params = new URLSearchParams(hash);
    const state = {};
    for (const [key, value] of params) {
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
    const state = this.state();
    this.temperatureValue.textContent = state.temperature.toFixed(1).replace(".", ",");
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(state)) {
      params.set(key, typeof value === "boolean" ? (value ? "1" : "0") : (value ?? ""));
    }
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
    return lines.join("\n");
  }

  run(action, tokenId = null) {
    if (!this.form.reportValidity()) return; // the browser says which field is out of range
    const code = `from lesson.laboratorio import act\nact(${py(action)}, ${py(JSON.stringify(this.state()))}, ${py(tokenId)})`;
    this.kernel.enqueue(new LabRun(this, code, action === "generate" ? "generate" : "step"));
  }

  /* After a run: a short status for screen readers, and the focus where the reader goes on. */
  done(trigger) {
    const output = this.result.querySelector("[data-testid=lab-output]");
    const summary = output?.querySelector(".lab-summary")?.textContent;
    const error = this.result.querySelector("[data-testid=lab-error], .out-error");
    this.status.textContent = error ? "Error: mira el resultado." : (summary || "");
    const next = this.result.querySelector("[data-testid=lab-allowed-token]");
    if (trigger === "step" && next) next.focus();
    else this.form.querySelector(trigger === "step" ? "[data-testid=lab-step]" : "[data-testid=lab-generate]").focus();
  }

  setRunning(running) {
    // data-state of the view: running while an action runs, then done (its output is in)
    this.result.dataset.state = running ? "running" : "done";
    const output = this.result.querySelector("[data-testid=lab-output]");
    if (running && output) output.dataset.state = "running";
    this.form.querySelectorAll("[data-testid=lab-generate], [data-testid=lab-step]")
      .forEach((button) => { button.disabled = running; });
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
