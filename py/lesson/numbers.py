"""Numbers written the Spanish way (decimal comma, powers of ten with superscripts) or the English
way (``en_*``; ``fmt_*`` in the current language of ``lesson.i18n``), for the views
and for the page's prose, so that both print a figure identically.

Examples: es_decimal(0.4481, 3) == "0,448"; es_sci(4.85e-69) == "4,85·10⁻⁶⁹"; es_int(6765) == "6765";
es_int(1488000) == "1 488 000" (a thin space groups digits from five digits on, as the RAE advises).
"""

from __future__ import annotations

import math
from decimal import Decimal

from .i18n import get_language  # lesson.i18n imports nothing from here: no circle

_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
THIN_SPACE = "\u202f"  # narrow no-break space
SECONDS_PER_YEAR = 365.25 * 24 * 3600  # Julian year


class Style:
    """How one language writes numbers: ``mark`` (the decimal mark), ``times`` (before a power of
    ten), ``percent`` (after a percentage), ``group`` (an integer's digits, grouped: a function
    of the unsigned digits) and ``group_decimals`` (whether the whole part of a decimal is grouped
    too). One body per kind of number below serves both languages."""

    def __init__(self, mark: str, times: str, percent: str, group, group_decimals: bool):
        self.mark, self.times, self.percent = mark, times, percent
        self.group, self.group_decimals = group, group_decimals
        self._marks = str.maketrans({".": mark, ",": "," if group_decimals else mark, "-": "\u2212"})


def _thin_groups(text: str) -> str:
    """Digits grouped by threes with a thin space, from five digits on (as the RAE advises)."""
    if len(text) < 5:
        return text
    groups = []
    while text:
        groups.insert(0, text[-3:])
        text = text[:-3]
    return THIN_SPACE.join(groups)


# Spanish: a decimal comma, a thin space between groups of three from five digits on, a middle dot
# before the power of ten. English: a decimal point, thousands grouped with commas from four
# digits on (Chicago Manual of Style, 9.55), a times sign, and a percent sign with no space.
ES = Style(",", "·", THIN_SPACE + "%", _thin_groups, group_decimals=False)
EN = Style(".", "×", "%", lambda text: f"{int(text):,}", group_decimals=True)


def _decimal(x: float, digits: int, style: Style) -> str:
    text = f"{x:,.{digits}f}" if style.group_decimals else f"{x:.{digits}f}"
    return text.translate(style._marks)


def _power(mantissa: float, exponent: int, digits: int, style: Style) -> str:
    return f"{_decimal(mantissa, digits - 1, style)}{style.times}10{str(exponent).translate(_SUPERSCRIPT)}"


def _sci(x: float, digits: int, style: Style) -> str:
    if x == 0 or not math.isfinite(x):
        return "0" if x == 0 else ("NaN" if math.isnan(x) else ("∞" if x > 0 else "−∞"))
    exponent = math.floor(math.log10(abs(x)))
    mantissa = round(x / 10 ** exponent, digits - 1)
    if abs(mantissa) >= 10:  # 9.996 rounds up to 10.0
        mantissa, exponent = mantissa / 10, exponent + 1
    if -2 <= exponent <= 3:
        return _decimal(x, max(0, digits - 1 - exponent), style)
    return _power(mantissa, exponent, digits, style)


def _sci_log(ln_x: float, digits: int, style: Style) -> str:
    if math.isnan(ln_x):
        return "NaN"
    if ln_x == -math.inf:
        return "0"
    if ln_x == math.inf:
        return "∞"
    if -690 < ln_x < 690:  # e^ln_x is a normal float64
        return _sci(math.exp(ln_x), digits, style)
    log10 = ln_x / math.log(10)
    exponent = math.floor(log10)
    mantissa = round(10 ** (log10 - exponent), digits - 1)
    if mantissa >= 10:
        mantissa, exponent = mantissa / 10, exponent + 1
    return _power(mantissa, exponent, digits, style)


def _prob(x: float, digits: int, style: Style) -> str:
    if 0 < x < 1 and round(x, digits) == 1:  # «1,000» would read as certain
        return f"> {_decimal(1 - 10 ** -digits, digits, style)}"
    return _decimal(x, digits, style) if x >= 0.01 or x == 0 else _sci(x, digits, style)


def _int(n: int, style: Style) -> str:
    return ("\u2212" if n < 0 else "") + style.group(str(abs(int(n))))


def _number(x, style: Style) -> str:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise TypeError(f"a number must be an int or a float, not {type(x).__name__}")
    if isinstance(x, int):
        return _int(x, style)
    if x != x:
        return "NaN"
    if x in (float("inf"), float("-inf")):
        return "∞" if x > 0 else "\u2212∞"
    if x.is_integer() and abs(x) < 1e16:
        return _int(int(x), style)
    sign, digits, exponent = Decimal(repr(x)).normalize().as_tuple()
    mantissa = "".join(map(str, digits))
    e = exponent + len(mantissa) - 1  # x = ±m.mmm·10^e
    minus = "\u2212" if sign else ""
    if -4 <= e < 16:
        whole, frac = (mantissa[:e + 1], mantissa[e + 1:]) if e >= 0 else ("0", "0" * (-e - 1) + mantissa)
        whole = _int(int(whole.ljust(e + 1, "0")), style) if e >= 0 else whole
        return minus + whole + (style.mark + frac if frac else "")
    head = mantissa[0] + (style.mark + mantissa[1:] if len(mantissa) > 1 else "")
    power = "10" + str(e).translate(_SUPERSCRIPT)
    return minus + (power if head == "1" else f"{head}{style.times}{power}")


