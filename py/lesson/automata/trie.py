"""The lesson «Del esquema al autómata», section 4: the token trie walk and the per-state index.

- :func:`trie_walk` / :class:`TrieWalk`: one mask by the token-trie walk, traced, with its step
  count against brute force, and its tokens by length drawn as SVG (:func:`pruning_svg`);
- :class:`MaskIndex`: the whole table state -> allowed tokens (the index of Outlines-style engines);
- :func:`mask_timings`: brute force, trie walk and cached look-up, in microseconds.
"""

from __future__ import annotations

import math
import time
from collections import deque
from dataclasses import dataclass, field
from html import escape

import numpy as np

from masker.trie import TokenTrie, brute_force_mask, trie_mask

from ..i18n import _, ngettext
from ..numbers import fmt_int
from ..views import styled, token_html, token_label
from .route import byte_text, header_cells


# ---------------------------------------------------------------- the token trie walk

@dataclass
class Branch:
    """One subtree under the trie's root: its first byte, whether the automaton survives it, the
    tokens in the subtree, the steps the walk spent in it and the tokens it allowed."""
    byte: int
    alive: bool
    tokens: int
    steps: int
    allowed: int


@dataclass
class TrieWalk:
    """One mask by the trie walk, traced. ``allowed``: ids (ascending); ``steps``: automaton steps
    (one per trie edge tried); ``brute_steps``: the steps of running every token on its own until its
    first dead byte; ``vocab_bytes``: the bytes of the whole vocabulary (the brute-force bound,
    |V| x mean token length); ``pruned_tokens``: tokens discarded with a whole subtree, at the dead
    byte that starts it (every token not allowed), split as ``pruned_root`` (in the root's dead
    branches) + ``pruned_inside`` (below a dead byte inside a live branch), and again as
    ``refused_visited`` (tokens at the node of a dead edge: the walk spent one step on their last
    byte) + ``unvisited`` (tokens strictly below a dead edge: no step ever reaches them);
    ``dead_steps``: the steps that end on a node where the automaton dies (the first dead byte of a
    subtree: each prunes it); the other ``steps - dead_steps`` end on live nodes;
    ``branches``: the root's subtrees. Renders as a table (``[data-testid=trie-walk]``, with
    ``data-pruned``, ``data-pruned-root``, ``data-pruned-inside`` and ``data-unvisited``)."""
    allowed: list[int]
    steps: int
    brute_steps: int
    vocab_bytes: int
    pruned_tokens: int
    branches: list[Branch] = field(default_factory=list)
    vocab: list[bytes] = field(default_factory=list, repr=False)
    limit: int = 12
    refused_visited: int = 0
    unvisited: int = 0
    refused_ids: list[int] = field(default_factory=list, repr=False)
    dead_steps: int = 0

    def unvisited_from(self) -> int | None:
        """The shortest token length from which on no token is visited (every one of that length
        or longer hangs below a dead node); None when the longest tokens are still visited."""
        rows = self.by_length()
        start = None
        for n in sorted(rows, reverse=True):
            if rows[n][0] or rows[n][1]:
                break
            start = n
        return start

    def _caption(self) -> str:
        start = self.unvisited_from()
        tail = (" " + _("Desde {n} bytes, el recorrido no visita ningún token: todos cuelgan de un nodo "
                        "muerto.").format(n=start) if start else "")
        return _("Los tokens del vocabulario por longitud, y lo que hace con ellos el recorrido: un token "
                 "cuesta un paso solo si el recorrido llega a su nodo.") + tail

    def by_length(self) -> dict[int, tuple[int, int, int]]:
        """For each token length in bytes: (allowed, refused at their own node, never visited)."""
        allowed, refused = set(self.allowed), set(self.refused_ids)
        out: dict[int, list[int]] = {}
        for t, piece in enumerate(self.vocab):
            if piece:
                row = out.setdefault(len(piece), [0, 0, 0])
                row[0 if t in allowed else 1 if t in refused else 2] += 1
        return {n: tuple(out[n]) for n in sorted(out)}

    @property
    def pruned_root(self) -> int:
        """Tokens in the root's dead branches (each branch costs one step, its first byte)."""
        return sum(b.tokens for b in self.branches if not b.alive)

    @property
    def pruned_inside(self) -> int:
        """Tokens discarded below a dead byte inside a live branch of the root."""
        return self.pruned_tokens - self.pruned_root

    def _repr_html_(self) -> str:
        shown = sorted(self.branches, key=lambda b: (not b.alive, -b.tokens))[:self.limit]
        alive, dead_word = _("vivo"), _("muerto: poda")
        rows = "".join(
            f"<tr class='{'alive' if b.alive else 'dead'}'><td><code>{escape(byte_text(b.byte))}</code></td>"
            f"<td>{alive if b.alive else dead_word}</td><td class='num'>{fmt_int(b.tokens)}</td>"
            f"<td class='num'>{fmt_int(b.steps)}</td><td class='num'>{fmt_int(b.allowed)}</td></tr>" for b in shown)
        dead = [b for b in self.branches if not b.alive]
        branches_label = _("Ramas del trie")
        branches_caption = _("Ramas de la raíz (las vivas primero)")
        head = header_cells(_("primer byte|estado|tokens|pasos|permitidos"))
        return styled(
            f'<div class="trie-walk" data-testid="trie-walk" data-steps="{self.steps}" '
            f'data-brute-steps="{self.brute_steps}" data-allowed="{len(self.allowed)}" '
            f'data-pruned="{self.pruned_tokens}" data-pruned-root="{self.pruned_root}" '
            f'data-pruned-inside="{self.pruned_inside}" data-unvisited="{self.unvisited}" '
            f'data-dead-steps="{self.dead_steps}">'
            '<p>' + _(
                "Recorrido del trie: <strong>{steps}</strong> pasos del autómata, {dead_steps} de ellos a un "
                "nodo en el que el autómata muere; fuerza bruta: {brute} pasos (cota |V| × longitud: "
                "{vocab_bytes} bytes). {allowed} tokens permitidos y {pruned} descartados: {pruned_root} en "
                "{dead} de las {branches} ramas de la raíz, que mueren en su primer byte (un paso cada una) y "
                "{pruned_inside} dentro de las ramas vivas. {refused} de los descartados se tocan una vez: el "
                "recorrido lee el byte que lleva a su nodo y el autómata muere ahí; los otros {unvisited} "
                "cuelgan por debajo de un nodo muerto y el recorrido no llega a visitarlos.").format(
                steps=fmt_int(self.steps), dead_steps=fmt_int(self.dead_steps),
                brute=fmt_int(self.brute_steps), vocab_bytes=fmt_int(self.vocab_bytes),
                allowed=fmt_int(len(self.allowed)), pruned=fmt_int(self.pruned_tokens),
                pruned_root=fmt_int(self.pruned_root), dead=len(dead), branches=len(self.branches),
                pruned_inside=fmt_int(self.pruned_inside), refused=fmt_int(self.refused_visited),
                unvisited=fmt_int(self.unvisited)) + '</p>'
            f'<figure class="trie-figure" style="margin:0.6rem 0">{pruning_svg(self.by_length())}'
            f'<figcaption style="font-size:0.8rem;color:#56606e">{self._caption()}</figcaption>'
            f'{pruning_legend()}</figure>'
            f'<div class="table-scroll" tabindex="0" role="region" aria-label="{escape(branches_label)}">'
            f'<table class="compact-table"><caption>{branches_caption}</caption><thead><tr>'
            f'{head}</tr></thead><tbody>'
            + rows + "</tbody></table></div></div>")


