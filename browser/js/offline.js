/* The page's side of reading offline (docs/site.md «Offline and isolation»): it registers the
 * course's service worker (browser/js/sw.js, with Workbox's window library), shows how storing
 * goes in the header's status line, offers a newer version when one is stored, and reloads the
 * page once, if nothing would be lost, so that the service worker's isolation headers apply
 * (then Stop keeps the variables). The course map's panel turns storing off and clears it.
 *
 * Test hooks: [data-testid=offline-status] with data-state = "pending" / "unsupported" / "off" /
 * "storing" / "stored" / "update" / "stale" / "error"; [data-testid=offline-update] (the button
 * that applies a newer version); [data-testid=offline-panel], offline-toggle, offline-clear. */
import { Workbox, messageSW } from "workbox-window";
import { decimal, t } from "./i18n.js";

const SETTING = "curso:sin-conexion"; // "no": the reader turned storing off on the course map
const RELOADED = "curso:recargada-para-aislar"; // in sessionStorage: the one automatic reload

/* messageSW with a time limit: a worker that never answers (redundant, say) rejects. */
function ask(worker, message, ms = 3000) {
  return Promise.race([messageSW(worker, message),
    new Promise((_, reject) => setTimeout(() => reject(new Error("no answer")), ms))]);
}

function mb(bytes) {
  return `${decimal(bytes / 1e6, 1)} MB`;
}

export function storingWanted() {
  try {
    return localStorage.getItem(SETTING) !== "no";
  } catch {
    return true; // no storage: the default
  }
}

function setWanted(wanted) {
  try {
    if (wanted) localStorage.removeItem(SETTING);
    else localStorage.setItem(SETTING, "no");
  } catch {
    // storage blocked: the choice lasts until the page closes
  }
}

/* The service worker's folder (its scope): the site's root, from any page. */
function scopeOf(swUrl) {
  return new URL(".", swUrl).href;
}

/* Unregister the course's service worker and delete what it stored (only this course's: the
 * store's name ends with its scope). */
export async function forget(swUrl) {
  const scope = scopeOf(swUrl);
  const deleteStores = async () => {
    if (!self.caches) return;
    for (const name of await caches.keys()) {
      if (name.startsWith("curso-") && name.endsWith(scope)) await caches.delete(name);
    }
  };
  const busy = []; // a worker still installing would go on writing after unregister()
  if ("serviceWorker" in navigator) {
    for (const registration of await navigator.serviceWorker.getRegistrations()) {
      if (registration.scope !== scope) continue;
      for (const worker of [registration.installing, registration.waiting]) {
        if (worker) busy.push(new Promise((done) => {
          worker.addEventListener("statechange", () => worker.state === "redundant" && done());
          setTimeout(done, 10000);
        }));
      }
      await registration.unregister();
    }
  }
  await deleteStores();
  if (busy.length) {
    await Promise.all(busy);
    await deleteStores(); // what they wrote meanwhile
  }
}

/* `page`: {busy(): a cell or lab action is queued or running; touched(): the reader has run,
 * typed or chosen something since the page loaded (a reload would lose it)}. Returns
 * {start(), status}; start() registers the service worker (once). */
