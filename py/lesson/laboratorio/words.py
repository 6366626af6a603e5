"""Numbers and counts in the «Laboratorio»'s messages, in the current language
(:func:`lesson.i18n.get_language`): Spanish for the Spanish edition, English for the English one.

- :func:`count`: a message from ``ngettext`` with ``{n}`` filled by the number as the language
  writes it: ``count(ngettext("{n} token", "{n} tokens", n), n)`` -> «1 token», «12 345 tokens» /
  "12,345 tokens".
- :func:`number`: a number from the reader's text or a link, as
  :func:`lesson.numbers.es_number` writes it in Spanish («2,5», «−1», «10³⁰») or
  :func:`lesson.numbers.en_number` in English ("2.5", "−1", "10³⁰").
"""

from __future__ import annotations

from ..numbers import fmt_int, fmt_number


def count(message: str, n: int) -> str:
    """``message`` (an ``ngettext`` result with ``{n}``) with ``n`` written in the current language."""
    return message.format(n=fmt_int(n))


def number(x) -> str:
    """A number from the reader's text or a link, in the current language
    (:func:`lesson.numbers.es_number` or :func:`lesson.numbers.en_number`)."""
    return fmt_number(x)
