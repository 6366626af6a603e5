/* One «Laboratorio» action as a queued run of the page's kernel (its cell interface), and what a
 * long run's pieces depend on. */
import { t } from "./i18n.js";

/* One action as a queued "cell" of the kernel (the KernelClient's cell interface). */
export class LabRun {
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
  start() {
    this.started = performance.now();
    this.lab.setRunning(true);
  }
  cancel() { this.lab.setRunning(false); }
  reset() { this.lab.setRunning(false); }

  finish(ok, count, message) {
    // The kernel's own message speaks of cells; this page has none.
    if (message) this.lab.showText(STOPPED(), "lab-stopped");
    if (!ok && !this.interrupted) this.lab.markError();
    if (ok && !message && this.lab.goOn(this)) return; // a long run: its next piece is queued
    this.lab.setRunning(false);
    if (this.interrupted) this.lab.forget(); // Python's experiment may be half changed
    this.lab.done(this, Boolean(message) || this.interrupted);
  }

  output(message) {
    if (message.type === "display" && message.html !== undefined) {
      if (this.lab.keepsResultOver(message.html)) this.keptOld = true;
      else this.lab.showHtml(message.html);
    }
    else if (message.type === "error" && /\bKeyboardInterrupt\b/.test(message.traceback || "")) {
      // the kernel bar's «Detener» interrupted Python (isolated pages) outside the lab's own catch
      this.interrupted = true;
      this.lab.showText(INTERRUPTED(), "lab-stopped");
    } else if (message.type === "error") this.lab.showText(message.traceback, "out-error");
    else if (message.type === "stream") this.lab.showText(message.text, `out-${message.name}`, true);
    else if (message.type === "display") this.lab.showText(message.text, "out-text");
  }
}
LabRun.count = 0;
export const PIECE = 20; // tokens per run of a long generation: progress shows, and Esc stops, between pieces
export const PIECE_MS = 2000; // a slow grammar's pieces are made smaller, to about this long each
export const SLOW_MS = 100; // from this many ms per token, the progress line says what the last piece cost
/* The two thresholds above; an end-to-end test may lower them (``data-lab-piece-ms`` and
 * ``data-lab-slow-ms`` on the lab's root), so that it sees small pieces and the cost line on any
 * machine instead of depending on its speed. */
export function threshold(root, name, fallback) {
  const value = Number(root.dataset[name]);
  return root.dataset[name] !== undefined && Number.isFinite(value) ? value : fallback;
}
// messages in the page's language (functions: the catalog is read when one is shown)
const STOPPED = () => t("Detenida: Python se reinició para pararla. El árbol de antes sigue en la dirección " +
  "de la página: recárgala para volver a abrirlo, o pulsa «Generar» para empezar otro.");
const INTERRUPTED = () => t("Detenida: Python paró esta acción a medias. El árbol de antes sigue en la dirección " +
  "de la página: la próxima acción lo rehace desde ahí (o recarga la página), o pulsa «Generar» para empezar otro.");
