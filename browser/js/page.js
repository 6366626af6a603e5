/* Page entry point: reads the runtime config, wires the start-up indicator, the
 * kernel status, the cells and the page-level Run all / Stop buttons. */
import { KernelClient } from "./kernel-client.js";
import { Cell, buildEditorsLazily } from "./cell.js";
import { setupQuizzes } from "./quiz.js";
import { setupViews } from "./views.js";
import { setupCourse } from "./course.js";
import { setupLab } from "./lab.js";
import { decimal as pageDecimal, t, tn } from "./i18n.js";
import { setupOffline, setupOfflinePanel } from "./offline.js";

const SCRIPT_STARTED_MS = performance.now(); // since navigation: the start-up's first step

const STATE_LABELS = {
  loading: t("Python: arrancando…"),
  ready: t("Python: listo"),
  busy: t("Python: ejecutando…"),
  error: t("Python: error"),
};

/** One decimal with the page's decimal mark: 7.43 -> "7,4" (Spanish) or "7.4" (English). */
function decimal(x) {
  return pageDecimal(x, 1);
}

function formatBytes(n) {
  return n >= 1e6 ? `${decimal(n / 1e6)} MB` : `${Math.round(n / 1e3)} kB`;
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
        r.bar.max = 1;
        r.bar.value = 0; // a waiting stage shows an empty bar, not an animated one
        r.detail.textContent = t("en espera");
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
        r.detail.textContent = t("no se completó");
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
          ? t("listo ({size})", { size: formatBytes(r.bytes) })
          : t("listo ({seconds} s)", { seconds: decimal((performance.now() - r.started) / 1000) });
      } else if (total) {
        r.bytes = total;
        r.bar.max = total;
        r.bar.value = loaded;
        r.detail.textContent = t("{loaded} de {total}", { loaded: formatBytes(loaded), total: formatBytes(total) });
      } else {
        if (state === "active") r.bar.removeAttribute("value"); // working, size unknown
        r.detail.textContent = state === "fetched" ? t("descargado") : t("cargando…");
      }
    },
  };
}

/* Seconds as a reader writes them: "3", "0,5". */
function formatSeconds(ms) {
  return (ms / 1000).toLocaleString("es-ES", { maximumFractionDigits: 1 });
}

function errorText(detail) {
  if (detail.reason === "file") {
    return t("Esta página se abrió como archivo (file://) y Python necesita un servidor HTTP. Qué hacer: abre una terminal en la carpeta del sitio (la que contiene index.html), ejecuta «python -m http.server» y abre http://localhost:8000/ en el navegador. Si tienes el proyecto completo, «make serve» construye y sirve el sitio.");
  }
  const why = detail.reason === "timeout"
    ? t("Python no terminó de arrancar en {seconds} s.", { seconds: formatSeconds(detail.timeoutMs) })
    : t("Python no pudo arrancar: {reason}.", { reason: detail.reason });
  return why + " " + t("Qué hacer: pulsa «Reintentar» o recarga la página. Si sirves la carpeta tú mismo, usa un servidor HTTP que envíe los .wasm como application/wasm (por ejemplo «python build.py serve») y comprueba que la carpeta vendor/ está completa.");
}

/* "1", "1 y 2", "1, 2 y 4" ("1, 2 and 4" in English). */
function listEs(items) {
  return items.length < 2 ? items.join("")
    : items.slice(0, -1).join(", ") + " " + t("y") + " " + items[items.length - 1];
}

/* The notice after Stop restarted Python: exactly what was lost (the names the cells had
 * defined, and which cells had run), and a button that runs every cell before the one the
 * reader wants to go on with (by default the stopped cell, to change it and run it again). */
