/* One code cell: a CodeMirror 6 editor, a Run button, a run-order prompt and an
 * output area. States (data-state): idle | running | done | error.
 *
 * The editor is built lazily (``ensureEditor``): when the cell comes near the view, when the reader
 * reaches its code, or once Python is ready (``buildEditorsLazily``, a few per idle slice), whichever is
 * first; a cell with a saved edit gets it at once. Until then the code is the page's static ``pre``,
 * and running it runs that text.
 *
 * Keyboard, as in a notebook: reaching an editor with Tab does not capture Tab (the
 * editor is "selected", not being edited), so Tab goes on through the page; Enter, a
 * click or typing starts editing (then Tab indents); Esc stops editing. The hint below
 * the editor says which mode it is in. Edits are kept in local storage (edits.js). */
import { t } from "./i18n.js";
import { EditorView, keymap, lineNumbers, drawSelection } from "@codemirror/view";
import { EditorState } from "@codemirror/state";
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { syntaxHighlighting, bracketMatching, indentOnInput } from "@codemirror/language";
import { python } from "@codemirror/lang-python";
import { lessonHighlight } from "./highlight.js";
import { EditStore } from "./edits.js";

let pointerPressed = false; // a mouse button or a finger is down, anywhere in the page
document.addEventListener("pointerdown", () => { pointerPressed = true; }, true);
document.addEventListener("pointerup", () => { pointerPressed = false; }, true);

const HINTS = {
  selected: t("Intro: editar · Mayús+Intro: ejecutar · Tab: seguir por la página"),
  editing: t("Editando: Tab sangra · Esc: dejar de editar · Mayús+Intro: ejecutar"),
};

/* The offset in ``pre``'s text of the point (x, y) of the viewport, or null (the engine's caret
 * from a point: ``caretPositionFromPoint``, or ``caretRangeFromPoint`` where that is missing). */
function offsetAt(pre, x, y) {
  let node = null;
  let offset = 0;
  if (document.caretPositionFromPoint) {
    const position = document.caretPositionFromPoint(x, y);
    if (position) ({ offsetNode: node, offset } = position);
  } else if (document.caretRangeFromPoint) {
    const range = document.caretRangeFromPoint(x, y);
    if (range) ({ startContainer: node, startOffset: offset } = range);
  }
  if (!node || !pre.contains(node)) return null;
  const before = document.createRange();
  before.setStart(pre, 0);
  before.setEnd(node, offset);
  return before.toString().length;
}

export class Cell {
  /* onEdited(cell): called when the cell becomes edited or original again. */
  constructor(root, index, kernel, onEdited = () => {}) {
    this.root = root;
    this.id = `cell-${index}`;
    this.index = index;
    this.kernel = kernel;
    this.onEdited = onEdited;
    this.prompt = root.querySelector(".cell-prompt");
    this.outputArea = root.querySelector("[data-testid=cell-output]");
    // The cell as the page loaded it, for resetToLoaded.
    this.loaded = {
      state: root.dataset.state || "idle", prompt: this.prompt.textContent,
      output: [...this.outputArea.childNodes].map((node) => node.cloneNode(true)),
      precomputed: this.outputArea.dataset.precomputed,
    };
    this.runButton = root.querySelector("[data-testid=cell-run]");
    this.runButton.addEventListener("click", () => kernel.enqueue(this));
    this.editedMark = root.querySelector("[data-testid=cell-edited]");
    this.restoreButton = root.querySelector("[data-testid=cell-restore]");
    this.restoreButton?.addEventListener("click", () => this.restore());
    const pre = root.querySelector(".cell-source");
    this.pre = pre;
    this.original = pre.textContent;
    this.store = new EditStore(index, this.original);
    this.editing = false;
    this.editor = null; // built lazily (ensureEditor): the page's main thread stays free while Python boots
    const saved = this.store.load();
    this.source = saved ?? this.original;
    if (saved !== null && saved !== undefined) this.ensureEditor(); // the reader's edit, in its editor at once
    else this.waitForEditor(pre);
    this.showEdited();
    this.previous = { state: "idle", prompt: this.prompt.textContent };
  }

  /* Until its editor is built, the cell's code is the static ``pre`` the page came with, readable
   * and selectable, and in the Tab order: reaching it (Tab or a click) builds the editor in its
   * place, with the focus in it (selected by the keyboard, editing after a click), as if it had
   * been there all along. */
  waitForEditor(pre) {
    pre.tabIndex = 0;
    pre.setAttribute("aria-label", t("Código de la celda {n}", { n: this.index + 1 }));
    let pointer = false;
    let at = null; // where in the code the pointer went down: the cursor goes there
    pre.addEventListener("pointerdown", (event) => {
      pointer = true;
      at = offsetAt(pre, event.clientX, event.clientY);
    });
    pre.addEventListener("focus", () => {
      this.ensureEditor();
      this.view.focus(); // (the editor's own focus handler takes it as a keyboard arrival)
      if (pointer && at !== null) this.view.dispatch({ selection: { anchor: Math.min(at, this.view.state.doc.length) } });
      this.setEditing(pointer);
      if (pointer) delete this.root.dataset.hint;
      pointer = false;
      at = null;
    });
  }

