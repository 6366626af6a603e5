"""The lesson «Del esquema al autómata», section 7: the reader's hand-written DFA, checked.

The reader writes a DFA as §1 does, a dict ``{state: {byte: next state}}`` starting at state 0,
plus a set of accepting states. :func:`check_dfa` compares it with the masker's DFA of a pattern
(``compile_regex``): it walks both machines together, breadth first over the byte prefixes (the
pairs of states that the same bytes reach), and at every pair compares the two masks over the
whole vocabulary and the two end verdicts. The first pair where they differ is the shortest prefix
(smallest bytes first among equals) where the reader's loop would write something else than the
masker's; :class:`DfaCheck` says which tokens differ there, and where along one of them the two
machines part (the byte and both states), as a hint. :func:`check_phone_dfa` is the page's
exercise, with the phone pattern.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from html import escape

import numpy as np

from masker import compile_regex
from masker.trie import TokenTrie, trie_mask

from ..i18n import _, ngettext
from ..numbers import fmt_int
from ..views import styled, token_label
from .route import bytes_label

PHONE = r"[6789]\d{2} \d{3} \d{3}"


class _MissingState(Exception):
    """The reader's DFA moves to a state that is not a key of its dict."""

    def __init__(self, state, target, byte):
        super().__init__(state, target, byte)
        self.state, self.target, self.byte = state, target, byte


def _byte_name(b: int) -> str:
    """A byte for the report: «␣», «6», or 0xC3 for a byte that is not printable ASCII."""
    return _("«{text}»").format(text=token_label(bytes([b]))) if 0x20 <= b <= 0x7E else f"0x{b:02X}"


def _shape_fault(dfa, accepting) -> str | None:
    """What is wrong with the dict's shape (a sentence for the reader), or None when it has one."""
    if not isinstance(dfa, dict):
        return _("el DFA tiene que ser un dict {{estado: {{byte: estado siguiente}}}}, y es un {kind}").format(
            kind=type(dfa).__name__)
    if 0 not in dfa:
        return _("falta el estado inicial: el DFA empieza en el estado 0, y 0 no es una clave del dict")
    try:
        accepting = set(accepting)
    except TypeError:
        return _("los estados de aceptación tienen que ser un conjunto de estados, como {{11}}").format()
    for state, moves in dfa.items():
        if not isinstance(moves, dict):
            return _("el estado {state} tiene que llevar un dict {{byte: estado siguiente}} (vacío si no sale "
                     "ninguna arista)").format(state=repr(state))
        for key in moves:
            if isinstance(key, (str, bytes)) and len(key) == 1:
                return _("el estado {state} usa la clave {key}: las claves son bytes, enteros de 0 a 255 "
                         "(ord({key}) si es un texto, o un bucle sobre b\"…\", que da enteros)").format(
                    state=repr(state), key=repr(key))
            if not isinstance(key, (int, np.integer)) or isinstance(key, bool) or not 0 <= key <= 255:
                return _("el estado {state} usa la clave {key}: las claves son bytes, enteros de 0 a 255").format(
                    state=repr(state), key=repr(key))
    return None


class _Reader:
    """The reader's dict as an automaton (``step``, ``is_accepting``); a move to a state that is not
    in the dict raises :class:`_MissingState`."""

    def __init__(self, dfa: dict, accepting):
        self.dfa, self.accepting = dfa, set(accepting)

    def step(self, state, byte: int):
        target = self.dfa[state].get(byte)
        if target is not None and target not in self.dfa:
            raise _MissingState(state, target, byte)
        return target

    def is_accepting(self, state) -> bool:
        return state in self.accepting


def _walk(automaton, state, piece: bytes):
    """The states that ``piece`` walks from ``state``; stops at the first dead byte (None last)."""
    path = [state]
    for b in piece:
        state = automaton.step(state, b)
        path.append(state)
        if state is None:
            break
    return path


