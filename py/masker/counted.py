"""Bounded repetition as a counter beside a DFA state (a counting automaton).

``x{m,n}`` with a large ``n`` (``maxLength: 8192``, ``maxItems: 10000``, ``[a-z]{1,65536}``)
expanded into copies makes every position a new DFA state: the automaton grows with ``n``, and
the per-state mask cache never hits. Here the repetition becomes a loop ``x*`` whose entry,
iterations and exit are marked by three extra symbols of the automaton's alphabet (ENTER, TICK,
EXIT of loop ``k``, numbered from 256 up: ``marker(k, kind)``). The NFA with markers is
determinized and minimized as usual (the markers are just symbols), and ``CountedDfa`` runs it
with one counter per active loop: ENTER sets it to 0, TICK needs ``count < n`` and adds one,
EXIT needs ``count >= m``. A state is a frozenset of configurations ``(dfa_state, counters)``,
``counters`` a sorted tuple of ``(loop, count)``; usually there is one configuration.

The DFA with markers accepts a byte text with the markers spliced in exactly where the
repetitions begin, iterate and end, so running it with the counter checks accepts exactly the
texts of the expanded repetition (the same construction as the counter automata of Hovland,
"Regular expressions with numerical constraints and automata with counters", ICTAC 2009, here
without proving the determinism: several configurations are simply tracked together).

Masks: within one token of at most L bytes a loop ticks at most L times (an iteration reads
at least one byte: loops over a nullable ``x`` are not counted), so the mask from a state
depends on each count only through ``min(n - count, L + 1)`` and ``min(max(m - count, 0), L +
1)``. ``mask_key`` is the state with counts replaced by those two clamps: along a string of
``maxLength: 8192`` the mask is computed once for the middle and once per position near each
end (the allowed set depends on the count only near its end). ``cache_key`` stays exact (equal
keys, same futures), as ``Matcher.state_key`` promises.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING

from .automaton import Automaton
from .trie import LazyRows

if TYPE_CHECKING:
    from .dfa import Dfa
    from .trie import TokenTrie

ENTER, TICK, EXIT = 0, 1, 2
COUNT_ABOVE = 32  # repetitions whose bound (n, or m when unbounded) is larger are counted


def marker(loop: int, kind: int) -> int:
    """The alphabet symbol (>= 256) of ``kind`` (ENTER, TICK, EXIT) for loop number ``loop``."""
    return 256 + 3 * loop + kind


class CountedDfa(Automaton):
    """A minimal DFA over bytes and loop markers, run with counters (see the module docstring).

    ``dfa``: the ``Dfa`` whose ``byte_class`` also maps the marker symbols; ``bounds[k]``:
    ``(m, n)`` of loop k (``n`` None: no upper bound). States are frozensets of
    ``(dfa_state, ((loop, count), ...))``, closed under the marker moves the counters allow.
    """

    def __init__(self, dfa: Dfa, bounds: list[tuple[int, int | None]]):
        self.dfa, self.bounds = dfa, bounds
        table, byte_class = dfa.table, dfa.byte_class
        byte_classes = sorted(set(byte_class[:256]))
        self.byte_live = [any(row[c] >= 0 for c in byte_classes) for row in table]
        self.markers: list[tuple[tuple[int, int, int], ...]] = []
        for row in table:  # per state: (kind, loop, target) of its marker moves
            moves = []
            for k in range(len(bounds)):
                for kind in (ENTER, TICK, EXIT):
                    t = row[byte_class[marker(k, kind)]]
                    if t >= 0:
                        moves.append((kind, k, t))
            self.markers.append(tuple(moves))
        self._start = self._close({(0, ())})
        self._rows: dict = {}  # id(trie) -> (trie, LazyRows) for the vectorized walk

    @property
    def n_states(self) -> int:
        return self.dfa.n_states

    def _close(self, configs) -> frozenset:
        """``configs`` with every configuration the allowed marker moves reach."""
        markers, bounds = self.markers, self.bounds
        seen = set(configs)
        todo = [c for c in seen if markers[c[0]]]
        while todo:
            q, counts = todo.pop()
            for kind, k, t in markers[q]:
                d = dict(counts)
                if kind == ENTER:
                    d[k] = 0
                elif k not in d:
                    continue
                elif kind == TICK:
                    hi = bounds[k][1]
                    if hi is not None and d[k] >= hi:
                        continue
                    d[k] += 1
                else:
                    if d[k] < bounds[k][0]:
                        continue
                    del d[k]
                nxt = (t, tuple(sorted(d.items())))
                if nxt not in seen:
                    seen.add(nxt)
                    if markers[t]:
                        todo.append(nxt)
        return frozenset(seen)

    def start(self) -> frozenset:
        return self._start

    def step(self, state: frozenset, byte: int) -> frozenset | None:
        table, c = self.dfa.table, self.dfa.byte_class[byte]
        out = set()
        for q, counts in state:
            t = table[q][c]
            if t >= 0:
                out.add((t, counts))
        return self._close(out) if out else None

    def is_accepting(self, state: frozenset) -> bool:
        accepting = self.dfa.accepting
        return any(accepting[q] for q, _ in state)

    def can_continue(self, state: frozenset) -> bool:
        return any(self.byte_live[q] for q, _ in state)

    def cache_key(self, state: frozenset) -> Hashable:
        return state

    def mask_key(self, state: frozenset, longest: int) -> Hashable:
        """The state with each count clamped to what a token of at most ``longest`` bytes can
        tell apart (module docstring)."""
        cap, bounds = longest + 1, self.bounds
        return frozenset(
            (q, tuple((k, min(bounds[k][1] - c, cap) if bounds[k][1] is not None else cap,
                       min(max(bounds[k][0] - c, 0), cap)) for k, c in counts))
            for q, counts in state)

    def allowed_tokens(self, state: frozenset, trie: TokenTrie, max_steps: int) -> list[int]:
        """The generic walk (one ``step`` per trie edge), with a table look-up in place of the
        step while no configuration has a marker move (inside one iteration). On a large
        vocabulary (``trie.vectorized``): ``TrieArrays.walk_rows``, an int32 array."""
        if trie.vectorized:  # a trie level at a time, the states' rows made as met
            rows = LazyRows.of(self._rows, trie, lambda: LazyRows(self, self.dfa.byte_class,
                                                                  lambda state: state))
            return trie.arrays.walk_rows(rows, [0], [rows.start(state)])
        table, byte_class, markers = self.dfa.table, self.dfa.byte_class, self.markers
        children, tokens = trie.children, trie.tokens
        allowed: list[int] = []
        stack = [(0, state)]
        while stack:
            node, st = stack.pop()
            plain = len(st) == 1 and not markers[next(iter(st))[0]]
            if plain:
                q, counts = next(iter(st))
                row = table[q]
            for byte, child in children[node]:
                if plain:
                    t = row[byte_class[byte]]
                    nxt = None if t < 0 else (
                        self._close({(t, counts)}) if markers[t] else frozenset(((t, counts),)))
                else:
                    nxt = self.step(st, byte)
                if nxt is None:
                    continue
                allowed.extend(tokens[child])
                if children[child]:
                    stack.append((child, nxt))
        return allowed