def es_decimal(x: float, digits: int = 3) -> str:
    """``x`` with ``digits`` decimals and a decimal comma: 0.4481 -> "0,448"; minus sign U+2212."""
    return _decimal(x, digits, ES)


def es_sci(x: float, digits: int = 3) -> str:
    """``x`` as mantissa·10^exponent with ``digits`` significant digits: 4.85e-69 -> "4,85·10⁻⁶⁹".

    Numbers from 0.01 to 10 000 are written without a power of ten; 0 and non-finite values as such.
    """
    return _sci(x, digits, ES)


def es_sci_log(ln_x: float, digits: int = 3) -> str:
    """e^ln_x written like :func:`es_sci`, computed in the log domain, so that numbers a float64
    cannot hold (1e-400, 1e+400) still print: es_sci_log(-1000) == "5,08·10⁻⁴³⁵". Where e^ln_x is
    an ordinary float the result is exactly ``es_sci(math.exp(ln_x), digits)``; -inf prints "0",
    +inf and NaN print "∞" and "NaN"."""
    return _sci_log(ln_x, digits, ES)


def es_prob(x: float, digits: int = 3) -> str:
    """A probability: ``digits`` decimals when it is at least 0.01, below that ``digits``
    significant digits with a power of ten (0.00139 -> "1,39·10⁻³"), so a small one keeps its
    precision; one below 1 that would round to 1 is "> 0,999" (it is not certain)."""
    return _prob(x, digits, ES)


def es_int(n: int) -> str:
    """An integer, digits grouped by threes with a thin space from five digits on: 12345 -> "12 345"."""
    return _int(n, ES)


def es_percent(x: float, digits: int = 1) -> str:
    """A fraction as a percentage: 0.1234 -> "12,3 %"."""
    return _decimal(100 * x, digits, ES) + ES.percent


def es_number(x) -> str:
    """A number from the reader's text or a link, written the Spanish way: decimal comma, minus
    sign U+2212, digits grouped as :func:`es_int` groups them (5.5 -> "5,5", -1 -> "−1",
    20000 -> "20 000"); a float whose shortest decimal form has an exponent below -4 or from 16
    on, as a power of ten: 1e30 -> "10³⁰", 1.5e-07 -> "1,5·10⁻⁷". An integral float under 10¹⁶ is
    written as the integer (5.0 -> "5"); inf and nan as "∞", "−∞", "NaN". Raises TypeError for
    anything but an int or a float. The page's ``formatNumber`` (browser/js/numbers.js) writes
    the same digits."""
    return _number(x, ES)


def en_decimal(x: float, digits: int = 3) -> str:
    """``x`` with ``digits`` decimals, a decimal point and commas between thousands:
    0.4481 -> "0.448", 1234.5 -> "1,234.500"; minus sign U+2212."""
    return _decimal(x, digits, EN)


def en_sci(x: float, digits: int = 3) -> str:
    """Like :func:`es_sci`, written the English way: 4.85e-69 -> "4.85×10⁻⁶⁹"; 0.0123 -> "0.0123"."""
    return _sci(x, digits, EN)


def en_sci_log(ln_x: float, digits: int = 3) -> str:
    """Like :func:`es_sci_log` (e^ln_x from ln_x, no overflow), written the English way."""
    return _sci_log(ln_x, digits, EN)


def en_prob(x: float, digits: int = 3) -> str:
    """Like :func:`es_prob`, written the English way: 0.00139 -> "1.39×10⁻³", "> 0.999"."""
    return _prob(x, digits, EN)


def en_int(n: int) -> str:
    """An integer with commas between thousands: 6765 -> "6,765"; minus sign U+2212."""
    return _int(n, EN)


def en_percent(x: float, digits: int = 1) -> str:
    """A fraction as a percentage: 0.1234 -> "12.3%"."""
    return _decimal(100 * x, digits, EN) + EN.percent


def en_number(x) -> str:
    """:func:`es_number` written the English way: decimal point, commas between thousands, minus
    sign U+2212; powers of ten as "10³⁰" or "1.5×10⁻⁷"."""
    return _number(x, EN)


# In the current language (``lesson.i18n``): what the views and the library's printed labels use,
# so one view writes "0,448" on a Spanish page and "0.448" on an English one.

def _current(es, en):
    def formatted(*args, **kwargs):
        return (en if get_language() == "en" else es)(*args, **kwargs)
    formatted.__name__ = "fmt_" + es.__name__[3:]
    formatted.__doc__ = (f"``{es.__name__}`` or ``{en.__name__}``, in the current language "
                         "(``lesson.i18n.get_language()``).")
    return formatted


fmt_decimal = _current(es_decimal, en_decimal)
fmt_sci = _current(es_sci, en_sci)
fmt_sci_log = _current(es_sci_log, en_sci_log)
fmt_prob = _current(es_prob, en_prob)
fmt_int = _current(es_int, en_int)
fmt_percent = _current(es_percent, en_percent)
fmt_number = _current(es_number, en_number)
