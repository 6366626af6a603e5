"""A mask from a hand-written state machine, checked against the masker's.

The lesson «Niveles de garantía» writes, in a cell, the state machine of a small closed-enum JSON
object by hand (a ``step(state, byte) -> state | None`` function, ``None`` for a dead end), and
gets the mask by running every token's bytes through it (:func:`hand_mask`): a token is allowed
when none of its bytes hits a dead end. :func:`compare_masks` walks sampled answers and compares
that mask with ``compile_json_schema``'s at every position (:class:`FsmAgreement`).
:func:`enum_object_machine` is the library's own machine of the same kind, for the build's
figures and the tests; :func:`envelope_bound` is the back-of-envelope count of its states.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from html import escape

import numpy as np

from ..i18n import _, ngettext
from ..numbers import fmt_int
from ..views import _scroll, styled, token_label


def run_bytes(step, state, data: bytes) -> list:
    """The states after each byte of ``data`` from ``state`` (a list as long as the bytes read);
    it stops after the first dead end, whose entry is None."""
    states = []
    for b in data:
        state = step(state, b)
        states.append(state)
        if state is None:
            break
    return states


def hand_mask(step, state, vocab: list[bytes]) -> np.ndarray:
    """bool[len(vocab)]: True where every byte of the token keeps ``step`` alive from ``state``
    (an empty token is never allowed). One machine run per token (no trie): the slow, obvious
    way. ``step(state, byte) -> state | None`` must not raise; ``vocab``: bytes per token id."""
    mask = np.zeros(len(vocab), dtype=bool)
    for t, piece in enumerate(vocab):
        s = state
        for b in piece:
            s = step(s, b)
            if s is None:
                break
        else:
            mask[t] = bool(piece)
    return mask


@dataclass
class FsmAgreement:
    """Result of :func:`compare_masks`: ``positions`` compared, ``mismatches`` (positions where the
    two masks differ), ``differing_tokens`` (token entries that differ, summed over positions),
    ``states`` (distinct hand-machine states met), ``answers`` walked."""
    positions: int
    mismatches: int
    differing_tokens: int
    states: int
    answers: int

    def _repr_html_(self) -> str:
        verdict = (_("las dos máscaras coinciden en todas") if self.mismatches == 0 else
                   _("difieren en {n}").format(n=fmt_int(self.mismatches)))
        text = _("{answers} respuestas, {positions} posiciones comparadas: {verdict} ({differing} "
                 "entradas distintas; en estas respuestas, la máquina pasó por {states} estados distintos).").format(
            answers=fmt_int(self.answers), positions=fmt_int(self.positions), verdict=verdict,
            differing=fmt_int(self.differing_tokens), states=fmt_int(self.states))
        return styled(
            f'<p class="fsm-agreement" data-testid="fsm-agreement" data-positions="{self.positions}" '
            f'data-mismatches="{self.mismatches}">{text}</p>')


def compare_masks(grammar, step, start, answers, vocab: list[bytes], mask_fn=None) -> FsmAgreement:
    """Walk each answer (a list of token ids) with ``grammar``'s matcher and with the hand machine
    (``step``, ``start``), comparing ``matcher.mask()`` with the hand mask before each token:
    ``mask_fn(state, vocab) -> bool[len(vocab)]`` (default: :func:`hand_mask` with ``step``).
    Masks of the hand machine are cached per state (the mask depends on the state only).
    Raises ValueError naming the answer and position where a token is not allowed by the
    matcher or where the hand machine dies."""
    cache: dict = {}
    positions = mismatches = differing = 0
    for a, tokens in enumerate(answers):
        matcher, state = grammar.matcher(vocab), start
        for j, t in enumerate(tokens):
            hand = cache.get(state)
            if hand is None:
                hand = cache[state] = (mask_fn(state, vocab) if mask_fn is not None
                                       else hand_mask(step, state, vocab))
            compiled = matcher.mask()
            diff = int(np.count_nonzero(hand != compiled))
            positions += 1
            mismatches += diff > 0
            differing += diff
            if not compiled[t]:
                raise ValueError(f"answer {a}, position {j}: token {t} is not allowed by the grammar")
            matcher.consume(t)
            states = run_bytes(step, state, vocab[t])
            if not states or states[-1] is None:
                raise ValueError(f"answer {a}, position {j}: the hand machine dies on token {t} "
                                 f"{vocab[t]!r}")
            state = states[-1]
    return FsmAgreement(positions, mismatches, differing, len(cache), len(answers))


class ByteTrace:
    """A token's bytes run through a machine: one row per byte with the state it leads to.
    ``caption`` replaces the default «El token «…», byte a byte» (for bytes that are not one token
    of the vocabulary); it is text, escaped here."""

    def __init__(self, step, state, data: bytes, describe=repr, caption: str | None = None):
        self.data, self.describe, self.caption = bytes(data), describe, caption
        self.start = state
        self.states = run_bytes(step, state, self.data)

    def _repr_html_(self) -> str:
        rows = [f"<tr><td></td><td><code>{escape(self.describe(self.start))}</code></td></tr>"]
        for b, s in zip(self.data, self.states):
            after = _("rechazado: ningún texto sigue") if s is None else self.describe(s)
            rows.append(f'<tr><td><span class="tok">{escape(token_label(bytes([b])))}</span></td>'
                        f"<td><code>{escape(after)}</code></td></tr>")
        caption = (escape(self.caption) if self.caption is not None
                   else _("El token «{token}», byte a byte").format(token=escape(token_label(self.data))))
        return styled(_scroll(_("bytes y estados")) + '<table class="levels byte-trace">'
                      f"<caption>{caption}</caption>"
                      # one message: «estado» alone is another page's «status»
                      + _("<thead><tr><th scope='col'>byte</th><th scope='col'>estado</th></tr></thead>")
                      + "<tbody>" + "".join(rows) + "</tbody></table></div>")


def enum_object_machine(fields: dict[str, list[str]]):
    """(start, step) of a machine for the compact JSON objects with exactly ``fields``' keys, in
    order, each value one of its list: ``{"k1":"v",...}``. States are tuples
    (phase, field index, bytes written in the phase), phases "{", "key", ":", "value", ",}",
    "end". Raises ValueError for no fields or an empty list of values."""
    keys = list(fields)
    if not keys:
        raise ValueError("fields must name at least one key")
    quoted_keys = [json.dumps(k, ensure_ascii=False).encode() for k in keys]
    quoted_values = []
    for k in keys:
        if not fields[k]:
            raise ValueError(f"field {k!r} has no values")
        quoted_values.append([json.dumps(v, ensure_ascii=False).encode() for v in fields[k]])
    last = len(keys) - 1

    def step(state, byte: int):
        phase, i, written = state
        if phase == "{":
            return ("key", 0, b"") if byte == ord("{") else None
        if phase in ("key", "value"):
            written += bytes([byte])
            options = [quoted_keys[i]] if phase == "key" else quoted_values[i]
            if written in options:
                return (":", i, b"") if phase == "key" else (",}", i, b"")
            return (phase, i, written) if any(o.startswith(written) for o in options) else None
        if phase == ":":
            return ("value", i, b"") if byte == ord(":") else None
        if phase == ",}":
            if i < last:
                return ("key", i + 1, b"") if byte == ord(",") else None
            return ("end", i, b"") if byte == ord("}") else None
        return None  # "end": nothing may follow

    return ("{", 0, b""), step


def _fixed_bytes(fields: dict[str, list[str]]) -> int:
    """Bytes of the fixed text of a compact object with ``fields``' keys in order: the braces,
    each quoted key and its colon, and the commas between the fields."""
    return 2 + sum(len(json.dumps(k, ensure_ascii=False).encode()) + 1 for k in fields) + len(fields) - 1


def envelope_bound(fields: dict[str, list[str]]) -> int:
    """Back-of-envelope bound on the states of a machine for ``fields`` (compact JSON, fixed key
    order): one state per byte of the fixed text (braces, quoted keys, colons, commas) plus one
    per byte of every quoted value (a trie that shares nothing), plus the start state. Raises
    ValueError for no fields (as :func:`enum_object_machine`)."""
    if not fields:
        raise ValueError("fields must name at least one key")
    fixed = _fixed_bytes(fields)
    values = sum(len(json.dumps(v, ensure_ascii=False).encode()) for vs in fields.values() for v in vs)
    return 1 + fixed + values


def reachable_states(start, step) -> int:
    """States a byte machine ``(start, step)`` can reach from ``start`` (breadth-first over the
    256 bytes; ``step`` returns None for a dead byte)."""
    seen, frontier = {start}, [start]
    while frontier:
        nxt = []
        for state in frontier:
            for b in range(256):
                s = step(state, b)
                if s is not None and s not in seen:
                    seen.add(s)
                    nxt.append(s)
        frontier = nxt
    return len(seen)


def prefix_shared_bound(fields: dict[str, list[str]]) -> int:
    """:func:`envelope_bound` with the values of each field sharing their prefixes (a trie per
    field: one state per distinct non-empty prefix of its quoted values, so ``"pre`` of
    ``"presente"`` and ``"pretérito"`` counts once). Endings are not shared: each complete value
    keeps its own state. The gap from here to the minimal DFA is what minimisation merges beyond
    prefixes (states with the same future, such as the ends of the values). Raises ValueError for
    no fields."""
    if not fields:
        raise ValueError("fields must name at least one key")
    fixed = _fixed_bytes(fields)
    prefixes = 0
    for values in fields.values():
        quoted = [json.dumps(v, ensure_ascii=False).encode() for v in values]
        prefixes += len({q[:i] for q in quoted for i in range(1, len(q) + 1)})
    return 1 + fixed + prefixes
