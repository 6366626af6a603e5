"""The «Laboratorio»: any constraint on the mini-GPT, driven from a form instead of code.

The page's form sends its fields here (:class:`Lab`); every action returns the HTML of the whole
view, rendered by the same ``_repr_html_`` views as the lessons. Nothing here is specific to the
page: a cell can build a ``Lab`` and call the same methods.

- :func:`compile_constraint`: the form's kind and text to a masker grammar, with the masker's own
  errors (position, caret, fix) and JSON errors (line, column) as :class:`ConstraintError`, in the
  current language (:func:`lesson.i18n.get_language`): in Spanish (:func:`spanish_error`,
  :mod:`lesson.laboratorio.errors_es`) or in English (:func:`english_error`,
  :mod:`lesson.laboratorio.errors_en`, the same kinds and spans).
- :func:`check_settings`, :func:`check_prompt`: the sampling settings and the prompt, checked
  (a link can hold any value), with messages in the current language (:class:`ConstraintError`).

Every other message is a Spanish id wrapped in ``_()``/``ngettext()`` (``lesson.i18n``), put in
English by the catalog ``locale/en/LC_MESSAGES/laboratorio.po``.
- :class:`Lab`: a tree of branches (:mod:`lesson.laboratorio.tree`), each a
  :class:`~lesson.sampling.Decoder`, with ``generate`` (to the end), ``step`` (one token),
  ``next_choice`` (through forced positions), ``choose`` (the reader's token at any position: the
  branch goes on, or a new one leaves it there, with ``Decoder.fork_at``), ``select``, ``open``,
  ``tree``/``restore`` (the tree as the page's address holds it), and :meth:`Lab.view`
  (:mod:`lesson.laboratorio.lab_views`).
- :func:`refused_at`: why a token is not allowed: the first of its bytes the grammar refuses.
- :data:`PRESETS`: constraints and prompts to start from (and, for some, settings: a seed or a
  budget that the page applies with them).

Test hooks of the view: see :mod:`lesson.laboratorio.lab_views`; ``[data-testid=lab-error]``
for an error.
"""

from __future__ import annotations

import json
import re
from html import escape

import numpy as np

from masker import MaskerError, compile_cfg, compile_choice, compile_json_schema, compile_regex
from masker.errors import BudgetTooSmall, GrammarSyntaxError, LimitExceeded, TokenNotAllowed, caret_display

from ..course import NAMES, PROMPT, answer
from ..i18n import _, get_language, ngettext
from ..token_language import forced_kind
from ..numbers import en_int, fmt_int
from ..sampling import Decoder
from ..views import es_count, styled
from .errors_es import HEADINGS, KIND_WORDS, es_number, json_message, translate, unknown, why_unsatisfiable
from .text_places import line_column, pointer_span, string_offset, value_start
from . import errors_en
from .lab_views import lab_view_html, refused_at
from .tree import MAX_BRANCHES, Branch, advance, decode_tree, encode_tree, offered_at, replay, take
from .words import count, number

KINDS = ("none", "choice", "regex", "json_schema", "gbnf")
KIND_NAMES = {"none": "ninguna", "choice": "lista de opciones", "regex": "expresión regular",
              "json_schema": "JSON Schema", "gbnf": "gramática GBNF"}  # as the Spanish form's menu names them


def kind_names() -> list[str]:
    """The kinds as the form's menu names them, in the current language (KINDS' order)."""
    return [_("ninguna"), _("lista de opciones"), _("expresión regular"), "JSON Schema", _("gramática GBNF")]

