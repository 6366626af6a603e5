"""Numbers and counts in the «Laboratorio»'s messages, in the current language
(:func:`lesson.i18n.get_language`): Spanish for the Spanish edition, English for the English one.

- :func:`count`: a message from ``ngettext`` with ``{n}`` filled by the number as the language
  writes it: ``count(ngettext("{n} token", "{n} tokens", n), n)`` -> «1 token», «12 345 tokens» /
  "12,345 tokens".
- :func:`number`: a number from the reader's text or a link, as
  :func:`~lesson.laboratorio.errors_es.es_number` writes it in Spanish («2,5», «−1», «10³⁰») or
  :func:`en_number` in English ("2.5", "−1", "10³⁰").
"""

from __future__ import annotations

from decimal import Decimal

from ..i18n import get_language
from ..numbers import en_int, es_int, fmt_int

_SUPERSCRIPT = str.maketrans("-0123456789", "\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079")


def es_number(x) -> str:
    """A number from the reader's text or a link, written the Spanish way: decimal comma, minus
    sign U+2212, digits grouped as :func:`~lesson.numbers.es_int` groups them (5.5 -> "5,5",
    -1 -> "−1", 20000 -> "20 000"); a float whose shortest decimal form has an exponent below -4
    or from 16 on, as a power of ten: 1e30 -> "10³⁰", 1.5e-07 -> "1,5·10⁻⁷". An integral float
    under 10¹⁶ is written as the integer (5.0 -> "5"); inf and nan as "∞", "−∞", "NaN". The page's
    ``esNumber`` (browser/js/lab.js) writes the same digits."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise TypeError(f"es_number takes an int or a float, not {type(x).__name__}")
    if isinstance(x, int):
        return es_int(x)
    if x != x:
        return "NaN"
    if x in (float("inf"), float("-inf")):
        return "∞" if x > 0 else "\u2212∞"
    if x.is_integer() and abs(x) < 1e16:
        return es_int(int(x))
    sign, digits, exponent = Decimal(repr(x)).normalize().as_tuple()
    mantissa = "".join(map(str, digits))
    e = exponent + len(mantissa) - 1  # x = ±m.mmm·10^e
    minus = "\u2212" if sign else ""
    if -4 <= e < 16:
        whole, frac = (mantissa[:e + 1], mantissa[e + 1:]) if e >= 0 else ("0", "0" * (-e - 1) + mantissa)
        whole = es_int(int(whole.ljust(e + 1, "0"))) if e >= 0 else whole
        return minus + whole + ("," + frac if frac else "")
    head = mantissa[0] + ("," + mantissa[1:] if len(mantissa) > 1 else "")
    power = "10" + str(e).translate(_SUPERSCRIPT)
    return minus + (power if head == "1" else f"{head}·{power}")


def count(message: str, n: int) -> str:
    """``message`` (an ``ngettext`` result with ``{n}``) with ``n`` written in the current language."""
    return message.format(n=fmt_int(n))


def en_number(x) -> str:
    """:func:`~lesson.laboratorio.errors_es.es_number` written the English way: decimal point,
    commas between thousands, minus sign U+2212; powers of ten as "10³⁰" or "1.5×10⁻⁷"."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise TypeError(f"en_number takes an int or a float, not {type(x).__name__}")
    if isinstance(x, int):
        return en_int(x)
    if x != x:
        return "NaN"
    if x in (float("inf"), float("-inf")):
        return "∞" if x > 0 else "\u2212∞"
    if x.is_integer() and abs(x) < 1e16:
        return en_int(int(x))
    sign, digits, exponent = Decimal(repr(x)).normalize().as_tuple()
    mantissa = "".join(map(str, digits))
    e = exponent + len(mantissa) - 1
    minus = "\u2212" if sign else ""
    if -4 <= e < 16:
        whole, frac = (mantissa[:e + 1], mantissa[e + 1:]) if e >= 0 else ("0", "0" * (-e - 1) + mantissa)
        whole = en_int(int(whole.ljust(e + 1, "0"))) if e >= 0 else whole
        return minus + whole + ("." + frac if frac else "")
    head = mantissa[0] + ("." + mantissa[1:] if len(mantissa) > 1 else "")
    power = "10" + str(e).translate(_SUPERSCRIPT)
    return minus + (power if head == "1" else f"{head}×{power}")


def number(x) -> str:
    """A number from the reader's text or a link, in the current language (:func:`es_number` or
    :func:`en_number`)."""
    return en_number(x) if get_language() == "en" else es_number(x)
