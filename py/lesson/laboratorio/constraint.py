"""The «Laboratorio»'s constraint: the form's kind and text compiled to a masker grammar
(:func:`compile_constraint`), every failure as a :class:`ConstraintError` with its place and fix in
the current language (:func:`lesson.i18n.get_language`): the masker's own errors (position, caret,
fix; written by :func:`masker_error` from the catalog keyed by the error's code,
:mod:`lesson.laboratorio.error_catalog`) and the JSON parser's (line, column); and the error's view
(:func:`error_html`, test hook ``[data-testid=lab-error]``).
"""

from __future__ import annotations

import json
import re
from html import escape


from masker import MaskerError, compile_cfg, compile_choice, compile_json_schema, compile_regex
from masker.errors import GrammarSyntaxError, caret_display

from ..i18n import _, get_language, set_language
from ..views import styled
from .error_catalog import heading, quoted as _quoted, render
from .python_messages import json_message
from .text_places import line_column, pointer_span, string_offset, value_start
from .unsatisfiable import why_unsatisfiable
from .words import number


KINDS = ("none", "choice", "regex", "json_schema", "gbnf")
KIND_NAMES = {"none": "ninguna", "choice": "lista de opciones", "regex": "expresión regular",
              "json_schema": "JSON Schema", "gbnf": "gramática GBNF"}  # as the Spanish form's menu names them


def kind_names() -> list[str]:
    """The kinds as the form's menu names them, in the current language (KINDS' order)."""
    return [_("ninguna"), _("lista de opciones"), _("expresión regular"), "JSON Schema", _("gramática GBNF")]

class ConstraintError(ValueError):
    """The constraint cannot be compiled. ``message``: what and where (with a caret line), in
    the current language; ``hint``: how to fix it, or ""; ``kind``: the masker error's code
    (:data:`lesson.laboratorio.error_catalog.MESSAGES`, "budget.too_small" and
    "token.not_allowed" among them, or "masker.other" for a code the catalog lacks), "empty",
    "json", "settings.<name>" for a setting
    (:func:`check_settings`, :func:`check_prompt`, "settings.kind"), "run" for an action's error
    (a position the branch lacks, a full tree), "link" for a link whose tree cannot be rebuilt;
    ``span``: the characters [start, end) of the constraint's text at fault, or None."""

    def __init__(self, message: str, hint: str = "", kind: str = "", span: tuple[int, int] | None = None):
        self.message, self.hint, self.kind, self.span = message, hint, kind, span
        super().__init__(message + (f"\n  fix: {hint}" if hint else ""))


# an empty constraint's message, by kind (called when raised: the current language)
EMPTY = {"regex": lambda: _("la expresión regular está vacía: solo aceptaría el texto vacío (0 tokens)"),
         "gbnf": lambda: _("la gramática está vacía"), "json_schema": lambda: _("el esquema está vacío")}

def _pattern_span(exc: MaskerError, text: str, start: int, end: int) -> tuple[int, int] | None:
    """For a schema's invalid ``pattern`` (or ``patternProperties`` key), the character inside its
    JSON string that ``re`` points at: ``start``/``end`` is the span of the keyword's key."""
    cause = exc.__cause__
    if not isinstance(cause, re.error) or cause.pos is None:
        return None
    quote = start if exc.fields.get("keyword") == "patternProperties" else value_start(text, end)
    if text[quote:quote + 1] != '"':
        return None
    at = string_offset(text, quote, cause.pos)
    return at, at + 1


def _in_language(language: str, make, *args):
    saved = get_language()
    set_language(language)
    try:
        return make(*args)
    finally:
        set_language(saved)


def spanish_error(exc: MaskerError, kind: str, text: str) -> ConstraintError:
    """:func:`masker_error` on the Spanish edition, whatever the current language."""
    return _in_language("es", masker_error, exc, kind, text)


def english_error(exc: MaskerError, kind: str, text: str) -> ConstraintError:
    """:func:`masker_error` on the English edition, whatever the current language."""
    return _in_language("en", masker_error, exc, kind, text)


