"""Numbers written the Spanish way (decimal comma, powers of ten with superscripts) or the English
way (``en_*``; ``fmt_*`` in the current language of ``lesson.i18n``), for the views
and for the page's prose, so that both print a figure identically.

Examples: es_decimal(0.4481, 3) == "0,448"; es_sci(4.85e-69) == "4,85·10⁻⁶⁹"; es_int(6765) == "6765";
es_int(1488000) == "1 488 000" (a thin space groups digits from five digits on, as the RAE advises).
"""

from __future__ import annotations

import math

from .i18n import get_language  # lesson.i18n imports nothing from here: no circle

_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
THIN_SPACE = "\u202f"  # narrow no-break space
SECONDS_PER_YEAR = 365.25 * 24 * 3600  # Julian year


def es_decimal(x: float, digits: int = 3) -> str:
    """``x`` with ``digits`` decimals and a decimal comma: 0.4481 -> "0,448"; minus sign U+2212."""
    return f"{x:.{digits}f}".replace(".", ",").replace("-", "\u2212")


def es_sci(x: float, digits: int = 3) -> str:
    """``x`` as mantissa·10^exponent with ``digits`` significant digits: 4.85e-69 -> "4,85·10⁻⁶⁹".

    Numbers from 0.01 to 10 000 are written without a power of ten; 0 and non-finite values as such.
    """
    if x == 0 or not math.isfinite(x):
        return "0" if x == 0 else ("NaN" if math.isnan(x) else ("∞" if x > 0 else "−∞"))
    exponent = math.floor(math.log10(abs(x)))
    mantissa = round(x / 10 ** exponent, digits - 1)
    if abs(mantissa) >= 10:  # 9.996 rounds up to 10.0
        mantissa, exponent = mantissa / 10, exponent + 1
    if -2 <= exponent <= 3:
        return es_decimal(x, max(0, digits - 1 - exponent))
    return f"{es_decimal(mantissa, digits - 1)}·10{str(exponent).translate(_SUPERSCRIPT)}"


def es_sci_log(ln_x: float, digits: int = 3) -> str:
    """e^ln_x written like :func:`es_sci`, computed in the log domain, so that numbers a float64
    cannot hold (1e-400, 1e+400) still print: es_sci_log(-1000) == "5,08·10⁻⁴³⁵". Where e^ln_x is
    an ordinary float the result is exactly ``es_sci(math.exp(ln_x), digits)``; -inf prints "0",
    +inf and NaN print "∞" and "NaN"."""
    if math.isnan(ln_x):
        return "NaN"
    if ln_x == -math.inf:
        return "0"
    if ln_x == math.inf:
        return "∞"
    if -690 < ln_x < 690:  # e^ln_x is a normal float64
        return es_sci(math.exp(ln_x), digits)
    log10 = ln_x / math.log(10)
    exponent = math.floor(log10)
    mantissa = round(10 ** (log10 - exponent), digits - 1)
    if mantissa >= 10:
        mantissa, exponent = mantissa / 10, exponent + 1
    return f"{es_decimal(mantissa, digits - 1)}·10{str(exponent).translate(_SUPERSCRIPT)}"


def es_prob(x: float, digits: int = 3) -> str:
    """A probability: ``digits`` decimals when it is at least 0.01, below that ``digits``
    significant digits with a power of ten (0.00139 -> "1,39·10⁻³"), so a small one keeps its
    precision; one below 1 that would round to 1 is "> 0,999" (it is not certain)."""
    if 0 < x < 1 and round(x, digits) == 1:  # «1,000» would read as certain
        return f"> {es_decimal(1 - 10 ** -digits, digits)}"
    return es_decimal(x, digits) if x >= 0.01 or x == 0 else es_sci(x, digits)


def es_int(n: int) -> str:
    """An integer, digits grouped by threes with a thin space from five digits on: 12345 -> "12 345"."""
    text = str(abs(int(n)))
    if len(text) >= 5:
        groups = []
        while text:
            groups.insert(0, text[-3:])
            text = text[:-3]
        text = THIN_SPACE.join(groups)
    return ("\u2212" if n < 0 else "") + text


def es_percent(x: float, digits: int = 1) -> str:
    """A fraction as a percentage: 0.1234 -> "12,3 %"."""
    return f"{es_decimal(100 * x, digits)}{THIN_SPACE}%"


# English: a decimal point, thousands grouped with commas from four digits on (Chicago Manual of
# Style, 9.55), a times sign before the power of ten, and a percent sign with no space.

def en_decimal(x: float, digits: int = 3) -> str:
    """``x`` with ``digits`` decimals, a decimal point and commas between thousands:
    0.4481 -> "0.448", 1234.5 -> "1,234.500"; minus sign U+2212."""
    return f"{x:,.{digits}f}".replace("-", "\u2212")


def _en_power(mantissa: float, exponent: int, digits: int) -> str:
    return f"{en_decimal(mantissa, digits - 1)}×10{str(exponent).translate(_SUPERSCRIPT)}"


def en_sci(x: float, digits: int = 3) -> str:
    """Like :func:`es_sci`, written the English way: 4.85e-69 -> "4.85×10⁻⁶⁹"; 0.0123 -> "0.0123"."""
    if x == 0 or not math.isfinite(x):
        return "0" if x == 0 else ("NaN" if math.isnan(x) else ("∞" if x > 0 else "−∞"))
    exponent = math.floor(math.log10(abs(x)))
    mantissa = round(x / 10 ** exponent, digits - 1)
    if abs(mantissa) >= 10:
        mantissa, exponent = mantissa / 10, exponent + 1
    if -2 <= exponent <= 3:
        return en_decimal(x, max(0, digits - 1 - exponent))
    return _en_power(mantissa, exponent, digits)


def en_sci_log(ln_x: float, digits: int = 3) -> str:
    """Like :func:`es_sci_log` (e^ln_x from ln_x, no overflow), written the English way."""
    if math.isnan(ln_x):
        return "NaN"
    if ln_x == -math.inf:
        return "0"
    if ln_x == math.inf:
        return "∞"
    if -690 < ln_x < 690:
        return en_sci(math.exp(ln_x), digits)
    log10 = ln_x / math.log(10)
    exponent = math.floor(log10)
    mantissa = round(10 ** (log10 - exponent), digits - 1)
    if mantissa >= 10:
        mantissa, exponent = mantissa / 10, exponent + 1
    return _en_power(mantissa, exponent, digits)


def en_prob(x: float, digits: int = 3) -> str:
    """Like :func:`es_prob`, written the English way: 0.00139 -> "1.39×10⁻³", "> 0.999"."""
    if 0 < x < 1 and round(x, digits) == 1:
        return f"> {en_decimal(1 - 10 ** -digits, digits)}"
    return en_decimal(x, digits) if x >= 0.01 or x == 0 else en_sci(x, digits)


def en_int(n: int) -> str:
    """An integer with commas between thousands: 6765 -> "6,765"; minus sign U+2212."""
    return f"{int(n):,}".replace("-", "\u2212")


def en_percent(x: float, digits: int = 1) -> str:
    """A fraction as a percentage: 0.1234 -> "12.3%"."""
    return f"{en_decimal(100 * x, digits)}%"


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
