"""The «Laboratorio»'s «vocabulario» choice: a constraint's masks over a real tokenizer's
vocabulary (``o200k_base``, ``cl100k_base``; ``vocabularies.load``), masks only, with no model.

The reader writes a text (or the Lab writes the constraint's example, :func:`example_text`); the
text is tokenized as a model with that vocabulary would write it (canonical BPE,
``vocabularies.BpeEncoder``), and :class:`VocabMasks` walks it through the constraint's matcher:
at each position, how many of the vocabulary's tokens the mask allows, whether the position is
forced (one token allowed), what the mask cost (wall time, this run; near 0 when the state's mask
was in the matcher's cache already) and, on request, the allowed tokens, searchable
(:meth:`VocabMasks.search`).

:func:`act_vocab` is the one call the page makes for this mode, as :func:`lesson.laboratorio.act`
is for the mini-GPT's.

Test hooks: ``[data-testid=vocab-view]`` (``data-vocab``, ``data-tokens``, ``data-positions`` (the text's tokens),
``data-accepted`` "1"/"0", ``data-refused``: the refused position or ""), one
``[data-testid=vocab-position]`` row per position (``data-position`` 1-based, ``data-token-id``,
``data-allowed``, ``data-forced``, ``data-cached``), a ``[data-testid=vocab-open]`` button per row;
the panel ``[data-testid=vocab-allowed]`` (``data-position``, ``data-allowed``, ``data-matches``)
with one ``<li data-token-id>`` per token shown and the search box ``[data-testid=vocab-search]``.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from html import escape

import numpy as np

from masker import MaskerError
from masker.errors import LimitExceeded
from vocabularies import NAMES

from ..automata.scale import real_trie
from ..i18n import _, ngettext
from ..numbers import fmt_decimal, fmt_int
from ..views import _VISIBLE as VISIBLE  # how a label shows whitespace
from ..views import styled, token_label
from .words import count

MAX_TEXT_TOKENS = 300        # tokens of the reader's text walked at most
SHOWN = 200                  # allowed tokens listed per position (the search narrows them)
EXAMPLE_MAX_BYTES = 400      # the longest example :func:`example_text` looks for
BYTES = [bytes([b]) for b in range(256)]
# the example's bytes, most preferred first: lower-case letters, digits, then by value
_PREFERRED = sorted(range(256), key=lambda b: (not 97 <= b <= 122, not 48 <= b <= 57, b))
_LABELS: dict[str, list[str]] = {}  # per vocabulary: each token's label, lower-cased, for search


class VocabError(ValueError):
    """The mode's own refusals (no constraint, a text too long, no example found): ``message``,
    ``hint`` and ``kind`` as :class:`lesson.laboratorio.lab.ConstraintError` reads them."""

    def __init__(self, message: str, hint: str, kind: str):
        super().__init__(message)
        self.message, self.hint, self.kind = message, hint, kind


def example_text(grammar, max_bytes: int = EXAMPLE_MAX_BYTES) -> str | None:
    """A shortest text of ``grammar`` in bytes, preferring lower-case letters, then digits, then
    the smallest byte at each step; None when every text is longer than ``max_bytes`` bytes or the
    bounded search gives up (``LimitExceeded``). The grammar's matcher over the 256 one-byte
    tokens finds the distance to the nearest complete text (``Matcher.min_tokens_to_finish``),
    and its budget mask (``budget.py``) keeps, at each byte, only the bytes that stay within it."""
    matcher = grammar.matcher(BYTES)
    try:
        left = matcher.min_tokens_to_finish(max_bytes)
        if left is None:
            return None
        for _step in range(left):
            mask = matcher.mask(budget=left)
            matcher.consume(next(b for b in _PREFERRED if mask[b]))
            left -= 1
    except LimitExceeded:
        return None
    return matcher.prefix_bytes.decode("utf-8", errors="replace")


@dataclass
class VocabPosition:
    """One position of the text: ``index`` (1-based), ``token_id`` and ``piece`` (the token the
    text writes there; None for the row after the last token), ``allowed`` (tokens the mask
    allows), ``forced`` (just one), ``refused`` (the mask does not allow the text's token),
    ``cached`` (the mask came from the matcher's cache) and ``ms`` (what ``mask()`` took, wall time)."""
    index: int
    token_id: int | None
    piece: bytes | None
    allowed: int
    forced: bool
    refused: bool
    cached: bool
    ms: float


class VocabMasks:
    """``text`` (``str``; empty: the constraint's example) tokenized with the canonical BPE of
    ``name`` (one of ``vocabularies.NAMES``) and walked through ``grammar``'s mask, position by
    position, up to the first token the mask refuses. ``positions`` (``VocabPosition``), then
    one more row for the mask after the whole text when the text was allowed to the end.
    Attributes: ``name``, ``n_tokens``, ``text``, ``example`` (True when the Lab wrote it),
    ``accepted`` (the whole text is a text of the grammar), ``load_ms``, ``build_ms`` (loading the
    vocabulary and building its trie, the first time in this Python), ``matcher_ms``.
    Raises VocabError (no grammar, no example, more than ``MAX_TEXT_TOKENS`` tokens) and what
    ``vocabularies.load`` raises."""

    def __init__(self, name: str, grammar, text: str):
        if grammar is None:
            raise VocabError(_("con «ninguna», la máscara deja pasar todos los tokens en cada posición"),
                             _("elige una restricción para ver sus máscaras"), "settings.kind")
        self.example = not text
        if self.example:
            text = example_text(grammar)
            if text is None:
                raise VocabError(_("no encontré ningún texto de la restricción de {n} bytes o menos").format(
                                     n=fmt_int(EXAMPLE_MAX_BYTES)),
                                 _("escribe tú el texto en «Texto»"), "settings.text")
        real = real_trie(name)
        self.name, self.n_tokens, self.text = name, real.n_tokens, text
        self.load_ms, self.build_ms = real.load_ms, real.build_ms
        self.tokens = real.tokens
        ids = real.encoder.encode(text)
        self.text_tokens = len(ids)
        if len(ids) > MAX_TEXT_TOKENS:
            raise VocabError(_("el texto tiene {n} tokens de {name}: el laboratorio recorre {limit} como "
                               "mucho").format(n=fmt_int(len(ids)), name=name, limit=MAX_TEXT_TOKENS),
                             _("acorta el texto"), "settings.text")
        start = time.perf_counter()
        matcher = grammar.matcher(real.tokens)
        self.matcher_ms = (time.perf_counter() - start) * 1e3
        self.positions: list[VocabPosition] = []
        self._masks: list[np.ndarray] = []  # packed bits, one per position
        for token_id in [*ids, None]:
            cached = matcher.mask_is_cached()
            start = time.perf_counter()
            mask = matcher.mask()
            ms = (time.perf_counter() - start) * 1e3
            refused = token_id is not None and not mask[token_id]
            allowed = int(mask.sum())
            self.positions.append(VocabPosition(
                len(self.positions) + 1, token_id, None if token_id is None else real.tokens[token_id],
                allowed, allowed == 1, refused, cached, ms))
            self._masks.append(np.packbits(mask))
            if token_id is None or refused:
                break
            matcher.consume(token_id)
        self.accepted = not self.refused and matcher.is_accepting()

    @property
    def refused(self) -> VocabPosition | None:
        """The position whose token the mask refused, or None."""
        return next((p for p in self.positions if p.refused), None)

    def allowed_ids(self, index: int) -> np.ndarray:
        """The allowed token ids at position ``index`` (1-based), in id order: int64."""
        return np.flatnonzero(np.unpackbits(self._masks[index - 1], count=self.n_tokens))

    def search(self, index: int, query: str = "") -> tuple[int, list[int]]:
        """``(matches, ids)``: how many allowed tokens at ``index`` contain ``query`` in their
        label (``views.token_label``: a space is «␣»), compared by ``search_key`` (case, a typed
        space, a byte's ``<0x..>`` spelling left out), and the first ``SHOWN`` of
        them in id order (a BPE vocabulary's ids follow its merges: common pieces first). Raises
        IndexError for a position the text does not have."""
        if not 1 <= index <= len(self.positions):
            raise IndexError(index)
        ids = self.allowed_ids(index)
        needle = search_key(query)
        if not needle:
            return len(ids), ids[:SHOWN].tolist()
        labels = _labels(self.name, self.tokens)
        found = [i for i in ids.tolist() if needle in labels[i]]
        return len(found), found[:SHOWN]

    def _repr_html_(self) -> str:
        return self.view()

    def view(self) -> str:
        """The whole view: the summary and the table of positions."""
        shown = self.positions
        computed = [p for p in shown if not p.cached]
        slowest = max((p.ms for p in computed), default=0.0)
        refused = self.refused
        tokens = self.text_tokens
        if refused:
            verdict = _("la máscara no deja pasar el token de la posición {i}: el texto no cumple la "
                        "restricción a partir de ahí").format(i=refused.index)
        elif self.accepted:
            verdict = _("el texto cumple la restricción")
        else:
            verdict = _("la máscara deja pasar todo el texto, pero el texto aún no está completo: la "
                        "restricción pide más")
        source = (_("el ejemplo de la restricción (uno de sus textos más cortos, en bytes)") if self.example
                  else _("tu texto"))
        summary = _("{name} ({n} tokens). {source}, {text}, que el BPE canónico parte en {k}; posiciones "
                    "forzadas: {forced}; {verdict}.").format(
            name=self.name, n=fmt_int(self.n_tokens), source=source[:1].upper() + source[1:],
            text=_quoted_text(self.text), k=count(ngettext("{n} token", "{n} tokens", tokens), tokens),
            forced=sum(p.forced for p in shown), verdict=verdict)
        costs = _("Máscaras calculadas: {computed} (la más lenta, {slowest}); sacadas de la caché (ya "
                  "calculadas para un estado igual): {cached}. Preparar la restricción para este vocabulario: "
                  "{matcher} ms; cargar el "
                  "vocabulario y construir su trie, la primera vez en esta sesión: {load} ms y {build} ms. "
                  "Tiempos medidos en este navegador, en esta ejecución.").format(
            computed=len(computed), slowest=_duration(slowest), cached=len(shown) - len(computed),
            matcher=fmt_decimal(self.matcher_ms, 1), load=fmt_decimal(self.load_ms, 0),
            build=fmt_decimal(self.build_ms, 0))
        yes, no = _("sí"), _("no")
        after, refused_word, see = _("después del texto"), _("no permitido"), _("ver")
        rows = []
        for p in shown:
            if p.piece is None:
                written = f"<em>{after}</em>"
            else:
                written = f"<code>{escape(token_label(p.piece))}</code>"
                if p.refused:
                    written += f" <strong>{refused_word}</strong>"
            state = _("caché") if p.cached else _duration(p.ms)
            look = _("ver los tokens de la posición {i}").format(i=p.index)
            rows.append(
                f'<tr data-testid="vocab-position" data-position="{p.index}" '
                f'data-token-id="{"" if p.token_id is None else p.token_id}" data-allowed="{p.allowed}" '
                f'data-forced="{int(p.forced)}" data-cached="{int(p.cached)}"'
                f'{" class=refused" if p.refused else ""}>'
                f"<td class='num'>{p.index}</td><td>{written}</td><td class='num'>{fmt_int(p.allowed)}</td>"
                f"<td>{yes if p.forced else no}</td><td class='num'>{state}</td>"
                f'<td><button type="button" data-testid="vocab-open" data-position="{p.index}" '
                f'aria-label="{escape(look)}" aria-controls="vocab-panel"'
                f'{" disabled" if p.allowed == 0 else ""}>{see}</button></td></tr>')
        caption = _("Cada fila: el token que el texto escribe en esa posición y la máscara de justo antes; "
                    "la última, la máscara tras el texto entero (0 tokens cuando ya está completo y la "
                    "restricción no admite más: el fin del texto no es un token de estas listas)")
        head = "".join(f'<th scope="col">{h}</th>' for h in _(
            "posición|token del texto|permitidos|forzada|tiempo de la máscara|tokens").split("|"))
        return styled(
            f'<div class="vocab-view" data-testid="vocab-view" data-vocab="{escape(self.name)}" '
            f'data-tokens="{self.n_tokens}" data-positions="{tokens}" data-accepted="{int(self.accepted)}" '
            f'data-refused="{refused.index if refused else ""}" data-text="{escape(self.text)}">'
            f'<p class="lab-summary">{summary}</p><p class="hint">{costs}</p>'
            f'<div class="table-scroll" tabindex="0" role="region" aria-label="{escape(caption)}">'
            f'<table class="compact-table scale-positions"><caption>{caption}</caption>'
            f'<thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table></div>'
            f'<div id="vocab-panel" class="vocab-panel" aria-live="polite"></div></div>')

    def panel(self, index: int, query: str = "") -> str:
        """The allowed tokens at position ``index`` (1-based) that contain ``query``: a search box,
        the count and the first ``SHOWN``. Raises IndexError as :meth:`search`."""
        matches, ids = self.search(index, query)
        allowed = self.positions[index - 1].allowed
        if query and matches == 0:
            said = _("ninguno de los {a} tokens permitidos en la posición {i} contiene «{q}»")
        elif query:
            said = ngettext("{m} de los {a} tokens permitidos en la posición {i} contiene «{q}»",
                            "{m} de los {a} tokens permitidos en la posición {i} contienen «{q}»", matches)
        else:
            said = ngettext("{a} token permitido en la posición {i}", "{a} tokens permitidos en la posición {i}",
                            allowed)
        said = said.format(m=fmt_int(matches), a=fmt_int(allowed), i=index, q=escape(query))
        if matches > len(ids):
            said += _("; se muestran los {shown} primeros por número de token (el orden de las fusiones "
                      "del BPE)").format(shown=len(ids))
        items = "".join(f'<li data-token-id="{i}"><code>{escape(token_label(self.tokens[i]))}</code></li>'
                        for i in ids)
        label = _("Buscar entre los tokens permitidos")
        return styled(
            f'<section class="vocab-allowed" data-testid="vocab-allowed" data-position="{index}" '
            f'data-allowed="{allowed}" data-matches="{matches}" aria-label="{escape(said)}">'
            f'<label>{label} <input type="search" data-testid="vocab-search" value="{escape(query)}" '
            f'autocomplete="off" spellcheck="false"></label>'
            f'<p class="lab-search-count" data-testid="vocab-count">{said}.</p>'
            f'<ul class="vocab-tokens">{items}</ul></section>')


def _duration(ms: float) -> str:
    """A mask's wall time in milliseconds with one decimal («1,7 ms»), and «< 0,1 ms» below that:
    a browser's clock may step in 0.1 ms, so finer digits would be noise."""
    return f"< {fmt_decimal(0.1, 1)} ms" if ms < 0.1 else f"{fmt_decimal(ms, 1)} ms"


QUOTE_CHARS = 80  # the summary quotes a text up to this many characters


def _quoted_text(text: str) -> str:
    """The text as the summary quotes it, escaped for HTML: whole up to ``QUOTE_CHARS``
    characters, else its beginning and «…» with its length; the empty text by name."""
    if not text:
        return _("el texto vacío")
    if len(text) > QUOTE_CHARS:
        return _("«{start}…» ({n} caracteres)").format(start=escape(text[:QUOTE_CHARS]), n=fmt_int(len(text)))
    return _("«{text}»").format(text=escape(text))


_ESCAPES = re.compile(r"<0x[0-9A-F]{2}>")


def search_key(text: str) -> str:
    """What the search compares: lower case, the whitespace a label shows as a sign (a space
    is «␣») written as that sign, and a byte shown as ``<0xE2>`` left out (a search for «a» does
    not find it)."""
    text = "".join(VISIBLE.get(c, c) for c in text)
    return _ESCAPES.sub("", text).lower()


def _labels(name: str, tokens: list[bytes]) -> list[str]:
    """Each token's label, lower-cased, computed once per vocabulary."""
    found = _LABELS.get(name)
    if found is None:
        found = _LABELS[name] = [search_key(token_label(t)) for t in tokens]
    return found


_SESSION: dict = {"key": None, "masks": None}


def act_vocab(action: str, state, position: int | None = None, query: str = ""):
    """What the page's form asks for in this mode, as a displayable view.

    state: the form's fields (a dict, or its JSON): ``vocab`` (one of ``vocabularies.NAMES``),
    ``kind``, ``constraint`` and ``text``. action: "masks" (the whole view), "panel" (the
    allowed tokens at ``position``, filtered by ``query``). The masks of the last state are kept,
    so a panel costs no new masks; a panel for another state (Python started again) computes
    them first. Errors come back as the Lab's error view, in the current language."""
    from .constraint import ConstraintError, compile_constraint, error_html, masker_error
    from .protocol import _Html
    if isinstance(state, str):
        state = json.loads(state)
    name, kind = state.get("vocab"), state.get("kind", "")
    try:
        if name not in NAMES:
            raise ConstraintError(_("el vocabulario {name} no existe: tiene que ser uno de estos: {names}").format(
                name=escape(str(name)), names=", ".join(NAMES)),
                _("elige el vocabulario en la lista «Vocabulario»"), "settings.vocab")
        key = json.dumps([name, kind, state.get("constraint", ""), state.get("text", "")])
        masks = _SESSION["masks"] if _SESSION["key"] == key else None
        if masks is None:
            grammar = compile_constraint(kind, state.get("constraint", ""))
            try:
                masks = VocabMasks(name, grammar, state.get("text", ""))
            except VocabError as error:
                raise ConstraintError(error.message, error.hint, error.kind) from None
            _SESSION["key"], _SESSION["masks"] = key, masks
        if action == "masks":
            return masks
        if action == "panel":
            index = int(position)
            if not 1 <= index <= len(masks.positions):
                raise ConstraintError(_("el texto no tiene posición {i}").format(i=index),
                                      _("elige una posición de la tabla"), "run")
            return _Html(masks.panel(index, query or ""))
        raise ConstraintError(_("acción desconocida {action}").format(action=escape(str(action))), "", "run")
    except ConstraintError as error:
        return _Html(error_html(error))
    except MaskerError as error:  # at run time: a work limit
        return _Html(error_html(masker_error(error, kind, "")))