def masker_error(exc: MaskerError, kind: str, text: str) -> ConstraintError:
    """A masker error as the error view shows it, in the current language
    (:func:`~lesson.laboratorio.error_catalog.render`, by the error's code): a heading, the place
    in the constraint's text counted from 1 with the caret under it, a message for readers and a
    fix; ``kind`` is the error's code and ``span`` the characters the editor underlines (a
    schema's JSON pointer located in the schema's text; for an invalid ``pattern``, the character
    ``re`` points at inside its string). Run-time errors (a work limit, a budget), or
    ``text == ""``, get no span."""
    code, message, fix = render(exc)
    start = end = None
    if kind == "json_schema" and isinstance(exc, GrammarSyntaxError) and text:
        pointer = exc.source
        if code == "schema.unsatisfiable":
            try:
                why = why_unsatisfiable(json.loads(text))
            except ValueError:
                why = None
            if why:
                pointer, message = why[0], f"{message}: {why[1]}"
        keyword = _keyword_of(exc)
        if keyword and not pointer.endswith("/" + keyword):
            pointer = f"{pointer}/{keyword}"
        start, end = pointer_span(text, pointer)
        if code == "schema.bad_pattern":
            start, end = _pattern_span(exc, text, start, end) or (start, end)
    elif isinstance(exc, GrammarSyntaxError) and text:
        start = max(0, min(exc.pos, len(text)))
        end = min(start + 1, len(text))
    words = heading(exc)
    if start is None:
        return ConstraintError(f"{words}: {message}", fix, code)
    return ConstraintError(f"{words} {_where_here(text, start)}: {message}\n{_caret(text, start)}", fix, code,
                           (start, max(end, start + 1)))


# errors whose JSON pointer names the schema, not its keyword at fault
_KEYWORD_OF = {"schema.unknown_type": "type", "schema.ref_unresolved": "$ref"}


def _keyword_of(exc: MaskerError) -> str | None:
    """The keyword a schema error is about, when its pointer may stop at the schema: by code, or
    the ``keyword`` field of a value of the wrong type (``"allOf": 5``)."""
    if exc.code in _KEYWORD_OF:
        return _KEYWORD_OF[exc.code]
    return exc.fields.get("keyword") if exc.code == "schema.bad_value" else None


def _where_here(text: str, pos: int) -> str:
    """Where character ``pos`` (0-based) of the reader's text is, counted from 1, in the current
    language: «en el carácter 3» in a one-line text, «en la línea 2, columna 5» in one of several
    lines («posición» is a token's place on this page)."""
    line, column = line_column(text, pos)
    if "\n" in text:
        return _("en la línea {line}, columna {column}").format(line=line, column=column)
    return _("en el carácter {n}").format(n=pos + 1)


def _caret(text: str, pos: int) -> str:
    """The masker's caret display (:func:`masker.errors.caret_display`) with its word "line" in
    the current language; the caret moves with the word's length, so it stays under its character."""
    shown, caret = caret_display(text, pos).split("\n")
    if shown.startswith("  line "):
        word = _("línea")
        shown, caret = f"  {word} " + shown[len("  line "):], " " * (len(word) - len("line")) + caret
    return f"{shown}\n{caret}"


def _shown(value) -> str:
    """A value a link or the form gave, as a reader reads it: a number in the current language
    (:func:`~lesson.laboratorio.words.number`: 2,5 / 2.5, −1, 10³⁰), anything else quoted («» in
    Spanish, “” in English; as JSON writes it; «sí», «no» for a boolean)."""
    if isinstance(value, bool):
        return _quoted(_("sí") if value else _("no"))
    if isinstance(value, (int, float)):
        return number(value)
    if isinstance(value, str):
        return _quoted(value)
    try:
        return _quoted(json.dumps(value, ensure_ascii=False))
    except (TypeError, ValueError):
        return _quoted(str(value))


def compile_constraint(kind: str, text: str):
    """The form's constraint as a masker Grammar (None for kind "none").

    kind: one of KINDS; text: the constraint as typed (choice: one text per line, blank lines
    ignored; json_schema: the schema as JSON). Raises ConstraintError, in the current language, for an unknown
    kind, an empty constraint, the masker's errors (position, caret and fix) and the JSON
    parser's (line, column).
    """
    if kind not in KINDS:
        raise ConstraintError(_("el tipo de restricción {kind} no existe: tiene que ser uno de estos: "
                                "{kinds}").format(kind=_shown(kind), kinds=", ".join(kind_names())),
                              _("elige el tipo en la lista «Restricción»"), "settings.kind")
    if kind in EMPTY and not text.strip():
        raise ConstraintError(EMPTY[kind](), _("escribe la restricción, o elige «ninguna» para generar sin ella"),
                              "empty")
    try:
        if kind == "none":
            return None
        if kind == "choice":
            texts = [line for line in text.split("\n") if line.strip()]
            if not texts:
                raise ConstraintError(_("la lista de opciones está vacía"), _("escribe una opción por línea"), "empty")
            return compile_choice(texts)
        if kind == "regex":
            return compile_regex(text)
        if kind == "json_schema":
            try:
                schema = json.loads(text)
            except json.JSONDecodeError as exc:
                raise _json_error(text, exc) from None
            return compile_json_schema(schema)
        return compile_cfg(text)
    except MaskerError as exc:
        raise masker_error(exc, kind, text) from None


