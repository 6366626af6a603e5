"""Byte-level NFA -> DFA by subset construction (Rabin and Scott 1959), then minimization.

Only NFA states that can still reach the accepting state are kept, so every DFA state is *alive*:
some byte string leads from it to acceptance. A transition into the empty set is "dead" and
``Dfa.step`` returns ``None`` for it. Bytes are grouped into classes (intervals of byte values the
NFA never tells apart), so the construction loops over classes, not over 256 bytes.
The result is minimized (Hopcroft's partition refinement), so two prefixes with the same set
of continuations share a state and therefore a cached mask.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .automaton import Automaton
from .errors import LimitExceeded
from .nfa import Nfa

if TYPE_CHECKING:
    from .trie import TokenTrie

DEFAULT_MAX_DFA_STATES = 20_000


class Dfa(Automaton):
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

    def allowed_tokens(self, state: int, trie: TokenTrie, max_steps: int) -> list[int]:
        """The generic trie walk (``Automaton.allowed_tokens``) with table look-ups in place of
        ``step`` calls: the same tokens, faster. A DFA step never fails, and the walk visits
        each trie node at most once, so ``max_steps`` is not needed."""
        table, byte_class = self.table, self.byte_class
        children, tokens = trie.children, trie.tokens
        allowed: list[int] = []
        stack = [(0, state)]
        while stack:
            node, st = stack.pop()
            row = table[st]
            for byte, child in children[node]:
                nxt = row[byte_class[byte]]
                if nxt < 0:
                    continue
                allowed.extend(tokens[child])
                if children[child]:
                    stack.append((child, nxt))
        return allowed


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
    closure = _EpsilonClosure(nfa, useful)
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
            nxt = closure(tset) if tset else None
            if nxt is not None and nxt not in ids:
                if len(sets) >= max_states:
                    raise LimitExceeded("the automaton needs too many DFA states", "max_states",
                                        max_states, "simplify the pattern (bounded repetitions "
                                        "of alternatives multiply states) or raise max_states")
                ids[nxt] = len(sets)
                sets.append(nxt)
            row.append(-1 if nxt is None else ids[nxt])
        table.append(row)
    return minimize(Dfa(table, [accept in s for s in sets], byte_class))


class _EpsilonClosure:
    """Memoized epsilon closure of a set of NFA states, restricted to ``useful`` states."""

    def __init__(self, nfa: Nfa, useful: set[int]):
        self.eps, self.useful = nfa.eps, useful
        self.memo: dict[frozenset, frozenset] = {}

    def __call__(self, states) -> frozenset:
        key = frozenset(states)
        found = self.memo.get(key)
        if found is None:
            seen, todo = set(key), list(key)
            while todo:
                for t in self.eps[todo.pop()]:
                    if t in self.useful and t not in seen:
                        seen.add(t)
                        todo.append(t)
            found = self.memo[key] = frozenset(seen)
        return found


def minimize(dfa: Dfa) -> Dfa:
    """Merge equivalent states (Hopcroft 1971, O(k n log n)); state 0 stays the start.

    A sink state n stands for "dead"; since every state is alive, no state joins the sink.
    """
    n, k = dfa.n_states, len(dfa.table[0])
    sink = n
    inverse: list[dict[int, list[int]]] = [{} for _ in range(k)]
    for s, row in enumerate(dfa.table + [[sink] * k]):
        for c, t in enumerate(row):
            inverse[c].setdefault(t if t >= 0 else sink, []).append(s)
    accepting = {s for s in range(n) if dfa.accepting[s]}
    blocks = [b for b in (accepting, set(range(n + 1)) - accepting) if b]
    block_of = [0] * (n + 1)
    for b, members in enumerate(blocks):
        for s in members:
            block_of[s] = b
    smaller = min(range(len(blocks)), key=lambda b: len(blocks[b]))
    work = {(smaller, c) for c in range(k)}  # Hopcroft: one half of a split is enough
    while work:
        b, c = work.pop()
        inv = inverse[c]
        touched: dict[int, set[int]] = {}
        for t in blocks[b]:
            for s in inv.get(t, ()):
                touched.setdefault(block_of[s], set()).add(s)
        for bid, inside in touched.items():
            if len(inside) == len(blocks[bid]):
                continue
            block = blocks[bid]
            if 2 * len(inside) <= len(block):  # split in time proportional to the smaller part
                block -= inside
                small = inside
            else:
                small = block - inside  # |block| < 2 |inside|: paid for by the preimage walk
                blocks[bid] = inside
            blocks.append(small)
            new_id = len(blocks) - 1
            for s in small:
                block_of[s] = new_id
            work.update((new_id, cc) for cc in range(k))  # Hopcroft: the smaller half
    return _quotient(dfa, block_of)


def _quotient(dfa: Dfa, block_of: list[int]) -> Dfa:
    """The DFA over blocks, numbered in order of first appearance (start first)."""
    order: dict[int, int] = {}
    for s in range(dfa.n_states):
        order.setdefault(block_of[s], len(order))
    table: list = [None] * len(order)
    accepting = [False] * len(order)
    for s, row in enumerate(dfa.table):
        b = order[block_of[s]]
        if table[b] is None:
            table[b] = [order[block_of[t]] if t >= 0 else -1 for t in row]
            accepting[b] = dfa.accepting[s]
    return Dfa(table, accepting, dfa.byte_class)
