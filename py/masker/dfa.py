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

import numpy as np

from .automaton import Automaton
from .errors import LimitExceeded

if TYPE_CHECKING:
    from .nfa import Nfa
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
        self.continues = [max(row) >= 0 for row in table]
        self._np_table = None  # ``np_table``, made at the first use
        # What building it cost, set by ``determinize``/``minimize`` (scaling tests read it):
        # "dfa_states_built", "subset_moves" (NFA moves followed), "refine_visits".
        self.build_work: dict[str, int] = {}

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

    @property
    def np_table(self):
        """``table`` as an int32 NumPy array ``(n_states, n_classes)``, made at the first use."""
        if self._np_table is None:
            self._np_table = np.array(self.table, dtype=np.int32).reshape(len(self.table), -1)
        return self._np_table

    def allowed_tokens(self, state: int, trie: TokenTrie, max_steps: int):
        """The generic trie walk (``Automaton.allowed_tokens``) with table look-ups in place of
        ``step`` calls: the same tokens, faster. A DFA step never fails, and the walk visits
        each trie node at most once, so ``max_steps`` is not needed. On a large vocabulary
        (``trie.vectorized``) the walk steps a whole trie level at a time with NumPy
        (``TrieArrays.walk_dfa``) and returns an int32 array; otherwise it is the Python walk
        below, the readable reference, and returns a list."""
        if trie.vectorized:
            return trie.arrays.walk_dfa(self.np_table, self.byte_class, state,
                                        rows=self.table)[0]
        return self.python_walk(state, trie)

    def python_walk(self, state: int, trie: TokenTrie) -> list[int]:
        """The depth-first walk in Python: ids of the allowed tokens, as a list."""
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
    """Classes of the symbols (bytes, then the loop markers of ``counted.py``) the NFA never
    tells apart: ``symbol_class`` (one entry per symbol) and the number of classes."""
    n_symbols = 256 + 3 * len(getattr(nfa, "bounds", ()))
    cuts = {0, 256, n_symbols}
    for s in useful:
        for lo, hi, t in nfa.moves[s]:
            cuts.add(lo)
            cuts.add(hi + 1)
    bounds = sorted(cuts)
    byte_class = [0] * n_symbols
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
    moves_out: list[list[tuple[int, int]]] = []  # the live (class, target) pairs of each row
    subset_moves = 0
    while len(table) < len(sets):
        targets: dict[int, set] = {}  # only the classes with a move: work ~ moves, not classes
        for s in sets[len(table)]:
            subset_moves += len(moves[s])
            for c_lo, c_hi, t in moves[s]:
                for c in range(c_lo, c_hi + 1):
                    found = targets.get(c)
                    if found is None:
                        targets[c] = {t}
                    else:
                        found.add(t)
        row = [-1] * n_classes
        live = []
        for c, tset in targets.items():
            nxt = closure(tset)
            if nxt not in ids:
                if len(sets) >= max_states:
                    raise LimitExceeded("the automaton needs too many DFA states", "max_states",
                                        max_states, "simplify the pattern (bounded repetitions "
                                        "of alternatives multiply states) or raise max_states",
                                        code="limit.dfa_states")
                ids[nxt] = len(sets)
                sets.append(nxt)
            row[c] = ids[nxt]
            live.append((c, row[c]))
        table.append(row)
        moves_out.append(live)
    result = minimize(Dfa(table, [accept in s for s in sets], byte_class), moves_out)
    result.build_work.update(dfa_states_built=len(sets), subset_moves=subset_moves)
    return result


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