PRESETS: dict[str, dict] = {
    "nombres": {"title": "Los nombres de «La máscara»", "kind": "choice",
                "constraint": "\n".join(answer(n) for n in NAMES), "prompt": PROMPT},
    "etiquetas": {"title": "Clasificar con etiquetas", "kind": "choice",
                  "constraint": "aprobado\nrechazado\nrevisión",
                  "prompt": "La solicitud de la señora quedó en estado: "},
    "fecha": {"title": "Una fecha en español", "kind": "regex",
              "constraint": r"([1-9]|[12][0-9]|3[01]) de (enero|febrero|marzo|abril|mayo|junio|julio"
                            r"|agosto|septiembre|octubre|noviembre|diciembre) de 1[89][0-9]{2}",
              "prompt": "Aquella tarde, que era el "},
    "telefono": {"title": "Un número de teléfono", "kind": "regex",
                 "constraint": r"\+34 [6-9][0-9]{2} [0-9]{3} [0-9]{3}",
                 "prompt": "Apunte usted el número de la casa: "},
    "conjugacion": {"title": "Un registro de conjugación (JSON Schema)", "kind": "json_schema",
                    "constraint": json.dumps({
                        "type": "object",
                        "properties": {
                            "infinitivo": {"type": "string", "pattern": "^[a-zñ]{2,10}(ar|er|ir)$"},
                            "persona": {"enum": ["yo", "tú", "él", "nosotros", "vosotros", "ellos"]},
                            "tiempo": {"enum": ["presente", "pretérito", "futuro"]},
                            "forma": {"type": "string", "maxLength": 12}},
                        "required": ["infinitivo", "persona", "tiempo", "forma"],
                        "additionalProperties": False}, ensure_ascii=False, indent=2),
                    "prompt": "Conjuga el verbo que dice Benina. Responde en JSON.\n"},
    "arbol": {"title": "Un árbol recursivo (JSON Schema con $ref)", "kind": "json_schema",
              "constraint": json.dumps({
                  "$defs": {"nodo": {
                      "type": "object",
                      "properties": {"nombre": {"type": "string", "maxLength": 10},
                                     "hijos": {"type": "array", "items": {"$ref": "#/$defs/nodo"},
                                               "maxItems": 2}},
                      "required": ["nombre"], "additionalProperties": False}},
                  "$ref": "#/$defs/nodo"}, ensure_ascii=False, indent=2),
              "prompt": "La familia de doña Paca, en JSON.\n",
              # a tree can grow past any budget (seeds 0 and 2 do): this seed closes it in 29 tokens
              "settings": {"seed": 1, "max_tokens": 200}},
    "aritmetica": {"title": "Aritmética (gramática GBNF)", "kind": "gbnf",
                   "constraint": 'root ::= term (op term){0,3}\n'
                                 'term ::= num | "(" num op num ")"\n'
                                 'num  ::= [1-9] [0-9]{0,2}\n'
                                 'op   ::= " + " | " - " | " * "',
                   "prompt": "La cuenta de la compra era "},
    "parentesis": {"title": "Paréntesis equilibrados (ninguna expresión regular, y por tanto ningún «pattern», "
                            "lo expresa)", "kind": "gbnf",
                   "constraint": 'root ::= "(" root ")" | "x"',
                   "prompt": "Benina escribió "},
}



def preset_titles() -> dict[str, str]:
    """Each preset's title (:data:`PRESETS`' ``title``) in the current language, by key. The
    presets' prompts and texts stay Spanish in both editions: the model was trained on Spanish."""
    titles = {"nombres": _("Los nombres de «La máscara»"), "etiquetas": _("Clasificar con etiquetas"),
              "fecha": _("Una fecha en español"), "telefono": _("Un número de teléfono"),
              "conjugacion": _("Un registro de conjugación (JSON Schema)"),
              "arbol": _("Un árbol recursivo (JSON Schema con $ref)"), "aritmetica": _("Aritmética (gramática GBNF)"),
              "parentesis": _("Paréntesis equilibrados (ninguna expresión regular, y por tanto ningún «pattern», "
                                "lo expresa)")}
    return {key: titles.get(key, preset["title"]) for key, preset in PRESETS.items()}


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


SEED_MAX = 2**32 - 1  # the largest seed: numpy takes any integer from 0, the page keeps 32 bits
MAX_TOKENS = 200  # the form's limit for «tokens como máximo» (act; a Lab in a cell has the model's context)


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


