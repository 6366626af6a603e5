/* The course's memory in this browser (local storage): which cells of each lesson have run.
 * On a lesson page (its course links carry data-lesson), every cell that finishes a run is
 * recorded; on the course map (index.html), each lesson's line says how far it has run. */

const PREFIX = "curso:celdas-ejecutadas:"; // + the lesson's page, e.g. "marco.html"

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
      text.textContent = "sin ejecutar";
    } else if (ran < total) {
      item.dataset.progress = "partial";
      text.textContent = `ejecutada en parte (${ran} de ${total} celdas)`;
    } else {
      item.dataset.progress = "complete";
      text.textContent = "ejecutada entera";
    }
  }
}

export function setupCourse() {
  const nav = document.querySelector("[data-testid=course-nav][data-lesson]");
  if (nav) trackLesson(nav.dataset.lesson);
  const map = document.querySelector("[data-testid=course-map]");
  if (map) showProgress(map);
}
