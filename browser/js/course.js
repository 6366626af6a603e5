/* The course's memory in this browser (local storage): which cells of each lesson have run.
 * On a lesson page (its course links carry data-lesson), every cell that finishes a run is
 * recorded; on the course map (index.html), each lesson's line says how far it has run. */

import { t } from "./i18n.js";

const PREFIX = "curso:celdas-ejecutadas:"; // + the lesson's page: "marco.html", "en/python.html"

function load(lesson) {
  try {
    const ran = JSON.parse(localStorage.getItem(PREFIX + lesson) || "[]");
    return new Set(Array.isArray(ran) ? ran : []);
  } catch {
    return new Set(); // no storage (private mode, blocked) or a damaged value
  }
}

function save(lesson, ran) {
  try {
    localStorage.setItem(PREFIX + lesson, JSON.stringify([...ran].sort((a, b) => a - b)));
  } catch {
    // storage full or blocked: the course map will not show this run
  }
}

/* A cell has run when its data-state goes from running to done or error (a queued cell is
 * "running" too, and only a run of its code ends there). */
function trackLesson(lesson) {
  const cells = [...document.querySelectorAll("[data-testid=cell]")];
  const ran = load(lesson);
  const observer = new MutationObserver((records) => {
    let changed = false;
    for (const record of records) {
      const state = record.target.dataset.state;
      if (record.oldValue === "running" && (state === "done" || state === "error")) {
        const index = cells.indexOf(record.target);
        if (index >= 0 && !ran.has(index)) {
          ran.add(index);
          changed = true;
        }
      }
    }
    if (changed) save(lesson, ran);
  });
  cells.forEach((cell) => observer.observe(cell, {
    attributes: true, attributeFilter: ["data-state"], attributeOldValue: true,
  }));
}

function showProgress(map) {
  for (const item of map.querySelectorAll("[data-lesson]")) {
    const total = Number(item.dataset.cells);
    const ran = [...load(item.dataset.lesson)].filter((i) => i < total).length;
    const text = item.querySelector("[data-testid=lesson-progress]");
    if (ran === 0) {
      item.dataset.progress = "none";
      text.textContent = t("sin ejecutar");
    } else if (ran < total) {
      item.dataset.progress = "partial";
      text.textContent = t("ejecutada en parte ({ran} de {total} celdas)", { ran, total });
    } else {
      item.dataset.progress = "complete";
      text.textContent = t("ejecutada entera");
    }
  }
}

/* The reader's first preferred language that the course has ("es" or "en"), or null. */
export function preferredLanguage(languages) {
  for (const tag of languages || []) {
    const base = String(tag).toLowerCase().split("-")[0];
    if (base === "es" || base === "en") return base;
  }
  return null;
}

/* The language switch opens the same section of the other edition: the id of the last section
 * heading in the top third of the window (both editions give their sections the same ids), or the
 * top of the page. */
function currentSection() {
  let id = "";
  const line = innerHeight / 3;
  for (const heading of document.querySelectorAll("main h2[id], main h3[id]")) {
    if (heading.getBoundingClientRect().top > line) break;
    id = heading.id;
  }
  return id ? `#${id}` : ""; // above the first section: the top of the page
}

/* The header's switch, and a short copy of it in the kernel bar, which stays on screen while the
 * reader is deep in a lesson (the header has scrolled away by then). Each points at the section
 * on screen when it is used. */
function setupSwitch() {
  const links = [...document.querySelectorAll("[data-testid=lang-switch]")];
  const status = document.querySelector(".kernel-bar .kernel-status");
  if (status && links.length) {
    const copy = links[0].cloneNode(false);
    copy.className = "lang-switch-bar";
    copy.dataset.testid = "lang-switch-bar";
    copy.textContent = copy.getAttribute("hreflang").toUpperCase();
    // its name is its text ("EN"), as axe wants; the title says where it goes
    copy.title = links[0].title;
    status.after(copy); // beside the state: a phone's bar gives the buttons a row of their own
    links.push(copy);
  }
  for (const link of links) {
    const base = link.getAttribute("href").split("#")[0];
    const follow = () => { link.setAttribute("href", base + currentSection()); };
    for (const event of ["click", "auxclick", "focus", "pointerenter", "contextmenu"]) {
      link.addEventListener(event, follow);
    }
  }
}

export function setupCourse() {
  setupSwitch();
  const hint = document.querySelector("[data-testid=prefers-english]");
  if (hint && preferredLanguage(navigator.languages || [navigator.language]) === "en") hint.hidden = false;
  const nav = document.querySelector("[data-testid=course-nav][data-lesson]");
  if (nav) trackLesson(nav.dataset.lesson);
  const map = document.querySelector("[data-testid=course-map]");
  if (map) showProgress(map);
}