def _quoted(text: str) -> str:
    """«text» in Spanish, “text” in English."""
    return f"“{text}”" if get_language() == "en" else f"«{text}»"


def _now(value) -> str:
    """«ahora vale 2,5», or «ahora está vacío» for none (the page's ``invalid()`` says the same)."""
    if value is None or value == "":
        return _("ahora está vacío")
    return _("ahora vale {value}").format(value=_shown(value))


def _integer(value, name: str, low: int, high: int | None, none_ok: bool, key: str):
    """``value`` as an int in [low, high] (an integral float counts: a link's JSON may give 5.0),
    or None when ``none_ok``; ConstraintError otherwise. ``name``: the setting's name, already in
    the current language."""
    if value is None and none_ok:
        return None
    ok = (isinstance(value, int) or (isinstance(value, float) and value == value and value not in
                                     (float("inf"), float("-inf")) and value.is_integer())) \
        and not isinstance(value, bool) and low <= value and (high is None or value <= high)
    if not ok:
        bound = (_("un entero de {low} a {high}").format(low=fmt_int(low), high=fmt_int(high)) if high is not None
                 else _("un entero de {low} o más").format(low=fmt_int(low)))
        empty = " " + _("(o vacío)") if none_ok else ""
        raise ConstraintError(_("{name} tiene que ser {bound}{empty}; {now}").format(
                                  name=name, bound=bound, empty=empty, now=_now(value)),
                              _("escribe en {name} {bound}").format(name=name, bound=bound), key)
    return int(value)


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value \
        and value not in (float("inf"), float("-inf"))


def check_settings(seed=0, temperature=1.0, top_k=None, top_p=None, max_tokens=None, *,
                   max_tokens_limit: int | None = None) -> dict:
    """The sampling settings, checked, as a dict (seed, temperature, top_k, top_p, max_tokens; the
    integers as int). seed: an integer 0..SEED_MAX; temperature: a number > 0; top_k: an integer
    >= 1 or None; top_p: a number in (0, 1] or None; max_tokens: an integer >= 1 (at most
    ``max_tokens_limit`` when given) or None. Raises ConstraintError (kind "settings.<name>") with
    a message in the current language that names the setting and its value: a link can hold any of
    them."""
    seed = _integer(seed, _("la semilla"), 0, SEED_MAX, False, "settings.seed")
    if not _number(temperature) or temperature <= 0:
        raise ConstraintError(_("la temperatura tiene que ser un número mayor que 0; {now}").format(
                                  now=_now(temperature)),
                              _("mueve el control de la temperatura"), "settings.temperature")
    top_k = _integer(top_k, "top-k", 1, None, True, "settings.top_k")
    if top_p is not None and (not _number(top_p) or not 0 < top_p <= 1):
        raise ConstraintError(_("top-p tiene que ser un número mayor que 0 y de 1 como mucho (o vacío); "
                                "{now}").format(now=_now(top_p)),
                              _("escribe en top-p un número como 0,9, o déjalo vacío"), "settings.top_p")
    max_tokens = _integer(max_tokens, _("«tokens como máximo»"), 1, max_tokens_limit, True, "settings.max_tokens")
    return {"seed": seed, "temperature": float(temperature), "top_k": top_k,
            "top_p": None if top_p is None else float(top_p), "max_tokens": max_tokens}