def trie_walk(automaton, state, vocab: list[bytes], trie: TokenTrie | None = None) -> TrieWalk:
    """The masker's trie walk (``Automaton.allowed_tokens``) written out with counters: depth first,
    one ``automaton.step`` per trie edge, a dead byte prunes its subtree. Gives the same allowed set
    as ``masker.trie.trie_mask`` (tested). Works for every automaton (DFA, Earley)."""
    trie = trie or TokenTrie(vocab)
    children, tokens = trie.children, trie.tokens
    size = [len(t) for t in tokens]  # tokens in each subtree (children have higher node numbers)
    for node in range(trie.n_nodes - 1, -1, -1):
        size[node] += sum(size[c] for _, c in children[node])
    allowed, branches, pruned, refused, dead = [], [], 0, [], 0
    for byte, child in children[0]:
        nxt = automaton.step(state, byte)
        steps, found = 1, 0
        if nxt is None:
            dead += 1
            pruned += size[child]
            refused.extend(tokens[child])
        else:
            found = len(tokens[child])
            allowed.extend(tokens[child])
            stack = [(child, nxt)]
            while stack:
                node, st = stack.pop()
                for b, c in children[node]:
                    steps += 1
                    s2 = automaton.step(st, b)
                    if s2 is None:
                        dead += 1
                        pruned += size[c]
                        refused.extend(tokens[c])
                        continue
                    allowed.extend(tokens[c])
                    found += len(tokens[c])
                    if children[c]:
                        stack.append((c, s2))
        branches.append(Branch(byte, nxt is not None, size[child], steps, found))
    return TrieWalk(sorted(allowed), sum(b.steps for b in branches), brute_steps(automaton, state, vocab),
                    sum(map(len, vocab)),
                    pruned, branches, vocab, refused_visited=len(refused), unvisited=pruned - len(refused),
                    refused_ids=sorted(refused), dead_steps=dead)


