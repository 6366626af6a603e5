/* Numbers as the course writes them, one body for both languages: the page's twin of
 * lesson/numbers.py (es_int / en_int, es_number / en_number, es_prob / en_prob), tested against it digit for digit
 * (tests/site/test_numbers_js.py). Spanish: decimal comma, a narrow no-break space between groups
 * of three from five digits on, «·» before a power of ten. English: decimal point, commas between
 * thousands from four digits on, «×». Both: minus sign U+2212. No DOM: the language is an argument. */

const SUPERSCRIPT = { "-": "\u207b", 0: "\u2070", 1: "\u00b9", 2: "\u00b2", 3: "\u00b3", 4: "\u2074",
  5: "\u2075", 6: "\u2076", 7: "\u2077", 8: "\u2078", 9: "\u2079" };

const STYLES = {
  es: { mark: ",", times: "·", group: (text) => (text.length >= 5 ? text.replace(/\B(?=(\d{3})+$)/g, "\u202f") : text) },
  en: { mark: ".", times: "×", group: (text) => text.replace(/\B(?=(\d{3})+$)/g, ",") },
};

function style(language) {
  return STYLES[language === "en" ? "en" : "es"];
}

/** An integer: «12 345» (es, from five digits on) or "12,345" (en); «−3». */
export function formatInt(n, language) {
  const grouped = style(language).group(String(Math.abs(n)));
  return n < 0 ? `\u2212${grouped}` : grouped;
}

/** A number from the reader's text or a link, with its shortest digits: 2.5 -> «2,5» / "2.5";
 * an integer below 10¹⁶ as formatInt; an exponent below −4 or from 16 on as a power of ten:
 * 1e30 -> «10³⁰», 1.5e-7 -> «1,5·10⁻⁷» / "1.5×10⁻⁷"; «∞», «−∞», «NaN». */
export function formatNumber(x, language) {
  const s = style(language);
  if (Number.isNaN(x)) return "NaN";
  if (!Number.isFinite(x)) return x > 0 ? "∞" : "\u2212∞";
  if (Number.isInteger(x) && Math.abs(x) < 1e16) return formatInt(x, language);
  const [m, exp] = Math.abs(x).toExponential().split("e"); // the shortest digits that give x back
  const e = Number(exp), digits = m.replace(".", ""), minus = x < 0 ? "\u2212" : "";
  if (e >= -4 && e < 16) {
    const whole = e >= 0 ? formatInt(Number(digits.slice(0, e + 1).padEnd(e + 1, "0")), language) : "0";
    const frac = e >= 0 ? digits.slice(e + 1) : "0".repeat(-e - 1) + digits;
    return minus + whole + (frac ? `${s.mark}${frac}` : "");
  }
  const head = digits[0] + (digits.length > 1 ? `${s.mark}${digits.slice(1)}` : "");
  const power = "10" + String(e).replace(/./g, (c) => SUPERSCRIPT[c]);
  return minus + (head === "1" ? power : `${head}${s.times}${power}`);
}

/** A probability (lesson/numbers.py es_prob / en_prob, three digits): three decimals from 0.01 up,
 * below that three significant digits with a power of ten: «2,26·10⁻⁸» / "2.26×10⁻⁸"; one below 1
 * that would round to 1 is «> 0,999» (it is not certain). */
export function formatProb(p, language) {
  const s = style(language);
  const mark = (text) => text.replace(".", s.mark);
  if (p === 0) return mark("0.000");
  if (p > 0 && p < 1 && Number(p.toFixed(3)) === 1) return `> ${mark("0.999")}`;
  if (p >= 0.01) return mark(p.toFixed(3));
  let exponent = Math.floor(Math.log10(p));
  let mantissa = Number((p / 10 ** exponent).toFixed(2));
  if (mantissa >= 10) { mantissa /= 10; exponent += 1; }
  if (exponent >= -2) return mark(p.toFixed(2 - exponent)); // 0.009996 -> "0.0100", as es_sci
  const power = String(exponent).replace(/[-0-9]/g, (c) => SUPERSCRIPT[c]);
  return `${mark(mantissa.toFixed(2))}${s.times}10${power}`;
}