def check_prompt(model, tok, prompt: str, max_tokens: int | None) -> None:
    """ConstraintError (current language) for an empty prompt, or one that leaves no room in the
    model's context for ``max_tokens`` new tokens (:func:`lesson.sampling.check_settings`'s checks)."""
    if not isinstance(prompt, str) or not tok.encode(prompt):
        raise ConstraintError(_("el prompt está vacío: el modelo necesita al menos un token del que partir"),
                              _("escribe un prompt"), "settings.prompt")
    n, n_ctx = len(tok.encode(prompt)), model.config.n_ctx
    if n + (max_tokens or 1) > n_ctx:
        room = n_ctx - n
        fix = (_("baja «tokens como máximo» a {room} como mucho, o acorta el prompt").format(room=fmt_int(room))
               if room >= 1 else _("acorta el prompt"))
        new = count(ngettext("{n} token nuevo", "{n} tokens nuevos", max_tokens or 1), max_tokens or 1)
        raise ConstraintError(_("el prompt ({tokens}) y {new} no caben en el contexto del modelo, de "
                                "{context}").format(tokens=count(ngettext("{n} token", "{n} tokens", n), n), new=new,
                                                    context=count(ngettext("{n} token", "{n} tokens", n_ctx), n_ctx)),
                              fix, "settings.context")


# sampling's own English ValueErrors (lesson.sampling), for a case the checks above let through:
# (pattern, message and fix in the current language, from the match's groups)
_SAMPLING_ERRORS = [
    (r"the model gives probability 0 to every allowed token after .*",
     lambda: (_("el modelo da probabilidad 0 a todos los tokens que la restricción permite aquí (a esta "
                "temperatura se redondean a 0)"), _("sube la temperatura, o cambia la restricción"))),
    (r"position must be in 1\.\.(\d+), found (-?\d+)",
     lambda last, found: (_("la posición {found} no existe en esta rama (va de 1 a {last})").format(
         found=found, last=last), _("elige una posición de la rama"))),
    (r"token (\d+) is not allowed after .*",
     lambda token: (_("el token {token} no está permitido en esta posición").format(token=token),
                    _("elige uno de los tokens que la máscara permite"))),
]


def _spanish_value_error(error: ValueError) -> ConstraintError:
    """An action's ValueError as the error view shows it: ours are in the current language already
    (raised with ``_()``); sampling's English ones are put in it (:data:`_SAMPLING_ERRORS`)."""
    text = str(error)
    for pattern, words in _SAMPLING_ERRORS:
        match = re.fullmatch(pattern, text, re.DOTALL)
        if match:
            groups = [g.replace("-", "\u2212") for g in match.groups()]
            message, fix = words(*groups)
            return ConstraintError(message, fix, "run")
    return ConstraintError(text, kind="run")


