"""The language the lesson code writes in: Spanish (the source language) or English.

The course has two editions. Its Python (the views' labels, the pictures, the captions) is written
with Spanish message ids, wrapped in :func:`_` or :func:`ngettext`; English text comes from the
message catalogs in ``lesson/locale/en/LC_MESSAGES/*.po`` (GNU gettext, one file per part of the
course: ``lesson.po`` for the library, ``<page>.po`` for a page package). The page's kernel calls
:func:`set_language` once, before any cell runs, with the edition's language
(``browser/kernel.py``'s ``prepare``); the build does the same for each page, and an English
notebook's first cell too.

Catalogs are read with the standard library's ``gettext`` from compiled ``.mo`` files: the build
compiles them into the site's ``py.zip`` (Babel, ``sitebuild.files.pack_python``). From a source
checkout, where only the ``.po`` files exist, Babel compiles them in memory the first time a
language is used (``requirements.txt`` installs it).

Errors: :func:`set_language` raises ValueError for a language that is not in ``LANGUAGES``.
A message with no English translation falls back to its Spanish id; the site's tests
(``tests/site/test_i18n.py``) fail on any id the code uses that the English catalogs lack.
"""
from __future__ import annotations

import datetime
import gettext
import io
from functools import lru_cache
from pathlib import Path

LANGUAGES = ("es", "en")
SOURCE_LANGUAGE = "es"
LOCALE = Path(__file__).parent / "locale"

_language = SOURCE_LANGUAGE


def set_language(language: str) -> None:
    """Make ``language`` ("es" or "en") the one every later :func:`_` call writes in.

    Raises ValueError for any other value."""
    global _language
    if language not in LANGUAGES:
        raise ValueError(f"unknown language {language!r}: the course has {', '.join(LANGUAGES)}")
    _language = language


def get_language() -> str:
    """The language set by :func:`set_language` ("es" until then)."""
    return _language


def _compiled(po: Path) -> gettext.GNUTranslations:
    """One catalog: its ``.mo`` beside it when that is newer, else the ``.po`` compiled by Babel."""
    mo = po.with_suffix(".mo")
    if mo.exists() and mo.stat().st_mtime >= po.stat().st_mtime:
        with mo.open("rb") as data:
            return gettext.GNUTranslations(data)
    return gettext.GNUTranslations(io.BytesIO(compile_po(po.read_bytes())))


FIXED_CREATION_DATE = datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc)


def compile_po(po_bytes: bytes) -> bytes:
    """A ``.po`` file's bytes compiled to ``.mo`` bytes (Babel's reader and writer).

    Fuzzy entries are left out, as ``msgfmt`` does. The same ``.po`` gives the same bytes: a
    catalog whose header has no ``POT-Creation-Date`` gets ``FIXED_CREATION_DATE``, not Babel's
    default, the time of compiling (which would change ``py.zip``, and so the site, every minute).
    Raises ImportError when Babel is missing and babel's ``PoFileError`` on a malformed file."""
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po
    catalog = read_po(io.BytesIO(po_bytes), abort_invalid=True)
    if b"POT-Creation-Date:" not in po_bytes:
        catalog.creation_date = FIXED_CREATION_DATE
    out = io.BytesIO()
    write_mo(out, catalog, use_fuzzy=False)
    return out.getvalue()


@lru_cache(maxsize=None)
def translations(language: str) -> gettext.NullTranslations:
    """Every catalog of ``language`` chained into one (``NullTranslations`` for Spanish, whose
    ids are the text). Catalogs are files ``LOCALE/<language>/LC_MESSAGES/*.po`` (or ``*.mo``
    alone, as in the site's ``py.zip``), read in name order; the first that has an id wins."""
    folder = LOCALE / language / "LC_MESSAGES"
    result: gettext.NullTranslations = gettext.NullTranslations()
    if language == SOURCE_LANGUAGE or not folder.is_dir():
        return result
    stems = sorted({p.stem for p in folder.iterdir() if p.suffix in (".po", ".mo")})
    catalogs = []
    for stem in stems:
        po, mo = folder / f"{stem}.po", folder / f"{stem}.mo"
        if po.exists():
            catalogs.append(_compiled(po))
        else:
            with mo.open("rb") as data:
                catalogs.append(gettext.GNUTranslations(data))
    if not catalogs:
        return result
    first = catalogs[0]
    for catalog in catalogs[1:]:
        first.add_fallback(catalog)
    return first


def _(message: str) -> str:
    """``message`` (a Spanish id) in the current language."""
    if _language == SOURCE_LANGUAGE:
        return message
    return translations(_language).gettext(message)


def N_(message: str) -> str:
    """``message`` itself: marks a Spanish id for Babel where it is stored (a table of messages),
    to be translated with :func:`_` where it is used."""
    return message


def ngettext(singular: str, plural: str, n: int) -> str:
    """The singular or plural form for ``n``, in the current language (Spanish and English both
    use the singular for n == 1 only)."""
    if _language == SOURCE_LANGUAGE:
        return singular if n == 1 else plural
    return translations(_language).ngettext(singular, plural, n)


def gettext_for(language: str):
    """``(gettext, ngettext)`` bound to ``language`` whatever the current one, for the build's
    templates (Jinja2's i18n extension)."""
    catalog = translations(language)
    if language == SOURCE_LANGUAGE:
        return (lambda m: m), (lambda s, p, n: s if n == 1 else p)
    return catalog.gettext, catalog.ngettext


def each_language(make, *args, **kwargs) -> dict[str, object]:
    """``{"es": make(*args, **kwargs), "en": ...}``: ``make`` called once in each language.

    For a prose figure whose text depends on the language (a picture's labels, an SVG's text
    alternative): the figures module computes the data once and stores the text in both
    languages, and each edition's template takes its own (``fig.picture.en``). The current
    language is restored afterwards, even when ``make`` raises."""
    saved = get_language()
    try:
        out = {}
        for language in LANGUAGES:
            set_language(language)
            out[language] = make(*args, **kwargs)
        return out
    finally:
        set_language(saved)