# ---------------------------------------------------------------- the walk as a picture

KINDS = (("permitidos", "#6f8f4e"), ("descartados en su nodo (un paso)", "#c9834f"),
         ("descartados sin visitar", "#b8bec8"))  # Spanish names; kinds() gives them in the current language


def kinds() -> tuple[tuple[str, str], ...]:
    """:data:`KINDS` with each name in the current language (``lesson.i18n``)."""
    names = (_("permitidos"), _("descartados en su nodo (un paso)"), _("descartados sin visitar"))
    return tuple((name, color) for name, (_spanish, color) in zip(names, KINDS))


def length_label(n: int) -> str:
    """A token length: «1 byte», «3 bytes»."""
    return ngettext("{n} byte", "{n} bytes", n).format(n=n)


def pruning_svg(rows: dict[int, tuple[int, int, int]], width: int = 320) -> str:
    """A horizontal stacked bar per token length (``rows``: length -> three counts, as
    :meth:`TrieWalk.by_length`), bars on one scale (the longest row's total). SVG with
    ``role="img"``, an ``aria-label`` that gives every count, and ``data-length`` / ``data-counts``
    on each bar. Raises ValueError for no rows."""
    if not rows:
        raise ValueError("no token lengths to draw")
    left, right, bar, gap = 60, 36, 16, 6
    top = max(sum(v) for v in rows.values()) or 1
    scale = (width - left - right) / top
    parts, said, named = [], [], kinds()
    for i, (n, counts) in enumerate(rows.items()):
        y, x = 8 + i * (bar + gap), left
        parts.append(f'<g class="trie-bar" data-length="{n}" data-counts="{",".join(map(str, counts))}">'
                     f'<text x="{left - 6}" y="{y + bar - 4}" text-anchor="end">{length_label(n)}</text>')
        for (_name, color), c in zip(named, counts):
            if c:
                parts.append(f'<rect x="{x:.1f}" y="{y}" width="{c * scale:.1f}" height="{bar}" fill="{color}"/>')
            x += c * scale
        parts.append(f'<text x="{x + 4:.1f}" y="{y + bar - 4}">{fmt_int(sum(counts))}</text></g>')
        said.append(f"{length_label(n)}: " + ", ".join(
            f"{fmt_int(c)} {name}" for (name, _color), c in zip(named, counts)))
    height = 8 + len(rows) * (bar + gap)
    label = _("Tokens por longitud en el recorrido del trie.") + " " + "; ".join(said)
    return (f'<svg class="trie-svg" data-testid="trie-pruning" role="img" aria-label="{escape(label)}" '
            f'viewBox="0 0 {width} {height}" style="width:100%;max-width:{width}px;height:auto;'
            f'font:12px system-ui, sans-serif">{"".join(parts)}</svg>')


def pruning_legend() -> str:
    """The picture's legend, in HTML (the colours of :data:`KINDS`)."""
    return '<p class="legend" style="font-size:0.8rem">' + " · ".join(
        f'<span style="display:inline-block;width:0.8rem;height:0.8rem;background:{color};'
        f'vertical-align:middle"></span> {name}' for name, color in kinds()) + "</p>"


# ---------------------------------------------------------------- the per-state index

def shortest_prefixes(dfa) -> dict[int, bytes]:
    """For each DFA state, the shortest byte string that reaches it from the start (breadth first;
    among equals, the one with the smallest bytes)."""
    seen, todo = {0: b""}, deque([0])
    while todo:
        s = todo.popleft()
        for b in range(256):
            t = dfa.step(s, b)
            if t is not None and t not in seen:
                seen[t] = seen[s] + bytes([b])
                todo.append(t)
    return seen