class Lab:
    """One experiment: a constraint, a prompt and sampling settings, and its tree of branches.

    model, tok: the mini-GPT and its tokenizer. kind/constraint: see :func:`compile_constraint`
    (errors are raised here, before any model work, as ConstraintError; so are the settings'
    and the prompt's, :func:`check_settings` and :func:`check_prompt`). The other arguments are those of
    :func:`lesson.sampling.generate` (``stop_at_accept``: stop at the first complete text, for
    grammars whose texts can always go on). ``compare=True`` also runs the same seed without the
    constraint, side by side.

    ``branches``: the tree (:class:`~lesson.laboratorio.tree.Branch`, the first one from the
    prompt); ``current``: the index of the branch on show; ``decoder`` is its decode loop.
    ``selected``: the 1-based position open in the detail (None: the next one, or the first real
    choice once the branch is done). Nothing is ever discarded: choosing a token at an earlier
    position adds a branch.
    """

    def __init__(self, model, tok, *, kind: str = "choice", constraint: str = "", prompt: str = PROMPT,
                 seed: int = 0, temperature: float = 1.0, top_k: int | None = None,
                 top_p: float | None = None, max_tokens: int | None = 120, stop_at_accept: bool = False,
                 compare: bool = False):
        self.model, self.tok = model, tok
        self.settings = check_settings(seed, temperature, top_k, top_p, max_tokens)
        check_prompt(model, tok, prompt, self.settings["max_tokens"])
        self.grammar = compile_constraint(kind, constraint)
        self.kind = kind
        self.prompt, self.compare, self.stop_at_accept = prompt, compare, stop_at_accept
        self.branches = [Branch(self._fresh_decoder())]
        self.current = 0
        self.unconstrained = None
        self.selected: int | None = None
        self.compare_with: int | None = None  # the branch the reader compares the current one with
        self.note = ""  # said once in the summary (e.g. why a new experiment started)

    def _fresh_decoder(self) -> Decoder:
        return Decoder(self.model, self.tok, self.prompt, self.grammar, stop_at_accept=self.stop_at_accept,
                       **self.settings)

    @property
    def branch(self) -> Branch:
        return self.branches[self.current]

    @property
    def decoder(self) -> Decoder:
        """The current branch's decode loop."""
        return self.branch.decoder

    def generate(self, limit: int | None = None) -> "Lab":
        """Run the current branch to its end, or for ``limit`` more tokens at most (then it stays
        in progress: the page runs long generations in pieces, to show progress and stop between)."""
        self.branch.stopped = False
        advance(self.branch, None if limit is None else len(self.decoder.generation.token_ids) + int(limit))
        self.selected = None
        return self._compare_when_done()

    def stop(self) -> "Lab":
        """Mark the current branch «detenida» (the reader stopped it); its text is kept."""
        if not self.decoder.done:
            self.branch.stopped = True
        return self

    def step(self) -> "Lab":
        """One more token, sampled, on the current branch; the next position opens in the detail.
        On a finished branch nothing happens, and the summary says so."""
        if self._said_done():
            return self
        take(self.decoder)
        self.selected = None  # the next position opens (the strip shows the new one)
        return self._compare_when_done()

    def next_choice(self) -> "Lab":
        """«Paso hasta la próxima elección»: one token, then on through every forced position
        (one token offered, or one text with several token splits) until the next position offers
        a real choice or the branch ends; that next position opens in the detail."""
        if self._said_done():
            return self
        take(self.decoder)
        while not self.decoder.done and self._next_is_forced():
            take(self.decoder)
        self.selected = None
        if self.decoder.done:
            self.note = _("no quedaba ninguna elección de verdad: la rama llegó a su final")
        return self._compare_when_done()

    def _said_done(self) -> bool:
        if self.decoder.done:
            self.note = _("esta rama ya terminó: elige otro token en una de sus posiciones para abrir "
                          "una rama nueva, o pulsa «Generar» para empezar otra vez")
        return self.decoder.done

    def _next_is_forced(self) -> bool:
        """Whether the current branch's next position leaves the reader no real choice."""
        decoder = self.decoder
        tokens = offered_at(decoder, len(decoder.generation.token_ids) + 1)
        if len(tokens) <= 1:
            return True
        ids = np.array(sorted(t for t, _, _ in tokens))
        return decoder.matcher is not None and forced_kind(decoder.matcher, ids, self.stop_at_accept) is not None

    def choose(self, position: int, token_id: int) -> "Lab":
        """The reader's token at a 1-based position of the current branch.

        At the branch's next position (while it can go on) the branch goes on with it. At an
        earlier position a new branch leaves the current one there, with the same settings: it
        keeps the tokens before ``position``, takes ``token_id`` and, when the current branch had
        run to its end, runs to its own end too; it becomes the current branch. Choosing the same
        token again opens the branch that already has it. ValueError (current language) for a position
        outside the branch, a token the settings do not offer there (q̃ = 0), or a full tree.
        """
        decoder, position, token_id = self.decoder, int(position), int(token_id)
        n = len(decoder.generation.token_ids)
        self.note = ""
        if position == n + 1 and not decoder.done:
            take(decoder, token_id)
            self.branch.picks[position] = token_id
            self.selected = None
            return self._compare_when_done()
        offered_ids = {t for t, _, _ in offered_at(decoder, position)}  # ValueError outside the branch
        if token_id not in offered_ids:
            raise ValueError(_("el token {token} no está entre los que los ajustes permiten en la "
                               "posición {position} (q̃ = 0)").format(token=token_id, position=position))
        self.selected = position
        if decoder.generation.token_ids[position - 1] == token_id:
            self.note = _("esta rama ya tiene ese token en la posición {position}").format(position=position)
            return self
        prefix = decoder.generation.token_ids[:position - 1] + [token_id]
        same = next((i for i, b in enumerate(self.branches) if b.decoder.generation.token_ids[:position] == prefix), None)
        if same is not None:  # another branch already goes this way: show it, don't copy it
            self.current = same
            if position == 1:
                self.note = _("la rama {i} ya empieza por ese token: se abre ella en vez de repetirla").format(
                    i=same + 1)
            else:
                self.note = _("la rama {i} ya tiene estos {n} primeros tokens: se abre ella en vez de "
                              "repetirla").format(i=same + 1, n=position)
            return self._compare_when_done()
        self.current = self._fork(position, token_id)
        return self._compare_when_done()

    def pick(self, token_id: int) -> "Lab":
        """The reader's token for the current branch's next position (:meth:`choose` there)."""
        return self.choose(len(self.decoder.generation.token_ids) + 1, token_id)

    def _fork(self, position: int, token_id: int) -> int:
        """The index of the branch that leaves the current one at ``position`` with ``token_id``
        (made now, unless it exists)."""
        for i, b in enumerate(self.branches):
            if (b.parent, b.start, b.start_token) == (self.current, position, token_id):
                return i
        if len(self.branches) >= MAX_BRANCHES:
            raise ValueError(_("el árbol ya tiene {n} ramas, las que caben: pulsa «Generar» "
                               "para empezar otro").format(n=MAX_BRANCHES))
        fork = self.decoder.fork_at(position)
        take(fork, token_id)
        branch = Branch(fork, self.current, position, token_id)
        if self.decoder.done:
            advance(branch)
        self.branches.append(branch)
        return len(self.branches) - 1

    def select(self, index: int) -> "Lab":
        """Show branch ``index`` (0-based, as ``data-index``); ValueError when there is none."""
        if not 0 <= int(index) < len(self.branches):
            n = len(self.branches)
            raise ValueError(_("no hay rama {i}: el árbol tiene {branches}").format(
                i=_shown(int(index) + 1), branches=count(ngettext("{n} rama", "{n} ramas", n), n)))
        self.current, self.selected, self.note = int(index), None, ""
        return self

    def compare_to(self, index: int) -> "Lab":
        """Compare the current branch with branch ``index`` (0-based) in the view; ValueError when
        there is no such branch."""
        if not 0 <= int(index) < len(self.branches):
            n = len(self.branches)
            raise ValueError(_("no hay rama {i}: el árbol tiene {branches}").format(
                i=_shown(int(index) + 1), branches=count(ngettext("{n} rama", "{n} ramas", n), n)))
        self.compare_with, self.note = int(index), ""
        return self

    def open(self, position: int) -> "Lab":
        """Open a 1-based position of the current branch in the detail (its next one included)."""
        offered_at(self.decoder, int(position))  # ValueError outside the branch
        self.selected, self.note = int(position), ""
        return self

    def tree(self) -> str:
        """The tree as the page's address holds it (:func:`~lesson.laboratorio.tree.encode_tree`)."""
        return encode_tree(self.branches)

    def restore(self, tree: str, current: int | None = None, selected: int | None = None) -> "Lab":
        """Rebuild the branches that ``tree`` (from :meth:`tree`) describes, on a new Lab with the
        same settings; ``tree == ""`` runs the first branch to its end. ValueError (current language) when
        the text does not describe a tree these settings give."""
        try:
            self.branches = replay(self._fresh_decoder(), decode_tree(tree))
        except (ValueError, MaskerError) as error:
            why = (masker_error(error, self.kind, "").message if isinstance(error, MaskerError)
                   else _spanish_value_error(error).message)
            raise ConstraintError(_("el enlace no describe un árbol de este experimento: {why}").format(why=why),
                                  _("abre el enlace tal como se copió, o pulsa «Generar» para empezar otro"),
                                  "link") from None
        self.current = current if current is not None and 0 <= current < len(self.branches) else 0
        self.selected = None
        if selected is not None:
            try:
                self.open(selected)
            except ValueError:
                pass
        return self._compare_when_done()

    def _compare_when_done(self) -> "Lab":
        """With ``compare``, a finished branch gets the unconstrained twin of the same seed."""
        if self.decoder.done and self.compare and self.grammar is not None and self.unconstrained is None:
            other = Decoder(self.model, self.tok, self.prompt, None, **self.settings)
            while not other.done:
                other.step()
            self.unconstrained = other.generation
        return self

    @property
    def state(self) -> str:
        return self.branch.state

    def open_position(self) -> int:
        """The position the detail shows: ``selected``, else the next one while the branch can go
        on, else its first real choice (as the strip opens), else 1."""
        gen = self.decoder.generation
        if self.selected is not None:
            return self.selected
        if not self.decoder.done:
            return len(gen.token_ids) + 1
        return next((j for j, pos in enumerate(gen.positions, start=1) if not pos.is_forced), 1)

    def accepted(self, branch: Branch) -> bool:
        return self.grammar.accepts(branch.decoder.generation.bytes) if self.grammar is not None else True

    def view(self) -> str:
        """The whole view as HTML (see :mod:`lesson.laboratorio.lab_views`)."""
        return lab_view_html(self)

    def _repr_html_(self) -> str:
        return self.view()



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


