"""The course's two editions, Spanish (``site/``) and English (``site/en/``), as the build needs
them: which language a page is in, how its URLs reach the site's root, the other edition of the
same page, and the message catalogs (``py/lesson/locale``, read with Babel) for the shared
templates (Jinja2's i18n extension) and the page scripts (``browser/js/i18n.js``).

To add a language, see docs/site.md, «Languages».
"""
from __future__ import annotations

import io
import posixpath
from functools import lru_cache
from pathlib import Path, PurePosixPath

from .files import ROOT, use_py

LANGUAGES = ("es", "en")
NAMES = {"es": "Español", "en": "English"}  # each language in itself, for the switch


def language_of(path: str) -> str:
    """The language of the page at ``path`` in the site: "en" under ``en/``, else "es"."""
    return "en" if PurePosixPath(path).parts[:1] == ("en",) else "es"


def up_to_root(path: str) -> str:
    """The relative URL from the page at ``path`` to the site's root: "" or "../"."""
    return "../" * (len(PurePosixPath(path).parts) - 1)


def relative(from_path: str, to_path: str) -> str:
    """The URL of ``to_path`` relative to the page at ``from_path`` (both site paths):
    ("en/mask.html", "mascara.html") -> "../mascara.html"; ("en/mask.html", "en/lab.html") -> "lab.html"."""
    return posixpath.relpath(to_path, posixpath.dirname(from_path) or ".")


def alternates(page: dict, pages) -> list[dict]:
    """Every edition of ``page`` (an entry of ``build.EDITIONS``), this one included, as
    ``{"lang", "name", "href", "current"}`` with ``href`` relative to ``page``: the page's
    ``hreflang`` links and its language switch. Editions are matched by ``source`` (the Spanish
    page's ``out``)."""
    source = page.get("source", page["out"])
    out = []
    for spec in pages:
        if spec.get("source", spec["out"]) == source:
            language = spec.get("lang", "es")
            out.append({"lang": language, "name": NAMES[language],
                        "href": relative(page["out"], spec["out"]),
                        "current": spec["out"] == page["out"]})
    return sorted(out, key=lambda a: LANGUAGES.index(a["lang"]))


def gettext_for(language: str):
    """``(gettext, ngettext)`` of ``language`` over the project's catalogs (``lesson.i18n``)."""
    use_py()
    from lesson import i18n
    return i18n.gettext_for(language)


def catalog_files(language: str, root: Path = ROOT) -> list[Path]:
    """The ``.po`` catalogs of ``language``, in name order."""
    folder = root / "py" / "lesson" / "locale" / language / "LC_MESSAGES"
    return sorted(folder.glob("*.po")) if folder.is_dir() else []


@lru_cache(maxsize=None)
def script_messages(language: str, root: Path = ROOT) -> dict:
    """The page scripts' translations in ``language``: every message of its ``*_js.po`` catalogs,
    ``{id: text}`` or, for a plural, ``{singular id: [singular, plural]}`` (what
    ``browser/js/i18n.js`` reads). Empty for Spanish, whose ids are the text. Untranslated and
    fuzzy entries are left out, so the script shows the Spanish id (a test fails on them)."""
    from babel.messages.pofile import read_po
    messages: dict = {}
    if language == "es":
        return messages
    for po in catalog_files(language, root):
        if not po.stem.endswith("_js") and po.stem != "site_js":
            continue
        catalog = read_po(io.BytesIO(po.read_bytes()), abort_invalid=True)
        for message in catalog:
            if not message.id or message.fuzzy:
                continue
            if isinstance(message.id, (tuple, list)):
                forms = list(message.string)
                if all(forms):
                    messages[message.id[0]] = forms[:2]
            elif message.string:
                messages[message.id] = message.string
    return messages