@dataclass
class DfaCheck:
    """The verdict of :func:`check_dfa`. ``ok``: the two machines give the same mask and the same
    end verdict at every prefix; ``pairs``: how many (masker state, reader state) pairs were
    compared; ``problem``: ``None``, ``"forma"`` (the dict's shape), ``"estado"`` (a move to a state
    missing from the dict), ``"máscara"`` or ``"final"`` (the end verdict); ``prefix``: the bytes
    after which they first differ; ``masker_only`` / ``reader_only``: token ids allowed there by one
    side only; ``hint``: a sentence that says where the machines part. Renders as
    ``[data-testid=dfa-check]`` with ``data-ok``, ``data-problem`` and ``data-prefix`` (the prefix
    as a token label)."""
    ok: bool
    pairs: int
    problem: str | None = None
    prefix: bytes = b""
    masker_only: list[int] = field(default_factory=list)
    reader_only: list[int] = field(default_factory=list)
    hint: str = ""
    vocab: list[bytes] = field(default_factory=list, repr=False)

    def _tokens(self, ids: list[int], limit: int = 6) -> str:
        shown = ", ".join(_("«{text}»").format(text=token_label(self.vocab[t])) for t in ids[:limit])
        return shown + (_(" y {n} más").format(n=fmt_int(len(ids) - limit)) if len(ids) > limit else "")

    def lines(self) -> list[str]:
        """The report as sentences (what ``_repr_html_`` shows, and ``str``)."""
        if self.ok:
            return [_("Correcto: tu DFA y el de compile_regex dan la misma máscara y el mismo final en los "
                      "{pairs} pares de estados a los que llegan los mismos bytes, y por tanto tras cualquier "
                      "prefijo.").format(pairs=fmt_int(self.pairs))]
        if self.problem == "forma":
            return [_("Todavía no se puede comparar: {hint}.").format(hint=self.hint)]
        after = (_("Tras «{prefix}»").format(prefix=token_label(self.prefix)) if self.prefix
                 else _("Al principio (prefijo vacío)"))
        out = []
        if self.problem == "máscara":
            out.append(_("{where} las máscaras difieren.").format(where=after))
            for ids, sentence in ((self.masker_only, ngettext(
                                       "El enmascarador permite {n} token que tu DFA no: {tokens}.",
                                       "El enmascarador permite {n} tokens que tu DFA no: {tokens}.",
                                       len(self.masker_only))),
                                  (self.reader_only, ngettext(
                                       "Tu DFA permite {n} token que el enmascarador no: {tokens}.",
                                       "Tu DFA permite {n} tokens que el enmascarador no: {tokens}.",
                                       len(self.reader_only)))):
                if ids:
                    out.append(sentence.format(n=fmt_int(len(ids)), tokens=self._tokens(ids)))
        elif self.problem == "final":
            out.append(_("{where} las máscaras coinciden, pero no el final.").format(where=after))
        else:
            out.append(_("{where} tu DFA se sale de su propia tabla.").format(where=after))
        out.append(_("Pista: {hint}.").format(hint=self.hint))
        return out

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def _repr_html_(self) -> str:
        body = "".join(f"<p>{escape(line)}</p>" for line in self.lines())
        return styled(
            f'<div class="dfa-check {"ok" if self.ok else "wrong"}" data-testid="dfa-check" '
            f'data-ok="{str(self.ok).lower()}" data-problem="{escape(self.problem or "")}" '
            f'data-prefix="{escape(token_label(self.prefix))}">{body}</div>')


def _part(masker, reader, ms, rs, piece: bytes, prefix: bytes) -> str:
    """Where one differing token makes the two machines part: the byte, the text before it and
    what each side does with it."""
    mp, rp = _walk(masker, ms, piece), _walk(reader, rs, piece)
    k = next(i for i in range(1, len(piece) + 1)
             if (i >= len(mp) or mp[i] is None) != (i >= len(rp) or rp[i] is None))
    byte, before = piece[k - 1], prefix + piece[:k - 1]
    at = _("tras «{prefix}»").format(prefix=token_label(before)) if before else _("al principio")
    live = [b for b in range(256) if masker.step(mp[k - 1], b) is not None]
    wants = (_("el patrón admite ahí {bytes}").format(bytes=bytes_label(live)[0]) if live
             else _("el patrón ya no admite ningún byte más"))
    if k < len(rp) and rp[k] is not None:
        return _("{at}, tu DFA (en su estado {state}) acepta el byte {byte} y pasa al estado {next}, pero "
                 "{wants}").format(at=at, state=repr(rp[k - 1]), byte=_byte_name(byte), next=repr(rp[k]),
                                   wants=wants)
    return _("{at}, {wants}, y tu DFA, en su estado {state}, no tiene arista con el byte {byte}").format(
        at=at, wants=wants, state=repr(rp[k - 1]), byte=_byte_name(byte))