class _Html:
    """Any HTML string as a displayable object (a cell shows its ``_repr_html_``)."""

    def __init__(self, html: str):
        self.html = html

    def _repr_html_(self) -> str:
        return self.html


_SESSION: dict = {"lab": None, "key": None, "model": None, "tok": None}
SETTINGS = ("kind", "constraint", "prompt", "seed", "temperature", "top_k", "top_p", "max_tokens",
            "stop_at_accept", "compare")


def act(action: str, state, token_id: int | None = None, position: int | None = None,
        branch: int | None = None, limit: int | None = None):
    """What the page's form asks for, as a displayable view; the page runs ``act(...)`` as a cell.

    state: the form's fields (a dict, or its JSON), keys of SETTINGS, and for "restore" ``tree``,
    ``branch`` and ``open`` (what the view's ``data-tree``, ``data-branch`` and ``data-open`` said).
    action:
    - "generate": a new experiment; its first branch runs to the end (or to ``limit`` tokens);
    - "continue": the current branch goes on to the end (or to ``limit`` tokens); "stop": it is
      marked «detenida»;
    - "restore": a new experiment rebuilt from ``state["tree"]`` (a shared link);
    - "step" (one token) and "next" (to the next real choice), starting a new experiment when the
      settings changed;
    - "choose" (``token_id`` at ``position``, 1-based: the current branch goes on, or a new branch
      leaves it), "pick" (``token_id`` at the next position), "open" (``position``), "branch"
      (show branch ``branch``, 0-based), "compare" (compare the current branch with branch
      ``branch``, 0-based).
    Compile and settings errors come back as the error view, in the current language, never as a traceback:
    the settings are checked (:func:`check_settings`, with the form's limit of MAX_TOKENS tokens)
    before anything runs, so a link with ``seed=1e30`` or ``max_tokens=2000`` gets a message too.
    The model and tokenizer are loaded once.
    """
    if isinstance(state, str):
        state = json.loads(state)
    if _SESSION["model"] is None:
        from minigpt.bpe import load_tokenizer
        from minigpt.gpt import load_model
        _SESSION["tok"], _SESSION["model"] = load_tokenizer(), load_model()
    settings = {k: state[k] for k in SETTINGS if k in state}
    key = json.dumps(settings, sort_keys=True)
    try:
        check_settings(**{k: settings[k] for k in ("seed", "temperature", "top_k", "top_p", "max_tokens")
                          if k in settings}, max_tokens_limit=MAX_TOKENS)  # the form's limits, from a link too
        lab = _lab_for(action, state, settings, key)
        if action in ("generate", "continue"):
            return lab.generate(limit)
        if action == "restore":
            return lab
        if action == "stop":
            return lab.stop()
        if action == "step":
            return lab.step()
        if action == "next":
            return lab.next_choice()
        if action == "pick":
            return lab.choose(len(lab.decoder.generation.token_ids) + 1, int(token_id))
        if action == "choose":
            return lab.choose(int(position), int(token_id))
        if action == "open":
            return lab.open(int(position))
        if action == "branch":
            return lab.select(int(branch))
        if action == "compare":
            return lab.compare_to(int(branch))
        raise ValueError(_("acción desconocida {action}").format(action=_shown(str(action))))
    except ConstraintError as error:
        if action == "restore":  # a link's tree that does not rebuild: nothing of it is kept
            _SESSION["lab"] = None
        # otherwise the session's experiment stays as it was (a new one that failed to compile
        # never replaced it): the page keeps showing it, and its actions go on with it
        return _Html(error_html(error))
    except MaskerError as error:  # at run time: a work limit (compile errors are ConstraintErrors)
        return _Html(error_html(masker_error(error, settings.get("kind", ""), "")))
    except ValueError as error:
        return _Html(error_html(_spanish_value_error(error)))
    except KeyboardInterrupt:  # the kernel bar's «Detener» interrupted Python in the middle of an action
        _SESSION["lab"] = None  # its branches may be half changed: the next action rebuilds the tree
        return _Html(error_html(ConstraintError(
            _("Python paró esta acción a medias, con «Detener» de la barra de Python"),
            _("la dirección de la página aún guarda el árbol de antes de esta acción: recarga la página "
              "para volver a abrirlo, o pulsa «Generar» para empezar otro"), "stopped")))


