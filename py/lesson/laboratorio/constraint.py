"""The «Laboratorio»'s constraint: the form's kind and text compiled to a masker grammar
(:func:`compile_constraint`), every failure as a :class:`ConstraintError` with its place and fix in
the current language (:func:`lesson.i18n.get_language`): the masker's own errors (position, caret,
fix; in Spanish by :func:`spanish_error` and :mod:`lesson.laboratorio.errors_es`, in English by
:func:`english_error` and :mod:`lesson.laboratorio.errors_en`, the same kinds and spans) and the
JSON parser's (line, column); and the error's view (:func:`error_html`, test hook
``[data-testid=lab-error]``).
"""

from __future__ import annotations

import json
import re
from html import escape


from masker import MaskerError, compile_cfg, compile_choice, compile_json_schema, compile_regex
from masker.errors import BudgetTooSmall, GrammarSyntaxError, LimitExceeded, TokenNotAllowed, caret_display

from ..i18n import _, get_language
from ..numbers import en_int
from ..views import es_count, styled
from .errors_es import HEADINGS, KIND_WORDS, json_message, translate, unknown, why_unsatisfiable
from .text_places import line_column, pointer_span, string_offset, value_start
from . import errors_en
from .words import number


KINDS = ("none", "choice", "regex", "json_schema", "gbnf")
KIND_NAMES = {"none": "ninguna", "choice": "lista de opciones", "regex": "expresión regular",
              "json_schema": "JSON Schema", "gbnf": "gramática GBNF"}  # as the Spanish form's menu names them


def kind_names() -> list[str]:
    """The kinds as the form's menu names them, in the current language (KINDS' order)."""
    return [_("ninguna"), _("lista de opciones"), _("expresión regular"), "JSON Schema", _("gramática GBNF")]

class ConstraintError(ValueError):
    """The constraint cannot be compiled. ``message``: what and where (with a caret line), in
    the current language; ``hint``: how to fix it, or ""; ``kind``: the catalog key
    (:data:`lesson.laboratorio.errors_es.CATALOG`, or "empty", "json", "masker.other",
    "budget.too_small", "token.not_allowed"), "settings.<name>" for a setting
    (:func:`check_settings`, :func:`check_prompt`, "settings.kind"), "run" for an action's error
    (a position the branch lacks, a full tree), "link" for a link whose tree cannot be rebuilt;
    ``span``: the characters [start, end) of the constraint's text at fault, or None."""

    def __init__(self, message: str, hint: str = "", kind: str = "", span: tuple[int, int] | None = None):
        self.message, self.hint, self.kind, self.span = message, hint, kind, span
        super().__init__(message + (f"\n  fix: {hint}" if hint else ""))


# an empty constraint's message, by kind (called when raised: the current language)
EMPTY = {"regex": lambda: _("la expresión regular está vacía: solo aceptaría el texto vacío (0 tokens)"),
         "gbnf": lambda: _("la gramática está vacía"), "json_schema": lambda: _("el esquema está vacío")}

_AT_PREFIX = re.compile(r", after \d+ bytes of text \(.*\)$", re.DOTALL)  # LimitExceeded.at_prefix's tail


def _english_reason(exc: MaskerError) -> tuple[str, str, str]:
    """(catalog key, English message, English fix) of any masker error: :func:`_spanish_reason`'s
    twin, through :mod:`~lesson.laboratorio.errors_en`."""
    if isinstance(exc, BudgetTooSmall):
        need = (f"the shortest text that completes the constraint needs {en_tokens(exc.needed)}"
                if exc.needed is not None else "no text that completes the constraint fits in it")
        return ("budget.too_small", f"the budget of {en_tokens(exc.budget)} is not enough: {need}",
                "raise “max tokens”, or shorten what the constraint requires")
    if isinstance(exc, TokenNotAllowed):
        return ("token.not_allowed", f"the token {exc.token_id} is not allowed after what has been written",
                "choose one of the tokens the mask allows")
    if isinstance(exc, LimitExceeded):
        reason = _AT_PREFIX.sub("", exc.what)
    else:
        reason = getattr(exc, "reason", None) or str(exc).split("\n")[0]
    found = errors_en.translate(reason) or errors_en.unknown(reason, getattr(exc, "keyword", None))
    if isinstance(exc, LimitExceeded) and found[0] != "masker.other":
        unit = _LIMIT_UNITS_EN.get(exc.limit)
        if unit:
            value = exc.value if isinstance(exc.value, int) else 0
            found = (found[0], f"{found[1]} (limit: {en_int(value)} {unit[0] if value == 1 else unit[1]})", found[2])
    return found


