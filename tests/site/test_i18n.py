"""The message catalogs of the English edition (``py/lesson/locale/en/LC_MESSAGES/*.po``).

Babel extracts every message the code uses, as a translator would (``babel.cfg``: ``_()`` and
``ngettext()`` in ``py/`` and the shared templates, ``t()`` and ``tn()`` in the page scripts), and
each must have an English text: in the Python and template catalogs for ``py/`` and the
templates, in a ``*_js.po`` catalog (the one the build hands the scripts) for the scripts. A
catalog entry that nothing uses any more is a fault too, and so is one id translated two ways.
"""
from __future__ import annotations

import io
from pathlib import Path

import pytest
from babel.messages.extract import extract_from_file
from babel.messages.pofile import read_po

import build
from sitebuild.languages import catalog_files, script_messages

ROOT = build.ROOT
PY_KEYWORDS = {"_": None, "N_": None, "ngettext": (1, 2)}
JS_KEYWORDS = {"t": None, "tn": (1, 2)}


def _ids(method: str, paths, keywords, options=None) -> dict[str, str]:
    """{message id (the singular for a plural): where it is used}."""
    found = {}
    for path in paths:
        for lineno, message, _comments, _context in extract_from_file(
                method, str(path), keywords=keywords, options=options or {}):
            key = message[0] if isinstance(message, tuple) else message
            if key:
                found.setdefault(key, f"{Path(path).relative_to(ROOT)}:{lineno}")
    return found


def python_and_template_ids() -> dict[str, str]:
    py = sorted((ROOT / "py").rglob("*.py"))
    templates = sorted((ROOT / "templates").rglob("*.html"))
    return {**_ids("python", py, PY_KEYWORDS),
            **_ids("jinja2", templates, {"_": None, "gettext": None, "ngettext": (1, 2)},
                   {"extensions": "jinja2.ext.do"})}


def script_ids() -> dict[str, str]:
    return _ids("javascript", sorted((ROOT / "browser" / "js").glob("*.js")), JS_KEYWORDS)


def catalogs() -> dict[str, dict]:
    """{catalog file name: {id: English text, or [singular, plural]}} for every English catalog."""
    out = {}
    for po in catalog_files("en", ROOT):
        catalog = read_po(io.BytesIO(po.read_bytes()), abort_invalid=True)
        entries = {}
        for message in catalog:
            if not message.id:
                continue
            assert not message.fuzzy, f"{po.name}: {message.id!r} is marked fuzzy"
            key = message.id[0] if isinstance(message.id, (tuple, list)) else message.id
            entries[key] = list(message.string) if isinstance(message.string, (tuple, list)) else message.string
        out[po.name] = entries
    return out


def test_every_python_and_template_message_has_an_english_text():
    translated = {key: text for name, entries in catalogs().items() if not name.endswith("_js.po")
                  for key, text in entries.items() if text and all(text)}
    missing = {key: where for key, where in python_and_template_ids().items() if key not in translated}
    assert not missing, "no English text for:\n" + "\n".join(f"{w}: {k!r}" for k, w in missing.items())


def test_every_script_message_has_an_english_text_the_build_hands_the_scripts():
    messages = script_messages.__wrapped__("en", ROOT)  # not the build's cached copy
    missing = {key: where for key, where in script_ids().items() if key not in messages}
    assert not missing, "no English text for:\n" + "\n".join(f"{w}: {k!r}" for k, w in missing.items())


def test_no_catalog_keeps_a_message_nothing_uses():
    used_py, used_js = python_and_template_ids(), script_ids()
    stale = [f"{name}: {key!r}" for name, entries in catalogs().items() for key in entries
             if key not in (used_js if name.endswith("_js.po") else used_py)]
    assert not stale, "translations of messages the code no longer has:\n" + "\n".join(stale)


def test_no_message_is_translated_two_ways():
    seen: dict[str, tuple[str, object]] = {}
    clashes = []
    for name, entries in catalogs().items():
        for key, text in entries.items():
            if key in seen and seen[key][1] != text and seen[key][0].endswith("_js.po") == name.endswith("_js.po"):
                clashes.append(f"{key!r}: {seen[key][0]} and {name}")
            seen.setdefault(key, (name, text))
    assert not clashes, "\n".join(clashes)


def test_every_catalog_compiles_and_the_kernel_reads_it_in_english():
    from lesson import i18n
    for po in catalog_files("en", ROOT):
        assert i18n.compile_po(po.read_bytes())
    try:
        i18n.set_language("en")
        assert i18n._("Ejecutar todo") == "Run all"
        assert i18n.ngettext("{n} x", "{n} xs", 2) == "{n} xs"  # unknown ids fall back
    finally:
        i18n.set_language("es")
    assert i18n._("Ejecutar todo") == "Ejecutar todo"
    with pytest.raises(ValueError, match="unknown language 'fr'"):
        i18n.set_language("fr")


def test_a_catalog_without_a_creation_date_compiles_to_the_same_bytes_at_any_time(monkeypatch):
    """Babel stamps a header without ``POT-Creation-Date`` with the time of compiling; the site's
    ``py.zip`` (and so every build's id) must not change with the clock."""
    import babel.messages.catalog as catalog_module
    from lesson.i18n import compile_po
    po = b'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\nmsgid "uno"\nmsgstr "one"\n'
    first = compile_po(po)
    later = catalog_module.datetime.datetime(2031, 5, 6, 7, 8, tzinfo=catalog_module.datetime.timezone.utc)
    fake = type("Clock", (catalog_module.datetime.datetime,), {"now": classmethod(lambda cls, tz=None: later)})
    monkeypatch.setattr(catalog_module.datetime, "datetime", fake)
    assert compile_po(po) == first
    assert b"2031" not in first and b"POT-Creation-Date: 2020-01-01" in first