def _reader_mask(reader, state, vocab) -> np.ndarray:
    """The reader's allowed set at ``state``: every token whose bytes keep its DFA alive (§1)."""
    return np.array([bool(p) and _walk(reader, state, p)[-1] is not None for p in vocab])


def _compare(masker, reader, ms, rs, prefix, vocab, trie, pairs) -> DfaCheck | None:
    """The verdict at one pair of states when the machines differ there; None when they agree."""
    mine = trie_mask(masker, ms, trie)
    theirs = _reader_mask(reader, rs, vocab)
    if not np.array_equal(mine, theirs):
        only_m = np.flatnonzero(mine & ~theirs).tolist()
        only_r = np.flatnonzero(theirs & ~mine).tolist()
        first = min(only_m + only_r, key=lambda t: (len(vocab[t]), t))
        hint = _part(masker, reader, ms, rs, vocab[first], prefix)
        return DfaCheck(False, pairs, "máscara", prefix, only_m, only_r, hint, vocab)
    if masker.is_accepting(ms) != reader.is_accepting(rs):
        which = (_("el patrón da el texto por completo y tu DFA no: añade el estado {state} a la "
                   "aceptación") if masker.is_accepting(ms) else
                 _("tu DFA da el texto por completo en su estado {state}, y el patrón pide más bytes: "
                   "quítalo de la aceptación")).format(state=repr(rs))
        return DfaCheck(False, pairs, "final", prefix, hint=which, vocab=vocab)
    return None


def check_dfa(dfa: dict, accepting, pattern: str, vocab: list[bytes]) -> DfaCheck:
    """Compare the reader's DFA (``dfa``: ``{state: {byte: next state}}`` from state 0;
    ``accepting``: a set of states) with ``compile_regex(pattern)``'s, mask against mask over
    ``vocab`` (a list of token bytes) at every pair of states that the same byte prefix reaches,
    breadth first. Returns a :class:`DfaCheck` (never raises for a malformed dict: its shape is
    reported as ``problem="forma"``). Raises what ``compile_regex`` raises for a bad pattern."""
    fault = _shape_fault(dfa, accepting)
    if fault:
        return DfaCheck(False, 0, "forma", hint=fault, vocab=vocab)
    masker, reader, trie = compile_regex(pattern).automaton, _Reader(dfa, accepting), TokenTrie(vocab)
    seen, todo = {(0, 0)}, deque([(0, 0, b"")])
    while todo:
        ms, rs, prefix = todo.popleft()
        try:
            verdict = _compare(masker, reader, ms, rs, prefix, vocab, trie, len(seen))
            if verdict:
                return verdict
            for b in range(256):
                m2, r2 = masker.step(ms, b), reader.step(rs, b)
                if m2 is not None and r2 is not None and (m2, r2) not in seen:
                    seen.add((m2, r2))
                    todo.append((m2, r2, prefix + bytes([b])))
        except _MissingState as e:
            return DfaCheck(False, len(seen), "estado", prefix, hint=_(
                "desde el estado {state}, el byte {byte} lleva al estado {target}, que no es una clave del "
                "dict: escríbelo (con {{}} si no sale ninguna arista)").format(
                    state=repr(e.state), byte=_byte_name(e.byte), target=repr(e.target)), vocab=vocab)
    return DfaCheck(True, len(seen), vocab=vocab)


def check_phone_dfa(dfa: dict, accepting, vocab: list[bytes]) -> DfaCheck:
    """The page's exercise: :func:`check_dfa` against ``compile_regex(PHONE)`` over ``vocab``."""
    return check_dfa(dfa, accepting, PHONE, vocab)
