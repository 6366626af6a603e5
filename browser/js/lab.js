/* The «Laboratorio» page: a form whose every action runs one call of the Python function
 * lesson.laboratorio.act in the page's kernel, and shows the view it returns. The form's state lives in
 * the URL fragment, so a link reopens the same experiment (nothing leaves the page); the fragment's
 * format is the same in both editions, so a link opens the same experiment in either.
 * Every string it shows is a Spanish id through t() / tn() (./i18n.js): English on an English page,
 * from the catalog laboratorio_js.po. */
import { EditorView, keymap, drawSelection, Decoration } from "@codemirror/view";
import { EditorState, StateField, StateEffect } from "@codemirror/state";
import { defaultKeymap, history, historyKeymap } from "@codemirror/commands";
import { decimal, t } from "./i18n.js";
import { MINIGPT, VocabMode } from "./lab-vocab.js";
import { FIELD_RULES, fieldProblem, int, numberOrNull, parseNumber, searchCount, temperatureProblem,
  tokensText } from "./lab-fields.js";
import { experimentPython, py } from "./lab-python.js";
import { LabRun, PIECE, PIECE_MS, SLOW_MS, threshold } from "./lab-run.js";

const KINDS = ["none", "choice", "regex", "json_schema", "gbnf"];
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

/* The form's state as one comparable string (state() lists its keys in a fixed order). */
function key(state) {
  return JSON.stringify(state);
}

const NO_TREE = { tree: "", branch: "", open: "" };

const STALE = () => t("Cambiaste los ajustes: este árbol es del experimento anterior y el enlace ya no lo guarda.");
const STALE_ACTION = () => t("Este árbol es del experimento anterior: para seguir con él, pulsa «Volver a los " +
  "ajustes de este árbol»; para probar los ajustes nuevos, pulsa «Generar».");
// actions on the result on show: they need the settings it was made with
const ON_RESULT = ["choose", "pick", "open", "branch", "compare", "continue", "stop"];

