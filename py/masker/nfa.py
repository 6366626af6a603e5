"""Syntax tree -> byte-level NFA (Thompson's construction, CACM 11(6), 1968).

Each code-point set becomes the byte-range sequences of its UTF-8 encodings (``utf8.py``), so the
NFA reads bytes and accepts only valid UTF-8. An alternation of literal texts (an enum, a
choice) is added as the minimal DFA of the set (``literal_dfa.py``), not as parallel chains.
Bounded repetition ``x{m,n}`` is expanded into m
copies followed by n-m optional copies that each may jump to the end: the size grows linearly
with n, never exponentially, and ``max_nfa_states`` caps it. With ``count_above``, a larger
bound becomes one copy of ``x`` in a loop marked for a counter (``counted.py``).
"""

from __future__ import annotations

from .errors import LimitExceeded
from .counted import ENTER, EXIT, TICK, marker
from .grammar_ast import Alt, Chars, Ref, Repeat, Seq, literal_text, nullable
from .literal_dfa import literal_set_dfa
from .utf8 import utf8_sequences

DEFAULT_MAX_NFA_STATES = 250_000


class Nfa:
    """States 0..n-1; ``eps[s]``: epsilon targets; ``moves[s]``: ``(lo, hi, target)`` over
    symbols: bytes 0..255, then the loop markers of ``counted.py`` (one symbol each, from
    256). ``bounds[k]``: ``(m, n)`` of counted loop k; ``count_above``: repetitions whose
    bound is larger are counted (None: every repetition is expanded)."""

    def __init__(self, max_states: int, count_above: int | None = None):
        self.count_above = count_above
        self.bounds: list[tuple[int, int | None]] = []  # (m, n) of each counted loop
        self.eps: list[list[int]] = []
        self.moves: list[list[tuple[int, int, int]]] = []
        self.max_states = max_states

    def add_state(self) -> int:
        if len(self.eps) >= self.max_states:
            raise LimitExceeded("the regular expression expands to too many NFA states",
                                "max_nfa_states", self.max_states,
                                "lower the bounds of {m,n} repetitions or split the pattern",
                                code="limit.nfa_states")
        self.eps.append([])
        self.moves.append([])
        return len(self.eps) - 1

    def useful_states(self, accept: int) -> set[int]:
        """States from which ``accept`` can be reached (the others are dead ends)."""
        back: list[list[int]] = [[] for _ in self.eps]
        for s, targets in enumerate(self.eps):
            for t in targets:
                back[t].append(s)
        for s, moves in enumerate(self.moves):
            for _, _, t in moves:
                back[t].append(s)
        seen, todo = {accept}, [accept]
        while todo:
            for p in back[todo.pop()]:
                if p not in seen:
                    seen.add(p)
                    todo.append(p)
        return seen


def build_nfa(node, max_states: int = DEFAULT_MAX_NFA_STATES,
              count_above: int | None = None) -> tuple[Nfa, int, int]:
    """Compile a ``grammar_ast`` tree (without ``Ref``) into ``(nfa, start, accept)``.
    With ``count_above``, a repetition ``x{m,n}`` of a non-nullable ``x`` whose bound (``n``,
    or ``m`` when unbounded) is larger becomes a loop marked for a counter (``counted.py``);
    ``nfa.bounds`` lists those loops. Raises LimitExceeded("max_nfa_states")."""
    nfa = Nfa(max_states, count_above)
    start = nfa.add_state()
    accept = _build(nfa, node, start)
    return nfa, start, accept


def _build(nfa: Nfa, node, s: int) -> int:
    """Add ``node`` to the NFA, entered at state ``s``; return its exit state."""
    if isinstance(node, Chars):
        end = nfa.add_state()
        for sequence in utf8_sequences(node.ranges):
            cur = s
            for i, (lo, hi) in enumerate(sequence):
                nxt = end if i == len(sequence) - 1 else nfa.add_state()
                nfa.moves[cur].append((lo, hi, nxt))
                cur = nxt
        return end
    if isinstance(node, Seq):
        for item in node.items:
            s = _build(nfa, item, s)
        return s
    if isinstance(node, Alt):
        texts = [literal_text(item) for item in node.items]
        if len(texts) > 1 and all(t is not None for t in texts):
            return _build_literals(nfa, texts, s)
        end = nfa.add_state()
        for item in node.items:
            nfa.eps[_build(nfa, item, s)].append(end)
        return end
    if isinstance(node, Repeat):
        return _build_repeat(nfa, node, s)
    if isinstance(node, Ref):
        raise TypeError(f"rule reference {node.name!r} cannot be compiled to an NFA")
    raise TypeError(f"unknown syntax node {node!r}")


def _build_counted(nfa: Nfa, node: Repeat, s: int) -> int:
    """``item*`` between the markers ENTER and EXIT of a new loop k, each iteration starting
    with its TICK: the item is built once, whatever the bounds."""
    k = len(nfa.bounds)
    nfa.bounds.append((node.lo, node.hi))
    enter, tick, leave = (marker(k, kind) for kind in (ENTER, TICK, EXIT))
    loop, body, end = nfa.add_state(), nfa.add_state(), nfa.add_state()
    nfa.moves[s].append((enter, enter, loop))
    nfa.moves[loop].append((tick, tick, body))
    nfa.eps[_build(nfa, node.item, body)].append(loop)
    nfa.moves[loop].append((leave, leave, end))
    return end


def _build_literals(nfa: Nfa, texts: list[bytes], s: int) -> int:
    """An alternation of literal texts as the minimal DFA of the set (``literal_dfa.py``),
    entered at ``s``: deterministic, prefixes and suffixes shared, so the subset construction
    meets one NFA state per DFA state in it. The set's start state is ``s`` itself (it has
    no incoming moves in an acyclic DFA); accepting states jump to the exit."""
    dfa, _ = literal_set_dfa(texts)
    bytes_of: dict[int, list[int]] = {}
    for b, c in enumerate(dfa.byte_class):
        bytes_of.setdefault(c, []).append(b)
    ids = [s] + [nfa.add_state() for _ in range(dfa.n_states - 1)]
    end = nfa.add_state()
    for state, row in enumerate(dfa.table):
        moves = nfa.moves[ids[state]]
        for c, t in enumerate(row):
            if t >= 0:
                moves.extend((b, b, ids[t]) for b in bytes_of[c])
        if dfa.accepting[state]:
            nfa.eps[ids[state]].append(end)
    return end


def _build_repeat(nfa: Nfa, node: Repeat, s: int) -> int:
    bound = node.hi if node.hi is not None else node.lo
    if nfa.count_above is not None and bound > nfa.count_above and not nullable(node.item):
        return _build_counted(nfa, node, s)
    for _ in range(node.lo):
        s = _build(nfa, node.item, s)
    if node.hi is None:
        loop = nfa.add_state()  # a fresh state, so the loop never re-enters earlier paths
        nfa.eps[s].append(loop)
        nfa.eps[_build(nfa, node.item, loop)].append(loop)
        return loop
    end = nfa.add_state()
    nfa.eps[s].append(end)
    for _ in range(node.hi - node.lo):
        s = _build(nfa, node.item, s)
        nfa.eps[s].append(end)
    return end
