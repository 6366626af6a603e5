/* The lesson views' behaviour that needs a script. The whole-vocabulary list of a position in the
 * per-position view (py/lesson/views.py, PositionsView._all_tokens): when the reader opens it, the
 * few rows written as HTML are replaced by every token of the vocabulary, most probable first, the
 * ones the mask removes greyed, with a search box. Home and End in the per-position strip (the
 * arrows need no script). Works for views in cell outputs (added later) through delegated
 * listeners. */

import { formatInt, formatProb } from "./numbers.js";
import { pageLanguage, t } from "./i18n.js";

/** A probability as the views print it (lesson/numbers.py es_prob / en_prob), in the page's
 * language unless ``language`` says otherwise (./numbers.js). */
export function esProb(p, language = pageLanguage()) {
  return formatProb(p, language);
}

/** An integer as the views print it (lesson/numbers.py es_int / en_int), in the page's language
 * unless ``language`` says otherwise (./numbers.js). */
export function esInt(n, language = pageLanguage()) {
  return formatInt(n, language);
}

/** «1 token», «3 tokens»: the number and the noun that agrees with it. */
export function plural(n, one, many) {
  return `${esInt(n)} ${n === 1 ? one : many}`;
}

/** How many of ``total`` items contain the searched text, in words that agree:
 * «ninguno de los 9 tokens permitidos contiene «de»», «1 de los 9 … contiene», «3 de los 9 …
 * contienen», «los 9 … contienen», «el único token permitido (no) contiene «de»». ``nouns`` is
 * [singular, plural] of a masculine noun. */
export function containing(shown, total, [one, many], query) {
  const quoted = pageLanguage() === "en" ? `“${query}”` : `«${query}»`;
  const p = { what: quoted, one, many, total: esInt(total), shown: esInt(shown) };
  if (total === 0) return t("no hay {many}", p);
  if (total === 1) return shown ? t("el único {one} contiene {what}", p) : t("el único {one} no contiene {what}", p);
  if (shown === 0) return t("ninguno de los {total} {many} contiene {what}", p);
  if (shown === total) return t("los {total} {many} contienen {what}", p);
  return shown === 1 ? t("1 de los {total} {many} contiene {what}", p)
    : t("{shown} de los {total} {many} contienen {what}", p);
}

/** The whole-vocabulary list's count line: all tokens and the allowed ones, or, while searching,
 * how many contain the text and how many of those the mask allows. */
export function vocabularyCount(shown, shownAllowed, total, allowed, query) {
  if (!query) return plural(total, "token", "tokens") + "; " + plural(allowed, t("permitido"), t("permitidos")) + " " + t("por la máscara");
  const head = containing(shown, total, ["token", "tokens"], query);
  if (shown === 0) return head;
  if (shown === 1) return head + "; " + (shownAllowed ? t("está permitido") : t("no está permitido"));
  if (shownAllowed === 0) return head + "; " + t("ninguno está permitido");
  if (shownAllowed === shown) return head + "; " + t("todos están permitidos");
  return head + "; " + (shownAllowed === 1 ? t("1 de ellos está permitido")
    : t("{n} de ellos están permitidos", { n: esInt(shownAllowed) }));
}

/** Allowed token ids from the hexadecimal bitmask (token 0 in the lowest bit of the first digit). */
export function allowedFromHex(hex) {
  const allowed = new Set();
  for (let i = 0; i < hex.length; i += 1) {
    const nibble = parseInt(hex[i], 16);
    for (let bit = 0; bit < 4; bit += 1) if (nibble & (1 << bit)) allowed.add(4 * i + bit);
  }
  return allowed;
}

function fill(details) {
  const body = details.querySelector(".pv-all-body");
  const view = details.closest("[data-vocab]");
  if (!body || !view || body.dataset.filled) return;
  const labels = JSON.parse(view.dataset.vocab);
  const probs = body.dataset.p.split(",").map(Number);
  const allowed = allowedFromHex(body.dataset.allowed);
  const order = probs.map((p, id) => id).sort((a, b) => probs[b] - probs[a] || a - b);
  const search = document.createElement("input");
  search.type = "search";
  search.className = "pv-all-search";
  search.setAttribute("aria-label", t("Buscar un token (por su texto)"));
  search.placeholder = t("buscar token…");
  const list = document.createElement("ol");
  list.className = "pv-all-list";
  for (const id of order) {
    const row = document.createElement("li");
    const tok = document.createElement("span");
    tok.className = allowed.has(id) ? "tok" : "tok removed";
    tok.title = `token ${id}`;
    tok.textContent = labels[id];
    row.dataset.label = labels[id].toLowerCase();
    if (!allowed.has(id)) row.className = "out";
    else row.dataset.allowed = "true";
    row.append(tok, ` ${esProb(probs[id])}`);
    list.append(row);
  }
  const count = document.createElement("p");
  count.className = "more";
  count.setAttribute("role", "status");
  const show = () => {
    const needle = search.value.trim().toLowerCase();
    let shown = 0, shownAllowed = 0;
    for (const row of list.children) {
      row.hidden = needle !== "" && !row.dataset.label.includes(needle);
      if (!row.hidden) shown += 1;
      if (!row.hidden && row.dataset.allowed) shownAllowed += 1;
    }
    count.textContent = vocabularyCount(shown, shownAllowed, order.length, allowed.size, search.value.trim());
  };
  search.addEventListener("input", show);
  body.replaceChildren(search, count, list);
  body.dataset.filled = "true";
  show();
}

/* Home and End in a per-position strip go to its first and last position, as the arrows go to
 * the next one (the strip's entries are radio buttons: the browser moves, checks and fires
 * input and change for the arrows; here the same for Home and End). */
function homeEnd(event) {
  if ((event.key !== "Home" && event.key !== "End") || event.altKey || event.ctrlKey || event.metaKey) return;
  const radio = event.target;
  if (!(radio instanceof HTMLInputElement) || radio.type !== "radio" || !radio.closest(".pv-strip")) return;
  const radios = [...radio.closest(".pv-strip").querySelectorAll("input[type=radio]")];
  const target = event.key === "Home" ? radios[0] : radios[radios.length - 1];
  event.preventDefault(); // not the page's scroll
  if (!target || target === radio) return;
  target.focus();
  if (target.checked) return;
  target.checked = true;
  target.dispatchEvent(new Event("input", { bubbles: true }));
  target.dispatchEvent(new Event("change", { bubbles: true }));
}

export function setupViews(root = document) {
  root.addEventListener("keydown", homeEnd);
  // "toggle" does not bubble: listen in the capture phase, for views added at any time
  root.addEventListener("toggle", (event) => {
    const target = event.target;
    if (target instanceof HTMLDetailsElement && target.classList.contains("pv-all") && target.open) {
      fill(target);
    }
  }, true);
}