function restartView(notice, getCells, enqueue) {
  const lost = notice.querySelector(".notice-lost");
  const select = notice.querySelector("select");
  const button = notice.querySelector("button");
  let target = 0;
  const label = () => {
    target = Number(select.value);
    button.disabled = target === 0;
    button.textContent = target === 0 ? t("Nada que ejecutar antes de la celda 1")
      : target === 1 ? t("Ejecutar la celda 1")
      : t("Ejecutar las celdas 1 a {n}", { n: target });
  };
  select.addEventListener("change", label);
  button.addEventListener("click", () => {
    notice.hidden = true;
    getCells().slice(0, target).forEach(enqueue);
  });
  return {
    show(stoppedIndex, ran, names) {
      const cells = getCells();
      const stopped = stoppedIndex + 1;
      if (ran.length === 0 && names.length === 0) {
        lost.textContent = t("Python se reinició para detener la celda {stopped}. No se perdió nada: ninguna otra celda se había ejecutado.", { stopped });
      } else {
        const numbers = ran.map((cell) => cell.index + 1);
        const lostNames = names.length ? listEs(names) : t("ningún nombre");
        lost.textContent = tn(
          "Python se reinició para detener la celda {stopped}, y con él se perdió todo lo que las celdas ejecutadas (la celda {cells}) habían definido: {names}, y lo que la celda {stopped} definiera antes de detenerse. Sus salidas siguen a la vista, pero son de antes del reinicio.",
          "Python se reinició para detener la celda {stopped}, y con él se perdió todo lo que las celdas ejecutadas (las celdas {cells}) habían definido: {names}, y lo que la celda {stopped} definiera antes de detenerse. Sus salidas siguen a la vista, pero son de antes del reinicio.",
          numbers.length,
          { stopped, cells: listEs(numbers), names: lostNames });
      }
      select.replaceChildren(...cells.map((cell, i) => {
        const name = cell.root.getAttribute("aria-label");
        return new Option(name ? t("celda {n} («{name}»)", { n: i + 1, name }) : t("celda {n}", { n: i + 1 }), String(i));
      }));
      select.value = String(stoppedIndex);
      label();
      notice.hidden = false;
    },
  };
}

/** The kernel's view in the page: the status line, the start-up panel and its error box, the Stop
 * button and the restart notice. ``page`` holds the cells and the notice's view, filled in by
 * ``main`` once the kernel has started (the kernel calls back only later). */
function kernelUi(page) {
  const status = document.querySelector("[data-testid=kernel-status]");
  const statusText = status.querySelector(".kernel-status-text");
  const panel = document.getElementById("startup");
  const errorBox = document.getElementById("startup-error");
  const notice = document.getElementById("kernel-notice");
  const stop = document.querySelector("[data-testid=stop]");
  const view = startupView(panel);
  let readyText = STATE_LABELS.ready;
  return {
    state(state, detail = {}) {
      status.dataset.state = state;
      statusText.textContent = STATE_LABELS[state];
      if (state === "loading") {
        view.reset();
        errorBox.hidden = true;
        readyText = STATE_LABELS.ready;
      } else if (state === "ready" && detail.seconds !== undefined) {
        status.dataset.readyMs = String(Math.round(performance.now())); // since navigation
        // each step, ditto (read by bench/bench_startup.py)
        status.dataset.startupMarks = JSON.stringify(
          { "page-script": Math.round(SCRIPT_STARTED_MS), ...detail.marks });
        // short: with «Restaurar todo» and the other edition's link, a longer text wrapped the bar at 1280 px
        readyText = t("Python: listo ({seconds} s)", { seconds: decimal(detail.seconds) });
        panel.hidden = true;
      } else if (state === "error") {
        view.fail();
        errorBox.hidden = false;
        errorBox.querySelector(".error-text").textContent = errorText(detail);
        // Retrying cannot help a page opened as a file.
        errorBox.querySelector("button").hidden = detail.reason === "file";
      }
      if (state === "ready") statusText.textContent = readyText; // keeps the start-up time
      if (state === "ready" || state === "error") page.settled?.(); // start-up's downloads are over
    },
    stage: (message) => view.stage(message),
    activity(active) {
      stop.disabled = !active;
      page.activity?.(); // a newer version of the course waits for the run to end
    },
    restarted(stopped, names) {
      const cells = page.cells;
      // The new Python knows none of the earlier runs: no cell counts as run.
      const ran = cells.filter((cell) => cell !== stopped && cell.root.dataset.state !== "idle");
      cells.forEach((cell) => { if (cell !== stopped) cell.reset(); });
      // A «Laboratorio» action is not a cell: its own view says it was stopped, no notice.
      const index = cells.indexOf(stopped);
      if (stopped && index < 0) return;
      if (stopped) stopped.root.after(notice); // shown where the reader is looking
      page.restartNotice.show(Math.max(index, 0), ran, names);
    },
  };
}