def en_tokens(n: int) -> str:
    return f"{en_int(n)} token" + ("" if n == 1 else "s")


_LIMIT_UNITS_EN = {"max_states": ("state", "states"), "max_nfa_states": ("state", "states"),
                   "max_budget_states": ("state", "states"), "max_items": ("item", "items"),
                   "max_trie_steps": ("step", "steps"), "max_productions": ("production", "productions"),
                   "max_regex_chars": ("character", "characters"), "nesting depth": ("level", "levels")}


def _spanish_reason(exc: MaskerError) -> tuple[str, str, str]:
    """(catalog key, Spanish message, Spanish fix) of any masker error."""
    if isinstance(exc, BudgetTooSmall):
        need = (f"el texto más corto que completa la restricción necesita {es_count(exc.needed, 'token', 'tokens')}"
                if exc.needed is not None else "ningún texto que complete la restricción cabe en él")
        return ("budget.too_small", f"el presupuesto de {es_count(exc.budget, 'token', 'tokens')} no basta: {need}",
                "sube «tokens como máximo», o acorta lo que la restricción exige")
    if isinstance(exc, TokenNotAllowed):
        return ("token.not_allowed", f"el token {exc.token_id} no está permitido después de lo escrito",
                "elige uno de los tokens que la máscara permite")
    if isinstance(exc, LimitExceeded):
        reason = _AT_PREFIX.sub("", exc.what)
    else:
        reason = getattr(exc, "reason", None) or str(exc).split("\n")[0]
    found = translate(reason) or unknown(reason, getattr(exc, "keyword", None))
    if isinstance(exc, LimitExceeded) and found[0] != "masker.other":
        unit = _LIMIT_UNITS.get(exc.limit)  # none for Python's recursion limit: it counts no schema level
        if unit:
            found = (found[0], f"{found[1]} (límite: {es_count(exc.value, *unit)})", found[2])
    return found


# LimitExceeded.limit (the masker's keyword argument) -> what its value counts, in Spanish
_LIMIT_UNITS = {"max_states": ("estado", "estados"), "max_nfa_states": ("estado", "estados"),
                "max_budget_states": ("estado", "estados"), "max_items": ("elemento", "elementos"),
                "max_trie_steps": ("paso", "pasos"), "max_productions": ("producción", "producciones"),
                "max_regex_chars": ("carácter", "caracteres"), "nesting depth": ("nivel", "niveles")}


def _pattern_span(exc: MaskerError, text: str, start: int, end: int) -> tuple[int, int] | None:
    """For a schema's invalid ``pattern`` (or ``patternProperties`` key), the character inside its
    JSON string that ``re`` points at: ``start``/``end`` is the span of the keyword's key."""
    cause = exc.__cause__
    if not isinstance(cause, re.error) or cause.pos is None:
        return None
    quote = start if exc.reason.startswith("patternProperties") else value_start(text, end)
    if text[quote:quote + 1] != '"':
        return None
    at = string_offset(text, quote, cause.pos)
    return at, at + 1


def masker_error(exc: MaskerError, kind: str, text: str) -> ConstraintError:
    """A masker error as the error view shows it, in the current language: in Spanish
    (:func:`spanish_error`) or in English (:func:`english_error`). Both have the same ``kind`` and
    ``span``, so the editor underlines the same characters in either edition."""
    return english_error(exc, kind, text) if get_language() == "en" else spanish_error(exc, kind, text)


def english_error(exc: MaskerError, kind: str, text: str) -> ConstraintError:
    """A masker error for the English edition: :func:`spanish_error` with the English twin of its
    catalog (:mod:`~lesson.laboratorio.errors_en`): the same ``kind`` and ``span``, a heading, the
    place counted from 1 (the caret's), a message for readers and a fix."""
    return catalog_error(exc, kind, text, english=True)


def spanish_error(exc: MaskerError, kind: str, text: str) -> ConstraintError:
    """A masker error in Spanish (:mod:`~lesson.laboratorio.errors_es`), its caret and span in the
    constraint's text (a schema's JSON pointer located in the schema's text; for an invalid
    ``pattern``, the character ``re`` points at inside its string). Run-time errors (a work limit,
    a budget), or ``text == ""``, get no span."""
    return catalog_error(exc, kind, text, english=False)


