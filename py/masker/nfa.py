"""Syntax tree -> byte-level NFA (Thompson's construction, CACM 11(6), 1968).

Each code-point set becomes the byte-range sequences of its UTF-8 encodings (``utf8.py``), so the
NFA reads bytes and accepts only valid UTF-8. Bounded repetition ``x{m,n}`` is expanded into m
copies followed by n-m optional copies that each may jump to the end: the size grows linearly
with n, never exponentially, and ``max_nfa_states`` caps it.
"""

from __future__ import annotations

from .errors import LimitExceeded
from .grammar_ast import Alt, Chars, Ref, Repeat, Seq
from .utf8 import utf8_sequences

DEFAULT_MAX_NFA_STATES = 250_000


class Nfa:
    """States 0..n-1; ``eps[s]``: epsilon targets; ``moves[s]``: ``(lo_byte, hi_byte, target)``."""

    def __init__(self, max_states: int):
        self.eps: list[list[int]] = []
        self.moves: list[list[tuple[int, int, int]]] = []
        self.max_states = max_states

    def add_state(self) -> int:
        if len(self.eps) >= self.max_states:
            raise LimitExceeded("the regular expression expands to too many NFA states",
                                "max_nfa_states", self.max_states,
                                "lower the bounds of {m,n} repetitions or split the pattern")
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


def build_nfa(node, max_states: int = DEFAULT_MAX_NFA_STATES) -> tuple[Nfa, int, int]:
    """Compile a ``grammar_ast`` tree (without ``Ref``) into ``(nfa, start, accept)``."""
    nfa = Nfa(max_states)
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
        end = nfa.add_state()
        for item in node.items:
            nfa.eps[_build(nfa, item, s)].append(end)
        return end
    if isinstance(node, Repeat):
        return _build_repeat(nfa, node, s)
    if isinstance(node, Ref):
        raise TypeError(f"rule reference {node.name!r} cannot be compiled to an NFA")
    raise TypeError(f"unknown syntax node {node!r}")


def _build_repeat(nfa: Nfa, node: Repeat, s: int) -> int:
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
