/* Page entry point: reads the runtime config, wires the start-up indicator, the
 * kernel status, the cells and the page-level Run all / Stop buttons. */
import { KernelClient } from "./kernel-client.js";
import { Cell } from "./cell.js";

const STATE_LABELS = {
  loading: "Python: arrancando…",
  ready: "Python: listo",
  busy: "Python: ejecutando…",
  error: "Python: error",
};

function formatBytes(n) {
  return n >= 1e6 ? `${(n / 1e6).toFixed(1)} MB` : `${Math.round(n / 1e3)} kB`;
}

/* The start-up panel: one row per stage (runtime, numpy, code, weights). */
function startupView(panel) {
  const rows = {};
  panel.querySelectorAll("[data-stage]").forEach((row) => {
    rows[row.dataset.stage] = {
      row, bar: row.querySelector("progress"), detail: row.querySelector(".stage-detail"),
      started: null,
    };
  });
  return {
    reset() {
      panel.hidden = false;
      for (const r of Object.values(rows)) {
        r.row.dataset.state = "pending";
        r.bar.removeAttribute("value");
        r.detail.textContent = "en espera";
        r.started = null;
        r.bytes = 0;
      }
    },
    fail() {
      for (const r of Object.values(rows)) {
        if (r.row.dataset.state === "done") continue;
        r.row.dataset.state = "failed";
        r.bar.max = 1;
        r.bar.value = 0;
        r.detail.textContent = "no se completó";
      }
    },
    stage({ stage, state, loaded, total }) {
      const r = rows[stage];
      if (!r) return;
      r.started = r.started ?? performance.now();
      r.row.dataset.state = state;
      if (state === "done") {
        r.bar.max = 1;
        r.bar.value = 1;
        // Downloads overlap the runtime's start, so they show their size, not a time.
        r.detail.textContent = r.bytes
          ? `listo (${formatBytes(r.bytes)})`
          : `listo (${((performance.now() - r.started) / 1000).toFixed(1)} s)`;
      } else if (total) {
        r.bytes = total;
        r.bar.max = total;
        r.bar.value = loaded;
        r.detail.textContent = `${formatBytes(loaded)} de ${formatBytes(total)}`;
      } else {
        r.detail.textContent = state === "fetched" ? "descargado" : "cargando…";
      }
    },
  };
}

function errorText(detail) {
  if (detail.reason === "file") {
    return "Esta página se abrió como archivo (file://) y Python necesita un servidor " +
      "HTTP. En la carpeta del proyecto ejecuta «make serve» (o «python build.py serve») " +
      "y abre la dirección que muestra.";
  }
  const why = detail.reason === "timeout"
    ? `Python no terminó de arrancar en ${detail.timeoutS} s.`
    : `Python no pudo arrancar: ${detail.reason}.`;
  return `${why} Qué hacer: pulsa «Reintentar» o recarga la página. Si sirves la ` +
    "carpeta tú mismo, usa un servidor HTTP que envíe los .wasm como " +
    "application/wasm (por ejemplo «python build.py serve») y comprueba que la " +
    "carpeta vendor/ está completa.";
}

function main() {
  const config = JSON.parse(document.getElementById("runtime-config").textContent);
  const status = document.querySelector("[data-testid=kernel-status]");
  const statusText = status.querySelector(".kernel-status-text");
  const panel = document.getElementById("startup");
  const errorBox = document.getElementById("startup-error");
  const notice = document.getElementById("kernel-notice");
  const runAll = document.querySelector("[data-testid=run-all]");
  const stop = document.querySelector("[data-testid=stop]");
  const view = startupView(panel);
  const params = new URLSearchParams(location.search);
  const timeoutMs = 1000 * Number(params.get("timeout") || config.startupTimeoutS || 90);

  const ui = {
    state(state, detail = {}) {
      status.dataset.state = state;
      statusText.textContent = STATE_LABELS[state];
      if (state === "loading") {
        view.reset();
        errorBox.hidden = true;
      } else if (state === "ready" && detail.seconds !== undefined) {
        status.dataset.readyMs = String(Math.round(performance.now())); // since navigation
        statusText.textContent = `Python: listo (arrancó en ${detail.seconds.toFixed(1)} s)`;
        panel.hidden = true;
      } else if (state === "error") {
        view.fail();
        errorBox.hidden = false;
        errorBox.querySelector(".error-text").textContent = errorText(detail);
      }
    },
    stage: (message) => view.stage(message),
    activity(active) {
      stop.disabled = !active;
    },
    restarted(stopped) {
      notice.hidden = false;
      const before = stopped ? cells.slice(0, cells.indexOf(stopped)) : [];
      notice.querySelector("button").hidden = before.length === 0;
      rerun = () => before.forEach((cell) => kernel.enqueue(cell));
    },
  };

  let rerun = () => {};
  notice.querySelector("button").addEventListener("click", () => {
    notice.hidden = true;
    rerun();
  });
  const kernel = new KernelClient(config, ui, { timeoutMs });
  const cells = [...document.querySelectorAll("[data-testid=cell]")]
    .map((root, i) => new Cell(root, i, kernel));
  runAll.addEventListener("click", () => cells.forEach((cell) => kernel.enqueue(cell)));
  stop.addEventListener("click", () => kernel.stop());
  errorBox.querySelector("button").addEventListener("click", () => kernel.start());
  kernel.start();
}

main();
