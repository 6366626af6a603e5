/* Starting Python's worker: shared by the early script (early.js), which starts it while the page
 * is still being parsed, and by KernelClient, which adopts that worker or starts a new one (a
 * restart after Stop, «Reintentar»). Nothing here touches the page's DOM. */

/* True on an iPhone, an iPod or an iPad, whatever it says it is. An iPad's Safari (iPadOS 13+)
 * calls itself a Mac ("MacIntel"); only its touch points tell it apart. The same test as the
 * fix in Pyodide 0.28 (pyodide#5695, CPython gh-128627), which 0.27.7 lacks: there an iPad on
 * iPadOS 18 takes the WasmGC path that crashes its WebKit (pyodide#5670). A worker has no
 * maxTouchPoints, so the page decides and tells the worker. */
export function isAppleMobile(nav = navigator) {
  return /iPad|iPhone|iPod/.test(nav.userAgent || "") ||
    (nav.platform === "MacIntel" && nav.maxTouchPoints > 1);
}

export function absolute(url) {
  return new URL(url, document.baseURI).href;
}

/* Create the worker and send it "init" (the protocol is in docs/site.md). Returns the launch:
 * {worker, interruptBuffer (an Int32Array on a SharedArrayBuffer when the page is cross-origin
 * isolated, else null), startedAt (ms since navigation), messages and errors (what the worker
 * sent, or the error events it raised, until the kernel client takes it over)}.
 * Throws what `new Worker` throws (e.g. a SecurityError when the script is refused). */
export function launchWorker(config) {
  const isolated = self.crossOriginIsolated && typeof SharedArrayBuffer === "function";
  const interruptBuffer = isolated ? new Int32Array(new SharedArrayBuffer(4)) : null;
  const worker = new Worker(absolute(config.worker));
  const launch = { worker, interruptBuffer, startedAt: performance.now(), messages: [], errors: [] };
  worker.onmessage = (event) => launch.messages.push(event.data);
  worker.onerror = (event) => launch.errors.push(event);
  worker.postMessage({
    type: "init",
    config: {
      pyodideScript: absolute(config.pyodideScript),
      pyodideIndex: absolute(config.pyodideIndex),
      code: config.code.map((f) => ({ ...f, url: absolute(f.url) })),
      weights: config.weights.map((f) => ({ ...f, url: absolute(f.url) })),
      // a real tokenizer's files: not fetched here, only handed to the kernel (vocabularies.load)
      vocabularies: (config.vocabularies || []).map((f) => ({ ...f, url: absolute(f.url) })),
      interruptBuffer,
      appleMobile: isAppleMobile(),
      lang: config.lang || "es", // the page's language: the kernel's views write in it
    },
  });
  return launch;
}
