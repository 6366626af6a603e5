/* The course's service worker (site/sw.js, bundled by esbuild with Workbox; docs/site.md
 * «Offline and isolation»). It does three things:
 *
 * 1. It stores the whole course when it installs: every page of both editions, the notebooks,
 *    the runtime, NumPy, the project's code and the weights. The list, with each file's revision
 *    and size, is written into this file by the build (`self.__COURSE_MANIFEST__` below), so a
 *    new build is a new service worker. Workbox's PrecacheController stores and serves it: a
 *    file whose name carries its content hash (assets/, weights/, the versioned vendor/ folder)
 *    has no revision, any other (the pages, the notebooks) the sha256 of its bytes.
 * 2. It serves the course's pages network first (so an online reader gets the newest build),
 *    falling back to the stored copy when the network fails, answers an error or takes longer
 *    than NAVIGATION_TIMEOUT_MS; every other stored file comes from the store. Nothing outside
 *    the course (another site in the same folder tree) is touched. A page's files are all content-addressed, so a page
 *    of one build never gets a file of another.
 * 3. It adds Cross-Origin-Opener-Policy and Cross-Origin-Embedder-Policy to every response it
 *    serves, so that a page it serves is cross-origin isolated on a host that sends neither:
 *    Stop can then interrupt a cell and keep the variables (browser/js/kernel-client.js).
 *
 * It tells the pages how storing goes (messages of type "offline-progress", "offline-stored",
 * "offline-error") and answers "BUILD", "STATUS", "REPAIR" (store again what is missing) and
 * "SKIP_WAITING" (browser/js/offline.js).
 */
import { PrecacheController, PrecacheRoute } from "workbox-precaching";
import { registerRoute } from "workbox-routing";
import { NetworkOnly } from "workbox-strategies";
import { setCacheNameDetails } from "workbox-core";

// {build, files: [{url, revision, size}]}: written by the build (sitebuild/offline.py).
const COURSE = self.__COURSE_MANIFEST__;
const NAVIGATION_TIMEOUT_MS = 4000;

setCacheNameDetails({ prefix: "curso" }); // the store: "curso-precache-v2-<scope>"

const SIZES = new Map(COURSE.files.map((f) => [new URL(f.url, self.location.href).href, f.size]));
const TOTAL_BYTES = COURSE.files.reduce((sum, f) => sum + f.size, 0);

/* A copy of `response` with the two headers that make the page that loads it cross-origin
 * isolated (COEP also has to be on the worker's script, so every response gets both). */
function isolated(response) {
  if (!response || response.type === "opaque" || response.status === 0) return response;
  const headers = new Headers(response.headers);
  headers.set("Cross-Origin-Opener-Policy", "same-origin");
  headers.set("Cross-Origin-Embedder-Policy", "require-corp");
  return new Response(response.body, {
    status: response.status, statusText: response.statusText, headers,
  });
}

async function tellPages(message) {
  const pages = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
  for (const page of pages) page.postMessage({ build: COURSE.build, ...message });
}

/* Install progress: each file counts once, stored before or fetched now. */
const installing = { done: new Set(), bytes: 0, current: null };
const progressPlugin = {
  handlerWillStart: async ({ request, event }) => {
    if (event && event.type === "install") installing.current = request.url;
  },
  handlerWillRespond: async ({ request, event, response }) => {
    if (event && event.type === "install" && !installing.done.has(request.url)) {
      installing.done.add(request.url);
      installing.bytes += SIZES.get(request.url) || 0;
      tellPages({ type: "offline-progress", files: installing.done.size,
        totalFiles: COURSE.files.length, bytes: installing.bytes, totalBytes: TOTAL_BYTES });
    }
    return response;
  },
};
const isolationPlugin = { handlerWillRespond: async ({ response }) => isolated(response) };

const precache = new PrecacheController({ plugins: [progressPlugin, isolationPlugin] });
// Each file's sha256 as subresource integrity: a host or a CDN that answers with other bytes (an
// old copy of a page) fails the install, which the next visit retries.
precache.addToCacheList(COURSE.files.map(({ url, revision, integrity }) => ({ url, revision, integrity })));

self.addEventListener("install", (event) => {
  const stored = precache.install(event); // it waits on the event itself
  event.waitUntil(stored.then(
    () => tellPages({ type: "offline-stored", totalBytes: TOTAL_BYTES }),
    (error) => {
      // Workbox's error names the file and the HTTP status; a network error does not.
      const details = (error && error.details) || {};
      tellPages({ type: "offline-error", url: details.url || installing.current,
        status: details.status || null, message: String(error && error.message || error) });
      throw error; // the install fails: this service worker is discarded
    }));
});

self.addEventListener("activate", (event) => {
  // Workbox deletes the entries no longer in the list; then this worker takes over the open
  // pages (on a first visit, the page that registered it).
  event.waitUntil(precache.activate(event).then(() => self.clients.claim()));
});

/* What of the course is in the store now (a browser may evict files): how many files and
 * bytes, and the [url, cache key] of each file missing. */
