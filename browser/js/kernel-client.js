/* The page's side of the Python worker: start-up with a timeout, a FIFO queue of
 * cells to run, and Stop (interrupt when cross-origin isolated, else restart). */

import { t } from "./i18n.js";
import { launchWorker } from "./boot.js";

const SIGINT = 2;
/* How often Stop writes its request again while the cell runs on (see KernelClient.interrupt). */
const INTERRUPT_REPEAT_MS = 200;

/* The start-up's steps in ms since navigation: the worker's marks (epoch ms, see worker.js),
 * the worker's creation (``startedAt``, page clock) and the receipt of "ready" (now). */
function startupMarks(startedAt, workerMarks = {}) {
  const marks = { "worker-created": startedAt };
  for (const [name, epochMs] of Object.entries(workerMarks)) {
    marks[name] = epochMs - performance.timeOrigin;
  }
  marks["ready-received"] = performance.now();
  for (const name of Object.keys(marks)) marks[name] = Math.round(marks[name]);
  return marks;
}

export class KernelClient {
  /* config: the page's runtime config (see build.py); ui: {state(name, detail),
   * stage(message), activity(busy), restarted(stoppedCell, lostNames)} callbacks. */
  constructor(config, ui, { timeoutMs = 90000 } = {}) {
    if (!(config.stopGraceMs > 0)) throw new Error("runtime config: stopGraceMs missing");
    this.config = config;
    this.ui = ui;
    this.timeoutMs = timeoutMs;
    this.queue = [];
    this.current = null;
    this.worker = null;
    this.state = "loading";
    this.interruptBuffer = null;
    this.stopTimer = null; // after Stop, while Python may yet stop by itself
    this.repeatTimer = null; // after Stop, writes the interrupt request again (interrupt())
    this.names = []; // what the cells have defined in this Python (sent with each "done")
    this.runs = 0; // cells and lab actions sent to Python since the page loaded (or reset)
    this.resetDone = null; // while a reset() waits for the worker
  }

  setState(state, detail) {
    this.state = state;
    this.ui.state(state, detail);
    this.ui.activity(this.active);
  }

  start() {
    if (location.protocol === "file:") {
      this.setState("error", { reason: "file" });
      return;
    }
    this.setState("loading");
    this.names = [];
    // The worker the early script started while the page was parsed, once; else a new one.
    const early = self.earlyKernel;
    self.earlyKernel = null;
    let launch;
    try {
      launch = early || launchWorker(this.config);
    } catch (err) {
      this.fail(String(err && err.message ? err.message : err));
      return;
    }
    this.worker = launch.worker;
    this.interruptBuffer = launch.interruptBuffer;
    this.startedAt = launch.startedAt;
    const waited = performance.now() - this.startedAt;
    this.timer = setTimeout(() => this.fail("timeout"), Math.max(0, this.timeoutMs - waited));
    // What the worker sent before this call is handled after the caller's task (the page wires
    // its cells and views first), in order; later messages come straight here.
    const worker = this.worker;
    queueMicrotask(() => {
      if (this.worker !== worker) return; // failed or restarted meanwhile
      for (const message of launch.messages) {
        if (this.worker !== worker) return; // the worker reported an error
        this.onMessage(message);
      }
      if (launch.errors.length) {
        this.fail(launch.errors[0].message || t("el worker falló"));
        return;
      }
      // Only while it is this client's worker: what a worker that was ended sends afterwards
      // (its "done" or its error, already queued) is not about the current one.
      worker.onmessage = (event) => { if (this.worker === worker) this.onMessage(event.data); };
      worker.onerror = (event) => {
        if (this.worker === worker) this.fail(event.message || t("el worker falló"));
      };
    });
  }

  /* Forget what the cells have defined, in the same Python (the worker's ``reset``): for the
   * end-to-end tests, which reuse one page for many tests (page.js, ``course-test-reset``).
   * Resolves once the worker has reset; rejects unless Python is ready and idle. */
  reset() {
    if (this.state !== "ready" || this.active || !this.worker || this.resetDone) {
      return Promise.reject(new Error(`Python is ${this.state}${this.active ? ", with cells to run" : ""}`));
    }
    return new Promise((resolve) => {
      this.resetDone = resolve;
      this.worker.postMessage({ type: "reset" });
    });
  }