class MaskIndex:
    """The table state -> allowed tokens of a DFA grammar, computed once for every state (the index
    that Outlines-style engines build before decoding; Willard and Louf 2023, "Efficient Guided
    Generation for Large Language Models", arXiv:2307.09702). ``masks``: bool[n_states, V];
    ``lookup(state)`` is then one row read. ``nbytes``: the size as a bit table (V bits per state).
    Raises TypeError for a grammar whose automaton is not a DFA (an Earley grammar has no finite
    table). Test hook: ``[data-testid=mask-index]`` with ``data-states`` and ``data-distinct``."""

    def __init__(self, grammar, vocab: list[bytes], limit: int = 10):
        dfa = grammar.automaton
        if not hasattr(dfa, "table"):
            raise TypeError(f"a {type(dfa).__name__} has no finite state table: only a DFA grammar "
                            "can be indexed ahead of time")
        self.dfa, self.vocab, self.limit = dfa, vocab, limit
        trie = TokenTrie(vocab)
        self.masks = np.stack([trie_mask(dfa, s, trie) for s in range(dfa.n_states)])
        self.prefixes = shortest_prefixes(dfa)

    def lookup(self, state: int) -> np.ndarray:
        """The allowed set of ``state``: bool[V], one row of the table."""
        return self.masks[state]

    @property
    def nbytes(self) -> int:
        """Size of the table as bits: states x ceil(V / 8) bytes."""
        return self.masks.shape[0] * math.ceil(self.masks.shape[1] / 8)

    @property
    def distinct(self) -> int:
        """How many rows (masks) of the table differ."""
        return len({row.tobytes() for row in self.masks})

    def _repr_html_(self) -> str:
        counts = self.masks.sum(axis=1)
        rows = []
        for s in range(min(self.limit, self.dfa.n_states)):
            ids = np.flatnonzero(self.masks[s])[:6].tolist()
            toks = "".join(token_html(self.vocab, t) for t in ids) + (" …" if counts[s] > 6 else "")
            rows.append(f"<tr><td class='num'>{s}</td><td><code>{escape(token_label(self.prefixes[s]))}</code></td>"
                        f"<td class='num'>{fmt_int(int(counts[s]))}</td><td>{toks}</td></tr>")
        more = self.dfa.n_states - min(self.limit, self.dfa.n_states)
        caption = _("Índice estado → tokens permitidos: {states} estados × {vocab} tokens = {nbytes} bytes "
                    "como tabla de bits; {distinct} máscaras distintas").format(
            states=self.dfa.n_states, vocab=fmt_int(len(self.vocab)), nbytes=fmt_int(self.nbytes),
            distinct=self.distinct)
        if more:
            caption += _("; {n} filas más sin mostrar").format(n=more)
        region_label = _("Índice de máscaras")
        head = header_cells(_("estado|prefijo más corto|permitidos|primeros tokens"))
        return styled(
            f'<div class="table-scroll" tabindex="0" role="region" aria-label="{escape(region_label)}" '
            f'data-testid="mask-index" data-states="{self.dfa.n_states}" data-distinct="{self.distinct}">'
            f'<table class="compact-table"><caption>{caption}</caption>'
            f'<thead><tr>{head}</tr></thead><tbody>'
            + "".join(rows) + "</tbody></table></div>")


def brute_steps(automaton, state, tokens) -> int:
    """The automaton steps brute force takes from ``state``: each token on its own, one
    ``automaton.step`` per byte up to and including the first byte it refuses (or the token's
    end)."""
    steps = 0
    for token in tokens:
        st = state
        for b in token:
            steps += 1
            st = automaton.step(st, b)
            if st is None:
                break
    return steps


def timed(fn, min_time: float = 0.02, max_calls: int = 2000) -> tuple:
    """``(first result of fn(), mean wall time of fn() in microseconds)``, over as many calls
    as fit in ``min_time`` s (at least one, at most ``max_calls``)."""
    calls, start, first = 0, time.perf_counter(), None
    while True:
        result = fn()
        if not calls:
            first = result
        calls += 1
        elapsed = time.perf_counter() - start
        if elapsed >= min_time or calls >= max_calls:
            return first, elapsed / calls * 1e6


def _per_call_us(fn, min_time: float = 0.02, max_calls: int = 2000) -> float:
    """Mean wall time of ``fn()`` in microseconds, over as many calls as fit in ``min_time`` s."""
    return timed(fn, min_time, max_calls)[1]


def mask_timings(grammar, vocab: list[bytes], state, min_time: float = 0.02) -> dict[str, float]:
    """Measured cost of one mask at ``state``, in microseconds (µs, wall time, this machine):
    ``brute_force`` (every token on its own, ``masker.trie.brute_force_mask``), ``trie_walk``
    (``masker.trie.trie_mask``) and ``lookup`` (a row of a precomputed table, as ``MaskIndex``).
    Measured, never asserted: the numbers vary with the machine and its load."""
    trie = TokenTrie(vocab)
    table = {state: trie_mask(grammar.automaton, state, trie)} if isinstance(state, int) else {}
    key = state if table else None
    return {"brute_force": _per_call_us(lambda: brute_force_mask(grammar.automaton, state, vocab), min_time),
            "trie_walk": _per_call_us(lambda: trie_mask(grammar.automaton, state, trie), min_time),
            "lookup": _per_call_us(lambda: table.get(key), min_time)}