export function setupOffline(page = {}) {
  const status = document.querySelector("[data-testid=offline-status]");
  const busy = page.busy || (() => false);
  const touched = page.touched || (() => false);
  if (!status) return { start() {}, stop() {}, refresh() {}, status: null };
  const text = status.querySelector(".offline-text");
  const bar = status.querySelector("progress");
  const button = status.querySelector("[data-testid=offline-update]");
  const swUrl = new URL(status.dataset.sw, document.baseURI).href;
  const build = status.dataset.build;
  let started = false;
  let listening = false;
  let applying = false; // the reader asked for the newer version: reload once it controls

  function show(state, message, progress) {
    status.dataset.state = state;
    text.textContent = message;
    bar.hidden = !progress;
    if (progress) {
      bar.max = progress.total || 1;
      bar.value = progress.done;
    }
    button.hidden = state !== "update";
  }

  /* After the service worker takes this page over, the page is isolated only once reloaded:
   * do it now if nothing would be lost, at most once per tab (no loop where the browser cannot
   * be isolated, e.g. WebKitGTK). Only a page with Python needs it. */
  function isolate() {
    const hasPython = Boolean(document.getElementById("runtime-config"));
    if (!hasPython || self.crossOriginIsolated || !navigator.serviceWorker.controller) return;
    let reloaded = false;
    try {
      reloaded = sessionStorage.getItem(RELOADED) === "1";
      if (!reloaded && !busy() && !touched()) sessionStorage.setItem(RELOADED, "1");
    } catch {
      return; // no session storage: no way to be sure of one reload only
    }
    if (!reloaded && !busy() && !touched()) location.reload();
  }

  let repairing = null; // the worker storing again what is missing, while it does
  async function showStored(worker, repairIfMissing = true) {
    let count;
    try {
      count = await ask(worker, { type: "STATUS" });
    } catch {
      show("stored", t("Disponible sin conexión."));
      return;
    }
    if (count.files >= count.totalFiles) {
      show("stored", t("Disponible sin conexión ({size} guardados).", { size: mb(count.totalBytes) }));
      return;
    }
    if (repairIfMissing && navigator.onLine !== false) {
      await repair(worker);
      return;
    }
    show("error", t("Copia sin conexión incompleta: faltan {missing} de sus {total} archivos; se volverán a guardar en cuanto haya conexión.",
      { missing: count.totalFiles - count.files, total: count.totalFiles }));
  }

  /* Files missing from the store (evicted by the browser, or cleared while this worker kept
   * control of the page): the worker stores them again, with the same progress as at install. */
  async function repair(worker) {
    if (repairing === worker) return;
    repairing = worker;
    show("storing", t("Guardando el curso para leerlo sin conexión…"), { done: 0, total: 1 });
    try {
      await messageSW(worker, { type: "REPAIR" }); // failures arrive as "offline-error"
    } catch {
      // a worker that went away: the next visit tries again
    }
    repairing = null;
    if (status.dataset.state !== "error") await showStored(worker, false);
  }

  function onMessage(event) {
    if (!event.source || event.source.scriptURL !== swUrl) return; // another site's worker
    const data = event.data || {};
    if (data.type === "offline-progress") {
      const newer = navigator.serviceWorker.controller && data.build !== build;
      const sizes = { done: mb(data.bytes), total: mb(data.totalBytes) };
      show("storing", newer ? t("Guardando la versión nueva del curso: {done} de {total}.", sizes)
        : t("Guardando el curso para leerlo sin conexión: {done} de {total}.", sizes),
      { done: data.bytes, total: data.totalBytes });
    } else if (data.type === "offline-error") {
      const what = data.url ? new URL(data.url).pathname.split("/").pop() : "";
      const why = data.status ? `HTTP ${data.status}` : t("sin respuesta del servidor");
      const params = { file: what || "?", reason: why };
      if (navigator.serviceWorker.controller && data.build !== build) {
        show("error", t("No se pudo guardar la versión nueva ({file}, {reason}); la copia guardada sigue disponible.", params));
      } else {
        show("error", t("No disponible sin conexión: no se pudo guardar {file} ({reason}).", params));
      }
    }
  }

  let offered = null; // the waiting worker already handled
  let tries = 0; // a busy machine may start the waiting worker slowly: ask it again
  async function onWaiting(waiting) {
    // (the worker itself, not registration.waiting: at its "installed" statechange the
    // registration may not show it as waiting yet)
    if (!waiting || waiting.state !== "installed" || waiting === offered) return;
    offered = waiting;
    let waitingBuild = null;
    try {
      ({ build: waitingBuild } = await ask(waiting, { type: "BUILD" }));
    } catch {
      offered = null; // no answer yet: ask again in a moment (its state will not change)
      if (tries++ < 20) setTimeout(() => onWaiting(waiting), 1500);
      return;
    }
    if (waitingBuild === build) {
      // This page is already the newer version (pages come from the network first): the
      // stored copy can switch to it now, with no reload.
      waiting.postMessage({ type: "SKIP_WAITING" });
      return;
    }
    show("update", t("Hay una versión nueva del curso, ya guardada. Pulsa «Recargar con la versión nueva» para usarla."));
    refresh();
    button.onclick = () => {
      if (busy()) return; // never in the middle of a run
      applying = true;
      button.disabled = true;
      // Chromium switches only once the old worker has no request in flight (at most five
      // minutes: kMaxLameDuckTime in its service_worker_registration.cc), so say what happens.
      text.textContent = t("Cambiando a la versión nueva: la página se recargará sola en cuanto esté lista.");
      waiting.postMessage({ type: "SKIP_WAITING" });
    };
  }

  /* A page of another build than the worker that controls it (pages come from the network
   * first, so after a deploy): fetch the new sw.js now. The browser's own check after a
   * navigation comes when it gets round to it, on a busy machine late. */
  async function lookForNewer(registration) {
    const controller = navigator.serviceWorker.controller;
    if (!controller || registration.installing || registration.waiting) return;
    const answer = await ask(controller, { type: "BUILD" }).catch(() => ({}));
    if (answer.build !== build && !registration.installing && !registration.waiting) {
      registration.update().catch(() => {}); // offline: the "online" listener below tries again
    }
  }

  async function start() {
    if (started) return;
    started = true;
    if (!("serviceWorker" in navigator)) {
      show("unsupported", self.isSecureContext
        ? t("Este navegador no permite guardar el curso para leerlo sin conexión.")
        : t("No hay copia sin conexión: el navegador solo la permite en sitios HTTPS (o en localhost)."));
      return;
    }
    if (!storingWanted()) {
      show("off", t("Copia sin conexión desactivada (se activa en «Lecciones», sección «Sin conexión»)."));
      started = false; // the course map may turn it on
      return;
    }
    show("pending", t("Comprobando la copia sin conexión…"));
    if (!listening) navigator.serviceWorker.addEventListener("message", onMessage);
    listening = true;
    const wb = new Workbox(swUrl, { scope: scopeOf(swUrl) });
    let registration = null;
    wb.addEventListener("controlling", async (event) => {
      if (applying) {
        location.reload(); // the reader asked for the newer version
        return;
      }
      // The worker now in control (Workbox's event.sw may be another one): of this page's build?
      const controller = navigator.serviceWorker.controller;
      const answer = controller ? await ask(controller, { type: "BUILD" }).catch(() => ({})) : {};
      if (answer.build !== build) {
        show("stale", t("Otra pestaña aplicó una versión nueva del curso: recarga esta página para verla."));
        return;
      }
      await showStored(controller);
      isolate();
    });
    try {
      registration = await wb.register();
    } catch (error) {
      console.warn("sw.js:", error); // the browser's own words, for whoever looks
      show("error", t("No disponible sin conexión: no se pudo registrar sw.js."));
      return;
    }
    if (!registration) return;
    // A newer worker may have been found by the browser before this registration, or be found
    // later (Workbox's own "waiting" event sees only the ones found after it): watch them all.
    const installed = (worker) => {
      if (!worker) return;
      const check = () => {
        if (worker.state === "installed" && navigator.serviceWorker.controller) onWaiting(worker);
      };
      worker.addEventListener("statechange", check);
      check();
    };
    installed(registration.installing);
    installed(registration.waiting);
    registration.addEventListener("updatefound", () => installed(registration.installing));
    lookForNewer(registration);
    if (registration.active) {
      // (a hard reload leaves the page without a controller, the stored copy still there)
      if (status.dataset.state === "pending") await showStored(registration.active);
      if (navigator.serviceWorker.controller) isolate();
    }
    // A page read offline that stays open: look for a newer build once the connection is back.
    addEventListener("online", () => {
      registration.update().catch(() => {});
      const controller = navigator.serviceWorker.controller;
      if (controller && status.dataset.state === "error") showStored(controller);
    });
  }

  /* The newer version waits while a cell runs (the page calls this when Python's activity
   * changes). */
  function refresh() {
    if (status.dataset.state === "update" && !applying) button.disabled = busy();
  }

  /* Storing was turned off (the course map): show it, and let start() run again. */
  function stop() {
    started = false;
    show("off", t("Copia sin conexión desactivada (se activa en «Lecciones», sección «Sin conexión»)."));
  }

  return { start, stop, refresh, status };
}