  /* The editor, built now if it is not yet (idempotent). */
  ensureEditor() {
    if (!this.editor) this.editor = this.makeEditor(this.pre, this.source);
    return this.editor;
  }

  makeEditor(pre, source) {
    // Mount in place first, so CodeMirror measures the editor inside the page.
    const host = document.createElement("div");
    host.className = "cell-editor";
    pre.replaceWith(host);
    this.hint = document.createElement("p");
    this.hint.className = "cell-hint";
    this.hint.id = `${this.id}-hint`;
    this.hint.dataset.testid = "cell-hint";
    host.after(this.hint);
    const view = new EditorView({
      parent: host,
      state: EditorState.create({ doc: source, extensions: this.extensions() }),
    });
    this.watchFocus(host);
    this.view = view;
    this.setEditing(false);
    // Wrapped lines are measured with the fonts at hand; measure again once the page's fonts are
    // in, or the line numbers drift from their lines until the first edit.
    requestAnimationFrame(() => view.requestMeasure());
    document.fonts?.ready.then(() => view.requestMeasure());
    return view;
  }

  /* The editor's extensions: Python highlighting, line numbers and wrapping, the keys (Shift+Enter
   * and Mod+Enter run, Enter edits, Escape stops editing), saving each edit, and its label. */
  extensions() {
    const run = () => {
      this.kernel.enqueue(this);
      return true;
    };
    return [
      lineNumbers(), history(), drawSelection(),
      indentOnInput(), bracketMatching(), python(),
      syntaxHighlighting(lessonHighlight), EditorView.lineWrapping,
      keymap.of([
        { key: "Shift-Enter", run },
        { key: "Mod-Enter", run },
        { key: "Enter", run: () => !this.editing && this.setEditing(true) },
        { key: "Escape", run: () => this.editing && this.setEditing(false) },
        ...defaultKeymap, ...historyKeymap, indentWithTab,
      ]),
      EditorView.updateListener.of((update) => {
        if (!update.docChanged) return;
        if (!this.editing && update.transactions.some((t) => t.isUserEvent("input"))) {
          this.setEditing(true); // typing starts editing, as Enter does
        }
        this.saveEdit();
      }),
      EditorView.contentAttributes.of({
        "aria-label": t("Código de la celda {n}", { n: this.index + 1 }),
        "aria-describedby": this.hint.id,
      }),
    ];
  }

  /* The focus handlers of the editor host: a click edits the cell, the keyboard only selects it. */
  watchFocus(host) {
    // A click edits; arriving by the keyboard only selects the cell (Tab goes on), and shows
    // the hint. The hint goes when focus leaves, but not under a pressed pointer: the text
    // below would move between the press and the release, and the click would miss.
    let pointer = false;
    host.addEventListener("pointerdown", () => { pointer = true; }, true);
    host.addEventListener("focusin", () => {
      this.setEditing(pointer);
      if (!pointer) this.root.dataset.hint = "true";
      pointer = false;
    });
    host.addEventListener("focusout", (event) => {
      if (host.contains(event.relatedTarget)) return;
      const hide = () => { delete this.root.dataset.hint; };
      if (pointerPressed) document.addEventListener("pointerup", hide, { once: true });
      else hide();
    });
  }

  /* Editing: Tab indents. Selected: Tab and Shift+Tab move focus on. Returns true. */
  setEditing(editing) {
    this.editing = editing;
    this.view.setTabFocusMode(!editing);
    this.root.dataset.editing = String(editing);
    this.hint.textContent = HINTS[editing ? "editing" : "selected"];
    return true;
  }

  code() {
    return this.editor ? this.editor.state.doc.toString() : this.source;
  }

  get edited() {
    return this.code() !== this.original;
  }

  saveEdit() {
    if (this.edited) this.store.save(this.code());
    else this.store.clear();
    this.showEdited();
  }

  showEdited() {
    const edited = this.edited;
    const was = this.root.dataset.edited === "true";
    this.root.dataset.edited = String(edited);
    if (this.editedMark) this.editedMark.hidden = !edited;
    if (this.restoreButton) this.restoreButton.hidden = !edited;
    if (this.outputArea.dataset.precomputed) {
      this.outputArea.dataset.precomputed = edited ? "original" : "true";
    }
    if (edited !== was) this.onEdited(this);
  }

