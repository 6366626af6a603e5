/* Dedicated Web Worker: starts Pyodide, loads NumPy, the project's Python and the
 * model weights, then runs cells with the lesson kernel (kernel.py).
 * The message protocol is described in docs/site.md. */
"use strict";

const PY_DIR = "/home/pyodide/py";
const WEIGHTS_DIR = "/home/pyodide/weights";
const KERNEL_DIR = "/home/pyodide/kernel";

let pyodide = null;
let kernel = null;
let currentRun = null;

/* When each start-up step ended, in ms since the epoch (performance.timeOrigin + now(), so the
 * page can put them on its own clock); sent with "ready". bench/bench_startup.py reads them. */
const marks = {};
function mark(name) {
  marks[name] = performance.timeOrigin + performance.now();
}
mark("worker-script");

function post(type, fields = {}) {
  self.postMessage({ type, ...fields });
}

function stage(name, state, extra = {}) {
  post("stage", { stage: name, state, ...extra });
}

/* Fetch a list of {url, size} with byte progress reported for one stage: about 16 reports
 * (each one redraws the start-up panel of a page that may be large, while Pyodide boots). */
async function fetchAll(name, files) {
  const total = files.reduce((sum, f) => sum + (f.size || 0), 0);
  const step = Math.max(65536, total / 16);
  let loaded = 0;
  let lastReport = 0;
  stage(name, "active", { loaded, total });
  const buffers = [];
  for (const file of files) {
    const response = await fetch(file.url);
    if (!response.ok) throw new Error(`${file.url}: HTTP ${response.status}`);
    const reader = response.body.getReader();
    const chunks = [];
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      loaded += value.length;
      if (loaded - lastReport > step) {
        lastReport = loaded;
        stage(name, "active", { loaded, total });
      }
    }
    buffers.push(await new Blob(chunks).arrayBuffer());
  }
  stage(name, "fetched", { loaded, total });
  return buffers;
}

/* loadPyodide() waits forever when the .wasm cannot be compiled (missing file,
 * wrong MIME type), so check those two things first and say which one failed. */
async function checkWasm(indexURL) {
  const url = new URL("pyodide.asm.wasm", indexURL).href;
  const response = await fetch(url, { method: "HEAD" });
  if (!response.ok) throw new Error(`${url} respondió HTTP ${response.status}`);
  const type = response.headers.get("Content-Type") || "";
  if (!type.startsWith("application/wasm")) {
    throw new Error(`${url} se sirve como «${type}» y debe ser «application/wasm»`);
  }
}

/* Pyodide 0.27.7 skips its WasmGC trampoline when navigator.platform names an iPhone, an iPad
 * or an iPod, and an iPad's Safari says "MacIntel": so, on a device the page found to be one
 * (isAppleMobile in boot.js), the worker's navigator says "iPad" before Pyodide boots.
 * Nothing else reads it. */
function reportAppleMobilePlatform() {
  Object.defineProperty(self.navigator, "platform", { value: "iPad", configurable: true });
}

async function startRuntime(config) {
  stage("runtime", "active");
  if (config.appleMobile) reportAppleMobilePlatform();
  importScripts(config.pyodideScript);
  mark("pyodide-script");
  // The .wasm check runs beside the boot, not before it: a failed check ends the wait
  // (a boot that cannot compile the .wasm would never end), a passed one leaves it alone.
  const checked = checkWasm(config.pyodideIndex).then(() => new Promise(() => {}));
  const py = await Promise.race([checked, loadPyodide({
    indexURL: config.pyodideIndex,
    packages: ["numpy"], // NumPy downloads while the runtime boots
    enableRunUntilComplete: false, // reported to crash Safari; cells are synchronous
    env: { HOME: "/home/pyodide" },
  })]);
  // No keyboard stream in a worker (the default stdin calls prompt()): reads fail at
  // once. Cells get a clearer error from kernel.py, which replaces sys.stdin and input().
  py.setStdin({ error: true });
  mark("runtime");
  stage("runtime", "done");
  stage("numpy", "active");
  py.runPython("import numpy");
  mark("numpy");
  stage("numpy", "done");
  return py;
}