def minimize(dfa: Dfa, live: list[list[tuple[int, int]]] | None = None) -> Dfa:
    """Merge equivalent states (Hopcroft 1971) over the *partial* transition function: dead
    transitions (-1) are left out, so the work is O(m log n) for m live transitions, not
    O(k n log n) for k byte classes (a trie of 10,000 words has n - 1 live transitions and
    30 classes). State 0 stays the start.

    Without a sink state, "the rest of the states" is not a block, so the first split cannot
    use only the smaller of the two initial blocks: every initial block enters the work list
    with every class (Valmari and Lehtinen, "Efficient minimization of DFAs with partial
    transition functions", STACS 2008). After that Hopcroft's smaller-half rule holds as
    usual, because the preimage of ``B - B1`` is the preimage of ``B`` minus that of ``B1``
    for a deterministic transition function. Every state is alive, so none is equivalent to
    the missing sink. The work list holds blocks, each standing for (block, class) with all
    of its classes at once, so processing a block walks its incoming moves once, grouped by
    class, and never loops over classes without moves.
    """
    n = dfa.n_states
    if live is None:
        live = [[(c, t) for c, t in enumerate(row) if t >= 0] for row in dfa.table]
    pre = _preimages(n, live)
    accepting = {s for s in range(n) if dfa.accepting[s]}
    blocks = [b for b in (accepting, set(range(n)) - accepting) if b]
    block_of = [0] * n
    for b, members in enumerate(blocks):
        for s in members:
            block_of[s] = b
    work = set(range(len(blocks)))  # splitters; each stands for itself with every class
    visits = 0
    while work:
        for sources in _moves_into(blocks[work.pop()], pre).values():
            visits += len(sources)
            _split_by(sources, blocks, block_of, work)
    result = _quotient(dfa, block_of, live)
    result.build_work["refine_visits"] = visits
    return result


def _preimages(n: int, live: list[list[tuple[int, int]]]) -> list[dict[int, list[int]]]:
    """For each state, its incoming moves: class -> the states that move into it on that class."""
    pre: list[dict[int, list[int]]] = [{} for _ in range(n)]
    for s, moves in enumerate(live):
        for c, t in moves:
            by_class = pre[t]
            if c in by_class:
                by_class[c].append(s)
            else:
                by_class[c] = [s]
    return pre


def _moves_into(block: set[int], pre: list[dict[int, list[int]]]) -> dict[int, list[int]]:
    """class -> the states with a move on that class into ``block`` (one entry per move)."""
    by_class: dict[int, list[int]] = {}
    for t in block:
        for c, sources in pre[t].items():
            if c in by_class:
                by_class[c].extend(sources)
            else:
                by_class[c] = list(sources)
    return by_class


def _split_by(sources: list[int], blocks: list[set[int]], block_of: list[int], work: set[int]) -> None:
    """Split every block that ``sources`` (the states with a move on one class into the splitter)
    cut in two, in place: the smaller half becomes a new block, queued in ``work`` (Hopcroft)."""
    touched: dict[int, list[int]] = {}
    for s in sources:
        bid = block_of[s]
        if bid in touched:
            touched[bid].append(s)
        else:
            touched[bid] = [s]
    for bid, inside_list in touched.items():
        block = blocks[bid]
        if len(inside_list) == len(block):  # a state has one move per class
            continue
        inside = set(inside_list)
        if 2 * len(inside) <= len(block):  # split in time proportional to the smaller
            block -= inside
            small = inside
        else:
            small = block - inside  # |block| < 2 |inside|: paid by the preimage walk
            blocks[bid] = inside
        blocks.append(small)
        new_id = len(blocks) - 1
        for s in small:
            block_of[s] = new_id
        work.add(new_id)  # Hopcroft: the smaller half (both, if bid is still queued)


def _quotient(dfa: Dfa, block_of: list[int], live: list[list[tuple[int, int]]]) -> Dfa:
    """The DFA over blocks, numbered in order of first appearance (start first); ``live``
    holds each state's (class, target) pairs with a target."""
    order: dict[int, int] = {}
    for s in range(dfa.n_states):
        order.setdefault(block_of[s], len(order))
    table: list = [None] * len(order)
    accepting = [False] * len(order)
    width = len(dfa.table[0])
    for s, moves in enumerate(live):
        b = order[block_of[s]]
        if table[b] is None:
            row = table[b] = [-1] * width
            for c, t in moves:
                row[c] = order[block_of[t]]
            accepting[b] = dfa.accepting[s]
    return Dfa(table, accepting, dfa.byte_class)