def _unclosed(text: str) -> str:
    """The brackets a JSON text leaves open, as the closing characters it lacks in the order they
    are due ("}", "]}"), or "" (strings and their escapes skipped)."""
    stack, in_string, escaped = [], False, False
    for ch in text:
        if in_string:
            escaped, in_string = (False, True) if escaped else (ch == "\\", ch != '"')
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]" and stack and stack[-1] == ch:
            stack.pop()
    return "" if in_string else "".join(reversed(stack))


def _json_error(text: str, exc: json.JSONDecodeError) -> ConstraintError:
    """A schema that is not JSON, as the error view shows it: Python's message in words for
    readers, where it points; a text that ends with brackets still open says which are missing,
    at its last character (Python's "Expecting ',' delimiter" one past the end says neither)."""
    closers = _unclosed(text) if not text[exc.pos:].strip() else ""
    if closers:
        last = len(text.rstrip()) - 1
        missing = _quoted(closers)
        return ConstraintError(_("JSON no válido: el texto se acaba con algo abierto; falta {missing} al final").format(
                                   missing=missing) + f"\n{_caret(text, last + 1)}",
                               _("añade {missing} al final").format(missing=missing), "json",
                               (last, last + 1))
    return ConstraintError(_("JSON no válido {where}: {reason}").format(where=_where_here(text, exc.pos),
                                                                       reason=json_message(exc.msg))
                           + f"\n{_caret(text, exc.pos)}",
                           _("revisa comillas, comas y llaves"), "json", (exc.pos, min(exc.pos + 1, len(text))))


_RUN_KINDS = ("run", "token.not_allowed")  # an action the branch cannot take


def error_heading(kind: str) -> str:
    """The error view's heading, by what is at fault (a ConstraintError's ``kind``): the constraint,
    the settings or the prompt, both constraint and settings (a budget too small), an action
    (kind "run": a position the branch lacks, a full tree), or a link (kind "link")."""
    if kind == "link":
        return _("El enlace no se puede abrir.")
    if kind == "stopped":
        return _("Detenida.")
    if kind in _RUN_KINDS:
        return _("No se puede hacer esto.")
    if kind == "budget.too_small":
        return _("No se puede usar esta restricción con estos ajustes.")
    if kind in ("settings.prompt", "settings.context"):
        return _("No se puede usar este prompt con estos ajustes.")
    if kind.startswith("settings.") and kind != "settings.kind":
        return _("No se pueden usar estos ajustes.")
    return _("No se puede usar esta restricción.")


def error_html(error: ConstraintError) -> str:
    """A compile or settings error in place: a heading by its kind (:func:`error_heading`), the message (``p.lab-error-text``, it wraps), its
    caret lines (the reader's line and a caret under the place: a ``pre`` that never wraps, so
    the caret stays under its character; it scrolls sideways inside the box, and takes the focus
    for the keyboard) and the fix, no traceback; ``data-kind`` and ``data-from``/``data-to`` (the
    span, for the editor's underline)."""
    heading = escape(error_heading(error.kind))
    how = _("Cómo arreglarlo: {fix}").format(fix=escape(error.hint))
    hint = f'<p class="lab-hint">{how}</p>' if error.hint else ""
    span = f' data-from="{error.span[0]}" data-to="{error.span[1]}"' if error.span else ""
    text, _newline, caret = error.message.partition("\n  ")
    place = _("el lugar del error")
    caret = (f'<pre class="lab-caret" tabindex="0" aria-label="{place}">  {escape(caret)}</pre>'
             if caret else "")
    return styled(f'<div class="lab-error" data-testid="lab-error" data-kind="{escape(error.kind)}"{span} role="alert">'
                  f'<p><strong>{heading}</strong></p>'
                  f'<p class="lab-error-text">{escape(text)}</p>{caret}{hint}</div>')
