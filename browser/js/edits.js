/* The reader's edits to cells, kept in the browser's local storage so they survive a reload.
 *
 * Key: "celda:<page path>:<cell index>:<hash of the original code>". The hash ties an edit to
 * the code the build put in the page: after a new build changes a cell, its old edit is not
 * restored (and is removed). Storage may be missing or full (private windows, a quota): then
 * edits simply are not kept, and nothing else breaks. */

const PREFIX = "celda:";

/** A 53-bit string hash (cyrb53), as 14 hex digits: stable, synchronous, no crypto needed. */
export function codeHash(text) {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(16).padStart(14, "0");
}

function storage() {
  try {
    return window.localStorage;
  } catch {
    return null; // storage disabled by the browser
  }
}

/** The saved edit of one cell: `load()` (string or null), `save(code)`, `clear()`. */
export class EditStore {
  constructor(index, original, page = location.pathname) {
    this.cellPrefix = `${PREFIX}${page}:${index}:`;
    this.key = this.cellPrefix + codeHash(original);
    this.dropStale();
  }

  /* Edits of this cell made against another version of its code (an older build). */
  dropStale() {
    const store = storage();
    if (!store) return;
    try {
      for (let i = store.length - 1; i >= 0; i--) {
        const key = store.key(i);
        if (key && key.startsWith(this.cellPrefix) && key !== this.key) store.removeItem(key);
      }
    } catch { /* nothing to drop */ }
  }

  load() {
    try {
      return storage()?.getItem(this.key) ?? null;
    } catch {
      return null;
    }
  }

  save(code) {
    try {
      storage()?.setItem(this.key, code);
    } catch { /* full or disabled: the edit lives until the page closes */ }
  }

  clear() {
    try {
      storage()?.removeItem(this.key);
    } catch { /* nothing to clear */ }
  }
}
