/* One code cell: a CodeMirror 6 editor, a Run button, a run-order prompt and an
 * output area. States (data-state): idle | running | done | error. */
import { EditorView, keymap, lineNumbers, drawSelection } from "@codemirror/view";
import { EditorState } from "@codemirror/state";
import {
  defaultKeymap, history, historyKeymap, indentWithTab, temporarilySetTabFocusMode,
} from "@codemirror/commands";
import { syntaxHighlighting, bracketMatching, indentOnInput } from "@codemirror/language";
import { python } from "@codemirror/lang-python";
import { lessonHighlight } from "./highlight.js";

export class Cell {
  constructor(root, index, kernel) {
    this.root = root;
    this.id = `cell-${index}`;
    this.index = index;
    this.kernel = kernel;
    this.prompt = root.querySelector(".cell-prompt");
    this.outputArea = root.querySelector("[data-testid=cell-output]");
    this.runButton = root.querySelector("[data-testid=cell-run]");
    this.runButton.addEventListener("click", () => kernel.enqueue(this));
    this.editor = this.makeEditor(root.querySelector(".cell-source"));
    this.previous = { state: "idle", prompt: this.prompt.textContent };
  }

  makeEditor(pre) {
    const source = pre.textContent;
    // Mount in place first, so CodeMirror measures the editor inside the page.
    const host = document.createElement("div");
    host.className = "cell-editor";
    pre.replaceWith(host);
    const run = () => {
      this.kernel.enqueue(this);
      return true;
    };
    const view = new EditorView({
      parent: host,
      state: EditorState.create({
        doc: source,
        extensions: [
          lineNumbers(), history(), drawSelection(),
          indentOnInput(), bracketMatching(), python(),
          syntaxHighlighting(lessonHighlight), EditorView.lineWrapping,
          keymap.of([
            { key: "Shift-Enter", run },
            { key: "Mod-Enter", run },
            // Escape, then Tab, leaves the editor (Tab indents otherwise).
            { key: "Escape", run: temporarilySetTabFocusMode },
            ...defaultKeymap, ...historyKeymap, indentWithTab,
          ]),
          EditorView.contentAttributes.of({
            "aria-label": `Código de la celda ${this.index + 1} (Mayús+Intro ejecuta; Esc y Tab sale)`,
          }),
        ],
      }),
    });
    // Wrapped lines are measured with the fonts at hand; measure again once the page's fonts are
    // in, or the line numbers drift from their lines until the first edit.
    requestAnimationFrame(() => view.requestMeasure());
    document.fonts?.ready.then(() => view.requestMeasure());
    return view;
  }

  code() {
    return this.editor.state.doc.toString();
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
    this.outputArea.replaceChildren();
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
