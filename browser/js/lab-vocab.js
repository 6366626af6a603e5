/* The «Laboratorio»'s «vocabulario» choice: with a real tokenizer's vocabulary (o200k_base,
 * cl100k_base) the form computes the constraint's masks over a text, with no model. Each action runs
 * one call of the Python function lesson.laboratorio.vocab.act_vocab in the page's kernel: "masks"
 * shows the table of positions in the result, "panel" the allowed tokens of one position (its
 * search box asks Python again as the reader types). The Lab (./lab.js) owns the form and the
 * address; this module owns what the mode shows and runs. */
import { t } from "./i18n.js";

export const MINIGPT = "minigpt"; // the mini-GPT's own tokens, with the model
const SEARCH_DELAY_MS = 250; // typing pauses this long before the search runs

/** A JSON value written as a Python literal (JSON strings, numbers and null as None). */
function py(value) {
  return value === null || value === undefined ? "None" : JSON.stringify(value);
}

/* One call of act_vocab as a queued "cell" of the kernel (the KernelClient's cell interface). */
class VocabRun {
  constructor(mode, action, code) {
    this.mode = mode;
    this.action = action;
    this.root = mode.lab.result;
    this.id = `lab-vocab-${++VocabRun.count}`;
    this.source = code;
  }

  code() { return this.source; }
  markQueued() { this.mode.setRunning(true); }
  start() { this.mode.setRunning(true); }
  cancel() { this.mode.setRunning(false); }
  reset() { this.mode.setRunning(false); }

  finish(ok, count, message) {
    if (message) this.mode.lab.showText(message, "lab-stopped");
    this.mode.setRunning(false);
    this.mode.done(this);
  }

  output(message) {
    if (message.type === "display" && message.html !== undefined) this.mode.show(this, message.html);
    else if (message.type === "error") this.mode.lab.showText(message.traceback, "out-error");
    else if (message.type === "stream") this.mode.lab.showText(message.text, `out-${message.name}`, true);
  }
}
VocabRun.count = 0;

export class VocabMode {
  constructor(lab, root) {
    this.lab = lab;
    this.root = root;
    this.shown = null; // the settings of the table on show: its panels use them, whatever the form says
    this.select = root.querySelector("[data-testid=lab-vocab]");
    this.text = root.querySelector("[data-testid=lab-text]");
    this.running = false;
    this.queued = null; // a search typed while something ran: the latest only
    root.querySelector("[data-testid=lab-masks]").addEventListener("click", () => this.run("masks"));
    lab.result.addEventListener("click", (event) => {
      const open = event.target.closest("[data-testid=vocab-open]");
      if (open) this.run("panel", { position: Number(open.dataset.position) });
    });
    lab.result.addEventListener("input", (event) => {
      if (!event.target.matches("[data-testid=vocab-search]")) return;
      clearTimeout(this.searchTimer);
      const position = Number(event.target.closest("[data-testid=vocab-allowed]").dataset.position);
      this.searchTimer = setTimeout(() => this.run("panel", { position, query: event.target.value }), SEARCH_DELAY_MS);
    });
  }

  /* Whether the form's vocabulary is a real one (masks only). */
  active() {
    return this.select.value !== MINIGPT;
  }

  /* The mode's fields for the form's state: none with the mini-GPT, so its links stay as they were. */
  state() {
    return this.active() ? { vocab: this.select.value, text: this.text.value } : {};
  }

  /* Put a state's vocabulary and text in the form (a link without them: the mini-GPT). */
  apply(state, { reset = false } = {}) {
    if (state.vocab !== undefined || reset) {
      const value = state.vocab ?? MINIGPT;
      this.select.value = [...this.select.options].some((o) => o.value === value) ? value : MINIGPT;
    }
    if (state.text !== undefined) this.text.value = state.text;
  }

  /* A link's vocabulary the menu lacks: the problem to show instead of running. */
  linkProblem(value) {
    if (value === undefined || [...this.select.options].some((o) => o.value === value)) return null;
    const names = [...this.select.options].map((o) => o.value).join(", ");
    return { message: t("el enlace trae un vocabulario desconocido, «{vocab}»: se admiten {names}", { vocab: value, names }),
      input: this.select };
  }

