/* The «Laboratorio»'s settings checked on the page, with the words and limits of Python's
 * check_settings (lesson.laboratorio.settings), so that a field and a link get the same message;
 * and the numbers and counts its messages write, in the page's language. */
import { formatInt, formatNumber } from "./numbers.js";
import { pageLanguage, t, tn } from "./i18n.js";

/* A number or an integer in the page's language (./numbers.js). */
export function number(x) {
  return formatNumber(x, pageLanguage());
}

export function int(n) {
  return formatInt(n, pageLanguage());
}

/* «1 token», «3 tokens» in the page's language. */
export function tokensText(n) {
  return tn("{n} token", "{n} tokens", n, { n: int(n) });
}

/* A value the reader typed, quoted: «…» in Spanish, “…” in English. */
export function quoted(text) {
  return pageLanguage() === "en" ? `“${text}”` : `«${text}»`;
}

/* How many of the ``total`` tokens allowed contain the searched text, in words that agree (as
 * views.js's containing writes it in Spanish): «3 de los 9 tokens permitidos contienen «de»». */
export function searchCount(shown, total, query) {
  const params = { shown: int(shown), total: int(total), query };
  if (total === 0) return t("no hay tokens permitidos");
  if (total === 1) {
    return shown ? t("el único token permitido contiene «{query}»", params)
      : t("el único token permitido no contiene «{query}»", params);
  }
  if (shown === 0) return t("ninguno de los {total} tokens permitidos contiene «{query}»", params);
  if (shown === total) return t("los {total} tokens permitidos contienen «{query}»", params);
  return tn("{shown} de los {total} tokens permitidos contiene «{query}»",
    "{shown} de los {total} tokens permitidos contienen «{query}»", shown, params);
}

/* The number fields the page checks, with the words and limits of Python's check_settings
 * (lesson.laboratorio.lab), so that a field and a link get the same message. */
/* A link's temperature that the slider cannot show (it would clamp 99 to 3, or drop «abc»): said,
 * instead of running with another value. */
export function temperatureProblem(text, value, input) {
  const range = t("la temperatura va de {low} a {high}", { low: number(Number(input.min)), high: number(Number(input.max)) });
  if (text !== "" && !Number.isFinite(value)) {
    return { message: t("la temperatura del enlace, «{text}», no es un número: {range}; elige una en la barra",
      { text, range }), input };
  }
  if (text !== "" && (value < Number(input.min) || value > Number(input.max))) {
    return { message: t("la temperatura del enlace vale {value}, y {range}: elige una en la barra",
      { value: number(value), range }), input };
  }
  return null;
}

// the fields' names as the messages say them (functions: the page's language is read when shown)
export const FIELD_RULES = [
  { field: "seed", name: () => t("la semilla"), integer: true, emptyOk: false },
  { field: "top_k", name: () => "top-k", integer: true, emptyOk: true },
  { field: "top_p", name: () => "top-p", integer: false, emptyOk: true },
  { field: "max_tokens", name: () => t("«tokens como máximo»"), integer: true, emptyOk: true },
];

/* What a number field takes, in words: «un entero de 1 a 200», «un entero de 1 o más», or top-p's
 * «un número mayor que 0 y de 1 como mucho»; «(o vacío)» where it may stay empty. */
export function rule(input, { integer, emptyOk }) {
  const low = int(Number(input.min));
  const words = integer
    ? (input.max === "" ? t("un entero de {low} o más", { low })
      : t("un entero de {low} a {high}", { low, high: int(Number(input.max)) }))
    : t("un número mayor que 0 y de {high} como mucho", { high: number(Number(input.max)) });
  return emptyOk ? t("{words} (o vacío)", { words }) : words;
}

/* A number field's text as a number: a decimal comma or point («0,9», «0.9») on the Spanish page,
 * a decimal point only on the English one (where "1,000" reads as a thousands separator: NaN, and
 * ``invalid`` says why, rather than seed 1); NaN when it is not a number (text fields, so that
 * «1,5» is read as typed, not silently turned into 15 as a number field of an English browser
 * would). */
export function parseNumber(text) {
  if (pageLanguage() === "en" && text.includes(",")) return NaN;
  const t = text.trim().replace(",", ".");
  return /^[-+−]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(t) ? Number(t.replace("−", "-")) : NaN;
}

export function numberOrNull(input) {
  return input.value.trim() === "" ? null : parseNumber(input.value);
}

/** One number field's problem ({ message, input }), or null when its value is fine. */
export function fieldProblem(fields, spec) {
  const input = fields[spec.field];
  const must = t("{name} tiene que ser {rule}", { name: spec.name(), rule: rule(input, spec) });
  if (input.validity?.badInput) return { message: t("{must}; lo escrito no es un número", { must }), input };
  if (input.value.trim() === "") {
    return spec.emptyOk ? null : { message: t("{must}; ahora está vacío", { must }), input };
  }
  const value = parseNumber(input.value);
  const max = input.max === "" ? Infinity : Number(input.max);
  const ok = Number.isFinite(value) && value <= max && (spec.integer
    ? Number.isInteger(value) && value >= Number(input.min) : value > 0);
  if (Number.isNaN(value) && pageLanguage() === "en" && input.value.includes(",")) {
    return { message: t("{must}; «{text}» tiene una coma: escribe el número sin separador de miles, y " +
      "con punto si lleva decimales", { must, text: input.value.trim() }), input };
  }
  if (Number.isNaN(value)) {
    return { message: t("{must}; «{text}» no es un número", { must, text: input.value.trim() }), input };
  }
  // an integer of more than 15 digits is not the JavaScript number: quote the text instead
  const shown = /^\d{16,}$/.test(input.value.trim()) ? quoted(input.value.trim()) : number(value);
  return ok ? null : { message: t("{must}; ahora vale {value}", { must, value: shown }), input };
}