  /* Back to the code the page came with (undoable with Ctrl+Z). */
  restore() {
    if (!this.edited) return;
    this.ensureEditor();
    const focused = this.restoreButton && document.activeElement === this.restoreButton;
    this.editor.dispatch({
      changes: { from: 0, to: this.editor.state.doc.length, insert: this.original },
      userEvent: "restore",
    });
    if (focused) this.runButton.focus(); // the restore button hides itself
  }

  /* Back to the cell as the page loaded it: the original code with no undo history and no saved
   * edit, not being edited, the build's output and the first prompt. For the end-to-end tests'
   * reset between two tests on one page (page.js, ``course-test-reset``). */
  resetToLoaded() {
    this.source = this.original;
    if (this.editor) {
      this.editor.setState(EditorState.create({ doc: this.original, extensions: this.extensions() }));
      this.setEditing(false);
    }
    delete this.root.dataset.hint;
    this.store.clear();
    this.outputArea.replaceChildren(...this.loaded.output.map((node) => node.cloneNode(true)));
    if (this.loaded.precomputed === undefined) delete this.outputArea.dataset.precomputed;
    else this.outputArea.dataset.precomputed = this.loaded.precomputed;
    this.showEdited();
    this.lastStream = null;
    this.previous = { state: this.loaded.state, prompt: this.loaded.prompt };
    this.setState(this.loaded.state, this.loaded.prompt);
  }

  setState(state, prompt) {
    this.root.dataset.state = state;
    this.prompt.textContent = prompt;
    this.runButton.setAttribute("aria-busy", String(state === "running"));
  }

  markQueued() {
    this.previous = { state: this.root.dataset.state, prompt: this.prompt.textContent };
    this.setState("running", "[*]");
  }

  cancel() {
    this.setState(this.previous.state, this.previous.prompt);
  }

  /* Not run in the current Python (after a restart); the old output stays visible. */
  reset() {
    this.previous = { state: "idle", prompt: "[ ]" };
    this.setState("idle", "[ ]");
  }

  start() {
    this.outputArea.replaceChildren(); // the precomputed output too: this run replaces it
    delete this.outputArea.dataset.precomputed;
    this.lastStream = null;
  }

  finish(ok, count, message) {
    if (message) this.append("pre", "out-error", message);
    this.setState(ok ? "done" : "error", count ? `[${count}]` : "[!]");
  }

  append(tag, className, text) {
    const node = document.createElement(tag);
    node.className = className;
    node.textContent = text;
    this.outputArea.append(node);
    this.lastStream = null;
    return node;
  }

  /* A message from the worker: stream, display or error. */
  output(message) {
    if (message.type === "stream") {
      if (this.lastStream && this.lastStream.name === message.name) {
        this.lastStream.node.textContent += message.text;
      } else {
        const node = this.append("pre", `out-${message.name}`, message.text);
        this.lastStream = { name: message.name, node };
      }
    } else if (message.type === "display" && message.html !== undefined) {
      const node = this.append("div", "out-html", "");
      node.innerHTML = message.html; // the reader's own code produced this HTML
    } else if (message.type === "display") {
      this.append("pre", "out-text", message.text);
    } else if (message.type === "error") {
      this.append("pre", "out-error", message.traceback);
    }
  }
}

/* Build the editors of ``cells`` that come near the view now, and all the others once ``ready``
 * resolves, a few per idle slice so that no long task holds the page (issue 43: the main thread
 * stays free while Python boots). Returns nothing; safe to call once per page. */
export function buildEditorsLazily(cells, ready) {
  const waiting = new Map(cells.filter((cell) => !cell.editor).map((cell) => [cell.pre, cell]));
  const observer = "IntersectionObserver" in window ? new IntersectionObserver((entries) => {
    for (const entry of entries) {
      if (!entry.isIntersecting) continue;
      const cell = waiting.get(entry.target);
      observer.unobserve(entry.target);
      if (cell) { waiting.delete(entry.target); cell.ensureEditor(); }
    }
  }, { rootMargin: "300px 0px" }) : null;
  if (observer) for (const pre of waiting.keys()) observer.observe(pre);
  ready.then(() => {
    observer?.disconnect();
    const rest = cells.filter((cell) => !cell.editor);
    const idle = window.requestIdleCallback || ((fn) => setTimeout(() => fn({ timeRemaining: () => 8 }), 16));
    const slice = (deadline) => {
      do {
        const cell = rest.shift();
        if (cell && !cell.editor) cell.ensureEditor();
      } while (rest.length && deadline.timeRemaining() > 4);
      if (rest.length) idle(slice);
    };
    if (rest.length) idle(slice);
  });
}