def forget() -> None:
    """Drop the session's experiment (the page calls it after Python was interrupted in the middle
    of an action, when the branches may be half changed); the next action rebuilds the tree that
    the page's address holds."""
    _SESSION["lab"] = None


def _lab_for(action: str, state: dict, settings: dict, key: str) -> Lab:
    """The experiment an action works on: a new one for "generate" and "restore" (and for "step"
    and "next" when the settings changed), the session's one otherwise."""
    lab = _SESSION["lab"]
    fresh = action in ("generate", "restore") or (action in ("step", "next") and (
        (lab is None and not state.get("tree")) or (lab is not None and key != _SESSION["key"])))
    if not fresh:
        if lab is None and state.get("tree"):
            fresh, action = True, "restore"  # Python started again: the page's tree comes back
        elif lab is None:
            raise ValueError(_("no hay ninguna generación en curso: pulsa «Paso» o «Generar»"))
        elif key != _SESSION["key"]:
            raise ValueError(_("cambiaste los ajustes desde la última generación: pulsa «Generar» para "
                               "empezar con los nuevos"))
    if not fresh:
        lab.note = ""  # said once
    if fresh:
        renewed = action in ("step", "next") and lab is not None and not lab.decoder.done
        lab = Lab(_SESSION["model"], _SESSION["tok"], **settings)
        _SESSION["lab"], _SESSION["key"] = lab, key
        if action == "restore":
            lab.restore(state.get("tree") or "", _int(state.get("branch")), _int(state.get("open")))
        if renewed:
            lab.note = _("nuevo experimento: cambiaron los ajustes")
    return lab


def _int(value) -> int | None:
    """A link's ``branch`` or ``open``: an int, or None (absent, or not an integer: then ignored)."""
    try:
        return None if value in (None, "") else int(value)
    except (TypeError, ValueError):
        return None


__all__ = ["act", "ConstraintError", "KINDS", "Lab", "MAX_BRANCHES", "MAX_TOKENS", "PRESETS", "SEED_MAX",
           "check_prompt", "check_settings", "compile_constraint", "english_error", "error_html", "masker_error",
           "preset_titles", "refused_at", "spanish_error"]
