"""Byte-level NFA -> DFA by subset construction (Rabin and Scott 1959), then minimization.

Only NFA states that can still reach the accepting state are kept, so every DFA state is *alive*:
some byte string leads from it to acceptance. A transition into the empty set is "dead" and
``Dfa.step`` returns ``None`` for it. Bytes are grouped into classes (intervals of byte values the
NFA never tells apart), so the construction loops over classes, not over 256 bytes.
The result is minimized by partition refinement (Moore's algorithm), so two prefixes with the
same set of continuations share a state and therefore a cached mask.
"""

from __future__ import annotations

from .errors import LimitExceeded
from .nfa import Nfa

DEFAULT_MAX_DFA_STATES = 20_000


class Dfa:
    """A complete-enough byte DFA implementing the automaton interface (see ``automaton.py``).

    States are ints ``0..n_states-1``; 0 is the start state. ``table[state][cls]`` is the next
    state or -1 (dead); ``byte_class[b]`` maps a byte to its class.
    """

    def __init__(self, table, accepting, byte_class):
        self.table: list[list[int]] = table
        self.accepting: list[bool] = accepting
        self.byte_class: list[int] = byte_class
        self.continues = [any(t >= 0 for t in row) for row in table]

    @property
    def n_states(self) -> int:
        return len(self.table)

    def start(self) -> int:
        return 0

    def step(self, state: int, byte: int) -> int | None:
        nxt = self.table[state][self.byte_class[byte]]
        return None if nxt < 0 else nxt

    def is_accepting(self, state: int) -> bool:
        return self.accepting[state]

    def can_continue(self, state: int) -> bool:
        return self.continues[state]

    def cache_key(self, state: int) -> int:
        return state


def _byte_classes(nfa: Nfa, useful: set[int]) -> tuple[list[int], int]:
    cuts = {0, 256}
    for s in useful:
        for lo, hi, t in nfa.moves[s]:
            cuts.add(lo)
            cuts.add(hi + 1)
    bounds = sorted(cuts)
    byte_class = [0] * 256
    for c, (a, b) in enumerate(zip(bounds, bounds[1:])):
        for x in range(a, b):
            byte_class[x] = c
    return byte_class, len(bounds) - 1


def determinize(nfa: Nfa, start: int, accept: int,
                max_states: int = DEFAULT_MAX_DFA_STATES) -> Dfa:
    """Subset construction restricted to useful NFA states; raises LimitExceeded past max_states."""
    useful = nfa.useful_states(accept)
    if start not in useful:
        return Dfa([[-1]], [False], [0] * 256)  # the empty language: nothing is ever allowed
    byte_class, n_classes = _byte_classes(nfa, useful)
    moves = [[(byte_class[lo], byte_class[hi], t) for lo, hi, t in nfa.moves[s] if t in useful]
             if s in useful else [] for s in range(len(nfa.eps))]
    closures: dict[frozenset, frozenset] = {}

    def closure(states) -> frozenset:
        key = frozenset(states)
        if key not in closures:
            seen, todo = set(key), list(key)
            while todo:
                for t in nfa.eps[todo.pop()]:
                    if t in useful and t not in seen:
                        seen.add(t)
                        todo.append(t)
            closures[key] = frozenset(seen)
        return closures[key]

    first = closure([start])
    ids, sets, table = {first: 0}, [first], []
    while len(table) < len(sets):
        targets: list[set] = [set() for _ in range(n_classes)]
        for s in sets[len(table)]:
            for c_lo, c_hi, t in moves[s]:
                for c in range(c_lo, c_hi + 1):
                    targets[c].add(t)
        row = []
        for tset in targets:
            if not tset:
                row.append(-1)
                continue
            nxt = closure(tset)
            if nxt not in ids:
                if len(sets) >= max_states:
                    raise LimitExceeded("the automaton needs too many DFA states", "max_states",
                                        max_states, "simplify the pattern (bounded repetitions "
                                        "of alternatives multiply states) or raise max_states")
                ids[nxt] = len(sets)
                sets.append(nxt)
            row.append(ids[nxt])
        table.append(row)
    return minimize(Dfa(table, [accept in s for s in sets], byte_class))


MINIMIZE_WORK = 3_000_000


def minimize(dfa: Dfa, work_limit: int = MINIMIZE_WORK) -> Dfa:
    """Merge equivalent states (Moore's partition refinement); state 0 stays the start.

    Moore's algorithm may need as many rounds as states (long chains like ``x{0,5000}``); past
    ``work_limit`` row visits it gives up and returns ``dfa`` unchanged, which is still correct,
    only not minimal.
    """
    block = [int(a) for a in dfa.accepting]
    n_blocks = len(set(block))
    work = 0
    while True:
        work += dfa.n_states * len(dfa.table[0])
        if work > work_limit:
            return dfa
        signatures: dict[tuple, int] = {}
        new_block = []
        for s, row in enumerate(dfa.table):
            sig = (block[s], tuple(block[t] if t >= 0 else -1 for t in row))
            new_block.append(signatures.setdefault(sig, len(signatures)))
        if len(signatures) == n_blocks:
            break
        block, n_blocks = new_block, len(signatures)
    order = {}
    for s in range(dfa.n_states):  # renumber so the start state's block is 0
        order.setdefault(block[s], len(order))
    table = [None] * len(order)
    accepting = [False] * len(order)
    for s, row in enumerate(dfa.table):
        b = order[block[s]]
        if table[b] is None:
            table[b] = [order[block[t]] if t >= 0 else -1 for t in row]
            accepting[b] = dfa.accepting[s]
    return Dfa(table, accepting, dfa.byte_class)
