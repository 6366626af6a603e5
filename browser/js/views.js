/* The lesson views' one piece of behaviour that needs a script: the whole-vocabulary list of a
 * position in the per-position view (py/lesson/views.py, PositionsView._all_tokens). When the
 * reader opens it, the few rows written as HTML are replaced by every token of the vocabulary,
 * most probable first, the ones the mask removes greyed, with a search box. Works for views in
 * cell outputs (added later) through one delegated listener. */

const SUPERSCRIPT = { "-": "⁻", 0: "⁰", 1: "¹", 2: "²", 3: "³", 4: "⁴", 5: "⁵", 6: "⁶", 7: "⁷", 8: "⁸", 9: "⁹" };

/** A probability as the views print it (lesson/numbers.py es_prob): three decimals with a
 * decimal comma from 0.001 up, below that a mantissa and a power of ten: 2,26·10⁻⁸. */
export function esProb(p) {
  if (p === 0) return "0";
  if (p >= 0.001) return p.toFixed(3).replace(".", ",");
  let exponent = Math.floor(Math.log10(p));
  let mantissa = Number((p / 10 ** exponent).toFixed(2));
  if (mantissa >= 10) { mantissa /= 10; exponent += 1; }
  const power = String(exponent).replace(/[-0-9]/g, (c) => SUPERSCRIPT[c]);
  return `${mantissa.toFixed(2).replace(".", ",")}·10${power}`;
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
  search.setAttribute("aria-label", "Buscar un token (por su texto)");
  search.placeholder = "buscar token…";
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
    row.append(tok, ` ${esProb(probs[id])}`);
    list.append(row);
  }
  const count = document.createElement("p");
  count.className = "more";
  count.setAttribute("role", "status");
  const show = () => {
    const needle = search.value.trim().toLowerCase();
    let shown = 0;
    for (const row of list.children) {
      row.hidden = needle !== "" && !row.dataset.label.includes(needle);
      if (!row.hidden) shown += 1;
    }
    count.textContent = `${shown} de ${order.length} tokens; ${allowed.size} permitidos`;
  };
  search.addEventListener("input", show);
  body.replaceChildren(search, count, list);
  body.dataset.filled = "true";
  show();
}

export function setupViews(root = document) {
  // "toggle" does not bubble: listen in the capture phase, for views added at any time
  root.addEventListener("toggle", (event) => {
    const target = event.target;
    if (target instanceof HTMLDetailsElement && target.classList.contains("pv-all") && target.open) {
      fill(target);
    }
  }, true);
}
