// The page scripts' short strings in the page's language.
//
// Scripts are written with Spanish message ids: t("Python: listo"), tn("1 celda", "{n} celdas", n).
// An English page carries its translations in <script type="application/json" id="i18n-messages">,
// written by the build from the catalogs lesson/locale/en/LC_MESSAGES/*_js.po (Babel extracts the
// ids from these calls: babel.cfg). A Spanish page carries none, and the ids are the text.
// {name} in a message is replaced by params.name.

let messages = null;

function catalog() {
  if (messages === null) {
    const node = typeof document !== "undefined" && document.getElementById("i18n-messages");
    messages = node ? JSON.parse(node.textContent) : {};
  }
  return messages;
}

function fill(text, params) {
  return params ? text.replace(/\{(\w+)\}/g, (whole, key) => (key in params ? String(params[key]) : whole)) : text;
}

/** The page's language ("es" or "en"), from <html lang>. */
export function pageLanguage() {
  return typeof document !== "undefined" && document.documentElement.lang === "en" ? "en" : "es";
}

/** `message` (a Spanish id) in the page's language, with {name} filled from `params`. */
export function t(message, params) {
  const translated = catalog()[message];
  return fill(typeof translated === "string" && translated ? translated : message, params);
}

/** The singular (n == 1) or plural form, in the page's language; {n} is filled with n. */
export function tn(singular, plural, n, params) {
  const forms = catalog()[singular];
  const pair = Array.isArray(forms) && forms[0] ? forms : [singular, plural];
  return fill(n === 1 ? pair[0] : pair[1], { n, ...params });
}

/** A number with the page's decimal mark: 0.5 -> "0,5" (es) or "0.5" (en). */
export function decimal(x, digits) {
  const text = x.toFixed(digits);
  return pageLanguage() === "en" ? text : text.replace(".", ",");
}
