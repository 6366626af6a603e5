"""Budget-aware masks: allow a token only if the text can still be completed in the tokens left.

A decode loop with a token budget (``max_tokens``) that stops in the middle of a text leaves it
invalid whatever the mask did. With ``Matcher.mask(budget=k)`` a token is allowed when the plain
mask allows it *and* the shortest completion from the state after it fits in the ``k - 1``
tokens that would be left. So a loop that starts with ``budget >= min_tokens_to_finish()`` and
lowers the budget by one per token always ends on a complete text (at the latest when ``k = 0``,
where only an accepting state is possible).

The quantity needed is ``dist(s)``: the minimum number of tokens *of this vocabulary* that take
the automaton from state ``s`` to an accepting state (0 when ``s`` accepts). It is a shortest path
in the "token graph" whose nodes are automaton states and whose edges are the allowed tokens
(one edge per token, each of length 1), computed once per (grammar, vocabulary) and cached in the
vocabulary's index beside the masks.

- ``Dfa`` (choices, regular expressions, non-recursive JSON Schema and GBNF): the state space is
  finite, so every state's distance is computed at the first budget query by one breadth-first
  search backwards from the accepting states over the token graph (one trie walk per DFA state
  to find its token edges). Exact.
- Counted DFAs (``counted.py``) and Earley (recursive grammars): the states are too many to list
  in advance (a counted DFA's are finite, a DFA state times each counter's values up to its bound,
  but ``maxLength: 8192`` makes thousands of them per state; an Earley parser's stacks have no
  bound at all). ``dist`` is found by a breadth-first search *forwards* over token
  steps, bounded by the budget: the search from ``roots`` to depth ``n`` visits every state that
  ``n`` tokens reach, then a backward pass over the visited graph gives each visited state ``v``
  (first reached at depth ``d``) its exact distance when that distance is at most ``n - d``, and
  otherwise the lower bound ``dist(v) > n - d`` (every path of that length stays inside the
  visited graph, so nothing shorter was missed). Both facts are memoised on the automaton's
  ``cache_key`` (equal keys, equal futures), so along one generation the search mostly reuses
  what the first position found. Exact too: the budget bounds the search, not the answer.

The work is bounded by ``max_states`` states visited per search (``LimitExceeded``, limit
``max_budget_states``, default 20,000), so an enormous free-text grammar cannot freeze a browser
tab. Errors: ``Matcher`` turns a budget below ``dist`` of the current state into
``BudgetTooSmall`` (``errors.py``).
"""

from __future__ import annotations

from collections import deque

import numpy as np

from .dfa import Dfa
from .errors import LimitExceeded

DEFAULT_MAX_BUDGET_STATES = 20_000  # states visited by one bounded search
MAX_MEMO = 200_000                  # memoised distances per (grammar, vocabulary); emptied when full
UNREACHABLE = np.iinfo(np.int64).max  # dist of a state from which no token path ends (DFA table)


def token_edges(automaton, state, trie, max_steps: int):
    """Every allowed token from ``state`` and the state after it: ``(ids, states)``, ids an
    int64 array and states a list of the same length. One ``step`` per trie edge (the same
    walk as ``Automaton.allowed_tokens``); raises LimitExceeded past ``max_steps`` steps."""
    ids: list[int] = []
    states: list = []
    step, children, tokens = automaton.step, trie.children, trie.tokens
    stack = [(0, state)]
    steps = 0
    while stack:
        node, st = stack.pop()
        kids = children[node]
        steps += len(kids)
        if steps > max_steps:
            raise LimitExceeded("finding the token steps of one state needed too many automaton "
                                "steps", "max_trie_steps", max_steps,
                                "use a smaller vocabulary or grammar, or raise max_trie_steps",
                                code="limit.budget_steps")
        for byte, child in kids:
            nxt = step(st, byte)
            if nxt is None:
                continue
            for t in tokens[child]:
                ids.append(t)
                states.append(nxt)
            if children[child]:
                stack.append((child, nxt))
    return np.array(ids, dtype=np.int64), states