/* The course map's panel: a switch that stores the course or deletes what is stored, and the
 * space it takes. */
export function setupOfflinePanel(offline) {
  const panel = document.querySelector("[data-testid=offline-panel]");
  if (!panel || !offline.status || !("serviceWorker" in navigator)) return; // stays hidden
  const toggle = panel.querySelector("[data-testid=offline-toggle]");
  const clear = panel.querySelector("[data-testid=offline-clear]");
  const usage = panel.querySelector(".offline-usage");
  const swUrl = new URL(offline.status.dataset.sw, document.baseURI).href;
  panel.hidden = false;
  toggle.checked = storingWanted();
  async function showUsage(prefix = "") {
    let used = "";
    try {
      const estimate = await navigator.storage.estimate();
      used = t("Este sitio ocupa {size} en este navegador.", { size: mb(estimate.usage || 0) });
    } catch {
      used = "";
    }
    usage.textContent = [prefix, used].filter(Boolean).join(" ");
  }
  /* The browser frees a deleted store's space only once nothing holds it any more (Chromium:
   * when the worker that still controls the page stops, some 30 s later): read the space again
   * every 5 s for two minutes, so the figure drops when the space is freed. */
  let following = null;
  function followUsage(prefix) {
    showUsage(prefix);
    clearInterval(following);
    let left = 24;
    following = setInterval(() => {
      if (toggle.checked || --left < 0) clearInterval(following);
      else showUsage(prefix);
    }, 5000);
  }
  toggle.addEventListener("change", async () => {
    setWanted(toggle.checked);
    if (toggle.checked) {
      await offline.start();
      showUsage();
    } else {
      await forget(swUrl);
      offline.stop();
      followUsage(t("Copia borrada; no se guardará otra mientras la casilla siga desmarcada."));
    }
  });
  // The space taken, again once storing ends (start() returns when the worker is registered).
  new MutationObserver(() => {
    if (offline.status.dataset.state === "stored") showUsage();
  }).observe(offline.status, { attributeFilter: ["data-state"] });
  clear.addEventListener("click", async () => {
    setWanted(false);
    toggle.checked = false;
    await forget(swUrl);
    offline.stop();
    followUsage(t("Copia borrada. Marca la casilla para volver a guardarla."));
  });
  showUsage();
}