/** The page's cells, each with its editor, and the «restore all» button shown while one is edited. */
function setupCells(kernel) {
  const restoreAll = document.querySelector("[data-testid=restore-all]");
  const showRestoreAll = () => {
    if (restoreAll) restoreAll.hidden = !cells.some((cell) => cell.edited);
  };
  const cells = [];
  document.querySelectorAll("[data-testid=cell]").forEach((root, i) => {
    cells.push(new Cell(root, i, kernel, showRestoreAll));
  });
  showRestoreAll();
  restoreAll?.addEventListener("click", () => {
    cells.forEach((cell) => cell.restore());
    document.querySelector("[data-testid=run-all]").focus(); // the button hides itself
  });
  return cells;
}

/* A new task of the event loop: the work after it does not lengthen the task before it (a long
 * task holds the page; issue 43 keeps each one of start-up under 100 ms where it can). */
const nextTask = () => new Promise((resolve) => setTimeout(resolve, 0));

async function main(offline) {
  const config = JSON.parse(document.getElementById("runtime-config").textContent);
  const params = new URLSearchParams(location.search);
  const timeoutMs = 1000 * Number(params.get("timeout") || config.startupTimeoutS || 90);
  // Storing the course for offline reading starts once Python's own downloads are over.
  let settle;
  const settled = new Promise((resolve) => { settle = resolve; }); // Python ready, or failed to start
  const page = { cells: [], restartNotice: null, settled: () => { settle(); offline.start(); },
    activity: () => offline.refresh() };
  const kernel = new KernelClient(config, kernelUi(page), { timeoutMs });
  offline.page.busy = () => kernel.active;
  offline.page.ran = () => kernel.runs > 0;
  kernel.start(); // first: Python boots in the worker while the editors are built
  const notice = document.getElementById("kernel-notice");
  page.restartNotice = restartView(notice, () => page.cells, (cell) => kernel.enqueue(cell));
  document.querySelector("[data-testid=run-all]")
    .addEventListener("click", () => page.cells.forEach((cell) => kernel.enqueue(cell)));
  document.querySelector("[data-testid=stop]").addEventListener("click", () => kernel.stop());
  document.getElementById("startup-error").querySelector("button")
    .addEventListener("click", () => kernel.start());
  // Test hook (docs/site.md, «Test hooks»): the end-to-end tests reuse one page for many tests and,
  // between two of them, ask for the page's cells as it loaded them, in the same Python.
  document.addEventListener("course-test-reset", async () => {
    let detail = { ok: true };
    try {
      await kernel.reset();
      page.cells.forEach((cell) => cell.resetToLoaded());
      notice.hidden = true;
    } catch (err) {
      detail = { ok: false, error: String(err && err.message ? err.message : err) };
    }
    document.dispatchEvent(new CustomEvent("course-test-reset-done", { detail }));
  });
  // the rest in tasks of their own, each short, while Python boots in its worker
  await nextTask();
  page.cells = setupCells(kernel);
  buildEditorsLazily(page.cells, settled); // near the view now, the rest once Python is ready
  await nextTask();
  setupLab(kernel); // the «Laboratorio» form, on the page that has one
}

/* What a reload would lose: a run (the kernel counts them) or anything typed or chosen. */
function offlineReading() {
  const page = { busy: () => false, ran: () => false, typed: false };
  for (const event of ["input", "change"]) {
    document.addEventListener(event, () => { page.typed = true; }, true);
  }
  const offline = setupOffline({ busy: () => page.busy(), touched: () => page.typed || page.ran() });
  offline.page = page;
  setupOfflinePanel(offline);
  return offline;
}

const offline = offlineReading();
if (document.getElementById("runtime-config")) main(offline); // first: Python's start
else if (document.readyState === "complete") offline.start();
else addEventListener("load", () => offline.start());
// none needs Python, and each works while the kernel starts, in a short task of its own
setTimeout(() => {
  setupQuizzes();
  setTimeout(() => {
    setupViews(); // the whole-vocabulary lists of the per-position views
    setTimeout(setupCourse); // the course map's progress; a lesson records its cells' runs
  });
});