class Distances:
    """``dist(state)`` in tokens of one vocabulary, for one grammar's automaton (module docstring).

    ``exact[key]``: the exact distance; ``lower[key]``: a bound b with dist > b; ``edges[key]``:
    ``(ids, next_keys, next_states)`` of the state's token steps. Keys are ``cache_key`` values.
    """

    def __init__(self, automaton, trie, max_trie_steps: int,
                 max_states: int = DEFAULT_MAX_BUDGET_STATES):
        self.automaton, self.trie = automaton, trie
        self.max_trie_steps, self.max_states = max_trie_steps, max_states
        self.exact: dict = {}
        self.lower: dict = {}
        self.edges: dict = {}
        self.dfa_table: np.ndarray | None = None  # int64[n_states] for a plain Dfa
        if type(automaton) is Dfa:
            self._dfa_distances()

    # -- keys and edges ------------------------------------------------------------------------
    def key(self, state):
        key = self.automaton.cache_key(state)
        return ("state", state) if key is None else key

    def _edges(self, key, state):
        found = self.edges.get(key)
        if found is None:
            ids, states = token_edges(self.automaton, state, self.trie, self.max_trie_steps)
            if len(self.edges) >= MAX_MEMO:
                self.edges.clear()
            found = self.edges[key] = (ids, [self.key(s) for s in states], states)
        return found

    # -- the finite case: one backward BFS over the whole DFA ------------------------------------
    def _dfa_distances(self) -> None:
        dfa = self.automaton
        n = dfa.n_states
        incoming: list[list[int]] = [[] for _ in range(n)]
        for s in range(n):
            ids, states = token_edges(dfa, s, self.trie, 1 << 62)
            self.edges[s] = (ids, states, states)
            for t in set(states):
                incoming[t].append(s)
        dist = np.full(n, UNREACHABLE, dtype=np.int64)
        queue = deque(s for s in range(n) if dfa.accepting[s])
        for s in queue:
            dist[s] = 0
        while queue:
            t = queue.popleft()
            for s in incoming[t]:
                if dist[s] == UNREACHABLE:
                    dist[s] = dist[t] + 1
                    queue.append(s)
        self.dfa_table = dist
        self.exact = {s: int(d) for s, d in enumerate(dist) if d != UNREACHABLE}
        self.lower = {s: 1 << 62 for s, d in enumerate(dist) if d == UNREACHABLE}

    # -- queries -------------------------------------------------------------------------------
    def within(self, state, n: int) -> int | None:
        """``dist(state)`` when it is at most ``n`` tokens, else None (dist > n)."""
        key = self.key(state)
        self._settle([(key, state)], n)
        d = self.exact.get(key)
        return d if d is not None and d <= n else None

    def successor_distances(self, state, n: int):
        """``(ids, dist)``: the allowed tokens from ``state`` (int64 array) and, for each, the
        distance of the state after it, exact when at most ``n``, else ``n + 1`` (meaning "more
        than n"): int64 array of the same length."""
        ids, keys, states = self._edges(self.key(state), state)
        if self.dfa_table is not None:
            dist = self.dfa_table[np.array(keys, dtype=np.int64)] if keys else ids.copy()
            return ids, np.minimum(dist, n + 1)
        self._settle(list(zip(keys, states)), n)
        exact, big = self.exact, n + 1
        dist = np.array([min(exact.get(k, big), big) for k in keys], dtype=np.int64)
        return ids, dist

    def _known(self, key, n: int) -> bool:
        """True when the memo already decides whether dist(key) <= n."""
        return key in self.exact or self.lower.get(key, -1) >= n

    def _settle(self, roots, n: int) -> None:
        """Make the memo decide ``dist <= n`` for every root: bounded searches from the roots
        not yet decided, to depth 1, 2, 4, ... up to ``n`` (iterative deepening: a completion
        a few tokens away is found without visiting everything ``n`` tokens reach)."""
        if self.dfa_table is not None or n < 0:
            return
        todo = {k: s for k, s in roots if not self._known(k, n)}
        limit = 1
        while todo:
            depth = min(limit, n)
            self._search(todo, depth)
            todo = {k: s for k, s in todo.items() if not self._known(k, n)}
            if depth == n:
                break
            limit *= 2

    def _search(self, todo: dict, n: int) -> None:
        """One forward search to depth ``n`` from the states ``todo`` (key -> state), then the
        backward pass that records exact distances and lower bounds (module docstring)."""
        depth = dict.fromkeys(todo, 0)
        order = list(todo.items())          # visited (key, state), in BFS order
        succ: dict = {}
        automaton = self.automaton
        i = 0
        while i < len(order):
            key, state = order[i]
            i += 1
            d = depth[key]
            if automaton.is_accepting(state) or d >= n or self._known(key, n - d):
                continue                    # a leaf: its distance (or bound) is known enough
            _, keys, states = self._edges(key, state)
            succ[key] = keys
            for k2, s2 in zip(keys, states):
                if k2 not in depth:
                    if len(order) >= self.max_states:
                        raise LimitExceeded("a budget-aware mask had to visit too many states",
                                            "max_budget_states", self.max_states,
                                            "use a smaller budget or a tighter grammar",
                                            code="limit.budget_states")
                    depth[k2] = d + 1
                    order.append((k2, s2))
        self._backward(order, depth, succ, n)

    def _backward(self, order, depth, succ, n) -> None:
        """Shortest distances inside the visited graph: a breadth-first search backwards from
        the accepting states and the leaves whose exact distance is memoised (Dial's buckets:
        every edge has length 1), up to distance ``n``; then the memo is updated."""
        automaton, exact, lower = self.automaton, self.exact, self.lower
        inf = 1 << 62
        rev: dict = {}
        for key, keys in succ.items():
            for k in keys:
                rev.setdefault(k, []).append(key)
        h = {}
        buckets: list[list] = [[] for _ in range(n + 2)]
        for key, state in order:
            h[key] = 0 if automaton.is_accepting(state) else exact.get(key, inf)
            if h[key] <= n:
                buckets[h[key]].append(key)
        for d in range(n + 1):
            for key in buckets[d]:
                if h[key] != d:
                    continue
                for p in rev.get(key, ()):
                    if d + 1 < h[p]:
                        h[p] = d + 1
                        buckets[d + 1].append(p)
        if len(exact) >= MAX_MEMO:
            exact.clear()
            lower.clear()
        for key, _ in order:
            room = n - depth[key]
            if h[key] <= room:
                exact[key] = h[key]
            elif key not in exact and lower.get(key, -1) < room:
                lower[key] = room


def budget_mask(distances: Distances, state, plain: np.ndarray, budget: int) -> np.ndarray:
    """The plain mask ``plain`` (bool[V]) restricted to the tokens after which the shortest
    completion needs at most ``budget - 1`` tokens: a new bool[V] array (all False when
    ``budget <= 0``: no token fits). Raises LimitExceeded from the bounded search."""
    out = np.zeros_like(plain)
    if budget <= 0:
        return out
    ids, dist = distances.successor_distances(state, budget - 1)
    out[ids[dist <= budget - 1]] = True
    return out & plain