def catalog_error(exc: MaskerError, kind: str, text: str, english: bool) -> ConstraintError:
    """:func:`spanish_error` or :func:`english_error`: the same kind and span, the words of one
    catalog or the other."""
    key, message, fix = _english_reason(exc) if english else _spanish_reason(exc)
    start = end = None
    if kind == "json_schema" and isinstance(exc, GrammarSyntaxError) and text:
        pointer = exc.source
        if key == "schema.unsatisfiable":
            try:
                why = why_unsatisfiable(json.loads(text), english=english)
            except ValueError:
                why = None
            if why:
                pointer, message = why[0], f"{message}: {why[1]}"
        keyword = _keyword_of(key, getattr(exc, "reason", ""))
        if keyword and not pointer.endswith("/" + keyword):
            pointer = f"{pointer}/{keyword}"
        start, end = pointer_span(text, pointer)
        if key == "schema.bad_pattern":
            start, end = _pattern_span(exc, text, start, end) or (start, end)
    elif isinstance(exc, GrammarSyntaxError) and text:
        start = max(0, min(exc.pos, len(text)))
        end = min(start + 1, len(text))
    headings, kind_words = (errors_en.HEADINGS, errors_en.KIND_WORDS) if english else (HEADINGS, KIND_WORDS)
    if isinstance(exc, LimitExceeded):
        words = kind_words["limit"]
    else:
        words = headings.get(key) or kind_words.get(getattr(exc, "kind", ""), "error")
    if start is None:
        return ConstraintError(f"{words}: {message}", fix, key)
    where, caret = (_where_en, caret_display) if english else (_where, _caret_es)
    return ConstraintError(f"{words} {where(text, start)}: {message}\n{caret(text, start)}", fix, key,
                           (start, max(end, start + 1)))


# errors whose JSON pointer names the schema, not its keyword at fault
_KEYWORD_OF = {"schema.unknown_type": "type", "schema.ref_unresolved": "$ref"}


def _keyword_of(key: str, reason: str) -> str | None:
    """The keyword a schema error is about, when its pointer stops at the schema: from the kind,
    or from a reason like "allOf must be a non-empty list"."""
    if key in _KEYWORD_OF:
        return _KEYWORD_OF[key]
    match = re.match(r"(\$?[A-Za-z]+) must be ", reason)
    return match.group(1) if match else None


def _where(text: str, pos: int) -> str:
    """Where character ``pos`` (0-based) of the reader's text is, counted from 1: «en el carácter 3»
    in a one-line text, «en la línea 2, columna 5» in one of several lines («posición» is a
    token's place on this page); in Spanish, as :func:`spanish_error` writes it."""
    line, column = line_column(text, pos)
    return f"en la línea {line}, columna {column}" if "\n" in text else f"en el carácter {pos + 1}"


def _where_en(text: str, pos: int) -> str:
    """:func:`_where` in English: "at character 3", "at line 2, column 5"."""
    line, column = line_column(text, pos)
    return f"at line {line}, column {column}" if "\n" in text else f"at character {pos + 1}"


def _where_here(text: str, pos: int) -> str:
    """:func:`_where` or :func:`_where_en`, by the current language."""
    return _where_en(text, pos) if get_language() == "en" else _where(text, pos)


def _caret(text: str, pos: int) -> str:
    """The caret display in the current language: :func:`_caret_es`, or the masker's own."""
    return caret_display(text, pos) if get_language() == "en" else _caret_es(text, pos)


def _caret_es(text: str, pos: int) -> str:
    """The masker's caret display, in Spanish: «línea» is one letter longer than "line", so the
    caret line moves one column too."""
    shown, caret = caret_display(text, pos).split("\n")
    if shown.startswith("  line "):
        shown, caret = "  línea " + shown[len("  line "):], " " + caret
    return f"{shown}\n{caret}"


def _quoted(text: str) -> str:
    """«text» in Spanish, “text” in English."""
    return f"“{text}”" if get_language() == "en" else f"«{text}»"


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
                reason = exc.msg if get_language() == "en" else json_message(exc.msg)
                raise ConstraintError(_("JSON no válido {where}: {reason}").format(
                                          where=_where_here(text, exc.pos), reason=reason)
                                      + f"\n{_caret(text, exc.pos)}",
                                      _("revisa comillas, comas y llaves"), "json",
                                      (exc.pos, min(exc.pos + 1, len(text)))) from None
            return compile_json_schema(schema)
        return compile_cfg(text)
    except MaskerError as exc:
        raise masker_error(exc, kind, text) from None


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