  /* The page shows the fields of the vocabulary chosen (the model's, or the text and «Calcular»),
   * and a table of masks whose settings the form no longer holds says so. */
  refresh() {
    this.root.classList.toggle("lab-real-vocab", this.active());
    const view = this.lab.result.querySelector("[data-testid=vocab-view]");
    let note = this.lab.result.querySelector("[data-testid=vocab-stale]");
    const stale = Boolean(view && this.shown) && JSON.stringify(this.formState()) !== JSON.stringify(this.shown);
    if (!stale) {
      note?.remove();
      return;
    }
    if (note) return;
    note = document.createElement("p");
    note.className = "lab-stale";
    note.dataset.testid = "vocab-stale";
    note.setAttribute("role", "status");
    note.textContent = t("Cambiaste el formulario: esta tabla es de los ajustes de antes (su «ver» también). Pulsa " +
      "«Calcular las máscaras» para los nuevos.");
    view.before(note);
  }

  /* What a table of masks depends on, as the form holds it now. */
  formState() {
    const f = this.lab.fields;
    return { vocab: this.select.value, kind: f.kind.value, constraint: this.lab.editor.state.doc.toString(),
      text: this.text.value };
  }

  run(action, { position = null, query = "" } = {}) {
    if (this.running) {
      if (action === "panel") this.queued = { position, query };
      return;
    }
    // a panel belongs to the table on show: its own settings, not the form's
    const state = action === "panel" && this.shown ? this.shown : this.formState();
    const code = `from lesson.laboratorio.vocab import act_vocab\nact_vocab(${py(action)}, ` +
      `${py(JSON.stringify(state))}, ${py(position)}, ${py(query)})`;
    this.searching = action === "panel" && document.activeElement?.matches?.("[data-testid=vocab-search]");
    if (action === "masks") {
      if (this.lab.linkProblem) {
        this.lab.showFormError(this.lab.linkProblem);
        return;
      }
      this.lab.clearFormError();
      this.lab.status.textContent = t("Calculando las máscaras con {vocab} (la primera vez, Python carga el " +
        "vocabulario y construye su trie: unos segundos)…", { vocab: state.vocab });
    }
    const run = new VocabRun(this, action, code);
    run.state = state;
    this.lab.kernel.enqueue(run);
  }

  setRunning(running) {
    this.running = running;
    this.lab.result.dataset.state = running ? "running" : "done";
    this.lab.form.querySelector("[data-testid=lab-masks]").setAttribute("aria-disabled", String(running));
  }

  /* A view from Python: the whole result ("masks", or an error), or one position's panel. */
  show(run, html) {
    const panel = this.lab.result.querySelector("#vocab-panel");
    if (run.action === "panel" && panel) {
      panel.innerHTML = html; // produced by lesson.laboratorio.vocab from the reader's own input
      const position = panel.querySelector("[data-testid=vocab-allowed]")?.dataset.position;
      this.lab.result.querySelectorAll("[data-testid=vocab-open]").forEach((button) => {
        button.setAttribute("aria-pressed", String(button.dataset.position === position));
      });
    } else this.lab.showHtml(html);
  }

  done(run) {
    const view = this.lab.result.querySelector("[data-testid=vocab-view]");
    const error = this.lab.result.querySelector("[data-testid=lab-error], .out-error");
    if (run.action === "masks") {
      this.shown = view ? run.state : null;
      this.refresh();
      this.lab.status.textContent = error ? t("Error: mira el resultado.")
        : view?.querySelector(".lab-summary")?.textContent || "";
      this.lab.markErrorSpan();
      const first = view?.querySelector("[data-testid=vocab-open]:not([disabled])");
      if (first) {
        // the table scrolls sideways on a phone: keep its first columns (position, token) in view
        first.focus({ preventScroll: true });
        view.querySelector(".table-scroll").scrollLeft = 0;
        view.scrollIntoView({ block: "nearest" });
      } else this.lab.form.querySelector("[data-testid=lab-masks]").focus();
    } else {
      const search = this.lab.result.querySelector("[data-testid=vocab-search]");
      this.lab.status.textContent = this.lab.result.querySelector("[data-testid=vocab-count]")?.textContent || "";
      if (search && this.searching) {
        search.focus();
        search.setSelectionRange(search.value.length, search.value.length);
      } else if (search && !this.queued) search.focus();
    }
    if (this.queued) {
      const { position, query } = this.queued;
      this.queued = null;
      this.run("panel", { position, query });
    }
  }
}
