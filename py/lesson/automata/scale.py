"""«Del esquema al autómata» §4 at the scale of today's models: the same masks over OpenAI's
``o200k_base`` vocabulary (199,998 tokens, ``vocabularies.load``), in the reader's browser.

- ``real_trie``: the vocabulary's token trie, built with NumPy (``masker.trie.TrieArrays``), its
  size and what it took;
- ``date_mask_costs``: one mask of the date regex four ways (brute force, the trie walk in
  Python, the vectorized walk, a row of the precomputed index), checked equal and timed;
- ``answer_positions``: a JSON answer tokenized as the model would write it (canonical BPE,
  ``vocabularies.BpeEncoder``), and at each position how many of the vocabulary's tokens the
  mask allows, whether the position is forced (one token allowed) and whether the token written
  there crosses the JSON's structure (``":"`` holds a quote, a colon and a quote).

Times are measured, never asserted: they change with the machine and its load.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass

import numpy as np

from masker import compile_json_schema, compile_regex
from masker.trie import TokenTrie, brute_force_mask
from vocabularies import BpeEncoder, load

from html import escape

from ..i18n import _
from ..numbers import fmt_decimal, fmt_int
from ..views import styled, token_label
from .route import header_cells
from .trie import timed

SCALE_VOCAB = "o200k_base"
STRUCTURE = set(b'{}[]:,"')  # the bytes that JSON's structure is written with
FEW = 8  # a position lists its allowed tokens when there are at most this many


@dataclass
class RealTrie:
    """A real vocabulary and its trie: ``name``, ``n_tokens``, ``nodes`` (trie nodes, the root
    included), ``arrays_bytes`` (the trie's NumPy arrays), ``longest`` (bytes of the longest
    token), ``load_ms`` and ``build_ms`` (wall time to load the vocabulary and to build the
    trie with its Python lists (``TrieArrays.lists``), the first time this process did it: a later call finds both in memory and reports
    those times), ``trie`` (the ``TokenTrie``, shared with every grammar's matchers) and
    ``encoder`` (its ``BpeEncoder``)."""
    name: str
    n_tokens: int
    nodes: int
    arrays_bytes: int
    longest: int
    load_ms: float
    build_ms: float
    trie: TokenTrie
    encoder: BpeEncoder

    @property
    def tokens(self) -> list[bytes]:
        return self.trie.vocab


_FIRST: dict[str, RealTrie] = {}


def real_trie(name: str = SCALE_VOCAB) -> RealTrie:
    """Load ``name`` and build its trie, once per process: a second call returns the first
    one's ``RealTrie``, with its times. Raises what ``vocabularies.load`` raises."""
    found = _FIRST.get(name)
    if found is None:
        start = time.perf_counter()
        vocab = load(name)
        loaded = time.perf_counter()
        trie = TokenTrie.shared(vocab.tokens)
        trie.arrays.lists()  # the Python lists of the walks' small levels: part of building it
        built = time.perf_counter()
        found = _FIRST[name] = RealTrie(name, len(vocab.tokens), trie.n_nodes, trie.arrays.nbytes,
                                        trie.longest, (loaded - start) * 1e3,
                                        (built - loaded) * 1e3, trie, BpeEncoder(vocab))
    return found


def python_walk(dfa, state: int, lists) -> list[int]:
    """The depth-first trie walk of ``masker.dfa.Dfa.python_walk``, reading the trie's arrays
    as Python lists (``lists``: first, count, edge, token): one table look-up per edge, a dead
    byte prunes its subtree. Token ids, each once (a vocabulary without repeated tokens)."""
    first, count, edge, token = lists
    table, byte_class = dfa.table, dfa.byte_class
    allowed, stack = [], [(0, state)]
    while stack:
        node, st = stack.pop()
        row = table[st]
        start = first[node]
        for child in range(start, start + count[node]):
            nxt = row[byte_class[edge[child]]]
            if nxt < 0:
                continue
            if token[child] >= 0:
                allowed.append(token[child])
            if count[child]:
                stack.append((child, nxt))
    return allowed


@dataclass
class MaskCosts:
    """One mask of a DFA grammar on a real vocabulary, four ways. ``allowed``: tokens allowed;
    ``same``: the four masks are equal; ``us``: microseconds per mask (``brute_force``,
    ``python_walk``, ``numpy_walk``, ``lookup``); ``index_states`` and ``index_bytes``: the
    precomputed index as a table of bits (a bit per token and state; the cell keeps it as bool,
    8 times that); ``index_ms``: what building it took;
    ``level_edges``: the trie edges both walks step, per level of the trie (the Python walk one
    by one, the vectorized walk a level per round of NumPy calls)."""
    allowed: int
    same: bool
    us: dict
    index_states: int
    index_bytes: int
    index_ms: float
    level_edges: list

    @property
    def edges(self) -> int:
        return sum(self.level_edges)


def date_mask_costs(real: RealTrie, pattern: str, prefix: str,
                    min_time: float = 0.02) -> MaskCosts:
    """One state's mask four ways (the lesson runs it for the date regex and for a quoted
    string): the mask after ``prefix`` in ``compile_regex(pattern)`` (a DFA), by brute force, by the
    Python walk, by the vectorized walk (``TrieArrays.walk_dfa``) and by a row of the index of
    every state's mask; each timed over as many calls as fit in ``min_time`` seconds (at least
    one). Raises TypeError if the pattern's automaton is not a plain DFA."""
    dfa = compile_regex(pattern).automaton
    if not hasattr(dfa, "np_table"):
        raise TypeError(f"{pattern!r} compiles to a {type(dfa).__name__}, not a plain DFA")
    state = dfa.start()
    for b in prefix.encode():
        state = dfa.step(state, b)
    arrays, tokens, n = real.trie.arrays, real.tokens, real.n_tokens
    lists = (arrays.first.tolist(), arrays.count.tolist(), arrays.edge.tolist(),
             arrays.token.tolist())

    def as_mask(ids):
        mask = np.zeros(n, dtype=bool)
        mask[ids] = True
        return mask

    start = time.perf_counter()
    index = np.stack([as_mask(arrays.walk_dfa(dfa.np_table, dfa.byte_class, s)[0])
                      for s in range(dfa.n_states)])
    index_ms = (time.perf_counter() - start) * 1e3
    level_edges: list[int] = []
    arrays.walk_dfa(dfa.np_table, dfa.byte_class, state, stats=level_edges)
    ways = {"brute_force": lambda: brute_force_mask(dfa, state, tokens),
            "python_walk": lambda: python_walk(dfa, state, lists),
            "numpy_walk": lambda: arrays.walk_dfa(dfa.np_table, dfa.byte_class, state)[0],
            "lookup": lambda: index[state]}
    results, us = {}, {}
    for name, way in ways.items():  # the first call's result is the mask checked below
        results[name], us[name] = timed(way, min_time)
    masks = [results["brute_force"], as_mask(results["python_walk"]),
             as_mask(results["numpy_walk"]), results["lookup"]]
    return MaskCosts(int(masks[0].sum()), all(np.array_equal(masks[0], m) for m in masks[1:]),
                     us, dfa.n_states, dfa.n_states * math.ceil(n / 8), index_ms, level_edges)




def _us(us: float) -> str:
    """Microseconds with one decimal below 1000, else a grouped whole number («23 321»)."""
    return fmt_decimal(us, 1) if us < 1000 else fmt_int(round(us))


class CostsTable:
    """``costs`` (a name → ``MaskCosts`` mapping, one per state) as a table of microseconds per
    mask: a row per way, a column per state. Test hook: ``[data-testid=scale-costs]``, each
    ``<td>`` with ``data-us`` (Python ``repr`` of the float)."""

    def __init__(self, costs: dict):
        self.costs = dict(costs)

    def _repr_html_(self) -> str:
        ways = {"brute_force": _("fuerza bruta"), "python_walk": _("recorrido en Python"),
                "numpy_walk": _("recorrido por niveles"), "lookup": _("fila del índice")}
        rows = "".join(
            f"<tr><th scope='row'>{label}</th>"
            + "".join(f"<td class='num' data-us='{c.us[way]!r}'>{_us(c.us[way])} µs</td>"
                      for c in self.costs.values()) + "</tr>"
            for way, label in ways.items())
        ways_head = _("manera")
        head = f"<th scope='col'>{ways_head}</th>" + "".join(
            f"<th scope='col'>{escape(name)}</th>" for name in self.costs)
        caption = _("Microsegundos por máscara: cada estado, calculado de las cuatro maneras")
        return styled(
            f'<div class="table-scroll" tabindex="0" role="region" aria-label="{escape(caption)}" '
            f'data-testid="scale-costs"><table class="compact-table scale-positions">'
            f"<caption>{caption}</caption><thead><tr>{head}</tr></thead><tbody>{rows}</tbody>"
            "</table></div>")

@dataclass
class Position:
    """One position of a tokenized answer: ``text`` (the token written there, as bytes),
    ``label`` (printable), ``allowed`` (tokens the mask allows there), ``forced`` (only one),
    ``crosses`` (a token of more than one byte holding a byte of JSON's structure, ``{}[]:,"``),
    ``first_bytes`` (how many different first bytes the allowed tokens have: 1 when the next
    byte is forced and the tokens differ only in how many bytes they take), ``ms`` (what the
    mask took, this run; near 0 when the state's mask was in the cache), ``few`` (the allowed
    tokens' labels, shortest first, when there are at most ``FEW``; else empty)."""
    text: bytes
    label: str
    allowed: int
    forced: bool
    crosses: bool
    first_bytes: int
    ms: float
    few: list


class AnswerPositions(list):
    """The ``Position`` of each token of an answer, in order (a list), shown as a table: one row
    per token, the token written there and the mask just before it; wide, so it scrolls sideways
    in its own region instead of wrapping on a phone. Test hook:
    ``[data-testid=scale-positions]``, one ``<tr>`` per position with ``data-allowed``,
    ``data-forced`` and ``data-crosses`` ("1"/"0")."""

    def _repr_html_(self) -> str:
        yes, no = _("sí"), _("no")
        rows = "".join(
            f'<tr data-allowed="{p.allowed}" data-forced="{int(p.forced)}" data-crosses="{int(p.crosses)}">'
            f"<td><code>{escape(p.label)}</code></td><td class='num'>{fmt_int(p.allowed)}</td>"
            f"<td class='num'>{p.first_bytes}</td><td>{yes if p.forced else no}</td>"
            f"<td>{yes if p.crosses else no}</td><td class='num'>{fmt_decimal(p.ms, 2)} ms</td>"
            f"<td class='few'>{' '.join(f'<code>{escape(t)}</code>' for t in p.few)}</td></tr>"
            for p in self)
        head = header_cells(_("escrito|permitidos|primeros bytes|forzada|cruza|tiempo de la máscara|"
                              "cuáles (si son {few} o menos)").format(few=FEW))
        caption = _("Cada fila: el token que se escribe y la máscara de justo antes")
        return styled(
            f'<div class="table-scroll" tabindex="0" role="region" aria-label="{escape(caption)}" '
            f'data-testid="scale-positions"><table class="compact-table scale-positions">'
            f"<caption>{caption}</caption><thead><tr>{head}</tr></thead><tbody>{rows}</tbody>"
            "</table></div>")


def answer_positions(real: RealTrie, schema: dict, answer) -> AnswerPositions:
    """``answer`` written compactly (``json.dumps``, no spaces), tokenized with the canonical
    BPE of ``real``'s vocabulary, and walked through the mask of ``compile_json_schema(schema)``:
    one ``Position`` per token, in an ``AnswerPositions`` (a list that renders as a table).
    Raises ValueError when the mask refuses a token of the answer (the answer does not fit the
    schema, or its keys are out of the schema's order)."""
    text = json.dumps(answer, ensure_ascii=False, separators=(",", ":"))
    matcher = compile_json_schema(schema).matcher(real.tokens)
    out = AnswerPositions()
    for token_id in real.encoder.encode(text):
        start = time.perf_counter()
        mask = matcher.mask()
        ms = (time.perf_counter() - start) * 1e3
        piece = real.tokens[token_id]
        if not mask[token_id]:
            raise ValueError(f"the mask refuses {piece!r} after {matcher.prefix_bytes!r}")
        allowed = int(mask.sum())
        ids = np.flatnonzero(mask).tolist()
        firsts = len({real.tokens[i][0] for i in ids})
        few = ([token_label(t) for t in sorted((real.tokens[i] for i in ids), key=len)]
               if allowed <= FEW else [])
        out.append(Position(piece, token_label(piece), allowed, allowed == 1,
                            bool(set(piece) & STRUCTURE) and len(piece) > 1, firsts, ms, few))
        matcher.consume(token_id)
    return out