export class Lab {
  constructor(root, kernel) {
    this.root = root;
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
    this.vocab = new VocabMode(this, root); // «Vocabulario»: a real vocabulary's masks, no model
    this.temperatureValue = $("lab-temperature-value");
    this.preset = $("lab-preset");
    this.shown = null; // the experiment on show: { state, tree, preset }, or null
    this.haltButton = root.querySelector("[data-testid=lab-halt]");
    this.haltButton.addEventListener("click", () => { if (this.running && this.pieces) this.stopSoon(); });
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
    this.preset.addEventListener("change", (event) => {
      const preset = this.presets[event.target.value];
      if (preset) {
        this.keepUndo(); // the reader's edits can come back with one click
        this.presetKey = null; // (while it applies, the select keeps its new name)
        // every setting a preset depends on, so the same preset always gives the same result
        this.apply({ kind: preset.kind, constraint: preset.constraint, prompt: preset.prompt,
                     seed: 0, max_tokens: 120, temperature: 1, top_k: null, top_p: null,
                     stop_at_accept: false, compare: false, text: "", ...(preset.settings || {}) });
        this.presetKey = key(this.state()); // the form as this preset left it, not edited yet
      }
    });
    this.form.addEventListener("input", () => this.changed());
    this.form.addEventListener("change", () => this.changed());
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      if (this.vocab.active()) this.vocab.run("masks");
      else this.run("generate");
    });
    root.querySelector("[data-testid=lab-copy-link]").addEventListener("click", () => this.copyLink());
    root.querySelector("[data-testid=lab-step]").addEventListener("click", () => this.run("step"));
    root.querySelector("[data-testid=lab-next]").addEventListener("click", () => this.run("next"));
    root.querySelector("[data-testid=lab-continue]").addEventListener("click", () => this.run("continue"));
    this.result.addEventListener("click", (event) => this.clicked(event));
    this.result.addEventListener("change", (event) => {
      if (event.target.matches("[data-testid=lab-compare-with]")) {
        this.run("compare", { branch: Number(event.target.value) }, { quiet: true });
        return;
      }
      const entry = event.target.closest("[data-testid=lab-position]");
      // in a stale result the strip still shows each position's panel (no script needed), but
      // nothing runs with settings that are not this tree's
      if (entry && event.target.checked) this.run("open", { position: Number(entry.dataset.position) }, { quiet: true });
    });
    this.result.addEventListener("input", (event) => {
      if (event.target.matches("[data-testid=lab-token-search]")) this.search(event.target);
    });
    document.addEventListener("keydown", (event) => {
      if (event.key === "Escape" && this.running && this.pieces) this.stopSoon(); // a long run only
    });
    // The kernel bar's «Detener» during a long run stops it as the lab's own does, keeping the text
    // (capture: before the bar's handler, which would interrupt or restart Python).
    document.addEventListener("click", (event) => {
      if (!event.target.closest?.("[data-testid=stop]") || !this.running || !this.pieces) return;
      event.stopImmediatePropagation();
      event.preventDefault();
      this.stopSoon();
    }, true);
    window.addEventListener("hashchange", () => {
      if (!this.restore()) return;
      if (!this.running) {
        this.runRestore();
        return;
      }
      this.restoreQueued = true; // the link's tree, once the action running ends (a long one stops)
      if (this.pieces) this.stopSoon();
    });
    if (this.restore()) {
      this.runRestore(); // a shared link shows its result (it waits for Python to start)
    } else {
      const name = this.presets.nombres ? "nombres" : Object.keys(this.presets)[0];
      const first = this.presets[name];
      this.preset.value = name;
      this.apply({ kind: first.kind, constraint: first.constraint, prompt: first.prompt });
    }
  }

  /* Before a preset replaces the form: keep the form as it was, and offer to bring it back. While
   * the form is still exactly what the last preset wrote (the reader is only passing over presets,
   * with the arrow keys, say), the kept form stays the one from before the first of them: the
   * reader's own edits, however many presets were passed over. */
  keepUndo() {
    if (this.undoState && this.presetKey === key(this.state())) return;
    this.undoState = { vocab: MINIGPT, ...this.state() };
    this.undoButton.hidden = false;
  }

  undo() {
    if (!this.undoState) return;
    this.apply(this.undoState);
    this.undoState = null;
    this.presetKey = null;
    this.undoButton.hidden = true;
    this.preset.value = "";
    this.fields.kind.focus();
  }

  state() {
    const f = this.fields;
    return {
      kind: f.kind.value, constraint: this.editor.state.doc.toString(), prompt: f.prompt.value,
      seed: f.seed.value.trim() === "" ? 0 : parseNumber(f.seed.value), temperature: Number(f.temperature.value),
      top_k: numberOrNull(f.top_k), top_p: numberOrNull(f.top_p),
      max_tokens: numberOrNull(f.max_tokens), stop_at_accept: f.stop_at_accept.checked,
      compare: f.compare.checked, ...this.vocab.state(),
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
    this.vocab.apply(state);
    this.changed();
  }

  /* «Copiar el enlace»: the page's address (the experiment and its tree) to the clipboard, or,
   * where the browser gives no clipboard (a page not served over https or localhost), the way to
   * copy it by hand. */
  async copyLink() {
    const said = this.form.querySelector("[data-testid=lab-copied]");
    if (this.pendingHash) window.history.replaceState(null, "", this.pendingHash); // the latest one
    try {
      await navigator.clipboard.writeText(window.location.href);
      said.textContent = t("Enlace copiado: abre este mismo experimento.");
    } catch {
      said.textContent = t("Este navegador no deja copiar desde la página: copia la dirección de la barra.");
    }
  }

  /* The fragment holds the state and the tree of branches; returns whether it held one. The
   * link's experiment becomes the one the page stands for (its tree stays in the address) until
   * its result comes. */
  restore() {
    const hash = window.location.hash.slice(1);
    if (!hash || hash === this.written) return false;
    const params = new URLSearchParams(hash);
    const state = {};
    // a part that is not valid percent-encoding: the browser would read it as «�» without a word
    const damaged = hash.split("&").find((part) => {
      try { decodeURIComponent(part.replace(/\+/g, " ")); return false; } catch { return true; }
    });
    const tree = { tree: params.get("tree") || "", branch: params.get("branch") || "", open: params.get("open") || "" };
    this.linkProblem = null;
    for (const [name, value] of params) {
      if (name in tree) continue;
      if (["seed", "top_k", "top_p", "max_tokens"].includes(name)) {
        // text fields: the link's text goes in as it is, and the form's own check judges it
        state[name] = value === "" ? null : value;
      } else if (name === "temperature") {
        state[name] = value === "" ? null : Number(value);
        this.linkProblem ||= temperatureProblem(value, state[name], this.fields.temperature);
      } else if (["stop_at_accept", "compare"].includes(name)) state[name] = value === "1";
      else {
        state[name] = value;
        if (name === "kind" && !KINDS.includes(value)) {
          this.linkProblem ||= { message: t("el enlace trae un tipo de restricción desconocido, «{kind}»: se " +
            "admiten ninguna, lista de opciones, expresión regular, JSON Schema y gramática GBNF", { kind: value }),
          input: this.fields.kind };
        }
      }
    }
    this.linkProblem ||= this.vocab.linkProblem(state.vocab);
    if (damaged) {
      this.linkProblem = { message: t("el enlace está dañado: «{part}» no es texto bien codificado; vuelve a copiar el " +
        "enlace entero", { part: damaged.slice(0, 60) }), input: null };
    }
    state.vocab ??= MINIGPT; // a link without one: the mini-GPT's, as before the choice existed
    this.restoring = true;
    this.apply(state);
    this.restoring = false;
    this.pending = tree;
    this.shown = { state: this.state(), tree, preset: this.preset.value };
    this.refreshStale();
    return true;
  }

  /* After any edit of the form: the stale mark on the result, and the address. */
  changed() {
    this.vocab.refresh();
    this.markUnusedConstraint();
    if (this.restoring) {
      this.writeHash();
      return;
    }
    this.linkProblem = null; // the reader edited the form: the link's value is no longer in it
    // «Empezar desde» names a preset only while the form is still what it wrote
    if (this.presetKey && key(this.state()) !== this.presetKey) {
      this.presetKey = null; // the reader's own edits now (and the undo point for the next preset)
      if (this.preset.value) this.preset.value = "";
    }
    this.clearFormError();
    this.refreshStale();
    this.writeHash();
  }

  /* After an interrupt: Python drops its experiment, and the next action rebuilds the tree that
   * the address holds (act does, when it has none and the state names a tree). */
  forget() {
    this.kernel.enqueue({
      id: `lab-forget-${++LabRun.count}`, root: this.result,
      code: () => "from lesson.laboratorio.protocol import forget\nforget()",
      markQueued() {}, start() {}, cancel() {}, reset() {}, finish() {}, output() {},
    });
  }

  /* With «ninguna», the constraint's text is kept but not used: the editor says so. */
  markUnusedConstraint() {
    const unused = this.fields.kind.value === "none";
    const box = this.form.querySelector("[data-testid=lab-constraint]");
    box.classList.toggle("lab-unused", unused);
    let hint = this.form.querySelector("[data-testid=lab-constraint-unused]");
    if (unused && !hint) {
      hint = document.createElement("p");
      hint.className = "hint lab-unused-hint";
      hint.dataset.testid = "lab-constraint-unused";
      hint.textContent = t("Con «ninguna», este texto no se usa: se guarda por si vuelves a elegir una restricción.");
      box.after(hint);
    } else if (!unused && hint) hint.remove();
  }

  /* Whether the form no longer holds the settings of the experiment on show. */
  stale() {
    return Boolean(this.shown) && key(this.state()) !== key(this.shown.state);
  }

  /* The tree the address and the Python code stand for: the one on show, unless the form's
   * settings are no longer its own. */
  currentTree() {
    return this.shown && !this.stale() ? this.shown.tree : NO_TREE;
  }

  /* A result whose settings the form no longer holds says so at its top, with a button that puts
   * them back (and its tree in the address); its tokens and branches do nothing meanwhile. The
   * mark goes when the form equals the result's settings again, by that button or by hand. */
  refreshStale() {
    const output = this.result.querySelector("[data-testid=lab-output]");
    const stale = Boolean(output) && this.stale();
    const orNow = this.result.querySelector(".lab-stale-or");
    if (orNow) orNow.textContent = this.staleOr();
    this.result.dataset.stale = String(stale);
    this.result.querySelectorAll("[data-testid=lab-allowed-token], .lab-branch-open").forEach((button) => {
      if (stale) button.setAttribute("aria-disabled", "true");
      else button.removeAttribute("aria-disabled");
    });
    let note = this.result.querySelector("[data-testid=lab-stale]");
    if (!stale) {
      if (note) {
        const focused = note.contains(document.activeElement);
        note.remove();
        if (focused) this.focusResult();
      }
      return;
    }
    if (note) return;
    note = document.createElement("div");
    note.className = "lab-stale";
    note.dataset.testid = "lab-stale";
    note.setAttribute("role", "status");
    const text = document.createElement("p");
    text.textContent = STALE();
    const back = document.createElement("button");
    back.type = "button";
    back.dataset.testid = "lab-stale-restore";
    back.textContent = t("Volver a los ajustes de este árbol");
    back.addEventListener("click", () => this.backToShown());
    const or = document.createElement("span");
    or.className = "lab-stale-or";
    const why = document.createElement("p");
    why.className = "lab-stale-why";
    why.dataset.testid = "lab-stale-why";
    const actions = document.createElement("p");
    or.textContent = this.staleOr();
    actions.append(back, or);
    note.append(text, actions, why);
    this.result.prepend(note);
  }

  /* The stale mark's other way out: «Generar» with the mini-GPT, «Calcular las máscaras» with a real
   * vocabulary (where «Generar» is hidden). */
  staleOr() {
    return " " + (this.vocab.active() ? t("o pulsa «Calcular las máscaras» para ver las del vocabulario elegido.")
      : t("o pulsa «Generar» para empezar uno con los ajustes nuevos."));
  }

  /* The stale mark's button: the form back to the settings of the result on show. */
  backToShown() {
    if (!this.shown) return;
    this.apply({ vocab: MINIGPT, ...this.shown.state }); // a tree is the mini-GPT's
    this.preset.value = this.shown.preset ?? "";
    this.status.textContent = t("Ajustes de este árbol de vuelta en el formulario; el enlace lo guarda otra vez.");
  }

  /* The focus, after the stale mark went: the strip's open position, else «Generar». */
  focusResult() {
    const entry = this.result.querySelector("[data-testid=lab-position] input:checked");
    (entry || this.form.querySelector("[data-testid=lab-generate]")).focus();
  }

  /* The form's state, and the tree of the result on show, into the fragment (no history entry). */
  writeHash() {
    const state = this.state();
    this.temperatureValue.textContent = decimal(state.temperature, 1);
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(state)) {
      params.set(name, typeof value === "boolean" ? (value ? "1" : "0") : (value ?? ""));
    }
    for (const [name, value] of Object.entries(this.currentTree())) if (value !== "") params.set(name, value);
    this.written = String(params);
    if (!this.restoring) this.replaceHash(`#${params}`);
    this.pythonCode.textContent = this.python(state);
  }

  /* Browsers cap replaceState (WebKit: 100 calls in 10 s, then a SecurityError), and typing in the
   * editor writes the address on every key: over the cap, the latest address goes in a second later. */
  replaceHash(hash) {
    this.pendingHash = hash;
    if (this.hashTimer) return;
    try {
      window.history.replaceState(null, "", hash);
      this.pendingHash = null;
    } catch (error) {
      if (error.name !== "SecurityError") throw error;
      this.hashTimer = setTimeout(() => {
        this.hashTimer = null;
        if (this.pendingHash) this.replaceHash(this.pendingHash);
      }, 1000);
    }
  }

  /* The same experiment as code a reader can paste into a cell (./lab-python.js). */
  python(state) {
    return experimentPython(state, { tree: this.currentTree(), ids: this.shown?.ids || [] });
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
    count.textContent = query ? searchCount(shown, items.length, input.value) : "";
  }

  runRestore() {
    if (this.vocab.active()) {
      this.vocab.run("masks");
      return;
    }
    this.run("restore", { ...(this.pending || NO_TREE) });
  }

  /* The form's fields checked here, so the message is in the page's language, the same as Python's
   * check_settings, from the field and a link alike. */
  invalid() {
    return FIELD_RULES.map((spec) => fieldProblem(this.fields, spec)).filter(Boolean);
  }

  /* An action, from the form or the result. ``quiet``: an action the reader did not ask for by
   * itself (opening a position of a stale result only shows its panel). */
  run(action, extra = {}, { quiet = false } = {}) {
    if (this.running) return; // one action at a time; «Detener» or Esc stops the one running
    if (ON_RESULT.includes(action) && this.stale()) {
      // the result's settings are not the form's: say so instead of mixing them (or of letting
      // Python refuse and the result vanish)
      const why = this.result.querySelector("[data-testid=lab-stale-why]");
      if (why) why.textContent = STALE_ACTION();
      if (!quiet) this.status.textContent = STALE_ACTION();
      return;
    }
    // every field's problem at once, each beside its field; a link's value first
    const problems = [this.linkProblem, ...this.invalid()].filter(Boolean);
    if (problems.length) {
      this.showFormError(problems);
      return;
    }
    this.clearFormError();
    const state = { ...this.state(), ...(action === "restore" ? extra : this.currentTree()) };
    const args = { token_id: null, position: null, branch: null, limit: null, ...extra };
    if (["generate", "continue", "restore"].includes(action) && !(action === "restore" && state.tree)) args.limit = PIECE;
    this.stopping = false;
    this.runPreset = this.preset.value;
    this.pieces = args.limit !== null; // a long run, in pieces: «Detener» and Esc can stop it
    this.enqueue(action === "restore" && !state.tree ? "generate" : action, state, args);
  }

  enqueue(action, state, args) {
    const code = `from lesson.laboratorio import act\nact(${py(action)}, ${py(JSON.stringify(state))}, ` +
      `${py(args.token_id)}, ${py(args.position)}, ${py(args.branch)}, ${py(args.limit)})`;
    const trigger = ["generate", "continue", "stop"].includes(action) ? "generate"
      : ["open", "compare", "restore"].includes(action) ? action : "step";
    const labRun = new LabRun(this, code, trigger, action);
    labRun.args = args;
    // the settings it ran with, without the tree: every piece of a long run keeps them, whatever
    // the reader edits meanwhile, and the result on show is theirs
    labRun.state = Object.fromEntries(Object.entries(state).filter(([name]) => !(name in NO_TREE)));
    this.kernel.enqueue(labRun);
    return labRun;
  }

  /* After a piece of a long run: queue the next one (true), or stop there, keeping the text. */
  goOn(labRun) {
    const output = this.result.querySelector("[data-testid=lab-output]");
    if (!output || labRun.args?.limit == null || output.dataset.state !== "idle") return false;
    const tree = this.readTree();
    if (this.stopping) {
      this.stopping = false;
      this.enqueue("stop", { ...labRun.state, ...tree }, {});
      return true;
    }
    const tokens = this.result.querySelectorAll("[data-testid=lab-position]").length;
    // a slow grammar: smaller pieces, so that the text on show grows at least every PIECE_MS
    const added = tokens - (labRun.tokensBefore ?? 0);
    const ms = labRun.started ? performance.now() - labRun.started : 0;
    const perToken = added > 0 ? ms / added : 0;
    const pieceMs = threshold(this.root, "labPieceMs", PIECE_MS);
    const limit = perToken > 0 ? Math.max(1, Math.min(PIECE, Math.floor(pieceMs / perToken))) : PIECE;
    const items = output.dataset.items === "" ? null : Number(output.dataset.items);
    if (labRun.firstItems === undefined) labRun.firstItems = items;
    if (labRun.firstPerToken === undefined) labRun.firstPerToken = perToken;
    this.status.textContent = t("Generando: {tokens} hasta ahora («Detener» o Esc para parar).", { tokens: tokensText(tokens) });
    this.progress(tokens, { perToken, firstPerToken: labRun.firstPerToken, items, firstItems: labRun.firstItems, limit });
    const next = this.enqueue("continue", { ...labRun.state, ...tree }, { limit });
    next.tokensBefore = tokens;
    next.firstItems = labRun.firstItems;
    next.firstPerToken = labRun.firstPerToken;
    return true;
  }

  /* The progress line of a long run: the tokens so far, what the last piece cost per token and, for
   * a grammar parsed with Earley sets, how many items the parser holds now against the first piece's
   * (an ambiguous grammar's grow with the text, and so does each token's cost). */
  progress(tokens, { perToken = 0, firstPerToken = 0, items = null, firstItems = null, limit = PIECE } = {}) {
    const note = this.form.parentElement.querySelector("[data-testid=lab-progress]");
    if (!note) return;
    if (tokens === null) {
      note.textContent = "";
      return;
    }
    let text = t("Generando… {tokens} hasta ahora. «Detener» (o Esc) la para al acabar el trozo en curso ({piece} " +
      "como mucho) y guarda el texto.", { tokens: tokensText(tokens), piece: tokensText(limit) });
    if (perToken >= threshold(this.root, "labSlowMs", SLOW_MS)) {
      text += " " + t("El último trozo costó {ms} ms por token; el primero, {first} ms.",
        { ms: int(Math.round(perToken)), first: int(Math.round(firstPerToken)) });
      if (items !== null && firstItems !== null && items > firstItems) {
        text += " " + t("El analizador de Earley tiene ahora {items} elementos en su conjunto, y {first} al " +
          "principio: con una gramática ambigua crecen con el texto, y cada token cuesta más.",
        { items: int(items), first: int(firstItems) });
      }
    }
    note.textContent = text;
  }

  /* «Detener» or Esc: the run stops after its current piece; the branch keeps its text, «detenida». */
  stopSoon() {
    this.stopping = true;
    this.progress(null);
    this.status.textContent = t("Deteniendo…");
    this.haltButton.textContent = t("Deteniendo…");
    this.haltButton.setAttribute("aria-disabled", "true");
  }

  /* The tree the view on show describes (its data-tree, data-branch, data-open). */
  readTree() {
    const output = this.result.querySelector("[data-testid=lab-output]");
    if (!output) return NO_TREE;
    return { tree: output.dataset.tree || "", branch: output.dataset.branch || "", open: output.dataset.open || "" };
  }

  /* An error of the page's own (a field's value): with a result on show, above it, which stays;
   * else in its place. The field says it is invalid until the next edit. */
  showFormError(problems) {
    const list = (Array.isArray(problems) ? problems : [problems])
      .map((p) => (typeof p === "string" ? { message: p, input: null } : p));
    this.clearFormError();
    const box = document.createElement("div");
    box.className = "lab-error lab-form-error";
    box.dataset.testid = "lab-error";
    box.setAttribute("role", "alert");
    if (list.length === 1) box.textContent = list[0].message;
    else {
      for (const { message } of list) {
        const line = document.createElement("p");
        line.textContent = message;
        box.append(line);
      }
    }
    if (this.result.querySelector("[data-testid=lab-output]")) this.result.prepend(box);
    else this.result.replaceChildren(box);
    // each field says it is invalid, with its own message beside it, until the next edit
    list.forEach(({ message, input }, i) => {
      if (!input) return;
      input.setAttribute("aria-invalid", "true");
      const note = document.createElement("span");
      note.className = "lab-field-error";
      note.dataset.testid = "lab-field-error";
      note.id = `lab-field-error-${i}`;
      note.textContent = message;
      (input.closest("label") || input).after(note);
      input.setAttribute("aria-describedby", note.id);
    });
    this.result.dataset.state = "done";
    this.status.textContent = list.map((p) => p.message).join(" ");
    const first = list.find((p) => p.input)?.input;
    if (first) first.focus();
  }

  clearFormError() {
    this.result.querySelectorAll(".lab-form-error").forEach((box) => box.remove());
    this.form.querySelectorAll(".lab-field-error").forEach((note) => note.remove());
    this.form.querySelectorAll("[aria-describedby^=lab-field-error]").forEach((input) => input.removeAttribute("aria-describedby"));
    this.form.querySelectorAll("[aria-invalid]").forEach((input) => input.removeAttribute("aria-invalid"));
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

  done(labRun, lost = false) {
    const trigger = labRun.trigger;
    this.markErrorSpan();
    this.progress(null);
    this.showHalt(false);
    if (this.restoreQueued) { // a link came while it ran: its tree now
      this.restoreQueued = false;
      this.runRestore();
      return;
    }
    const shown = this.result.querySelector("[data-testid=lab-output]");
    if (labRun.keptOld) {
      // the action failed and the result on show stayed: it is still the experiment on show
    } else if (shown) {
      // the experiment on show: the settings it ran with (the reader may have edited since)
      this.shown = {
        state: labRun.state, tree: this.readTree(), preset: this.runPreset ?? "",
        ids: [...this.result.querySelectorAll("[data-testid=lab-position] .tok")]
          .map((tok) => Number(tok.title.split(" ").pop())),
      };
    } else if (!lost && !this.result.querySelector("[data-testid=lab-error][data-kind=stopped]")) {
      this.shown = null; // an error in its place: no tree to share (the kernel's «Detener», which
      // restarts Python, keeps the last tree in the address: Python rebuilds it on the next action)
    }
    this.pending = null;
    this.refreshStale();
    this.writeHash();
    const output = this.result.querySelector("[data-testid=lab-output]");
    const notice = output?.querySelector("[data-testid=lab-notice]")?.textContent;
    const summary = [notice, output?.querySelector(".lab-summary")?.textContent].filter(Boolean).join(". ");
    const error = this.result.querySelector("[data-testid=lab-error], .out-error");
    this.status.textContent = error ? t("Error: mira el resultado.") : (summary || "");
    const open = output?.dataset.open;
    const entry = open && this.result.querySelector(`[data-testid=lab-position][data-position="${open}"] input`);
    const next = this.result.querySelector("[data-testid=lab-allowed-token]");
    const compareWith = this.result.querySelector("[data-testid=lab-compare-with]");
    // a new result below the fold comes into view (the form is long on a phone), and the focus
    // that follows does not scroll back up to the button
    const below = trigger === "generate" && output && output.getBoundingClientRect().top > window.innerHeight * 0.7;
    if (below) output.scrollIntoView({ block: "start" });
    const focus = { preventScroll: Boolean(below) };
    // a link's tree, rebuilt as the page opens (or refused): the reader pressed nothing, so the
    // focus stays where the page put it; an error says itself (role="alert")
    if (trigger === "restore") return;
    if (trigger === "compare" && compareWith) compareWith.focus(focus);
    else if (trigger === "open" && entry) entry.focus(focus);
    else if (trigger === "step" && next) next.focus(focus);
    else this.form.querySelector(trigger === "step" ? "[data-testid=lab-step]" : "[data-testid=lab-generate]").focus(focus);
  }

  /* «Detener», beside the actions while a long run (in pieces) runs. */
  showHalt(visible) {
    this.haltButton.hidden = !visible;
    this.haltButton.textContent = t("Detener");
    this.haltButton.removeAttribute("aria-disabled");
  }

  setRunning(running) {
    this.running = running;
    if (running && this.pieces) this.showHalt(true);
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

  /* A failed action never costs the reader the result on show (a tree built by hand): Python's
   * error goes above it, as a field's does, and the result stays, with its stale mark and its
   * «Volver» button. Returns whether it did so (false: no result on show, or not an error). */
  keepsResultOver(html) {
    const output = this.result.querySelector("[data-testid=lab-output]");
    if (!output || !html.includes('data-testid="lab-error"')) return false;
    const holder = document.createElement("div");
    holder.innerHTML = html; // produced by lesson.laboratorio from the reader's own input
    const box = holder.querySelector("[data-testid=lab-error]");
    box.classList.add("lab-form-error"); // it goes at the next edit, as a field's error does
    this.result.querySelectorAll(".lab-form-error").forEach((old) => old.remove());
    output.before(box); // the site's CSS styles it; the view's own stylesheet is already on show
    return true;
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