async function init(config) {
  // The project code and the weights download while the runtime boots.
  const code = fetchAll("code", config.code); // [py.zip, kernel.py]
  const weights = fetchAll("weights", config.weights);
  code.then(() => mark("code-fetched"), () => {});
  weights.then(() => mark("weights-fetched"), () => {});
  pyodide = await startRuntime(config);
  // With an interrupt buffer Python calls into JavaScript every 50 "ticks" of its eval loop to read
  // it. Without SharedArrayBuffer the page cannot write one (Stop restarts the worker instead),
  // but the worker gets a buffer of its own all the same, for that call: WebKit's
  // Worker.terminate() takes effect only where the worker runs JavaScript, so a cell stuck in pure
  // Python (`while True: pass`) would otherwise go on spinning a core after Stop, for as long as
  // the page stays open, and slow the new worker's start-up beside it (on a busy 2-core machine,
  // past the start-up timeout: the page said "error").
  pyodide.setInterruptBuffer(config.interruptBuffer || new Int32Array(1));

  const [archive, kernelSource] = await code;
  pyodide.unpackArchive(archive, "zip", { extractDir: PY_DIR });
  mark("code-unpacked");
  pyodide.FS.mkdirTree(KERNEL_DIR);
  pyodide.FS.writeFile(`${KERNEL_DIR}/kernel.py`, new Uint8Array(kernelSource));
  pyodide.runPython(`import sys; sys.path.insert(0, "${KERNEL_DIR}")`);
  const kernelModule = pyodide.pyimport("kernel");
  // weights go to WEIGHTS_DIR; the views write in the page's language; a real tokenizer's files
  // are fetched by Python when a cell first asks (vocabularies.load), from these URLs
  const vocabularies = Object.fromEntries((config.vocabularies || []).map((f) => [f.name, f.url]));
  kernelModule.prepare(PY_DIR, WEIGHTS_DIR, config.lang || "es", JSON.stringify(vocabularies));
  mark("kernel-imported");
  stage("code", "done");

  const buffers = await weights;
  pyodide.FS.mkdirTree(WEIGHTS_DIR);
  config.weights.forEach((file, i) => {
    pyodide.FS.writeFile(`${WEIGHTS_DIR}/${file.name}`, new Uint8Array(buffers[i]));
  });
  mark("weights-written");
  stage("weights", "done");

  const emit = (kind, payloadJson) => {
    post(kind, { id: currentRun, ...JSON.parse(payloadJson) });
  };
  pyodide.globals.set("_emit_json", emit);
  // SIGINT (Stop's request) is ignored outside a cell's code, which kernel.run makes
  // interruptible: the page may write the request again after the cell has ended.
  kernel = pyodide.runPython(
    "import json, kernel, signal\n" +
    "signal.signal(signal.SIGINT, signal.SIG_IGN)\n" +
    "kernel.Kernel(lambda kind, payload: _emit_json(kind, json.dumps(payload)),\n" +
    "              origin=__import__('js').location.origin)");
  mark("kernel-created");
}

/* The names the cells have defined so far (kernel.names): what a restart would lose. */
function definedNames() {
  try {
    const proxy = kernel.names();
    const names = proxy.toJs();
    proxy.destroy();
    return names;
  } catch {
    return [];
  }
}

function run({ id, code }) {
  currentRun = id;
  let ok = false;
  try {
    ok = kernel.run(code);
  } catch (err) {
    post("error", { id, traceback: String(err && err.message ? err.message : err) });
  }
  post("done", { id, ok, count: kernel.count, names: definedNames() });
  currentRun = null;
}

self.onmessage = async (event) => {
  const message = event.data;
  if (message.type === "init") {
    try {
      mark("init-received");
      await init(message.config);
      post("ready", { isolated: Boolean(message.config.interruptBuffer), marks });
    } catch (err) {
      post("init-error", { message: String(err && err.message ? err.message : err) });
    }
  } else if (message.type === "run") {
    run(message);
  } else if (message.type === "reset") { // the tests' reset between two tests (docs/site.md)
    kernel.reset();
    post("reset-done", { count: kernel.count, names: definedNames() });
  }
};
