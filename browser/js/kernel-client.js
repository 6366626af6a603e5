/* The page's side of the Python worker: start-up with a timeout, a FIFO queue of
 * cells to run, and Stop (interrupt when cross-origin isolated, else restart). */

const SIGINT = 2;

/* True on an iPhone, an iPod or an iPad, whatever it says it is. An iPad's Safari (iPadOS 13+)
 * calls itself a Mac ("MacIntel"); only its touch points tell it apart. The same test as the
 * fix in Pyodide 0.28 (pyodide#5695, CPython gh-128627), which 0.27.7 lacks: there an iPad on
 * iPadOS 18 takes the WasmGC path that crashes its WebKit (pyodide#5670). A worker has no
 * maxTouchPoints, so the page decides and tells the worker. */
export function isAppleMobile(nav = navigator) {
  return /iPad|iPhone|iPod/.test(nav.userAgent || "") ||
    (nav.platform === "MacIntel" && nav.maxTouchPoints > 1);
}

function absolute(url) {
  return new URL(url, document.baseURI).href;
}

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
    this.config = config;
    this.ui = ui;
    this.timeoutMs = timeoutMs;
    this.queue = [];
    this.current = null;
    this.worker = null;
    this.state = "loading";
    this.interruptBuffer = null;
    this.names = []; // what the cells have defined in this Python (sent with each "done")
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
    const isolated = self.crossOriginIsolated && typeof SharedArrayBuffer === "function";
    this.interruptBuffer = isolated ? new Int32Array(new SharedArrayBuffer(4)) : null;
    this.worker = new Worker(absolute(this.config.worker));
    this.worker.onmessage = (event) => this.onMessage(event.data);
    this.worker.onerror = (event) => this.fail(event.message || "el worker falló");
    this.startedAt = performance.now();
    this.timer = setTimeout(() => this.fail("timeout"), this.timeoutMs);
    const c = this.config;
    this.worker.postMessage({
      type: "init",
      config: {
        pyodideScript: absolute(c.pyodideScript),
        pyodideIndex: absolute(c.pyodideIndex),
        code: c.code.map((f) => ({ ...f, url: absolute(f.url) })),
        weights: c.weights.map((f) => ({ ...f, url: absolute(f.url) })),
        interruptBuffer: this.interruptBuffer,
        appleMobile: isAppleMobile(),
      },
    });
  }

  fail(reason) {
    clearTimeout(this.timer);
    if (this.worker) this.worker.terminate();
    this.worker = null;
    if (this.current) this.current.finish(false, null, "Python no está disponible.");
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
      case "done":
        if (this.current) this.current.finish(message.ok, message.count);
        if (message.names) this.names = message.names;
        this.current = null;
        clearTimeout(this.stopTimer);
        this.next();
        break;
      default: // stream, display, error: output of the running cell
        if (this.current) this.current.output(message);
    }
  }

  enqueue(cell) {
    if (this.queue.includes(cell) || this.current === cell) return;
    if (this.state === "error") {
      cell.finish(false, null, "Python no está disponible: recarga la página.");
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
      this.interruptBuffer[0] = SIGINT;
      // Python only checks for the interrupt between bytecodes; restart if it is stuck.
      this.stopTimer = setTimeout(() => this.restart(), 3000);
    } else {
      this.restart();
    }
  }

  restart() {
    clearTimeout(this.timer);
    this.worker.terminate();
    const stopped = this.current;
    this.current = null;
    if (stopped) stopped.finish(false, null,
      "Detenida: Python se reinició para pararla, y se perdió todo lo que las celdas " +
      "habían definido (el aviso de abajo dice qué y ofrece ejecutarlas de nuevo).");
    this.ui.restarted(stopped, this.names);
    this.start();
  }
}