async function scanStore() {
  const cache = await caches.open(precache.strategy.cacheName);
  const missing = [];
  let files = 0;
  let bytes = 0;
  for (const [url, key] of precache.getURLsToCacheKeys()) {
    if (await cache.match(key)) {
      files += 1;
      bytes += SIZES.get(url) || 0;
    } else {
      missing.push([url, key]);
    }
  }
  return { files, bytes, missing };
}

async function storedCount() {
  const { files, bytes } = await scanStore();
  return { files, bytes, totalFiles: COURSE.files.length, totalBytes: TOTAL_BYTES };
}

/* Store again what is missing (the browser evicted some files, or the reader cleared the store
 * while this worker still controlled a page and then turned storing on again: the browser then
 * keeps this worker, with an empty store). Workbox's strategy fetches each file with its
 * integrity and stores it under its key, as at install; the pages see the same progress. */
async function repair(event) {
  let { files, bytes, missing } = await scanStore();
  for (const [url, cacheKey] of missing) {
    const integrity = precache.getIntegrityForCacheKey(cacheKey);
    const request = new Request(url, { credentials: "same-origin" });
    try {
      const [response, done] = precache.strategy.handleAll({ event, request, params: { cacheKey, integrity } });
      const answer = await response;
      await done;
      if (!answer.ok) throw Object.assign(new Error(`HTTP ${answer.status}`), { details: { url, status: answer.status } });
    } catch (error) {
      const details = (error && error.details) || {};
      const failure = { type: "offline-error", url, status: details.status || null, message: String(error && error.message || error) };
      await tellPages(failure); // before the answer, so the page shows it
      return failure;
    }
    files += 1;
    bytes += SIZES.get(url) || 0;
    await tellPages({ type: "offline-progress", files, totalFiles: COURSE.files.length, bytes, totalBytes: TOTAL_BYTES });
  }
  return { type: "offline-stored", repaired: missing.length };
}

self.addEventListener("message", (event) => {
  const { type } = event.data || {};
  const reply = (value) => event.ports[0] && event.ports[0].postMessage(value);
  if (type === "SKIP_WAITING") {
    self.skipWaiting();
  } else if (type === "BUILD") {
    reply({ build: COURSE.build });
  } else if (type === "STATUS") {
    event.waitUntil(storedCount().then((count) => reply({ build: COURSE.build, ...count })));
  } else if (type === "REPAIR") {
    event.waitUntil(repair(event).then(reply));
  }
});

/* The stored copy of a page: its URL without query or fragment (the lab keeps its experiment
 * there), a folder's index.html. */
function pageAddress(url) {
  const page = new URL(url);
  page.search = "";
  page.hash = "";
  if (page.pathname.endsWith("/")) page.pathname += "index.html";
  return page.href;
}
function isCoursePage(url) {
  return Boolean(precache.getCacheKeyForURL(pageAddress(url)));
}
function storedPage(url) {
  return precache.matchPrecache(pageAddress(url));
}

/* The course's own folders: a file there that the list does not name (a newer build's, while
 * this worker is still the old one) goes to the network, with the isolation headers. */
const SCOPE = new URL(".", self.location.href).href;
function inCourseFolders(url) {
  return url.href.startsWith(SCOPE) && /^(assets|weights|vendor)\//.test(url.href.slice(SCOPE.length));
}

async function navigate(request) {
  const stored = await storedPage(request.url);
  // no-cache: revalidate with the host, so an online reader gets its newest page
  const network = fetch(request.url, { cache: "no-cache", credentials: "same-origin", redirect: "manual" });
  if (!stored) return network; // not a stored page: the network alone, with no time limit
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error("timeout")), NAVIGATION_TIMEOUT_MS);
  });
  try {
    const response = await Promise.race([network, late]);
    // a redirect is followed by the browser; a host's error gives way to the stored page
    return response.ok || response.type === "opaqueredirect" ? response : stored;
  } catch {
    return stored; // offline, or slower than NAVIGATION_TIMEOUT_MS
  } finally {
    clearTimeout(timer);
  }
}

// HEAD (the worker checks the .wasm's type before Pyodide compiles it): the stored headers.
registerRoute(({ url }) => Boolean(precache.getCacheKeyForURL(url.href)), async ({ url, request }) => {
  const stored = await precache.matchPrecache(url.href);
  if (!stored) return fetch(request);
  return isolated(new Response(null, { status: stored.status, headers: stored.headers }));
}, "HEAD");

// A course page the reader opens: network first, then the stored copy (before the precache
// route, which would always answer from the store).
registerRoute(({ request, url }) => request.mode === "navigate" && isCoursePage(url.href),
  async ({ request }) => isolated(await navigate(request)));

registerRoute(new PrecacheRoute(precache, {
  ignoreURLParametersMatching: [/.*/], // no stored file depends on a query
  directoryIndex: "index.html",
  cleanURLs: false,
}));

registerRoute(({ url }) => inCourseFolders(url), new NetworkOnly({ plugins: [isolationPlugin] }));
// Nothing else is handled: the rest of the origin is not the course's.