  /* Terminate the worker, and hear no more from it. */
  endWorker() {
    const worker = this.worker;
    this.worker = null;
    if (!worker) return;
    worker.onmessage = null;
    worker.onerror = null;
    worker.terminate();
  }

  fail(reason) {
    clearTimeout(this.timer);
    this.clearStop();
    this.endWorker();
    if (this.current) this.current.finish(false, null, t("Python no está disponible."));
    this.current = null;
    this.queue.splice(0).forEach((cell) => cell.cancel());
    this.setState("error", { reason, timeoutMs: this.timeoutMs });
  }

  onMessage(message) {
    switch (message.type) {
      case "stage":
        this.ui.stage(message);
        break;
      case "ready":
        clearTimeout(this.timer);
        this.setState("ready", {
          seconds: (performance.now() - this.startedAt) / 1000,
          marks: startupMarks(this.startedAt, message.marks),
        });
        this.next();
        break;
      case "init-error":
        this.fail(message.message);
        break;
      case "reset-done":
        this.names = message.names;
        this.runs = 0;
        this.resetDone?.();
        this.resetDone = null;
        break;
      case "done":
        if (this.current) this.current.finish(message.ok, message.count);
        if (message.names) this.names = message.names;
        this.current = null;
        this.clearStop();
        this.next();
        break;
      default: // stream, display, error: output of the running cell
        if (this.current) this.current.output(message);
    }
  }

  enqueue(cell) {
    if (this.queue.includes(cell) || this.current === cell) return;
    if (this.state === "error") {
      cell.finish(false, null, t("Python no está disponible: recarga la página."));
      return;
    }
    this.queue.push(cell);
    cell.markQueued();
    this.ui.activity(true);
    this.next();
  }

  next() {
    if (this.current || this.state === "loading" || this.state === "error") return;
    const cell = this.queue.shift();
    if (!cell) {
      this.setState("ready");
      return;
    }
    this.current = cell;
    this.runs += 1;
    this.setState("busy");
    cell.start();
    if (this.interruptBuffer) this.interruptBuffer[0] = 0;
    this.worker.postMessage({ type: "run", id: cell.id, code: cell.code() });
  }

  get active() {
    return Boolean(this.current) || this.queue.length > 0;
  }

  /* Stop: drop queued cells; end the running one. */
  stop() {
    this.queue.splice(0).forEach((cell) => cell.cancel());
    this.ui.activity(this.active);
    if (!this.current) return;
    if (this.interruptBuffer) {
      this.interrupt();
      // Python only checks for the interrupt between bytecodes; restart if it is stuck (one
      // timer for the first click: a second Stop must not leave the first timer running, to
      // restart a Python that has stopped by then).
      if (!this.stopTimer) this.stopTimer = setTimeout(() => this.restart(), this.config.stopGraceMs);
    } else {
      this.restart();
    }
  }

  /* Ask Python to raise KeyboardInterrupt in the running cell, through the shared buffer.
   * Pyodide takes a request by reading the buffer and then writing 0 to it, two steps that are
   * not one atomic operation (src/core/keyboard_interrupt.c), so a request written between the
   * two is lost: measured on this project's isolated page, 9 Stops in 300 found Python still
   * running when the grace period ended, and restarted it. So the request is written again every
   * INTERRUPT_REPEAT_MS until the cell ends or the grace period restarts Python. A request that
   * Python reads after the cell has ended is dropped (kernel.py, ``interruptible``). */
  interrupt() {
    this.interruptBuffer[0] = SIGINT;
    if (!this.repeatTimer) {
      this.repeatTimer = setInterval(() => { this.interruptBuffer[0] = SIGINT; }, INTERRUPT_REPEAT_MS);
    }
  }

  /* Stop is over (the cell ended, or Python restarts): no more requests, no restart. */
  clearStop() {
    clearTimeout(this.stopTimer);
    this.stopTimer = null;
    clearInterval(this.repeatTimer);
    this.repeatTimer = null;
  }

  restart() {
    clearTimeout(this.timer);
    this.clearStop();
    this.endWorker();
    const stopped = this.current;
    this.current = null;
    if (stopped) stopped.finish(false, null,
      t("Detenida: Python se reinició para pararla, y se perdió todo lo que las celdas habían definido (el aviso de abajo dice qué y ofrece ejecutarlas de nuevo)."));
    this.ui.restarted(stopped, this.names);
    this.start();
  }
}
